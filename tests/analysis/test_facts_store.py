"""The facts of ended sessions, stored by the daemon beside the ledger (reflex.analysis.facts_store,
reflex.daemon.session_facts), and the dataset export that reads them.

The user's world: a real daemon, real sessions delivered as the shim delivers them (failing pytest
suites run through `ctx run`), the daemon's own child storing the facts after SessionEnd.  A stored
fact is only ever a shortcut: each test checks the export that used it against an export of the
same ledger computing everything (a copy of the ledger without its store), row for row.
"""

import os
import sqlite3
import time

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

from tests.support.daemons import wait_for  # noqa: E402
from tests.support.team_ledgers import Developer, careful_session, loop_session  # noqa: E402

TABLES = ("events", "facts", "hooks", "inputs")


def _stored_sessions(store):
    if not os.path.exists(store):
        return set()
    with sqlite3.connect("file:%s?mode=ro" % store, uri=True) as c:
        return {r[0] for r in c.execute("SELECT DISTINCT session_id FROM facts")}


def _tables(ds):
    """Every table of a dataset as sorted row texts."""
    import duckdb
    con = duckdb.connect()
    try:
        return {t: con.execute("SELECT list(CAST(x AS VARCHAR) ORDER BY CAST(x AS VARCHAR)) FROM read_parquet('%s/%s/*/*/*/*.parquet') x"
                               % (ds, t)).fetchone()[0] for t in TABLES}
    finally:
        con.close()


def _copy_db(src_path, dst):
    """A SQLite file copied with what its WAL holds."""
    with sqlite3.connect("file:%s?mode=ro" % src_path, uri=True) as src, sqlite3.connect(dst) as out:
        src.backup(out)
    return dst


def _cold_copy(ledger, where):
    """The ledger copied alone (no facts store beside it)."""
    os.makedirs(where, exist_ok=True)
    return _copy_db(ledger, os.path.join(where, "ledger.db"))


@pytest.fixture(scope="module")
def dev(tmp_path_factory):
    """A developer whose daemon stores ended sessions' facts 0.2 s after they end: two sessions
    end (their facts are stored), then the first goes on (a resumed session) and a third never
    ends (the agent was killed)."""
    from reflex import config
    from reflex.analysis import facts_store
    root = str(tmp_path_factory.mktemp("facts"))
    d = Developer(root, "dana")
    os.makedirs(d.paths.home, exist_ok=True)
    config.save(d.paths.config, dict(config.DEFAULTS, session_facts_after_s=0.2))
    store = facts_store.store_path(d.paths.ledger)
    d.start()
    try:
        loop_session(d, "s1", "claude-haiku-4-5")
        careful_session(d, "s2", "claude-sonnet-4-5")
        assert wait_for(lambda: _stored_sessions(store) == {"s1", "s2"}, timeout=90.0), _stored_sessions(store)
        d.stored_before = _stored_sessions(store)
        more = d.agent("s1", "claude-haiku-4-5", failing=2)
        more.bash("python -m pytest -q")                 # s1 goes on: its stored facts no longer cover it
        live = d.agent("s3", "claude-opus-4-1", failing=3)
        live.start()
        live.bash("python -m pytest -q")                 # s3 never ends
    finally:
        d.stop()
    d.store = store
    return d


def test_the_daemon_stores_ended_sessions_facts_privately(dev):
    assert dev.stored_before == {"s1", "s2"}
    assert _stored_sessions(dev.store) == {"s1", "s2"}      # s3 never ended; s1's newer events are not stored
    assert os.stat(dev.store).st_mode & 0o777 == 0o600


def test_the_export_takes_stored_facts_only_where_they_cover_the_session(dev, tmp_path):
    from reflex.analysis import dataset as D
    warm = D.export_dataset(dev.paths.ledger, str(tmp_path / "warm"), host="h", user="u", now=1.0, workers=1)
    cold_ledger = _cold_copy(dev.paths.ledger, str(tmp_path / "copy"))
    cold = D.export_dataset(cold_ledger, str(tmp_path / "cold"), host="h", user="u", now=1.0, workers=1)
    # s2 ended and was stored; s1 went on after its facts were stored, s3 never ended: both computed
    assert (warm.sessions, warm.stored_sessions) == (3, 1)
    assert (cold.sessions, cold.stored_sessions) == (3, 0)
    assert _tables(str(tmp_path / "warm")) == _tables(str(tmp_path / "cold"))


