"""`ctx ledger export --format parquet --dataset DIR`: a team's ledgers as one append-only Parquet dataset.

Each developer's machine appends its own new events to a shared directory (or any path DuckDB or
Spark reads); anyone compiles or reports on the whole directory (reflex.analysis.compile_sql,
reflex.analysis.team).  Layout, hive-partitioned so engines prune by date, host or user:

    DIR/events/date=YYYY-MM-DD/host=H/user=U/part-H-L-FIRST-LAST.parquet   the events (by their ts)
    DIR/facts/ date=.../host=H/user=U/part-H-L-FIRST-LAST.parquet          per-run compile facts
    DIR/hooks/ date=.../host=H/user=U/part-H-L-FIRST-LAST.parquet          hook latency counts (hook_summary)
    DIR/inputs/date=.../host=H/user=U/part-H-L-FIRST-LAST.parquet          one row: the export itself

L is the ledger's identity (the hash of its first event: it never changes as the ledger grows) and
FIRST-LAST the range of event ids (the ledger's global order) the export covered, so:

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
string pass reflex.digest.redact, the redaction digests and `ctx get` apply.  The facts are
computed here, from the unredacted local ledger, by the same code the SQLite compile runs
(reflex.analysis.compile_facts): a session's facts need its whole history, and a facts row is
recomputed each time an export adds events to its session (readers keep the latest: the highest
`through_id` per ledger and session).  The inputs row carries the ledger's provenance as the
SQLite compile gives it for the same events (the hash of the last event exported, the head of
the ledger's hash chain, and the event count), so a compile of the dataset gives the same epoch
bytes as compiling the ledger files themselves, with or without a daemon writing to them.

Needs pyarrow (the parquet extra).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import glob
import json
import os
import re
from dataclasses import dataclass

from reflex.ledger import schema
from reflex.digest import redact as _redact

BATCH = 64_000           # events per row group written and per SQLite fetch (an export holds ~2 per date)
CONVERT = 16_384         # events per Arrow conversion (a batch's table and its split by date are both held)
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
OUTCOME_COLUMNS = ("o_retrieved", "o_narrowed", "o_landed", "o_validated_after_edit", "o_discriminated",
                   "o_reversed", "o_equivalent_requery", "o_redundant", "o_abandoned")
FACT_COLUMNS = (("ledger", "s"), ("session_id", "s"), ("through_id", "i"), ("facts_version", "i"),
                ("row_kind", "s"), ("harness", "s"), ("project", "s"), ("model", "s"), ("reader", "s"),
                ("family", "s"), ("digested", "i"), ("first_density", "s"), ("requeried", "i"), ("densified", "i"), ("hinted", "i"),
                ("followed", "i"), ("positive", "i"), ("negative", "i"), ("rerun", "i"), ("raw_tokens", "i"),
                ("delivered_tokens", "i"), ("saved_tokens", "i")) + tuple((c, "i") for c in OUTCOME_COLUMNS)
INPUT_COLUMNS = (("ledger", "s"), ("through_id", "i"), ("digest", "s"), ("fmt", "s"), ("events", "i"),
                 ("facts_version", "i"), ("exported_at", "f"))


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

    def write_table(self, final, table, row_group_size=None):
        self.write(final, table.schema, table.columns, row_group_size)

    def close(self):
        for tmp, w in self.open.values():
            try:
                w.close()                  # the file's last row group and footer reach the disk here
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
                w.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _remove_leftovers(dataset_dir, ledger, hwm):
    """Files of this ledger past the last committed range: an export that died before its commit."""
    for table in TABLES:
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
    from reflex.analysis.compile_facts import FACTS_VERSION, run_facts
    from reflex.analysis.stats.timeline import build
    from reflex.analysis.stats.scorecard import reader_of
    positive, negative = _positive(), _negative()
    tl = build(sid, rows)
    # An older ledger may not say which harness a session ran under: those were all Claude Code.
    harness = next((r["harness"] for r in rows if r["kind"] == "hook" and r.get("harness")), None) or "claude"
    common = {"ledger": ledger, "session_id": sid, "through_id": through_id, "facts_version": FACTS_VERSION,
              "harness": harness, "project": tl.cwd, "model": tl.model, "reader": reader_of(tl.model)}

    def add(row):
        for c, col in out.items():
            col.append(row.get(c))
    add(dict(common, row_kind="session"))
    for f in run_facts(tl):
        row = dict(common, row_kind="run", family=f.family, digested=int(f.digested),
                   first_density=f.first_density,
                   requeried=int(f.requeried), densified=int(f.densified), hinted=int(f.hinted),
                   followed=int(f.followed), rerun=int(f.rerun), raw_tokens=f.raw_tokens,
                   delivered_tokens=f.delivered_tokens, saved_tokens=f.saved_tokens,
                   positive=int(bool(f.outcomes & positive)), negative=int(bool(f.outcomes & negative)))
        for c in OUTCOME_COLUMNS:
            row[c] = int(c[2:] in f.outcomes)
        add(row)


def _positive():
    from reflex.analysis.evidence import POSITIVE
    return POSITIVE


def _negative():
    from reflex.analysis.evidence import NEGATIVE
    return NEGATIVE


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
            _remove_leftovers(dataset_dir, ledger, hwm)
            first_id = reader.query("SELECT min(id) FROM events WHERE id > ?", (hwm,))[0][0]
            name = "part-%s-%s-%012d-%012d.parquet" % (host_v, ledger, first_id, last_id)
            # The sessions with new events, in chunks of about CHUNK_EVENTS events, exported in
            # session order (by a pool of worker processes when there is more than one chunk):
            # each chunk's new events redacted into Arrow tables per date and each of its
            # sessions' facts computed from its whole history.  The chunks come back in order, so
            # the files are the same whatever the pool's timing.  Events outside any session
            # ("-") are only exported.
            # The pool starts (its interpreters import) while the chunks are being cut.
            pool = _pool(workers, expect_chunks=(last_id - hwm) // CHUNK_EVENTS + 1)
            if pool is not None:
                stack.callback(pool.terminate)
            chunks = _chunks(reader, hwm, last_id)
            jobs = [(ledger_path, ledger, hwm, last_id, lo, hi, hide) for lo, hi in chunks]
            fact_parts, hook_parts, rows, sessions = [], [], 0, 0
            results = pool.imap(_export_chunk_job, jobs) if pool and len(jobs) > 1 else map(_export_chunk_job, jobs)

            def write_events(by_date):
                for date in sorted(by_date):
                    writers.write_table(os.path.join(dataset_dir, "events", "date=" + date, "host=" + host_v,
                                                     "user=" + user_v, name), by_date[date], row_group_size=BATCH)

            for got in results:
                write_events(got["events"])
                hook_parts.append(got["hooks"])           # the chunk's hook summary (small)
                fact_parts.append(got["facts"])
                rows += got["rows"]
                sessions += got["sessions"]
            loose = _EventTables(ledger, {}, hide)
            cur = reader.conn.execute("SELECT %s FROM events WHERE id > ? AND id <= ? AND session_id = '-' ORDER BY id"
                                      % ", ".join(EXPORT_COLUMNS), (hwm, last_id))
            while True:
                batch = cur.fetchmany(BATCH)
                if not batch:
                    break
                loose.add(batch)
            loose_tables = loose.tables()
            write_events(loose_tables)
            hook_parts.append(_hook_summary_of(loose_tables, ledger, last_id))
            rows += loose.rows
            end_date = _date(reader.query("SELECT ts FROM events WHERE id = ?", (last_id,))[0][0])
            where = os.path.join("date=" + end_date, "host=" + host_v, "user=" + user_v, name)
            import pyarrow as pa
            facts = pa.concat_tables(fact_parts) if fact_parts else _facts_table({c: [] for c, _k in FACT_COLUMNS})
            for part in facts_row_groups(facts):
                writers.write_table(os.path.join(dataset_dir, "facts", where), part)
            summary = merge_hook_summaries(hook_parts, ledger, last_id)
            writers.write_table(os.path.join(dataset_dir, "hooks", where), summary)
            from reflex.analysis.compile_facts import FACTS_VERSION
            # The provenance the SQLite compile gives this ledger read up to last_id: its chain head
            # and event count (reflex.analysis.compile).
            row = {"ledger": ledger, "through_id": last_id, "digest": snap.head, "fmt": "sqlite", "events": snap.events,
                   "facts_version": FACTS_VERSION, "exported_at": time.time() if now is None else now}
            writers.write(os.path.join(dataset_dir, "inputs", where), _schema(INPUT_COLUMNS),
                          [[row[c]] for c, _k in INPUT_COLUMNS])
            writers.close()
            # The inputs file last: until it is in place the export is not there for any reader.
            files = writers.commit(order=lambda p: os.sep + "inputs" + os.sep in p)
            return ExportResult(rows, sessions, files, ledger, first_id, last_id)
    except BaseException:
        writers.abort()
        raise
    finally:
        reader.close()


# The sessions lo..hi (bounds first: SQLite then reads the session index's range) with an event
# in (hwm, last_id]; its arguments are _chunk_args'.
_SESSIONS_IN_CHUNK = ("session_id != '-' AND session_id >= ? AND session_id <= ? AND session_id IN "
                      "(SELECT DISTINCT session_id FROM events WHERE id > ? AND id <= ? "
                      "AND session_id >= ? AND session_id <= ?)")


def _chunk_args(hwm, last_id, lo, hi) -> tuple:
    return (lo, hi, hwm, last_id, lo, hi)


def _projects(reader, hwm, last_id, lo, hi) -> dict:
    """{session: its project} for the sessions lo..hi with events in (hwm, last_id]: the working
    directory of its first event (by seq) that has one.  One query (SQLite returns the bare column
    of the row holding min())."""
    rows = reader.query(
        "SELECT session_id, cwd, min(seq) FROM events WHERE cwd IS NOT NULL AND cwd != '' AND " + _SESSIONS_IN_CHUNK
        + " GROUP BY session_id", _chunk_args(hwm, last_id, lo, hi))
    return {sid: cwd for sid, cwd, _seq in rows}


CHUNK_EVENTS = 50_000    # events (whole sessions, history included) per chunk of the export
EXPORT_COLUMNS = ("id",) + schema.EVENT_COLUMNS


def _chunks(reader, hwm, last_id) -> list:
    """The sessions with an event in (hwm, last_id], as [(first sid, last sid)] ranges of about
    CHUNK_EVENTS events each (counting their whole history, which their facts read)."""
    counts = reader.query(
        "SELECT session_id, count(*) FROM events WHERE id <= ? AND session_id != '-' AND session_id IN "
        "(SELECT DISTINCT session_id FROM events WHERE id > ? AND id <= ?) GROUP BY session_id ORDER BY session_id",
        (last_id, hwm, last_id))
    out, first, n = [], None, 0
    for sid, k in counts:
        first = sid if first is None else first
        n += k
        if n >= CHUNK_EVENTS:
            out.append((first, sid))
            first, n = None, 0
    if first is not None:
        out.append((first, counts[-1][0]))
    return out


def _workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


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


def _export_chunk_job(job):
    return export_chunk(*job)


def export_chunk(ledger_path, ledger, hwm, last_id, lo, hi, hide=None) -> dict:
    """One chunk of an export: the sessions lo..hi (in session_id order) with an event in
    (hwm, last_id].  -> {"events": {date: Arrow table of its new events, redacted}, "facts": Arrow table, "rows",
    "sessions"}.  Reads the ledger on its own read-only connection (the export holds the lock).
    hide: home_pattern() of a directory to write `~` (the facts are computed before, unchanged)."""
    from reflex.analysis.stats.ledger_read import Reader
    reader = Reader(ledger_path, migrate=False)
    cols = EXPORT_COLUMNS
    i_id, i_sid = cols.index("id"), cols.index("session_id")
    out = _EventTables(ledger, _projects(reader, hwm, last_id, lo, hi), hide)
    facts = {c: [] for c, _k in FACT_COLUMNS}
    sessions = 0

    def session(sid, rows):
        out.add([r for r in rows if r[i_id] > hwm])
        # The timeline reads EVENT_READ_COLUMNS by name; the export's other columns are ignored.
        _facts_rows(facts, sid, [dict(zip(cols, r)) for r in _fact_bearing(rows)], ledger, last_id)

    try:
        cur = reader.conn.execute(
            "SELECT %s FROM events WHERE id <= ? AND %s ORDER BY session_id, seq" % (", ".join(cols), _SESSIONS_IN_CHUNK),
            (last_id,) + _chunk_args(hwm, last_id, lo, hi))
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
    tables = out.tables()
    return {"events": tables, "hooks": _hook_summary_of(tables, ledger, last_id),
            "facts": without_home(_facts_table(facts), hide), "rows": out.rows, "sessions": sessions}


def _hook_summary_of(by_date, ledger, through_id):
    """hook_summary of the events in {date: events table} (a chunk's, or the loose events')."""
    import pyarrow as pa
    parts = [t.select(HOOK_COLUMNS) for t in by_date.values()]
    events = pa.concat_tables(parts) if parts else events_schema().empty_table().select(HOOK_COLUMNS)
    return hook_summary(events, ledger, through_id)


_I_KIND, _I_HOOK, _I_CWD, _I_HARNESS = (EXPORT_COLUMNS.index(c) for c in ("kind", "hook_event", "cwd", "harness"))


def _fact_bearing(rows) -> list:
    """The rows of one session (tuples of EXPORT_COLUMNS, in seq order) its facts depend on.  A
    session without a run event has no run facts (a run fact is a call a run joined), and its
    session row reads only its first working directory, its first hook naming a harness and its
    SessionStart events (the model): the timeline is built from those alone.  A third of a real
    ledger's sessions never run a digested command."""
    if any(r[_I_KIND] == "run" for r in rows):
        return rows
    out, cwd, harness = [], False, False
    for r in rows:
        keep = False
        if not cwd and r[_I_CWD]:
            cwd = keep = True
        if r[_I_KIND] == "hook":
            if not harness and r[_I_HARNESS]:
                harness = keep = True
            if r[_I_HOOK] == "SessionStart":
                keep = True
        if keep:
            out.append(r)
    return out


