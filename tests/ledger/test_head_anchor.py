"""The chain's head file, written off the writer's path (reflex.ledger.writer._HeadAnchor): a
reply never waits for it, it only ever names a committed event, it is written at most once per
ANCHOR_INTERVAL under load, and closing the writer leaves it on the last event."""

import sqlite3
import threading

from reflex.ledger import head
from reflex.ledger import writer as writer_mod
from reflex.ledger.writer import LedgerWriter


def ev(uid, session="s"):
    return {"uid": uid, "session_id": session, "ts": 1.5, "harness": "claude", "kind": "hook",
            "spooled": 0, "data": "{}"}


def _last(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
    finally:
        conn.close()


def head_writes(monkeypatch):
    """-> the list of event ids head.write is called with from now on (it still writes)."""
    writes = []
    real = head.write

    def counting_write(p, event_id, event_hash):
        writes.append(event_id)
        real(p, event_id, event_hash)

    monkeypatch.setattr(head, "write", counting_write)
    return writes


def test_an_ack_does_not_wait_for_the_head_file(tmp_path, monkeypatch):
    path = str(tmp_path / "l.db")
    w = LedgerWriter(path).start()           # the starting head is written before this returns
    release = threading.Event()
    real = head.write

    def stuck_write(*a):
        release.wait(30)                    # a head write that does not finish until released
        real(*a)

    monkeypatch.setattr(head, "write", stuck_write)
    try:
        # Both acks arrive while the anchor is stuck (the writer waiting on it would hang here).
        assert w.submit(ev("a")).result(timeout=10).seq == 1
        assert w.submit(ev("b")).result(timeout=10).seq == 2
    finally:
        release.set()
        w.close()
    assert head.read(path) == {"id": _last(path)[0], "hash": _last(path)[1]}


def test_the_head_names_only_committed_events_and_ends_on_the_last(tmp_path, monkeypatch):
    path = str(tmp_path / "l.db")
    writes = head_writes(monkeypatch)
    w = LedgerWriter(path).start()
    stop = threading.Event()
    seen = []

    def sample():
        conn = sqlite3.connect(path)
        while not stop.is_set():
            got = head.read(path)
            if got and got["id"]:
                # read after the head: the event it names must be there, committed, with that hash
                row = conn.execute("SELECT hash FROM events WHERE id = ?", (got["id"],)).fetchone()
                seen.append((got, row))
        conn.close()

    sampler = threading.Thread(target=sample)
    sampler.start()
    n = 0
    try:
        for k in range(40):
            futs = [w.submit(ev("u-%d-%d" % (k, i), "s%d" % (i % 3))) for i in range(25)]
            for f in futs:
                f.result(timeout=30)
            n += 25
    finally:
        stop.set()
        sampler.join()
        w.close()
    assert seen and all(row is not None and row[0] == got["hash"] for got, row in seen)
    assert writes == sorted(writes)                     # newest only: never back
    assert head.read(path)["id"] == _last(path)[0] == n


def test_one_head_write_per_interval_the_first_at_once_the_last_on_close(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_mod, "ANCHOR_INTERVAL", 3600.0)
    path = str(tmp_path / "l.db")
    writes = head_writes(monkeypatch)
    w = LedgerWriter(path).start()
    try:
        w.submit(ev("a")).result(timeout=10)
        for _ in range(1000):                 # a lone commit is written without waiting
            got = head.read(path)
            if got and got["id"] == 1:
                break
            threading.Event().wait(0.01)
        assert head.read(path)["id"] == 1
        for k in range(20):                    # within the interval: 100 commits, no head write
            for f in [w.submit(ev("b-%d-%d" % (k, i))) for i in range(5)]:
                f.result(timeout=10)
        assert head.read(path)["id"] == 1
    finally:
        w.close()                              # close does not wait out the interval
    assert head.read(path)["id"] == 101
    assert writes == [0, 1, 101]               # the empty ledger's head at start, the first, the last
