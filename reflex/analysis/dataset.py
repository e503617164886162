"""`ctx ledger export --format parquet --dataset DIR`: a team's ledgers as one append-only Parquet dataset.

Each developer's machine appends its own new events to a shared directory (or any path DuckDB or
Spark reads); anyone compiles or reports on the whole directory (reflex.analysis.compile_sql,
reflex.analysis.team).  Layout, hive-partitioned so engines prune by date, host or user:

    DIR/events/date=YYYY-MM-DD/host=H/user=U/part-H-L-FIRST-LAST.parquet   the events (by their ts)
    DIR/facts/ date=.../host=H/user=U/part-H-L-FIRST-LAST.parquet          per-run compile facts
    DIR/hooks/ date=.../host=H/user=U/part-H-L-FIRST-LAST.parquet          hook latency counts (hook_summary)
    DIR/inputs/date=.../host=H/user=U/part-H-L-FIRST-LAST.parquet          one row: the export itself

L is the ledger's identity (the hash of its first event: it never changes as the ledger grows) and
FIRST-LAST the range of event ids (the ledger's global order) the export covered (an events file:
the ids it holds; an export writes them in ranges of CHUNK_EVENTS ids), so:

* re-exporting adds nothing: the export starts after the highest LAST already in DIR/inputs for
  this ledger, and writes nothing when there is nothing new;
* the same event always lands in the same file name (its ledger, the range it was exported in);
* exporters on different machines cannot collide: H is in every directory and file name, and one
  machine's exporters take a lock next to the ledger;
* files are written under a dot-name (which no reader globs) and renamed into place.  The inputs
  row is written last: it is the commit.  Files of this ledger past the last committed range are
  leftovers of an export that died, removed by the next one before it writes.

What leaves the machine: events only, never outputs.  Output-bearing fields of `data` (a failed
call's `error`, `tool_response`, edit contents) are dropped; commands, details and every remaining
string pass reflex.digest.redact, the redaction digests and `ctx get` apply.  The facts come from
the unredacted local ledger, computed by the same code the SQLite compile runs
(reflex.analysis.compile_facts): a session's facts need its whole history, and a facts row is
recomputed each time an export adds events to its session (readers keep the latest: the highest
`through_id` per ledger and session).  The daemon has ended sessions' facts stored beside the
ledger (reflex.analysis.facts_store); the export takes those that cover a session's history
exactly and computes the rest.  The inputs row carries the ledger's provenance as the
SQLite compile gives it for the same events (the hash of the last event exported, the head of
the ledger's hash chain, and the event count), so a compile of the dataset gives the same epoch
bytes as compiling the ledger files themselves, with or without a daemon writing to them.

Each inputs row also records the files its export wrote with their BLAKE3 (FILES_COLUMN), which
`ctx ledger verify --dataset` (verify_dataset) checks, and each facts row its session's start
(STARTED_COLUMN), the team page's time axis.  A failure names what failed (the ledger, the range,
the row holding a wrong-typed value) in a DatasetError, which pickles: a pool worker's error must
reach the exporter, and the ADBC driver's own cannot be unpickled.

Needs pyarrow, duckdb and adbc-driver-sqlite (the parquet extra).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import glob
import json
import os
import re
from dataclasses import dataclass

from reflex.analysis import facts_store
from reflex.analysis.compile_facts import FACT_COLUMNS, OUTCOME_COLUMNS, session_fact_rows
from reflex.ledger import schema
from reflex.digest import redact as _redact

BATCH = 64_000           # events per row group written and per SQLite fetch (an export holds ~2 per date)
TABLES = ("events", "facts", "hooks", "inputs")
_NAME = re.compile(r"^part-(?P<host>.+)-(?P<ledger>[0-9a-f]{16})-(?P<first>\d{12})-(?P<last>\d{12})\.parquet$")
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
# data keys that hold what a command printed or what an edit wrote: never exported.
_OUTPUT_KEYS = frozenset({"error", "tool_response", "stdout", "stderr", "output", "persisted_output", "content",
                          "result_text", "prompt", "message", "transcript"})
# tool_input keys that are metadata (everything else in it, e.g. an edit's strings, is content).
_TOOL_INPUT_KEEP = frozenset({"description", "file_path", "notebook_path", "run_in_background", "timeout",
                              "path", "pattern", "glob", "subagent_type"})
# Normalized columns a reader would otherwise dig out of data or join for: the ledger, the policy
# epoch the event recorded, and its session's project (the session's first working directory).
EVENT_EXTRA = ("ledger", "policy_epoch", "project")
INPUT_COLUMNS = (("ledger", "s"), ("through_id", "i"), ("digest", "s"), ("fmt", "s"), ("events", "i"),
                 ("facts_version", "i"), ("exported_at", "f"))
# The inputs row's record of the files its export wrote: JSON {path under DIR, "/"-separated:
# "b3:<BLAKE3 of the file's bytes>"}, what `ctx ledger verify --dataset` checks.  Its own column,
# after INPUT_COLUMNS: an export by an older ctx (or evals/bench_team.py's generator) has none.
FILES_COLUMN = ("files", "s")


from reflex.errors import UserError


class DatasetError(UserError):
    """The export cannot proceed; nothing was committed."""


@dataclass
class ExportResult:
    rows: int                 # events appended (0 when the dataset already had them all)
    sessions: int             # sessions whose facts were (re)computed
    files: list
    ledger: str
    first_id: int | None
    last_id: int | None
    stored_sessions: int = 0  # sessions whose facts came from the store of ended sessions' facts


def file_hash(path) -> str:
    """"b3:" and the BLAKE3 of a file's bytes (memory-mapped, on every core)."""
    from blake3 import blake3
    return "b3:" + blake3(max_threads=blake3.AUTO).update_mmap(path).hexdigest()


def dataset_key(dataset_dir, path) -> str:
    """A dataset file's name in its export's record: its path under the dataset, "/"-separated."""
    return os.path.relpath(path, dataset_dir).replace(os.sep, "/")


def part_value(text: str) -> str:
    """A host or user name as a partition directory value (no '/', '=', spaces)."""
    return _SAFE.sub("_", text)[:64] or "_"


def hashed(kind: str, name: str) -> str:
    """A user's or a host's name (kind "user", "host") as --hash-user stores it: stable, so one
    person's sessions still group together."""
    from blake3 import blake3
    return kind[0] + blake3(("ctx-team-%s\n%s" % (kind, name)).encode()).hexdigest()[:16]


# Columns that may spell the exporter's home directory (a path, or text holding paths).
HOME_COLUMNS = ("cwd", "command", "decision_detail", "data", "project")


def home_pattern(home: str | None) -> str | None:
    """The RE2 (and Python re) pattern of home as a path or a path's start ("/home/al" is not
    "/home/alice"'s), capturing the character after it; None when there is nothing to hide."""
    home = (home or "").rstrip("/")
    if len(home) < 2:
        return None
    return re.escape(home) + r"(/|[^A-Za-z0-9._-]|$)"


def without_home(table, pattern, columns=HOME_COLUMNS):
    """table with the home directory written `~` in its path-bearing string columns."""
    import pyarrow.compute as pc
    if pattern is None:
        return table
    for name in columns:
        if name in table.column_names:
            i = table.column_names.index(name)
            table = table.set_column(i, table.field(i), pc.replace_substring_regex(table.column(i), pattern=pattern,
                                                                                 replacement="~\\1"))
    return table


def _types():
    import pyarrow as pa
    return {"s": pa.string(), "i": pa.int64(), "f": pa.float64()}