def _facts_table(facts):
    import pyarrow as pa
    fsch = _schema(FACT_COLUMNS)
    return pa.table({c: pa.array(facts[c], fsch.field(c).type) for c in fsch.names}, schema=fsch)


def facts_row_groups(table) -> list:
    """A facts table as the row groups it is written in: the session rows apart from the run rows,
    so a reader asking for one kind skips the other's row groups on their statistics (the compile
    decides which snapshot to read on the session rows alone)."""
    import pyarrow.compute as pc
    return [t for t in (table.filter(pc.equal(table["row_kind"], kind)) for kind in ("session", "run"))
            if t.num_rows]


HOOK_COLUMNS = ("id", "ts", "session_id", "kind", "project", "harness", "latency_us", "policy_epoch")


class _EventTables:
    """Events (rows of EXPORT_COLUMNS) as Arrow tables of events_schema() per date partition,
    redacted, with the normalized columns (EVENT_EXTRA) added.  Rows are converted CONVERT at a
    time, whatever their dates, and then split by date (a filter per date the batch holds)."""

    def __init__(self, ledger, projects, hide=None):
        self.ledger, self.projects, self.hide = ledger, projects, hide
        self.schema = events_schema()
        self.pending: list = []
        self.done: dict = {}
        self.rows = 0
        self._i = {c: EXPORT_COLUMNS.index(c) for c in ("ts", "session_id", "data", "command", "decision_detail")}

    def add(self, rows) -> None:
        self.pending.extend(rows)
        self.rows += len(rows)
        if len(self.pending) >= CONVERT:
            self._convert()

    def tables(self) -> dict:
        """{date: one Arrow table} of everything added."""
        import pyarrow as pa
        self._convert()
        return {d: parts[0] if len(parts) == 1 else pa.concat_tables(parts) for d, parts in self.done.items()}

    def _convert(self) -> None:
        import pyarrow as pa
        rows, self.pending = self.pending, []
        if not rows:
            return
        columns = [list(c) for c in zip(*rows)]
        i = self._i
        sch = self.schema
        arrays = {}
        data = columns[i["data"]]
        raw_data = pa.array(data, pa.string())
        arrays[i["data"]] = _scrubbed(data, scrub_data, flagged_data, raw_data)
        # The epoch is read (json) only from the texts that name it.
        epochs = [None] * len(rows)
        for j in _flagged_indices(_names_epoch(raw_data)):
            epochs[j] = _policy_epoch(data[j])
        for k in ("command", "decision_detail"):
            arrays[i[k]] = _scrubbed(columns[i[k]], _red, flagged_text)
        projects = self.projects
        columns += [[self.ledger] * len(rows), epochs, [projects.get(sid) for sid in columns[i["session_id"]]]]
        table = without_home(pa.Table.from_arrays(
            [arrays[k] if k in arrays else pa.array(c, type=sch.field(k).type) for k, c in enumerate(columns)],
            schema=sch), self.hide)
        masks = date_masks(table.column(i["ts"]))
        for date, mask in masks:
            self.done.setdefault(date, []).append(table if len(masks) == 1 else table.filter(mask))


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


def _flagged_indices(mask) -> list:
    import pyarrow.compute as pc
    return pc.indices_nonzero(pc.fill_null(mask, False)).to_pylist()


def _scrubbed(values, fix, flagged, arr=None):
    """values (a list of str or None; arr: them as an Arrow string array, if made already) as an
    Arrow string array, each flagged one passed through fix."""
    import pyarrow as pa
    arr = pa.array(values, pa.string()) if arr is None else arr
    idx = _flagged_indices(flagged(arr))
    if not idx:
        return arr
    values = list(values)
    for j in idx:
        values[j] = fix(values[j])
    return pa.array(values, pa.string())


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


def merge_hook_summaries(parts, ledger: str, through_id: int):
    """One export's hook summary from its chunks' (hook_summary of each chunk's events): the same
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
