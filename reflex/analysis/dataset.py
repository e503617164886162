"""`ctx ledger export --format parquet --dataset DIR`: a team's ledgers as one append-only Parquet dataset.

Each developer's machine appends its own new events to a shared directory (or any path DuckDB or
Spark reads); anyone compiles or reports on the whole directory (reflex.analysis.compile_sql,
reflex.analysis.team).  Layout, hive-partitioned so engines prune by date, host or user:

    DIR/events/date=YYYY-MM-DD/host=H/user=U/part-H-L-FIRST-LAST.parquet   the events (by their ts)
    DIR/facts/ date=.../host=H/user=U/part-H-L-FIRST-LAST.parquet          per-run compile facts
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
SQLite compile would print it (the blake3 of the ledger file as exported, its event count), so a
compile of the dataset gives the same epoch bytes as compiling the ledger files themselves.

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

BATCH = 50_000
TABLES = ("events", "facts", "inputs")
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


def hashed_user(user: str) -> str:
    from blake3 import blake3
    return "u" + blake3(("ctx-team-user\n" + user).encode()).hexdigest()[:16]


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


def committed(dataset_dir, ledger: str | None = None) -> list[dict]:
    """The committed exports (inputs files), parsed from their names: [{host, ledger, first, last, path}]."""
    out = []
    for p in glob.glob(os.path.join(dataset_dir, "inputs", "date=*", "host=*", "user=*", "part-*.parquet")):
        m = _NAME.match(os.path.basename(p))
        if m and (ledger is None or m["ledger"] == ledger):
            out.append({"host": m["host"], "ledger": m["ledger"], "first": int(m["first"]),
                        "last": int(m["last"]), "path": p})
    return out


def _red(text: str) -> str:
    """reflex.digest.redact.redact, without its split/join when no secret shape can be in the text."""
    from reflex.digest import redact as r
    if "PRIVATE KEY" in text or r._PREFILTER.search(text):
        return r.redact(text)
    return text


# A data text without any of these needs no parsing: nothing in it is dropped.
_SCRUB_KEYS = re.compile(r'"(?:%s|tool_input)"' % "|".join(sorted(_OUTPUT_KEYS)))


def _scrub(value, key=None):
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in _OUTPUT_KEYS:
                continue
            if k == "tool_input" and isinstance(v, dict):
                v = {ik: iv for ik, iv in v.items() if ik in _TOOL_INPUT_KEEP}
            out[k] = _scrub(v, k)
        return out
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, str):
        return _red(value)
    return value


def scrub_data(text):
    """An event's `data` JSON as it may leave the machine (see the module docstring)."""
    if not text:
        return text
    if not _SCRUB_KEYS.search(text):
        from reflex.digest import redact as r
        # Nothing to drop; a secret shape anywhere sends it through the full path (a PEM block's
        # lines are only found once the JSON string is decoded).
        if "PRIVATE KEY" not in text and not r._PREFILTER.search(text):
            return text
    try:
        d = json.loads(text)
    except (TypeError, ValueError):
        from reflex.digest.redact import redact
        return redact(text)
    return json.dumps(_scrub(d), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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
    """The UTC date of a timestamp (cached per day: an export formats a million of them)."""
    try:
        day = int(float(ts) // 86400)
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


@contextlib.contextmanager
def _lock(ledger_path):
    """One exporter per ledger at a time on this machine (different machines never share a name)."""
    import fcntl
    path = os.path.join(os.path.dirname(os.path.abspath(ledger_path)), ".dataset-export.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class _Writers:
    """Parquet writers under dot-names, renamed into place together by commit()."""

    def __init__(self):
        self.open: dict = {}     # final path -> (tmp path, writer)

    def write(self, final, sch, columns):
        import pyarrow as pa
        import pyarrow.parquet as pq
        if final not in self.open:
            os.makedirs(os.path.dirname(final), exist_ok=True)
            tmp = os.path.join(os.path.dirname(final), ".%s.%d.tmp" % (os.path.basename(final), os.getpid()))
            self.open[final] = (tmp, pq.ParquetWriter(tmp, sch, compression="zstd"))
        arrays = [pa.array(columns[i], type=sch.field(i).type) for i in range(len(sch))]
        self.open[final][1].write_batch(pa.record_batch(arrays, schema=sch))

    def close(self):
        for tmp, w in self.open.values():
            w.close()

    def commit(self, order=None):
        finals = sorted(self.open, key=order) if order else list(self.open)
        for final in finals:
            os.replace(self.open[final][0], final)
        return finals

    def abort(self):
        for tmp, w in self.open.values():
            with contextlib.suppress(Exception):
                w.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _remove_leftovers(dataset_dir, ledger, hwm):
    """Files of this ledger past the last committed range: an export that died before its commit."""
    for table in ("events", "facts"):
        for p in glob.glob(os.path.join(dataset_dir, table, "date=*", "host=*", "user=*", "part-*-%s-*.parquet"
                                        % ledger)):
            m = _NAME.match(os.path.basename(p))
            if m and m["ledger"] == ledger and int(m["first"]) > hwm:
                os.unlink(p)


def _session_facts(reader, session_ids, ledger, through_id):
    """Facts rows (columns of FACT_COLUMNS) for these sessions, each over its whole history."""
    from reflex.analysis.compile_facts import FACTS_VERSION, run_facts
    from reflex.analysis.stats.ledger_read import EVENT_READ_COLUMNS
    from reflex.analysis.stats.timeline import build
    from reflex.analysis.stats.scorecard import reader_of
    cols = EVENT_READ_COLUMNS + ("harness",)
    sql = "SELECT %s FROM events WHERE session_id = ? AND id <= ? ORDER BY seq" % ", ".join(cols)
    names = [c for c, _k in FACT_COLUMNS]
    out = {c: [] for c in names}

    def add(row):
        for c in names:
            out[c].append(row.get(c))
    for sid in sorted(session_ids):
        rows = [dict(zip(cols, r)) for r in reader.query(sql, (sid, through_id))]
        if not rows:
            continue
        tl = build(sid, rows)
        # An older ledger may not say which harness a session ran under: those were all Claude Code.
        harness = next((r["harness"] for r in rows if r["kind"] == "hook" and r.get("harness")), None) or "claude"
        common = {"ledger": ledger, "session_id": sid, "through_id": through_id, "facts_version": FACTS_VERSION,
                  "harness": harness, "project": tl.cwd, "model": tl.model, "reader": reader_of(tl.model)}
        add(dict(common, row_kind="session"))
        for f in run_facts(tl):
            row = dict(common, row_kind="run", family=f.family, digested=int(f.digested),
                       first_density=f.first_density,
                       requeried=int(f.requeried), densified=int(f.densified), hinted=int(f.hinted),
                       followed=int(f.followed), rerun=int(f.rerun), raw_tokens=f.raw_tokens,
                       delivered_tokens=f.delivered_tokens, saved_tokens=f.saved_tokens,
                       positive=int(bool(f.outcomes & _positive())), negative=int(bool(f.outcomes & _negative())))
            for c in OUTCOME_COLUMNS:
                row[c] = int(c[2:] in f.outcomes)
            add(row)
    return out


def _positive():
    from reflex.analysis.evidence import POSITIVE
    return POSITIVE


def _negative():
    from reflex.analysis.evidence import NEGATIVE
    return NEGATIVE


def export_dataset(ledger_path, dataset_dir, *, host: str, user: str, hash_user: bool = False,
                   now: float | None = None) -> ExportResult:
    """Append the ledger's events not yet in dataset_dir; -> what was appended (rows=0: nothing new)."""
    import time
    from reflex.analysis.compile import _digest
    from reflex.analysis.stats.ledger_read import LedgerReadError, Reader
    host_v = part_value(host)
    user_v = hashed_user(user) if hash_user else part_value(user)
    dataset_dir = os.fspath(dataset_dir)
    try:
        reader = Reader(ledger_path)            # migrates an old schema first, as the compile does
    except LedgerReadError as e:
        raise DatasetError(str(e)) from None
    writers = _Writers()
    try:
        first = reader.query("SELECT hash FROM events ORDER BY id LIMIT 1")
        if not first:
            return ExportResult(0, 0, [], "", None, None)
        ledger = _ledger_id(first[0][0])
        with _lock(ledger_path):
            hwm = max((c["last"] for c in committed(dataset_dir, ledger)), default=0)
            last_id = reader.query("SELECT max(id) FROM events")[0][0]
            if last_id <= hwm:
                return ExportResult(0, 0, [], ledger, None, None)
            _remove_leftovers(dataset_dir, ledger, hwm)
            # The provenance the SQLite compile prints for this file: its digest and event count.
            digest = _digest(ledger_path)
            total = reader.query("SELECT count(*) FROM events WHERE id <= ?", (last_id,))[0][0]
            first_id = reader.query("SELECT min(id) FROM events WHERE id > ?", (hwm,))[0][0]
            name = "part-%s-%s-%012d-%012d.parquet" % (host_v, ledger, first_id, last_id)
            ev_sch = events_schema()
            cols = ("id",) + schema.EVENT_COLUMNS
            i_cmd, i_detail, i_data, i_ts = (cols.index(c) for c in ("command", "decision_detail", "data", "ts"))
            by_date: dict = {}
            sessions: set = set()
            n = 0

            def flush(date):
                buf = by_date.pop(date)
                final = os.path.join(dataset_dir, "events", "date=" + date, "host=" + host_v, "user=" + user_v, name)
                writers.write(final, ev_sch, buf)

            i_sid = cols.index("session_id")
            projects: dict = {}
            cur = reader.conn.execute("SELECT %s FROM events WHERE id > ? AND id <= ? ORDER BY id"
                                      % ", ".join(cols), (hwm, last_id))
            while True:
                batch = cur.fetchmany(BATCH)
                if not batch:
                    break
                columns = [list(c) for c in zip(*batch)]
                epochs = [_policy_epoch(d) for d in columns[i_data]]
                columns[i_data] = [scrub_data(d) for d in columns[i_data]]
                for i in (i_cmd, i_detail):
                    columns[i] = [None if v is None else _red(v) for v in columns[i]]
                columns.append([ledger] * len(batch))
                columns.append(epochs)
                for sid in set(columns[i_sid]) - projects.keys():
                    r = reader.query("SELECT cwd FROM events WHERE session_id = ? AND cwd IS NOT NULL AND cwd != '' "
                                     "ORDER BY seq LIMIT 1", (sid,))
                    projects[sid] = r[0][0] if r and sid != "-" else None
                columns.append([projects[sid] for sid in columns[i_sid]])
                sessions.update(columns[i_sid])
                n += len(batch)
                dates = [_date(t) for t in columns[i_ts]]
                for date in sorted(set(dates)):
                    if len(set(dates)) == 1:
                        part = columns
                    else:
                        keep = [j for j, d in enumerate(dates) if d == date]
                        part = [[c[j] for j in keep] for c in columns]
                    buf = by_date.setdefault(date, [[] for _ in range(len(ev_sch))])
                    for i, c in enumerate(part):
                        buf[i].extend(c)
                    if len(buf[0]) >= BATCH:
                        flush(date)
            for date in list(by_date):
                flush(date)
            sessions.discard("-")
            end_date = _date(reader.query("SELECT ts FROM events WHERE id = ?", (last_id,))[0][0])
            where = os.path.join("date=" + end_date, "host=" + host_v, "user=" + user_v, name)
            facts = _session_facts(reader, sessions, ledger, last_id)
            fsch = _schema(FACT_COLUMNS)
            writers.write(os.path.join(dataset_dir, "facts", where), fsch, [facts[c] for c, _k in FACT_COLUMNS])
            from reflex.analysis.compile_facts import FACTS_VERSION
            row = {"ledger": ledger, "through_id": last_id, "digest": digest, "fmt": "sqlite", "events": total,
                   "facts_version": FACTS_VERSION, "exported_at": time.time() if now is None else now}
            writers.write(os.path.join(dataset_dir, "inputs", where), _schema(INPUT_COLUMNS),
                          [[row[c]] for c, _k in INPUT_COLUMNS])
            writers.close()
            # The inputs file last: until it is in place the export is not there for any reader.
            files = writers.commit(order=lambda p: os.sep + "inputs" + os.sep in p)
            return ExportResult(n, len(sessions), files, ledger, first_id, last_id)
    except BaseException:
        writers.abort()
        raise
    finally:
        reader.close()


def _ledger_id(first_hash: str) -> str:
    """A ledger's name in the dataset: 16 hex digits from the hash of its first event (never changes)."""
    from blake3 import blake3
    return blake3(("ctx-ledger-id\n" + first_hash).encode()).hexdigest()[:16]