def events_schema():
    import pyarrow as pa
    from reflex.ledger.parquet import arrow_schema
    base = arrow_schema()
    return pa.schema(list(base) + [pa.field(c, pa.string()) for c in EVENT_EXTRA])


def _schema(cols):
    import pyarrow as pa
    t = _types()
    return pa.schema([(c, t[k]) for c, k in cols])


def parse_part_name(path) -> dict | None:
    """What a dataset file's name says: {host, ledger, first, last, path}, or None for another file."""
    m = _NAME.match(os.path.basename(path.rstrip("/")))
    if m is None:
        return None
    return {"host": m["host"], "ledger": m["ledger"], "first": int(m["first"]), "last": int(m["last"]), "path": path}


def table_glob(dataset_dir, table, ledger: str = "*") -> str:
    """The pattern of a table's files (of one ledger's, or every ledger's), for Python's glob and
    DuckDB.  The directory is escaped (`[[]` is a literal `[` to both): a dataset named
    `team [x]` is one directory, not a pattern.  A URL is the engine's to read as it is."""
    root = dataset_dir if "://" in dataset_dir else glob.escape(dataset_dir)
    name = "part-*.parquet" if ledger == "*" else "part-*-%s-*.parquet" % ledger
    return os.path.join(root, table, "date=*", "host=*", "user=*", name)


def committed(dataset_dir, ledger: str | None = None) -> list[dict]:
    """The committed exports (inputs files), parsed from their names: [{host, ledger, first, last, path}]."""
    out = []
    for p in glob.glob(table_glob(dataset_dir, "inputs")):
        m = parse_part_name(p)
        if m and (ledger is None or m["ledger"] == ledger):
            out.append(m)
    return out


def _may_redact(text: str) -> bool:
    """Whether reflex.digest.redact.redact may change text: only a PEM block or a text holding a
    prefilter literal can (flagged_text is the same test over a column)."""
    return "PRIVATE KEY" in text or _redact.may_hold_secret(text)


def _red(text: str) -> str:
    """reflex.digest.redact.redact, without its split/join when no secret shape can be in the text."""
    return _redact.redact(text) if _may_redact(text) else text


# A JSON escape that could spell an output key or a secret shape without showing it in the raw
# text (`\u0065rror`, `https:\/\/`): such a text is always decoded.
_ESCAPES = re.compile(r"\\[u/]")
_OUT_KEY = re.compile(r'"(?:%s)"' % "|".join(sorted(_OUTPUT_KEYS)))
# A tool_input that is a flat object of kept keys with plain values: nothing in it is dropped.
_KEPT_TOOL_INPUT = re.compile(r'"tool_input":\{(?:"(?:%s)":(?:"(?:[^"\\]|\\.)*"|true|false|null|-?[0-9][0-9.eE+-]*),?)*\}'
                              % "|".join(sorted(_TOOL_INPUT_KEEP)))


def _drop_outputs(value):
    """value without its output-bearing keys, at any depth (strings untouched)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in _OUTPUT_KEYS:
                continue
            if k == "tool_input" and isinstance(v, dict):
                v = {ik: iv for ik, iv in v.items() if ik in _TOOL_INPUT_KEEP}
            out[k] = _drop_outputs(v)
        return out
    if isinstance(value, list):
        return [_drop_outputs(v) for v in value]
    return value


def _redact_strings(value):
    if isinstance(value, dict):
        return {k: _redact_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_strings(v) for v in value]
    if isinstance(value, str):
        return _red(value)
    return value


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _nothing_to_drop(text) -> bool:
    """No output key, and every tool_input a flat object of kept keys (read on the raw text, which
    holds no escape that could spell a key)."""
    if _OUT_KEY.search(text):
        return False
    n = text.count('"tool_input"')
    return n == 0 or n == len(_KEPT_TOOL_INPUT.findall(text))


def scrub_data(text):
    """An event's `data` JSON as it may leave the machine (see the module docstring)."""
    if not text:
        return text
    escaped = _ESCAPES.search(text) is not None
    if not escaped and _nothing_to_drop(text):
        # Nothing to drop; a secret shape anywhere sends it through the full path (a PEM block's
        # lines are only found once the JSON string is decoded).
        if not _may_redact(text):
            return text
    try:
        d = json.loads(text)
    except (TypeError, ValueError):
        return _redact.redact(text)
    kept = _dumps(_drop_outputs(d))
    # Redaction changes a string only when it holds "PRIVATE KEY" or a _PREFILTER literal; those
    # are made of characters json.dumps(ensure_ascii=False) writes as themselves, so when the
    # kept text holds neither, no string in it can change and the per-string pass is skipped.
    if not _may_redact(kept):
        return kept
    return _dumps(_redact_strings(_drop_outputs(d)))


def _policy_epoch(text):
    if not text or '"policy_epoch"' not in text:
        return None
    try:
        v = json.loads(text).get("policy_epoch")
    except (TypeError, ValueError, AttributeError):
        return None
    return v if isinstance(v, str) else None


_DAYS: dict = {}


