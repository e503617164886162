"""The facts of ended sessions, stored next to the ledger so an export need not recompute them.

A session's compile facts (reflex.analysis.compile_facts) need its whole history: computing them
is most of what a large dataset export costs (`ctx ledger export --dataset`).  They only change
when the session gets a new event, so the daemon has them computed once, shortly after the
session ends: it runs `python -m reflex.analysis.facts_store LEDGER` (a separate process, off
the agent's path; the daemon never imports this package) with the ended sessions' ids on stdin.

The store is a cache, never a source: a SQLite file beside the ledger (LEDGER's name with
`.facts` before its extension), one row per fact row, keyed by

* the session,
* the hash of its last event when they were computed (the ledger's hash chain: that hash commits
  to every event before it, so the same hash means the same history, and a session that got a
  new event since, or a different ledger with the same file name, simply misses),
* the code that computed them (code_stamp(): ctx's version, FACTS_VERSION and the bytes of the
  package's source, so an upgrade or a local edit never reuses an older computation).

A reader takes a session's stored rows only on an exact key match and computes the rest, so the
result is always the facts of the events as they are.  A store that is missing, damaged or
unreadable is a miss, never an error: deleting it loses nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

from reflex.analysis.compile_facts import FACT_COLUMNS, session_fact_rows

# Stored per fact row: the key, its place in the session's rows, its text and count columns, and
# its yes/no columns (0/1 on a run row, NULL on a session row) as the bits of one integer, FLAGS
# in order (a store holds a row per run; reading 17 columns fewer takes half the time).
_SKIP = ("ledger", "session_id", "through_id", "facts_version")
FLAGS = tuple(c for c, k in FACT_COLUMNS if k == "i" and c not in _SKIP and not c.endswith("_tokens"))
STORED = tuple((c, k) for c, k in FACT_COLUMNS if c not in _SKIP and c not in FLAGS)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    session_id TEXT NOT NULL,
    covers TEXT NOT NULL,
    code TEXT NOT NULL,
    k INTEGER NOT NULL,
    %s,
    flags INTEGER,
    PRIMARY KEY (session_id, covers, code, k)
) STRICT""" % ",\n    ".join("%s %s" % (c, "TEXT" if k == "s" else "INTEGER") for c, k in STORED)


def _flags(row) -> int | None:
    values = [row.get(c) for c in FLAGS]
    if all(v is None for v in values):
        return None
    if any(v not in (0, 1) for v in values):
        raise ValueError("a fact row's yes/no columns are 0 or 1: %r" % dict(zip(FLAGS, values)))
    return sum(v << i for i, v in enumerate(values))


_CODE: list = []


def store_path(ledger_path) -> str:
    """The store of ledger_path's session facts: `ledger.db` -> `ledger.facts.db`."""
    base, ext = os.path.splitext(os.path.realpath(os.fspath(ledger_path)))     # beside the file a link names
    return base + ".facts" + (ext or ".db")


def code_stamp() -> str:
    """What computed the facts: ctx's version, FACTS_VERSION and the blake3 of the package's
    Python source (every module, in path order), plus the shell grammar's version (signatures
    parse commands with it).  Computed once per process (~10 ms)."""
    if not _CODE:
        from blake3 import blake3
        import reflex
        from reflex.analysis.compile_facts import FACTS_VERSION
        h = blake3(("ctx-facts\n%s\n%d\n" % (reflex.__version__, FACTS_VERSION)).encode())
        root = os.path.dirname(os.path.abspath(reflex.__file__))
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            files += [os.path.join(d, n) for n in names if n.endswith(".py")]
        for path in sorted(files):
            h.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
        try:
            from importlib.metadata import version
            h.update(("tree-sitter-bash " + version("tree-sitter-bash")).encode())
        except Exception:
            pass
        _CODE.append(h.hexdigest()[:32])
    return _CODE[0]


