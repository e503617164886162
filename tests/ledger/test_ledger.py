"""The ledger: explicit schema, append-only triggers, hash chain, verify, export, spool exactly-once."""

import io
import json
import shutil
import sqlite3

import pytest

from reflex.ledger import chain, schema
from reflex.ledger.db import LedgerError, open_ledger
from reflex.ledger.export import export_jsonl
from reflex.ledger.verify import verify
from reflex.ledger.writer import LedgerWriter


def ev(uid, session="s", **kw):
    e = {"uid": uid, "session_id": session, "ts": 1.5, "harness": "claude", "kind": "hook",
         "spooled": 0, "data": "{}"}
    e.update(kw)
    return e


@pytest.fixture
def ledger(tmp_path):
    path = str(tmp_path / "l.db")
    w = LedgerWriter(path).start()
    yield path, w
    w.close()


def test_blank_database_migrates_to_the_declared_schema(tmp_path):
    db = open_ledger(str(tmp_path / "x.db"))
    assert {"sessions", "events", "runs"} <= set(db.table_names())
    assert db["events"].columns_dict["uid"] is str
    assert [m.name for m in schema.migrations.applied(db)] == ["m001_initial", "m002_outcomes",
                                                               "m003_no_replace_and_evictions"]
    # strict tables refuse a wrongly typed value instead of storing it
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO sessions (session_id, harness, first_ts) VALUES ('a', 'b', 'not a number')")


def test_schema_sql_is_in_sync_with_migrations():
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "ledgers", "schema.sql")
    with open(path) as f:
        assert f.read() == schema.dump_sql(), "regenerate: python -m reflex.ledger.schema > ledgers/schema.sql"


def test_append_only_triggers_abort_update_and_delete(ledger):
    path, w = ledger
    run = {c: None for c in schema.RUN_COLUMNS}
    run.update(event_uid="u1" * 5, handle="r:abc", blob="b3:abc", session_id="s", command="x",
               raw_bytes=0, meta="{}")
    w.submit(ev("u1" * 5, kind="run"), run=run,
             session={"session_id": "s", "harness": "claude", "first_ts": 1.0}).result()
    conn = sqlite3.connect(path)
    for sql in ("UPDATE events SET command='x'", "DELETE FROM events", "UPDATE sessions SET cwd='x'",
                "DELETE FROM runs"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql)


def test_seq_chain_and_duplicates(ledger):
    path, w = ledger
    results = [w.submit(ev("uid-%04d" % i, session="a" if i % 2 else "b")).result() for i in range(20)]
    assert [r.seq for r in results if r.session_id == "a"] == list(range(1, 11))
    dup = w.submit(ev("uid-0003", session="a")).result()
    assert dup.duplicate and dup.seq == results[3].seq
    w.close()
    rep = verify(path)
    assert rep.ok, rep.problems
    assert rep.counts["events"] == 20


def test_bad_records_fail_alone_and_loudly(ledger):
    path, w = ledger
    typo = ev("uid-typo-000")
    typo["comand"] = "pytest"  # misspelled: must not vanish silently
    with pytest.raises(ValueError, match="comand"):
        w.submit(typo).result()
    futures = [w.submit(ev("uid-ok-%04d" % i)) for i in range(5)]
    futures.insert(2, w.submit(ev("uid-null-00", harness=None)))  # violates NOT NULL
    with pytest.raises(sqlite3.IntegrityError):
        futures[2].result()
    assert [f.result().seq for i, f in enumerate(futures) if i != 2] == [1, 2, 3, 4, 5]
    w.close()
    assert verify(path).ok


def test_verify_detects_modification_deletion_and_reordering(ledger, tmp_path):
    path, w = ledger
    for i in range(6):
        w.submit(ev("uid-%04d" % i, command="echo %d" % i)).result()
    w.close()
    assert verify(path).ok

    def tampered(sql):
        copy = str(tmp_path / ("t%d.db" % abs(hash(sql))))
        shutil.copy(path, copy)
        c = sqlite3.connect(copy)
        c.execute("DROP TRIGGER events_no_update")
        c.execute("DROP TRIGGER events_no_delete")
        c.execute(sql)
        c.commit()
        c.close()
        return verify(copy)

    rep = tampered("UPDATE events SET command='rm -rf /' WHERE seq=3")
    assert not rep.ok and any(c == "chain" and "modified" in m for c, m in rep.problems)
    rep = tampered("DELETE FROM events WHERE seq=4")
    assert not rep.ok and {c for c, _ in rep.problems} >= {"chain", "sequence", "schema"}


def test_corrupted_file_is_refused_not_overwritten(tmp_path):
    p = tmp_path / "bad.db"
    p.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(LedgerError):
        open_ledger(str(p))
    assert p.read_bytes() == b"this is not sqlite" * 100
    assert not verify(str(p)).ok


def test_export_jsonl(ledger):
    path, w = ledger
    w.submit(ev("uid-a-0001", session="x", command="pytest")).result()
    w.submit(ev("uid-b-0001", session="y")).result()
    out = io.StringIO()
    assert export_jsonl(path, out, session="x") == 1
    row = json.loads(out.getvalue())
    assert row["command"] == "pytest" and row["seq"] == 1 and row["hash"].startswith("b3:")


def test_chain_hash_is_canonical():
    row = {c: None for c in schema.HASHED_COLUMNS}
    row.update(uid="u", seq=1, data='{"b":1,"a":2}')
    assert chain.link(chain.GENESIS, row) == chain.link(chain.GENESIS, dict(reversed(list(row.items()))))


def test_a_ledger_from_schema_v1_is_migrated_on_open(tmp_path):
    """Historic schemas migrate forward: build a v1 ledger (m001 only), write to it, reopen."""
    import sqlite_utils
    path = str(tmp_path / "old.db")
    db = sqlite_utils.Database(path)
    schema.migrations.apply(db, stop_before="m002_outcomes")
    assert "outcomes" not in db.table_names()
    db.conn.close()
    w = LedgerWriter(path).start()
    w.submit(ev("uid-old-0001")).result()
    w.close()
    db = open_ledger(path)
    assert {"outcomes", "evidence_outcomes"} <= set(db.table_names())
    assert verify(path).ok