def _date(ts) -> str:
    """The UTC date of a timestamp ("1970-01-01" for one that is not a time)."""
    try:
        return _day_text(float(ts) // 86400)
    except (TypeError, ValueError):
        return "1970-01-01"


def _day_text(day) -> str:
    """The date of a day number (days since the epoch, a float as // gives it; cached: an export
    meets a few hundred)."""
    try:
        day = int(day)
    except (TypeError, ValueError, OverflowError):
        return "1970-01-01"
    text = _DAYS.get(day)
    if text is None:
        try:
            text = _dt.datetime.fromtimestamp(day * 86400, _dt.timezone.utc).strftime("%Y-%m-%d")
        except (OverflowError, OSError, ValueError):
            text = "1970-01-01"
        _DAYS[day] = text
    return text


def date_masks(ts) -> list:
    """[(date, mask)] of an Arrow float64 column of timestamps: each row in the mask of its _date.
    The day is ts // 86400 exactly (floor of the division, then corrected where it rounded), and
    only each distinct day is turned into text."""
    import pyarrow as pa
    import pyarrow.compute as pc
    day = pc.floor(pc.divide(ts, 86400.0))
    day = pc.if_else(pc.greater(pc.multiply(day, 86400.0), ts), pc.subtract(day, 1.0), day)
    day = pc.if_else(pc.less_equal(pc.multiply(pc.add(day, 1.0), 86400.0), ts), pc.add(day, 1.0), day)
    enc = pc.dictionary_encode(day)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    codes: dict = {}
    for code, value in enumerate(enc.dictionary.to_pylist()):
        codes.setdefault(_day_text(value), []).append(code)
    nulls = enc.null_count > 0
    if nulls:
        codes.setdefault("1970-01-01", [])
    out = []
    for text, group in codes.items():
        mask = pc.is_in(enc.indices, value_set=pa.array(group, enc.indices.type))
        if nulls and text == "1970-01-01":
            mask = pc.or_(mask, pc.is_null(enc.indices))
        out.append((text, mask))
    return out


@contextlib.contextmanager
def _lock(ledger_path):
    """One exporter per ledger at a time on this machine (different machines never share a name)."""
    import fcntl
    path = os.path.join(os.path.dirname(os.path.abspath(ledger_path)), ".dataset-export.lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise DatasetError("cannot take the export lock %s: %s (it lives next to the ledger; export a ledger "
                           "from a directory you may write)" % (path, e.strerror or e)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def make_dirs(root, path) -> None:
    """path (root or a directory inside it) and its missing parents.  The ones made under root
    get root's permission bits and group, whatever this process's umask: a team shares a dataset
    by making its root group-writable (`chmod 2775`, group the team), and a directory one exporter
    makes must be writable by the next (every host and user exporting events of a date writes
    into that date's directory)."""
    os.makedirs(root, exist_ok=True)
    st = os.stat(root)
    cur = root
    for part in os.path.relpath(path, root).split(os.sep):
        if part in ("", "."):
            continue
        cur = os.path.join(cur, part)
        try:
            os.mkdir(cur)
        except FileExistsError:
            continue
        if os.stat(cur).st_gid != st.st_gid:
            with contextlib.suppress(OSError):          # only a member of root's group may give it
                os.chown(cur, -1, st.st_gid)
        os.chmod(cur, st.st_mode & 0o7777)


def _unwritable(path, e) -> DatasetError:
    return DatasetError("cannot write %s: %s.  Nothing was committed.  Everyone who exports into a shared dataset "
                        "needs write access to its directories: make its root group-writable for the team "
                        "(chgrp TEAM DIR && chmod 2775 DIR); ctx gives what it creates there the root's mode and group"
                        % (path, e.strerror or e))


class _Writers:
    """Parquet writers under dot-names, renamed into place together by commit()."""

    def __init__(self, root):
        self.root = root
        self.open: dict = {}     # final path -> (tmp path, writer)

    def write(self, final, sch, columns, row_group_size=None):
        import pyarrow as pa
        import pyarrow.parquet as pq
        if final not in self.open:
            tmp = os.path.join(os.path.dirname(final), ".%s.%d.tmp" % (os.path.basename(final), os.getpid()))
            try:
                make_dirs(self.root, os.path.dirname(final))
                self.open[final] = (tmp, pq.ParquetWriter(tmp, sch, compression="zstd"))
            except OSError as e:
                raise _unwritable(os.path.dirname(final), e) from None
        arrays = [c if isinstance(c, (pa.Array, pa.ChunkedArray)) else pa.array(c, type=sch.field(i).type)
                  for i, c in enumerate(columns)]
        try:
            self.open[final][1].write_table(pa.Table.from_arrays(arrays, schema=sch), row_group_size=row_group_size)
        except OSError as e:
            raise _unwritable(self.open[final][0], e) from None

    def adopt(self, final, tmp):
        """A file a worker wrote (and closed) under the dot-name tmp: renamed or removed with ours."""
        self.open[final] = (tmp, None)

    def write_table(self, final, table, row_group_size=None):
        self.write(final, table.schema, table.columns, row_group_size)

    def close(self):
        for tmp, w in self.open.values():
            try:
                if w is not None:
                    w.close()              # the file's last row group and footer reach the disk here
            except OSError as e:
                raise _unwritable(tmp, e) from None

    def commit(self, order=None):
        finals = sorted(self.open, key=order) if order else list(self.open)
        for final in finals:
            try:
                os.replace(self.open[final][0], final)
            except OSError as e:
                raise _unwritable(final, e) from None
        return finals

    def abort(self):
        for tmp, w in self.open.values():
            with contextlib.suppress(Exception):
                if w is not None:
                    w.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _remove_leftovers(dataset_dir, ledger, hwm, host_v):
    """What an export of this ledger from this host left when it died before its commit: files
    past the last committed range, and the dot-named files its writers had not renamed yet (no
    other exporter can be writing them: this machine's hold the lock, other machines' files carry
    their own host)."""
    for table in TABLES:
        for p in glob.glob(os.path.join(os.path.dirname(table_glob(dataset_dir, table, ledger)),
                                        ".part-%s-%s-*.tmp" % (host_v, ledger))):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
            except OSError as e:
                raise _unwritable(p, e) from None
        if table == "inputs":
            continue
        for p in glob.glob(table_glob(dataset_dir, table, ledger)):
            m = parse_part_name(p)
            if m and m["ledger"] == ledger and m["first"] > hwm:
                try:
                    os.unlink(p)
                except OSError as e:
                    raise _unwritable(p, e) from None


def _facts_rows(out, sid, rows, ledger, through_id) -> None:
    """Append to out (columns of FACT_COLUMNS) the facts rows of one session over its whole
    history (rows: dicts with at least the timeline's columns, EVENT_READ_COLUMNS, in seq order)."""
    for row in session_fact_rows(sid, rows):
        row["ledger"], row["through_id"] = ledger, through_id
        for c, col in out.items():
            col.append(row.get(c))


def export_dataset(ledger_path, dataset_dir, *, host: str, user: str, hash_user: bool = False,
                   home: str | None = None, now: float | None = None, workers: int | None = None) -> ExportResult:
    """Append the ledger's events not yet in dataset_dir; -> what was appended (rows=0: nothing new).

    hash_user: leave no name of the exporter in the dataset: the user and host partitions are
    hashes, and the home directory (home, default this process's ~) is written `~` wherever a
    path-bearing column spells it (working directories, projects, commands, event data).  A name
    typed elsewhere in a command is not found; docs/team.md says so.

    workers: processes for the chunks of a large export (default: the CPUs this process may use).
    They are fresh interpreters (multiprocessing's spawn), so a script calling this must guard its
    top level with `if __name__ == "__main__":`."""
    import time
    from reflex.analysis.stats.ledger_read import LedgerReadError, Reader
    host_v = hashed("host", host) if hash_user else part_value(host)
    user_v = hashed("user", user) if hash_user else part_value(user)
    hide = home_pattern(os.path.expanduser("~") if home is None else home) if hash_user else None
    dataset_dir = os.fspath(dataset_dir)
    try:
        reader = Reader(ledger_path)            # migrates an old schema first, as the compile does
    except LedgerReadError as e:
        raise DatasetError(str(e)) from None
    writers = _Writers(dataset_dir)
    try:
        first = reader.query("SELECT hash FROM events ORDER BY id LIMIT 1")
        if not first:
            return ExportResult(0, 0, [], "", None, None)
        ledger = _ledger_id(first[0][0])
        with _lock(ledger_path), contextlib.ExitStack() as stack:
            hwm = max((c["last"] for c in committed(dataset_dir, ledger)), default=0)
            if (reader.query("SELECT max(id) FROM events")[0][0] or 0) <= hwm:     # nothing new: no more reading
                return ExportResult(0, 0, [], ledger, None, None)
            # Everything below reads up to last_id: a daemon appending meanwhile adds to the next export.
            snap = reader.snapshot()
            last_id = snap.last_id
            _remove_leftovers(dataset_dir, ledger, hwm, host_v)
            first_id = reader.query("SELECT min(id) FROM events WHERE id > ?", (hwm,))[0][0]
            name = part_name(host_v, ledger, first_id, last_id)
            # Two kinds of jobs, run by a pool of worker processes: the new events by ranges of
            # CHUNK_EVENTS ids, each redacted into Arrow and written by its worker into its own
            # files (one per date it holds, named by the ids it holds), and the facts not stored
            # of the sessions with new events, in chunks of whole sessions (their facts read their
            # whole history).  Results come back in job order, so what is written is the same
            # whatever the pool's timing.
            ranges = _id_ranges(hwm, last_id)
            pool = _pool(workers, expect_chunks=len(ranges) + (last_id - hwm) // CHUNK_EVENTS + 1)
            if pool is not None:
                stack.callback(pool.terminate)
            where_events = (dataset_dir, host_v, user_v)
            events_jobs = [("events", ledger_path, ledger, last_id, lo, hi, hide, where_events) for lo, hi in ranges]
            # The events jobs start first: the pool works on them while this process finds
            # which sessions' facts are stored.
            run = (lambda jobs: pool.imap(_job, jobs)) if pool else (lambda jobs: map(_job, jobs))
            events_results = run(events_jobs)
            # A session's facts come from the store the daemon fills as sessions end
            # (reflex.analysis.facts_store) when they were computed over exactly its history up to
            # last_id by this code; the other sessions' are computed here.
            starts: dict = {}
            touched = _touched(reader, hwm, last_id, snap.events, starts)
            stored = facts_store.lookup(ledger_path, {sid: h for sid, _n, h in touched})
            have = set(stored.column("session_id").to_pylist()) if stored.num_rows else set()
            facts_results = run([("facts", ledger_path, ledger, last_id, sids, hide)
                                 for sids in _chunks([(sid, n) for sid, n, _h in touched if sid not in have])])
            fact_parts, hook_parts, rows, sessions = [], [], 0, len(have)
            hashes = {}                                # final path -> file_hash of what is renamed there
            for got in events_results:
                for final, tmp in got["files"]:
                    writers.adopt(final, tmp)
                hashes.update(got.get("hashes", {}))
                hook_parts.append(got["hooks"])        # the range's hook summary (small)
                rows += got["rows"]
            for got in facts_results:
                fact_parts.append(got["facts"])
                sessions += got["sessions"]
            end_date = _date(reader.query("SELECT ts FROM events WHERE id = ?", (last_id,))[0][0])
            where = os.path.join("date=" + end_date, "host=" + host_v, "user=" + user_v, name)
            import pyarrow as pa
            import pyarrow.compute as pc
            # In session order (each session's rows in their order) wherever they came from.
            computed = pa.concat_tables(fact_parts) if fact_parts else _facts_table({c: [] for c, _k in FACT_COLUMNS})
            if not have:
                facts = computed
            else:
                facts = _stored_facts(stored, ledger, last_id, hide)
                if computed.num_rows:
                    facts = pa.concat_tables([facts, computed])
                    facts = facts.take(pc.sort_indices(facts, [("session_id", "ascending")]))   # a stable sort
            facts = with_started(facts, starts)
            for part in facts_row_groups(facts):
                writers.write_table(os.path.join(dataset_dir, "facts", where), part)
            summary = merge_hook_summaries(hook_parts, ledger, last_id)
            writers.write_table(os.path.join(dataset_dir, "hooks", where), summary)
            writers.close()                            # every data file whole: hash what will be renamed
            for final, (tmp, _w) in writers.open.items():
                if final not in hashes:
                    hashes[final] = file_hash(tmp)
            from reflex.analysis.compile_facts import FACTS_VERSION
            # The provenance the SQLite compile gives this ledger read up to last_id: its chain head
            # and event count (reflex.analysis.compile); and the hash of every file this export wrote.
            row = {"ledger": ledger, "through_id": last_id, "digest": snap.head, "fmt": "sqlite", "events": snap.events,
                   "facts_version": FACTS_VERSION, "exported_at": time.time() if now is None else now,
                   "files": json.dumps({dataset_key(dataset_dir, f): h for f, h in sorted(hashes.items())},
                                       sort_keys=True, separators=(",", ":"))}
            columns = INPUT_COLUMNS + (FILES_COLUMN,)
            writers.write(os.path.join(dataset_dir, "inputs", where), _schema(columns), [[row[c]] for c, _k in columns])
            writers.close()
            # The inputs file last: until it is in place the export is not there for any reader.
            files = writers.commit(order=lambda p: os.sep + "inputs" + os.sep in p)
            return ExportResult(rows, sessions, files, ledger, first_id, last_id, len(have))
    except BaseException:
        writers.abort()
        raise
    finally:
        reader.close()


CHUNK_EVENTS = 50_000    # events per events job; events (whole sessions, history included) per facts job
EXPORT_COLUMNS = ("id",) + schema.EVENT_COLUMNS


def _touched(reader, hwm, last_id, events=None, starts=None) -> list:
    """The sessions with an event in (hwm, last_id], in session order: [(session_id, its events
    up to last_id, the hash of the last of them)].  events: the ledger's event count, if known.
    starts: a dict to fill with each one's start (the ts of its first event), read in the same
    query.  When the new events are a good part of the ledger, a scan of the session index
    (which holds each event's id) finds them: reading the new events' rows would read most of the
    table, a few hundred bytes an event.  A few new events are found by their ids."""
    # A session's start: its first event by seq (the session index finds it in one step).
    first_ts = "(SELECT x.ts FROM events x WHERE x.session_id = %s AND x.id <= ?1 ORDER BY x.seq LIMIT 1)"
    if events is not None and (last_id - hwm) * 8 >= events:
        query = """SELECT g.session_id, g.n, e.hash, %s FROM (
                     SELECT session_id, count(*) AS n, max(id) AS m FROM events WHERE id <= ?1 AND session_id != '-'
                     GROUP BY session_id HAVING max(id) > ?2) g
                   JOIN events e ON e.id = g.m ORDER BY g.session_id""" % (first_ts % "g.session_id")
    else:
        # (SQLite returns the bare column of the row holding max(), when it is the only aggregate
        # of min or max: the start is read outside)
        query = """SELECT t.session_id, t.n, t.hash, %s FROM (
                     SELECT session_id, count(*) AS n, hash, max(id) FROM events WHERE id <= ?1 AND session_id != '-'
                     AND session_id IN (SELECT DISTINCT session_id FROM events WHERE id > ?2 AND id <= ?1)
                     GROUP BY session_id) t
                   ORDER BY t.session_id""" % (first_ts % "t.session_id")
    rows = reader.query(query, (last_id, hwm))
    if starts is not None:
        starts.update((r[0], r[3]) for r in rows)
    return [(r[0], r[1], r[2]) for r in rows]


def _chunks(sessions) -> list:
    """[(session_id, events)] (in session order) as lists of session ids of about CHUNK_EVENTS
    events each (counting their whole history, which their facts read): the facts jobs."""
    out, cur, n = [], [], 0
    for sid, k in sessions:
        cur.append(sid)
        n += k
        if n >= CHUNK_EVENTS:
            out.append(cur)
            cur, n = [], 0
    if cur:
        out.append(cur)
    return out


def _stored_facts(stored, ledger, last_id, hide):
    """facts_store.lookup's table as rows of the facts table of an export up to last_id."""
    import pyarrow as pa
    n = stored.num_rows
    cols = {"ledger": pa.array([ledger] * n, pa.string()), "through_id": pa.array([last_id] * n, pa.int64())}
    sch = _schema(FACT_COLUMNS)
    return without_home(pa.Table.from_arrays([cols[f.name] if f.name in cols else stored.column(f.name) for f in sch],
                                             schema=sch), hide)


def _workers() -> int:
    from reflex import platform
    return platform.cpu_count()


def _pool(workers, expect_chunks):
    """A pool of fresh interpreters for the chunks, or None to work them here (one chunk, one
    worker).  spawn, not fork: the exporter may hold Arrow's threads, which fork does not copy."""
    n = min(workers or _workers(), expect_chunks)
    if n <= 1:
        return None
    import multiprocessing
    return multiprocessing.get_context("spawn").Pool(n, initializer=use_system_allocator)


def use_system_allocator() -> None:
    """Arrow's buffers from the C library's allocator from now on, in this process.  Arrow's
    default (mimalloc) keeps what an export frees resident, and an export frees one batch's tables
    after another: a worker's peak RSS was 356 MB with it, 290 MB without, no slower.  For the
    processes an export owns (its workers, the `ctx ledger export` command), not a library caller's."""
    import pyarrow as pa
    pa.set_memory_pool(pa.system_memory_pool())


def _job(job):
    kind, *args = job
    try:
        return export_events(*args) if kind == "events" else export_facts(*args)
    except Exception as e:
        # A worker's exception reaches the exporter pickled.  One that cannot be unpickled
        # (adbc_driver_manager's errors need a keyword-only status_code) kills the pool's result
        # thread, and the exporter's imap then waits forever: send what it says instead.
        if _picklable(e):
            raise
        raise DatasetError("cannot export the %s of %s (ids %s): %s: %s; nothing was committed"
                           % (kind, args[0], _job_range(kind, args), type(e).__name__, e)) from None


def _picklable(e) -> bool:
    import pickle
    try:
        pickle.loads(pickle.dumps(e))
    except Exception:
        return False
    return True


def _job_range(kind, args) -> str:
    if kind == "events":
        return "%d-%d" % (args[3] + 1, args[4])
    return "of %d sessions, through %d" % (len(args[3]), args[2])


def part_name(host_v, ledger, first, last) -> str:
    return "part-%s-%s-%012d-%012d.parquet" % (host_v, ledger, first, last)


def _id_ranges(hwm, last_id) -> list:
    """(hwm, last_id] as ranges (lo, hi] of CHUNK_EVENTS ids: the events jobs of an export."""
    return [(lo, min(lo + CHUNK_EVENTS, last_id)) for lo in range(hwm, last_id, CHUNK_EVENTS)]


def export_events(ledger_path, ledger, last_id, lo, hi, hide, where) -> dict:
    """The events with an id in (lo, hi] (an events job of an export up to last_id), redacted and
    written under dot-names into one file per date, named by the first and last id they hold.
    -> {"files": [(final path, its dot-name)], "hooks": their hook summary, "rows"}: the exporter
    renames the files into place when the whole export is written (or removes them).
    where: (dataset dir, host and user partition values).  Reads on its own read-only connection
    (the exporter holds the lock)."""
    from reflex.analysis.stats.ledger_read import Reader
    dataset_dir, host_v, user_v = where
    reader = Reader(ledger_path, migrate=False)
    try:
        # Each session's project: its first working directory (by seq) up to last_id, the one its
        # facts name.  One query (SQLite returns the bare column of the row holding min()).
        projects = {sid: cwd for sid, cwd, _seq in reader.query(
            "SELECT session_id, cwd, min(seq) FROM events WHERE cwd IS NOT NULL AND cwd != '' AND id <= ? AND "
            "session_id IN (SELECT DISTINCT session_id FROM events WHERE id > ? AND id <= ? AND session_id != '-') "
            "GROUP BY session_id", (last_id, lo, hi))}
        out = _EventTables(ledger, projects, hide)
    finally:
        reader.close()
    events = read_events(ledger_path, lo, hi)
    if not events.num_rows:
        return {"files": [], "hooks": _hook_summary_of({}, ledger, last_id), "rows": 0}
    first, last = events["id"][0].as_py(), events["id"][-1].as_py()
    out.add(events)
    del events
    tables = out.tables()
    writers = _Writers(dataset_dir)
    try:
        for date in sorted(tables):
            writers.write_table(os.path.join(dataset_dir, "events", "date=" + date, "host=" + host_v, "user=" + user_v,
                                             part_name(host_v, ledger, first, last)), tables[date], row_group_size=BATCH)
        writers.close()
    except BaseException:
        writers.abort()
        raise
    return {"files": [(final, tmp) for final, (tmp, _w) in writers.open.items()],
            "hashes": {final: file_hash(tmp) for final, (tmp, _w) in writers.open.items()},
            "hooks": _hook_summary_of(tables, ledger, last_id), "rows": out.rows}


def export_facts(ledger_path, ledger, last_id, session_ids, hide=None) -> dict:
    """The facts of these sessions (in session_id order), each from its whole history up to
    last_id.  -> {"facts": Arrow table, "sessions"}.  Reads the ledger on its own read-only
    connection (the exporter holds the lock).
    hide: home_pattern() of a directory to write `~` (the facts are computed before, unchanged)."""
    from reflex.analysis.stats.ledger_read import EVENT_READ_COLUMNS, Reader
    reader = Reader(ledger_path, migrate=False)
    cols = EVENT_READ_COLUMNS
    i_sid = cols.index("session_id")
    facts = {c: [] for c, _k in FACT_COLUMNS}
    sessions = 0

    def session(sid, rows):
        # The timeline reads EVENT_READ_COLUMNS by name.
        _facts_rows(facts, sid, [dict(zip(cols, r)) for r in _fact_bearing(rows, cols)], ledger, last_id)

    try:
        cur = reader.conn.execute(
            "SELECT %s FROM events WHERE id <= ? AND session_id IN (SELECT value FROM json_each(?)) "
            "ORDER BY session_id, seq" % ", ".join(cols), (last_id, json.dumps(session_ids)))
        sid, rows = None, []
        while True:
            batch = cur.fetchmany(BATCH)
            if not batch:
                break
            for r in batch:
                if r[i_sid] != sid:
                    if rows:
                        session(sid, rows)
                        sessions += 1
                    sid, rows = r[i_sid], []
                rows.append(r)
        if rows:
            session(sid, rows)
            sessions += 1
    finally:
        reader.close()
    return {"facts": without_home(_facts_table(facts), hide), "sessions": sessions}


def _hook_summary_of(by_date, ledger, through_id):
    """hook_counts of the events in {date: events table} (an events job's)."""
    import pyarrow as pa
    parts = [t.select(HOOK_COLUMNS) for t in by_date.values()]
    events = pa.concat_tables(parts) if parts else events_schema().empty_table().select(HOOK_COLUMNS)
    return hook_counts(events, ledger, through_id)


def _fact_bearing(rows, cols=EXPORT_COLUMNS) -> list:
    """The rows of one session (tuples of cols, in seq order) its facts depend on.  A session
    without a run event has no run facts (a run fact is a call a run joined), and its session row
    reads only its first working directory, its first hook naming a harness and its SessionStart
    events (the model): the timeline is built from those alone.  A third of a real ledger's
    sessions never run a digested command."""
    i_kind, i_hook, i_cwd, i_harness = (cols.index(c) for c in ("kind", "hook_event", "cwd", "harness"))
    if any(r[i_kind] == "run" for r in rows):
        return rows
    out, cwd, harness = [], False, False
    for r in rows:
        keep = False
        if not cwd and r[i_cwd]:
            cwd = keep = True
        if r[i_kind] == "hook":
            if not harness and r[i_harness]:
                harness = keep = True
            if r[i_hook] == "SessionStart":
                keep = True
        if keep:
            out.append(r)
    return out


def _facts_table(facts):
    import pyarrow as pa
    fsch = _schema(FACT_COLUMNS)
    return pa.table({c: pa.array(facts[c], fsch.field(c).type) for c in fsch.names}, schema=fsch)


# The facts table's column after FACT_COLUMNS: each session's start (the ts of its first event
# by seq, up to the export's last id),
# on its every row, so `ctx stats --dataset` puts sessions and runs on a time axis without
# scanning the events.  Not a compile fact (the compile never reads it); an export by an older ctx
# has none, and the team page then falls back to the facts file's date partition.
STARTED_COLUMN = ("started", "f")


def with_started(facts, starts):
    """facts (an Arrow table of FACT_COLUMNS) with STARTED_COLUMN from starts {session_id: ts}."""
    import pyarrow as pa
    import pyarrow.compute as pc
    sids = list(starts)
    values = pa.array([starts[s] for s in sids], pa.float64()).take(
        pc.index_in(facts["session_id"], value_set=pa.array(sids, pa.string())))
    return facts.append_column(pa.field(STARTED_COLUMN[0], pa.float64()), values)


def facts_row_groups(table) -> list:
    """A facts table as the row groups it is written in: the session rows apart from the run rows,
    so a reader asking for one kind skips the other's row groups on their statistics (the compile
    decides which snapshot to read on the session rows alone)."""
    import pyarrow.compute as pc
    return [t for t in (table.filter(pc.equal(table["row_kind"], kind)) for kind in ("session", "run"))
            if t.num_rows]


HOOK_COLUMNS = ("id", "ts", "session_id", "kind", "project", "harness", "latency_us", "policy_epoch")


class _EventTables:
    """Events (Arrow tables of the ledger's columns, EXPORT_COLUMNS, as read_events gives them) as
    Arrow tables of events_schema() per date partition, redacted, with the normalized columns
    (EVENT_EXTRA) added.  Each table added is converted whatever its dates, then split by date (a
    filter per date it holds)."""

    def __init__(self, ledger, projects, hide=None):
        self.ledger, self.projects, self.hide = ledger, projects, hide
        self.schema = events_schema()
        self.done: dict = {}
        self.rows = 0

    def add(self, table) -> None:
        if table.num_rows:
            self.rows += table.num_rows
            self._convert(table)

    def tables(self) -> dict:
        """{date: one Arrow table} of everything added."""
        import pyarrow as pa
        return {d: parts[0] if len(parts) == 1 else pa.concat_tables(parts) for d, parts in self.done.items()}

    def _convert(self, raw) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc
        n = raw.num_rows
        columns = {c: _one_chunk(raw.column(c)) for c in EXPORT_COLUMNS}
        data = columns["data"]
        columns["data"] = _scrubbed(data, scrub_data, flagged_data)
        for k in ("command", "decision_detail"):
            columns[k] = _scrubbed(columns[k], _red, flagged_text)
        epochs = policy_epochs(data)
        columns["ledger"] = pa.array([self.ledger] * n, pa.string())
        columns["policy_epoch"] = epochs
        sids = list(self.projects)
        columns["project"] = pa.array([self.projects[s] for s in sids], pa.string()).take(
            pc.index_in(columns["session_id"], value_set=pa.array(sids, pa.string())))
        table = without_home(pa.Table.from_arrays([columns[f.name] for f in self.schema], schema=self.schema), self.hide)
        masks = date_masks(table.column("ts"))
        for date, mask in masks:
            self.done.setdefault(date, []).append(table if len(masks) == 1 else table.filter(mask))


def _one_chunk(column):
    import pyarrow as pa
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def rows_table(rows):
    """Rows of EXPORT_COLUMNS (tuples, Python values) as the Arrow table read_events gives."""
    import pyarrow as pa
    from reflex.ledger.parquet import arrow_schema
    sch = arrow_schema()
    columns = list(zip(*rows)) if rows else [()] * len(sch)
    return pa.Table.from_arrays([pa.array(list(c), sch.field(k).type) for k, c in enumerate(columns)], schema=sch)


def read_events(ledger_path, lo, hi):
    """The ledger's events with an id in (lo, hi], in id order, as one Arrow table of its columns
    (EXPORT_COLUMNS, typed as reflex.ledger.parquet.arrow_schema), read by SQLite's ADBC driver
    straight into Arrow (a Python row per event cost 4x the time).  The events table is STRICT, so
    each column holds its declared type or NULL; the driver infers a column's type from the values
    of its batch, so the whole range is one batch, and a column that is NULL throughout (typed
    int64 by the driver) is cast to its type."""
    import urllib.parse
    import adbc_driver_sqlite.dbapi as adbc
    from reflex.ledger.parquet import arrow_schema
    import adbc_driver_manager
    import pyarrow as pa
    uri = "file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(os.fspath(ledger_path)))
    sch = arrow_schema()
    try:
        with adbc.connect(uri) as conn, conn.cursor() as cur:
            cur.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": str(max(hi - lo, 1))})
            cur.execute("SELECT %s FROM events WHERE id > ? AND id <= ? ORDER BY id" % ", ".join(EXPORT_COLUMNS),
                        (lo, hi))
            got = cur.fetch_arrow_table()
        return got.cast(sch) if got.schema != sch else got
    except (adbc_driver_manager.Error, pa.ArrowException, OSError) as e:
        # The driver's errors cannot be unpickled (a pool's worker raising one hangs the export),
        # and Arrow's cast error names neither the ledger nor the row: say both, in an error
        # that pickles.
        raise DatasetError("cannot read the events %d-%d of %s: %s%s; nothing was committed"
                           % (lo + 1, hi, ledger_path, _first_line(e), wrong_typed(ledger_path, lo, hi))) from None


def _first_line(e) -> str:
    """An error's first line (the ADBC driver's messages go on with the whole query)."""
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


# The SQLite storage classes a column of arrow_schema() may hold (NULL aside): an int64 column
# integers, a float64 column numbers, a string column text.
_STORAGE = {"int64": ("integer",), "double": ("real", "integer"), "string": ("text",)}


def wrong_typed(ledger_path, lo, hi) -> str:
    """Where the events with an id in (lo, hi] hold a value of another type than their column's
    (a ledger whose events table is not STRICT: an older or hand-made one), as the text to add
    to an error: "; event 12 has exit_code = 'boom' (text, not int64)", or "" when none does."""
    import sqlite3
    from reflex.ledger.parquet import arrow_schema
    checks = [(f.name, str(f.type)) for f in arrow_schema() if str(f.type) in _STORAGE]
    where = " OR ".join("(%s IS NOT NULL AND typeof(%s) NOT IN (%s))"
                        % (c, c, ", ".join("'%s'" % k for k in _STORAGE[t])) for c, t in checks)
    try:
        conn = sqlite3.connect("file:%s?mode=ro" % urllib_quote(ledger_path), uri=True)
        try:
            row = conn.execute("SELECT id, %s FROM events WHERE id > ? AND id <= ? AND (%s) ORDER BY id LIMIT 1"
                               % (", ".join("typeof(%s), quote(%s)" % (c, c) for c, _t in checks), where),
                               (lo, hi)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return ""
    if row is None:
        return ""
    for k, (c, t) in enumerate(checks):
        kind, value = row[1 + 2 * k], row[2 + 2 * k]
        if kind != "null" and kind not in _STORAGE[t]:
            value = value if len(value) <= 60 else value[:57] + "..."
            return "; event %d has %s = %s (%s, not %s: the events table is not STRICT)" % (row[0], c, value, kind, t)
    return ""


def urllib_quote(path) -> str:
    import urllib.parse
    return urllib.parse.quote(os.path.abspath(os.fspath(path)))


# Redaction of a column at once.  Most texts cannot change (no secret shape, no output key): the
# mask that finds the ones that may is computed by Arrow (RE2, over the whole column), and only
# those go through the Python functions, so the result is exactly theirs.  The masks are the
# Python fast paths' conditions (scrub_data's, _red's), spelled as RE2 patterns; the tests check
# them against the Python predicates.

def flagged_text(arr):
    """Texts _red may change: _may_redact over a column."""
    import pyarrow.compute as pc
    return pc.match_substring_regex(arr, _FLAG_TEXT)


def flagged_data(arr):
    """data texts scrub_data may change: flagged_text's, escapes, output keys, or a tool_input that
    is not a flat object of kept keys."""
    import pyarrow.compute as pc
    return pc.or_(pc.match_substring_regex(arr, _FLAG_DATA),
                  pc.not_equal(pc.count_substring(arr, '"tool_input"'),
                               pc.count_substring_regex(arr, _KEPT_TOOL_INPUT.pattern)))


# One alternation each, so RE2 reads a text once.
_FLAG_TEXT = "PRIVATE KEY|" + _redact._PREFILTER.pattern
_FLAG_DATA = "|".join((_FLAG_TEXT, _ESCAPES.pattern, _OUT_KEY.pattern))


def _names_epoch(arr):
    import pyarrow.compute as pc
    return pc.match_substring(arr, '"policy_epoch"')


# _policy_epoch over a column.  Most texts that name the epoch are ctx's own JSON: a flat object
# with a few small objects in it.  For those, Arrow reads the epoch with RE2.  _EPOCH_DOC matches
# only a strict subset of JSON (objects and arrays nested at most three deep, keys without
# escapes, strings, numbers, true/false/null, JSON's own whitespace) whose top-level object has
# the key "policy_epoch" with a string value without escapes; it is only asked of texts that spell
# "policy_epoch" once, so no other key (escaped or not) can hold it and _EPOCH_VALUE's first match
# is that top-level value.  Every such text is JSON that json.loads reads as a dict with exactly
# that value.  The rest (deeper, NaN, an escape in the epoch, control characters, not JSON...) go
# through _policy_epoch itself.  (A match without captures runs RE2's DFA: 2 ms for 15,000
# texts; the capture is asked only of the short value pattern.)
_WS = r"[ \t\n\r]*"
_KEY = r'"[^"\\\x00-\x1f]*"'
_STR = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
_SCALAR = r"(?:%s|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)" % _STR


def _nested(value: str) -> str:
    """A JSON value that is value, or an object or array of them."""
    member = "%s%s:%s%s" % (_KEY, _WS, _WS, value)
    obj = r"\{%s(?:%s%s(?:,%s%s%s)*)?\}" % (_WS, member, _WS, _WS, member, _WS)
    arr = r"\[%s(?:%s%s(?:,%s%s%s)*)?\]" % (_WS, value, _WS, _WS, value, _WS)
    return "(?:%s|%s|%s)" % (value, obj, arr)


_MEMBER = "%s%s:%s%s" % (_KEY, _WS, _WS, _nested(_nested(_SCALAR)))
_EPOCH_VALUE = r'"policy_epoch"%s:%s"(?P<epoch>[^"\\\x00-\x1f]*)"' % (_WS, _WS)
_EPOCH_DOC = r"^%s\{%s(?:%s%s,%s)*%s%s(?:,%s%s%s)*\}%s$" % (
    _WS, _WS, _MEMBER, _WS, _WS, _EPOCH_VALUE.replace("(?P<epoch>", "(?:"), _WS, _WS, _MEMBER, _WS, _WS)


def policy_epochs(data):
    """An Arrow string array of _policy_epoch of each text of data (an Arrow string array)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    named = pc.fill_null(pc.count_substring(data, '"policy_epoch"'), 0)
    epochs = [None] * len(data)
    at = pc.indices_nonzero(named)                       # the texts that name it (a third, in a real ledger)
    if not len(at):
        return pa.array(epochs, pa.string())
    texts = data.take(at)
    simple = pc.and_(pc.equal(named.take(at), 1), pc.match_substring_regex(texts, _EPOCH_DOC))
    read = pc.struct_field(pc.extract_regex(pc.if_else(simple, texts, pa.scalar(None, pa.string())), _EPOCH_VALUE),
                           [0]).to_pylist()
    for j, k, ok, value in zip(range(len(read)), at.to_pylist(), simple.to_pylist(), read):
        epochs[k] = value if ok else _policy_epoch(texts[j].as_py())
    return pa.array(epochs, pa.string())


def _flagged_indices(mask) -> list:
    import pyarrow.compute as pc
    return pc.indices_nonzero(pc.fill_null(mask, False)).to_pylist()


def _scrubbed(arr, fix, flagged):
    """An Arrow string array with each text flagged may change passed through fix (exactly fix's
    result, computed for those alone)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    mask = pc.fill_null(flagged(arr), False)
    idx = pc.indices_nonzero(mask).to_pylist()
    if not idx:
        return arr
    return pc.replace_with_mask(arr, mask, pa.array([fix(arr[j].as_py()) for j in idx], pa.string()))


HOOK_SUMMARY_COLUMNS = (("ledger", "s"), ("through_id", "i"), ("project", "s"), ("harness", "s"),
                        ("latency_us", "i"), ("n", "i"), ("epoch_id", "i"), ("epoch_ts", "f"), ("policy_epoch", "s"))


def hook_summary(events, ledger: str, through_id: int):
    """The hooks table's rows for one export (what `ctx stats --dataset` reads instead of its
    events): per (project, harness) of its hook events in a session, one row per distinct
    latency_us with how many had it (n), and one row (latency_us NULL, n 0) with the newest
    event's policy epoch (epoch_id, epoch_ts: that event's id and time; ids order one ledger's
    events, times order a user's ledgers on two machines).  Value counts add up across exports, so
    the team scorecard's nearest-rank percentiles are exactly those of the events.

    events: an Arrow table with at least HOOK_COLUMNS (the exporter's, or a generator's)."""
    return _summarize(events, ledger, through_id, """
        SELECT project, harness, latency_us, count(*) AS n, NULL::BIGINT AS epoch_id, NULL::DOUBLE AS epoch_ts,
               NULL::VARCHAR AS policy_epoch
        FROM ev WHERE kind = 'hook' AND session_id <> '-' AND latency_us IS NOT NULL
        GROUP BY project, harness, latency_us
        UNION ALL
        SELECT project, harness, NULL, 0, max(CASE WHEN policy_epoch IS NOT NULL THEN id END),
               max_by(ts, CASE WHEN policy_epoch IS NULL THEN NULL ELSE id END),
               max_by(policy_epoch, CASE WHEN policy_epoch IS NULL THEN NULL ELSE id END)
        FROM ev WHERE kind = 'hook' AND session_id <> '-'
        GROUP BY project, harness
        ORDER BY project, harness, latency_us NULLS FIRST""")


def hook_counts(events, ledger: str, through_id: int):
    """hook_summary's rows, in no particular order, computed by Arrow: what an export's events job
    sends to be merged (merge_hook_summaries orders them; an in-process DuckDB per job cost a
    tenth of the job).  events: an Arrow table with at least HOOK_COLUMNS."""
    import pyarrow as pa
    import pyarrow.compute as pc
    sch = _schema(HOOK_SUMMARY_COLUMNS)
    hooks = events.filter(pc.and_(pc.equal(events["kind"], "hook"), pc.not_equal(events["session_id"], "-")))
    counts = hooks.filter(pc.is_valid(hooks["latency_us"])).group_by(
        ["project", "harness", "latency_us"], use_threads=False).aggregate([("latency_us", "count")])
    # Each (project, harness) once, with the values of its newest event that names an epoch:
    # rows naming one first, newest first, so each group's first row is that event (or, when
    # none names one, a row whose values are then dropped).
    newest = hooks.take(pc.sort_indices(pa.table({"named": pc.is_valid(hooks["policy_epoch"]), "id": hooks["id"]}),
                                        [("named", "descending"), ("id", "descending")]))
    epochs = newest.group_by(["project", "harness"], use_threads=False).aggregate(
        [("id", "first"), ("ts", "first"), ("policy_epoch", "first"), ("policy_epoch", "count")])
    named = pc.greater(epochs["policy_epoch_count"], 0)
    none = pa.scalar(None, pa.int64())
    n_c, n_e = counts.num_rows, epochs.num_rows
    cols = {
        "ledger": pa.array([ledger] * (n_c + n_e), pa.string()),
        "through_id": pa.array([through_id] * (n_c + n_e), pa.int64()),
        "project": pa.concat_arrays([counts["project"].combine_chunks(), epochs["project"].combine_chunks()]),
        "harness": pa.concat_arrays([counts["harness"].combine_chunks(), epochs["harness"].combine_chunks()]),
        "latency_us": pa.concat_arrays([counts["latency_us"].combine_chunks(), pa.nulls(n_e, pa.int64())]),
        "n": pa.concat_arrays([counts["latency_us_count"].combine_chunks().cast(pa.int64()),
                               pa.array([0] * n_e, pa.int64())]),
        "epoch_id": pa.concat_arrays([pa.nulls(n_c, pa.int64()),
                                      pc.if_else(named, epochs["id_first"], none).combine_chunks()]),
        "epoch_ts": pa.concat_arrays([pa.nulls(n_c, pa.float64()),
                                      pc.if_else(named, epochs["ts_first"], pa.scalar(None, pa.float64())).combine_chunks()]),
        "policy_epoch": pa.concat_arrays([pa.nulls(n_c, pa.string()),
                                          epochs["policy_epoch_first"].combine_chunks().cast(pa.string())]),
    }
    return pa.Table.from_arrays([cols[f.name].cast(f.type) for f in sch], schema=sch)


def merge_hook_summaries(parts, ledger: str, through_id: int):
    """One export's hook summary from its jobs' (hook_counts or hook_summary of each one's events): the same
    table hook_summary gives over all of them.  Counts add up; a group's epoch is the one with the
    highest epoch_id of any chunk (ids are unique in a ledger).  The workers of an export summarize
    their own chunks, so the exporter never holds a million events' hook columns."""
    import pyarrow as pa
    table = pa.concat_tables(parts) if parts else _schema(HOOK_SUMMARY_COLUMNS).empty_table()
    return _summarize(table, ledger, through_id, """
        SELECT project, harness, latency_us, sum(n)::BIGINT AS n, NULL::BIGINT AS epoch_id, NULL::DOUBLE AS epoch_ts,
               NULL::VARCHAR AS policy_epoch
        FROM ev WHERE latency_us IS NOT NULL
        GROUP BY project, harness, latency_us
        UNION ALL
        SELECT project, harness, NULL, 0, max(epoch_id), max_by(epoch_ts, epoch_id), max_by(policy_epoch, epoch_id)
        FROM ev WHERE latency_us IS NULL
        GROUP BY project, harness
        ORDER BY project, harness, latency_us NULLS FIRST""")


def _summarize(events, ledger, through_id, sql):
    """sql (over the view `ev` of events) as a table of HOOK_SUMMARY_COLUMNS for one export."""
    import duckdb
    import pyarrow as pa
    con = duckdb.connect(":memory:")
    try:
        con.register("ev", events)
        got = con.sql(sql).to_arrow_table()
    finally:
        con.close()
    n = got.num_rows
    sch = _schema(HOOK_SUMMARY_COLUMNS)
    cols = {"ledger": pa.array([ledger] * n, pa.string()), "through_id": pa.array([through_id] * n, pa.int64())}
    return pa.Table.from_arrays([cols[f.name] if f.name in cols else got[f.name].cast(f.type) for f in sch], schema=sch)


def _ledger_id(first_hash: str) -> str:
    """A ledger's name in the dataset: 16 hex digits from the hash of its first event (never changes)."""
    from blake3 import blake3
    return blake3(("ctx-ledger-id\n" + first_hash).encode()).hexdigest()[:16]


def verify_dataset(dataset_dir):
    """`ctx ledger verify --dataset DIR`: every file of every committed export against the hash
    its inputs row recorded (FILES_COLUMN), and every file's Parquet footer.  A reader (DuckDB,
    Spark, `ctx stats --dataset`) takes a file with a flipped byte in a data page as it is; this
    is what finds it.  -> a reflex.ledger.verify.Report (problems: a file missing, changed or
    unreadable; notes: exports from an older ctx, which recorded no hashes, and files no export
    committed, the leftovers of one that died, which the next export from their host removes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from reflex.ledger.verify import Report
    rep = Report()
    dataset_dir = os.fspath(dataset_dir)
    if not os.path.isdir(dataset_dir):
        rep.problem("dataset", "no dataset at %s" % dataset_dir)
        return rep
    recorded: dict = {}           # key -> (hash, the inputs file that recorded it)
    unhashed, exports, checked, size = [], 0, 0, 0
    for c in sorted(committed(dataset_dir), key=lambda c: c["path"]):
        exports += 1
        try:
            table = pq.read_table(c["path"])
        except (pa.ArrowException, OSError) as e:
            rep.problem("inputs", "%s: the commit of an export is not readable (%s): its files cannot be checked"
                        % (c["path"], _first_words(e)))
            continue
        files = table.column("files").to_pylist() if "files" in table.column_names else [None]
        if not files or files[0] is None:
            unhashed.append(c["path"])
            continue
        try:
            for key, h in json.loads(files[0]).items():
                recorded[key] = (h, c["path"])
        except (TypeError, ValueError, AttributeError) as e:
            rep.problem("inputs", "%s: its record of the files it wrote is not JSON (%s)" % (c["path"], e))
    for key, (want, by) in sorted(recorded.items()):
        path = os.path.join(dataset_dir, *key.split("/"))
        try:
            got = file_hash(path)
        except FileNotFoundError:
            rep.problem("missing", "%s: written by the export %s, no longer there" % (path, os.path.basename(by)))
            continue
        except OSError as e:
            rep.problem("unreadable", "%s: %s" % (path, e.strerror or e))
            continue
        checked += 1
        size += os.path.getsize(path)
        if got != want:
            rep.problem("hash", "%s changed after its export wrote it: recorded %s, now %s (a damaged copy or disk; "
                                "restore it from a backup, or re-export its ledger into a fresh dataset)"
                        % (path, want, got))
    # Every file, whoever wrote it: a footer that cannot be read is damage even where no hash was recorded.
    committed_ranges = {(c["ledger"], c["host"], c["first"], c["last"]) for c in committed(dataset_dir)}
    uncommitted = 0
    for t in TABLES:
        for path in sorted(glob.glob(table_glob(dataset_dir, t))):
            key = dataset_key(dataset_dir, path)
            if key not in recorded and t != "inputs":
                try:
                    pq.read_metadata(path)
                except (pa.ArrowException, OSError) as e:
                    rep.problem("parquet", "%s is not a readable Parquet file (%s)" % (path, _first_words(e)))
                    continue
                checked += 1
                m = parse_part_name(path)
                if m and not any(m["ledger"] == led and m["host"] == host and first <= m["first"] and m["last"] <= last
                                 for led, host, first, last in committed_ranges):
                    uncommitted += 1
    if unhashed:
        rep.notes.append("%d export(s) recorded no file hashes (written by an older ctx): their files were checked "
                         "as Parquet only, e.g. %s" % (len(unhashed), unhashed[0]))
    if uncommitted:
        rep.notes.append("%d file(s) belong to no committed export (an export that died before its commit): "
                         "readers skip them, and the next export from their host removes them" % uncommitted)
    rep.counts.update({"exports": exports, "files": checked, "hashed": len(recorded), "bytes": size})
    return rep


def _first_words(e) -> str:
    """An error's first sentence (Arrow's go on with advice that does not fit a report line)."""
    text = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return text.split(". ")[0].rstrip(".")