def store(ledger_path, session_ids) -> int:
    """Compute and store the facts of these sessions of the ledger (each over its history as it
    is now); -> sessions stored.  Unknown ids are skipped."""
    from reflex.analysis.stats.ledger_read import EVENT_READ_COLUMNS, Reader
    code = code_stamp()
    cols = EVENT_READ_COLUMNS
    reader = Reader(ledger_path, migrate=False)
    out = []
    try:
        for sid in dict.fromkeys(session_ids):
            # One read transaction per session: its rows and the hash of the last of them agree.
            reader.conn.execute("BEGIN")
            try:
                rows = reader.query("SELECT %s FROM events WHERE session_id = ? ORDER BY seq" % ", ".join(cols), (sid,))
                last = reader.query("SELECT hash FROM events WHERE session_id = ? ORDER BY id DESC LIMIT 1", (sid,))
            finally:
                reader.conn.execute("COMMIT")
            if sid == "-" or not rows or not last:
                continue
            facts = session_fact_rows(sid, [dict(zip(cols, r)) for r in rows])
            out += [[sid, last[0][0], code, k] + [row.get(c) for c, _k in STORED] + [_flags(row)]
                    for k, row in enumerate(facts)]
    finally:
        reader.close()
    if not out:
        return 0
    path = store_path(ledger_path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)     # a private file, like the ledger beside it
    os.close(fd)
    conn = sqlite3.connect(path, timeout=30)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(_SCHEMA)
        with conn:
            # A cache keeps what a reader may still ask for: each session's facts over its
            # latest history, by this code (a session that went on, or an upgrade, leaves older
            # rows nobody will match again).
            conn.executemany("DELETE FROM facts WHERE session_id = ? AND (covers != ? OR code != ?)",
                             list(dict.fromkeys((r[0], r[1], r[2]) for r in out)))
            conn.execute("DELETE FROM facts WHERE code != ?", (code,))
            conn.executemany("INSERT OR IGNORE INTO facts VALUES (%s)" % ", ".join("?" * (5 + len(STORED))), out)
    finally:
        conn.close()
    return len({r[0] for r in out})


def lookup(ledger_path, wanted: dict):
    """The stored facts of the sessions in wanted ({session_id: hash of its last event}) computed
    by this code: an Arrow table of FACT_COLUMNS but ledger and through_id, in session and row
    order, holding only the sessions found (each with all its rows).  Nothing stored, or a store
    that cannot be read: an empty table."""
    import pyarrow as pa
    from reflex.analysis.compile_facts import FACTS_VERSION
    want = [c for c, _k in FACT_COLUMNS if c not in ("ledger", "through_id")]
    types = {"s": pa.string(), "i": pa.int64()}
    sch = pa.schema([(c, types[k]) for c, k in FACT_COLUMNS if c in want])
    path = store_path(ledger_path)
    if not wanted or not os.path.isfile(path):
        return sch.empty_table()
    import urllib.parse
    try:
        import adbc_driver_sqlite.dbapi as adbc
        with adbc.connect("file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(path))) as conn, \
                conn.cursor() as cur:
            cur.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": "1000000000"})
            cur.execute(
                "SELECT f.session_id, %s, f.flags FROM facts f JOIN json_each(?) w "
                "ON f.session_id = w.key AND f.covers = w.value WHERE f.code = ? ORDER BY f.session_id, f.k"
                % ", ".join("f." + c for c, _k in STORED), (json.dumps(wanted), code_stamp()))
            got = cur.fetch_arrow_table()
    except Exception:
        return sch.empty_table()          # a cache: unreadable is a miss
    try:
        import pyarrow.compute as pc
        n = got.num_rows
        flags = got.column("flags").cast(pa.int64())
        cols = {"session_id": got.column("session_id"), "facts_version": pa.array([FACTS_VERSION] * n, pa.int64())}
        cols.update({c: got.column(c) for c, _k in STORED})
        cols.update({c: pc.bit_wise_and(pc.shift_right(flags, i), 1) for i, c in enumerate(FLAGS)})
        return pa.Table.from_arrays([cols[f.name].cast(f.type) for f in sch], schema=sch)
    except (pa.ArrowInvalid, KeyError, ValueError):
        return sch.empty_table()


def main(argv=None) -> int:
    """`python -m reflex.analysis.facts_store [--nice] LEDGER`: store the facts of the sessions
    whose ids are on stdin (one a line).  What the daemon runs after sessions end (--nice: at a
    lower CPU priority, beside the agent's work)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--nice"]:
        argv.pop(0)
        try:
            os.nice(10)
        except OSError:
            pass
    if len(argv) != 1:
        sys.stderr.write("usage: python -m reflex.analysis.facts_store [--nice] LEDGER < session-ids\n")
        return 2
    ids = [line.strip() for line in sys.stdin if line.strip()]
    n = store(argv[0], ids)
    sys.stdout.write("stored the facts of %d session(s)\n" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
