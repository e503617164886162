"""Reading ledgers that are not what they should be: old schema, damaged, not a ledger at all."""

import hashlib
import json
import os
import sqlite3
import subprocess
import sys

from reflex.ledger import chain, schema
from reflex.ledger.db import open_ledger
from tests.analysis.test_evidence import Rows, failing


def ctx(*args, env=None):
    return subprocess.run([sys.executable, "-m", "reflex.entry"] + list(args), capture_output=True, text=True,
                          timeout=60, env=env)


def write_rows(db_conn, rows, prev=chain.GENESIS):
    """Insert Rows' events as the writer would: every column, the hash chain."""
    for r in rows:
        row = {c: None for c in schema.EVENT_COLUMNS}
        row.update({k: v for k, v in r.items() if k in row})
        row.update(recorded_at=r["ts"], harness="ctx-run" if r["kind"] == "run" else "claude", spooled=0)
        row["prev_hash"] = prev
        row["hash"] = chain.link(prev, row)
        prev = row["hash"]
        db_conn.execute("INSERT INTO events (%s) VALUES (%s)" % (", ".join(schema.EVENT_COLUMNS),
                                                                 ", ".join("?" * len(schema.EVENT_COLUMNS))),
                        [row[c] for c in schema.EVENT_COLUMNS])
    return prev


def loop_rows(session="s1", pad=0):
    s = Rows(session)
    s.bash("python -m pytest -q", exit=1, run=failing(4))
    s.bash("python -m pytest -q | tail -20", exit=1, run=dict(failing(4), slicer="tail -20"))
    s.edit("/proj/test_a.py")
    s.bash("python -m pytest -q", exit=0, run=failing(0))
    for i in range(pad):
        s.bash("echo %s" % ("x" * 200 + str(i)))
    s.end()
    return s


def make_ledger(path, sessions=("s1",), pad=0, stop_before=None):
    if stop_before:
        import sqlite_utils
        db = sqlite_utils.Database(path)
        schema.migrations.apply(db, stop_before=stop_before)
        conn = db.conn
    else:
        conn = open_ledger(path).conn
    prev = chain.GENESIS
    for sid in sessions:
        prev = write_rows(conn, loop_rows(sid, pad).rows, prev)
    conn.commit()
    conn.close()
    return path


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_an_old_schema_ledger_migrates_on_open_and_reads(tmp_path):
    path = make_ledger(str(tmp_path / "v1.db"), stop_before="m002_outcomes")
    conn = sqlite3.connect(path)
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name='outcomes'").fetchall()
    conn.close()
    p = ctx("stats", "--ledger", path, "--session", "s1", "--json")
    assert p.returncode == 0, p.stderr
    card = json.loads(p.stdout)
    assert card["runs"]["total"] == 3 and card["rounds"]["by_signature"][0]["trajectory"] == [4, 4, 0]
    assert card["detectors"]["source"] == "replayed"          # no outcome rows: folded again
    conn = sqlite3.connect(path)
    applied = [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY name")]
    conn.close()
    assert applied == [m.name for m in schema.migrations._migrations]
    ok = ctx("ledger", "verify", "--ledger", path, "--no-head", "--json")  # built here, never anchored
    assert ok.returncode == 0, ok.stdout


def test_an_old_ledger_that_cannot_be_migrated_is_read_as_it_is(tmp_path, monkeypatch):
    # a teammate's read-only copy: open_ledger cannot migrate it; every table but events is optional
    from reflex.ledger import db as db_mod
    from reflex.analysis.stats.scorecard import scorecard_from_ledger
    path = make_ledger(str(tmp_path / "v1.db"), stop_before="m002_outcomes")

    def refuse(*a, **k):
        raise db_mod.LedgerError("read-only file system")
    monkeypatch.setattr(db_mod, "open_ledger", refuse)
    before = digest(path)
    card = scorecard_from_ledger(path, "s1")
    assert card["runs"]["total"] == 3 and card["detectors"]["source"] == "replayed"
    assert digest(path) == before


def test_not_a_database_is_a_clear_error_and_left_alone(tmp_path):
    bad = tmp_path / "ledger.db"
    bad.write_bytes(b"this is not sqlite at all\n" * 100)
    before = digest(bad)
    p = ctx("stats", "--ledger", str(bad), "--session", "s1")
    assert p.returncode == 1
    assert "not a ctx ledger: not a SQLite database" in p.stderr and "ctx ledger verify" in p.stderr
    out = tmp_path / "epoch.toml"
    out.write_text("# the previous epoch\n")
    p = ctx("policy", "compile", "--ledger", str(bad), "--out", str(out))
    assert p.returncode == 1 and "neither a ledger" in p.stderr
    assert out.read_text() == "# the previous epoch\n" and digest(bad) == before
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_a_damaged_ledger_is_a_clear_error_verify_says_what_and_nothing_is_written(tmp_path):
    path = make_ledger(str(tmp_path / "ledger.db"), sessions=("s1", "s2", "s3"), pad=60)
    size = os.path.getsize(path)
    assert size > 40 * 4096
    with open(path, "r+b") as f:            # overwrite data pages in the middle of the file
        f.seek(8 * 4096)
        f.write(os.urandom(16 * 4096))
    before = digest(path)
    p = ctx("stats", "--ledger", path, "--session", "s2")
    assert p.returncode == 1
    assert "is damaged or not a ctx ledger: database disk image is malformed" in p.stderr
    out = tmp_path / "epoch.toml"
    out.write_text("# previous\n")
    c = ctx("policy", "compile", "--ledger", path, "--out", str(out))
    assert c.returncode == 1 and "damaged" in c.stderr and "ctx ledger verify" in c.stderr
    assert out.read_text() == "# previous\n"
    v = ctx("ledger", "verify", "--ledger", path)
    assert v.returncode == 1 and "PROBLEM" in v.stdout
    assert digest(path) == before


def test_a_sqlite_file_that_is_not_a_ledger(tmp_path):
    path = str(tmp_path / "other.db")
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    p = ctx("stats", "--ledger", path, "--last")
    assert p.returncode == 1 and "not a ctx ledger (no events table)" in p.stderr


def test_unknown_session_and_empty_ledger(tmp_path):
    path = make_ledger(str(tmp_path / "ledger.db"))
    p = ctx("stats", "--ledger", path, "--session", "nope")
    assert p.returncode == 1 and "no session nope" in p.stderr
    empty = str(tmp_path / "empty.db")
    open_ledger(empty).conn.close()
    p = ctx("stats", "--ledger", empty, "--last")
    assert p.returncode == 1 and "no sessions" in p.stderr
    agg = json.loads(ctx("stats", "--ledger", empty, "--json").stdout)
    assert agg["sessions"] == 0 and agg["totals"]["saved"] == 0
    p = ctx("stats", "--ledger", path, "--since", "yesterday-ish")
    assert p.returncode == 1 and "--since wants" in p.stderr