def test_the_stored_rows_are_the_computed_ones(dev):
    """lookup gives back exactly what session_fact_rows computes (the yes/no columns packed into
    one integer and unpacked)."""
    from reflex.analysis import facts_store
    from reflex.analysis.compile_facts import session_fact_rows
    from reflex.analysis.stats.ledger_read import EVENT_READ_COLUMNS, Reader
    with Reader(dev.paths.ledger) as r:
        rows = r.query("SELECT %s FROM events WHERE session_id = 's2' ORDER BY seq" % ", ".join(EVENT_READ_COLUMNS))
        last = r.query("SELECT hash FROM events WHERE session_id = 's2' ORDER BY id DESC LIMIT 1")[0][0]
    want = session_fact_rows("s2", [dict(zip(EVENT_READ_COLUMNS, x)) for x in rows])
    got = facts_store.lookup(dev.paths.ledger, {"s2": last}).to_pylist()
    assert len(want) > 1 and [{k: w.get(k) for k in g} for w, g in zip(want, got)] == got and len(got) == len(want)
    assert any(g["o_retrieved"] for g in got) or any(g["followed"] for g in got) or any(g["rerun"] for g in got)
    # Another history (another ledger's s2, or this one's before a new event) misses.
    assert facts_store.lookup(dev.paths.ledger, {"s2": "0" * 64}).num_rows == 0


def test_facts_of_other_code_are_never_used(dev, tmp_path, monkeypatch):
    """An upgrade of ctx (or an edit of its source) changes the code stamp: the store's facts
    are of older code, so the export computes them all."""
    from reflex.analysis import dataset as D
    from reflex.analysis import facts_store
    monkeypatch.setattr(facts_store, "_CODE", ["another version of ctx"])
    res = D.export_dataset(dev.paths.ledger, str(tmp_path / "ds"), host="h", user="u", now=1.0, workers=1)
    assert (res.sessions, res.stored_sessions) == (3, 0)


@pytest.mark.parametrize("damage", ["garbage", "empty", "other_table", "directory"])
def test_a_damaged_store_is_a_miss_not_an_error(dev, tmp_path, damage):
    """The store is a cache: whatever is beside the ledger under its name, the export still
    writes every session's facts, computed."""
    from reflex.analysis import dataset as D
    from reflex.analysis import facts_store
    ledger = _cold_copy(dev.paths.ledger, str(tmp_path / "copy"))
    store = facts_store.store_path(ledger)
    if damage == "garbage":
        with open(store, "wb") as f:
            f.write(b"SQLite format 3\x00" + os.urandom(5000))
    elif damage == "empty":
        open(store, "wb").close()
    elif damage == "other_table":
        with sqlite3.connect(store) as c:
            c.execute("CREATE TABLE facts (x)")
            c.execute("INSERT INTO facts VALUES (1)")
    else:
        os.mkdir(store)
    res = D.export_dataset(ledger, str(tmp_path / "ds"), host="h", user="u", now=1.0, workers=1)
    cold = D.export_dataset(_cold_copy(dev.paths.ledger, str(tmp_path / "c2")), str(tmp_path / "cold"),
                            host="h", user="u", now=1.0, workers=1)
    assert (res.sessions, res.stored_sessions) == (3, 0)
    assert _tables(str(tmp_path / "ds")) == _tables(str(tmp_path / "cold"))


def test_storing_again_adds_nothing_and_a_resumed_session_gets_new_facts(dev, tmp_path):
    """What the daemon's child does, run twice over the same sessions: the second run adds no
    row; after s1's newer events are stored too, the export takes every ended session's facts."""
    from reflex.analysis import dataset as D
    from reflex.analysis import facts_store
    ledger = _cold_copy(dev.paths.ledger, str(tmp_path / "copy"))
    _copy_db(dev.store, facts_store.store_path(ledger))
    assert facts_store.store(ledger, ["s2", "nope", "-"]) == 1
    with sqlite3.connect(facts_store.store_path(ledger)) as c:
        before = c.execute("SELECT count(*) FROM facts").fetchone()[0]
    assert facts_store.store(ledger, ["s2"]) == 1
    with sqlite3.connect(facts_store.store_path(ledger)) as c:
        assert c.execute("SELECT count(*) FROM facts").fetchone()[0] == before
    assert facts_store.store(ledger, ["s1"]) == 1
    res = D.export_dataset(ledger, str(tmp_path / "ds"), host="h", user="u", now=1.0, workers=1)
    assert (res.sessions, res.stored_sessions) == (3, 2)
    cold = D.export_dataset(_cold_copy(dev.paths.ledger, str(tmp_path / "c2")), str(tmp_path / "cold"),
                            host="h", user="u", now=1.0, workers=1)
    assert cold.stored_sessions == 0
    assert _tables(str(tmp_path / "ds")) == _tables(str(tmp_path / "cold"))


def test_a_first_and_an_incremental_export_find_the_same_sessions(dev):
    """_touched finds the sessions with new events from the session index (a large export) or
    from the new events' ids (a small one): the same sessions, counts and hashes either way."""
    from reflex.analysis import dataset as D
    from reflex.analysis.stats.ledger_read import Reader
    with Reader(dev.paths.ledger) as r:
        last = r.query("SELECT max(id) FROM events")[0][0]
        for hwm in (0, 1, last // 3, last // 2, last - 5, last - 1):
            by_index = D._touched(r, hwm, last, events=0)
            by_ids = D._touched(r, hwm, last, events=None)
            assert by_index == by_ids and by_ids, hwm
            assert all(n > 0 and h.startswith("b3:") for _s, n, h in by_ids)


def test_no_facts_are_stored_when_the_user_turns_it_off(tmp_path):
    from reflex import config
    from reflex.analysis import facts_store
    d = Developer(str(tmp_path), "erin")
    os.makedirs(d.paths.home, exist_ok=True)
    config.save(d.paths.config, dict(config.DEFAULTS, session_facts=False, session_facts_after_s=0.0))
    d.start()
    try:
        careful_session(d, "s1", "claude-haiku-4-5")
        time.sleep(2.0)
    finally:
        d.stop()
    assert not os.path.exists(facts_store.store_path(d.paths.ledger))


def test_the_store_keeps_only_what_can_still_match(dev, tmp_path, monkeypatch):
    """Storing a session again after it went on replaces its older facts, and facts of another
    code go at the next store; the store is found beside the ledger a symlink names."""
    from reflex.analysis import facts_store
    ledger = _cold_copy(dev.paths.ledger, str(tmp_path / "copy"))
    _copy_db(dev.store, facts_store.store_path(ledger))
    store = facts_store.store_path(ledger)

    def keys():
        with sqlite3.connect(store) as c:
            return sorted(set(c.execute("SELECT session_id, covers, code FROM facts")))
    before = keys()
    assert len(before) == 2                                   # s1 (before it went on) and s2
    facts_store.store(ledger, ["s1"])
    after = keys()
    assert len(after) == 2 and [k for k in after if k[0] == "s2"] == [k for k in before if k[0] == "s2"]
    assert [k for k in after if k[0] == "s1"] != [k for k in before if k[0] == "s1"]
    monkeypatch.setattr(facts_store, "_CODE", ["the next version"])
    facts_store.store(ledger, ["s3"])
    assert {(s, code) for s, _c, code in keys()} == {("s3", "the next version")}
    link = str(tmp_path / "elsewhere" / "my-ledger.db")
    os.makedirs(os.path.dirname(link))
    os.symlink(ledger, link)
    assert facts_store.store_path(link) == store
