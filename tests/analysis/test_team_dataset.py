"""A team's ledgers in one Parquet dataset (issue 15), end to end.

Two developers (two CTX_HOMEs, two real daemons) run a failing pytest suite through `ctx run` (the
daemon rewrites the agent's command; reflex.hook.deliver delivers the hooks exactly as the shim
does).  Each exports into one dataset with `ctx ledger export --dataset`, works some more, exports
again (alice's first session goes on in between, so its facts are recomputed), and exports a third
time (which must add nothing).  Then:

* `ctx policy compile --dataset` (DuckDB) and the same compile on Spark (local mode) give exactly
  the bytes of `ctx policy compile` over the two SQLite ledgers;
* `ctx stats --dataset` shows both developers' sessions, with the tokens `ctx stats --ledger`
  reports for each ledger;
* nothing a command printed, and no secret a command carried, is in the dataset.

Spark needs Java and the spark extra: CI (.ci/run) installs both and sets CTX_REQUIRE_SPARK=1, so
there the Spark test fails rather than skips when either is missing.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

from tests.support.team_ledgers import Developer, careful_session, loop_session  # noqa: E402

SECRET = "ghp_" + "Zq3" * 12


def _developer(root, name):
    dev = Developer(root, name)
    dev.env.update(USER=name, LOGNAME=name)
    return dev


def _ctx(dev, *args):
    p = subprocess.run([sys.executable, "-m", "reflex.entry"] + list(args), env=dev.env, capture_output=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    return p


def _files(ds):
    return sorted(os.path.relpath(os.path.join(d, f), ds) for d, _s, fs in os.walk(ds) for f in fs)


def _q(sql):
    import duckdb
    con = duckdb.connect()
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def _rows(ds, table="events"):
    return _q("SELECT count(*) FROM read_parquet('%s/%s/*/*/*/*.parquet')" % (ds, table))


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("team"))
    ds = os.path.join(root, "dataset")
    alice, bob = _developer(root, "alice"), _developer(root, "bob")
    exports = []
    try:
        for phase in (1, 2):
            alice.start()
            if phase == 1:
                loop_session(alice, "alice-1", "claude-haiku-4-5")
            else:
                # alice-1 goes on after the first export: its facts are recomputed in the second,
                # and the compile must read only the newer ones.
                more = alice.agent("alice-1", "claude-haiku-4-5", failing=3)
                more.bash("python -m pytest -q")
                more.bash("echo deploying with %s" % SECRET)    # a secret in a command line
                careful_session(alice, "alice-2", "claude-sonnet-4-5")
            alice.stop()
            bob.start()
            (careful_session if phase == 1 else loop_session)(bob, "bob-%d" % phase, "claude-opus-4-1")
            bob.stop()
            for dev in (alice, bob):
                before = _rows(ds) if os.path.isdir(os.path.join(ds, "events")) else 0
                msg = _ctx(dev, "ledger", "export", "--format", "parquet", "--dataset", ds).stderr.decode()
                exports.append((dev.name, phase, _rows(ds) - before, msg))
    finally:
        alice.stop()
        bob.stop()
    files = _files(ds)
    again = [_ctx(dev, "ledger", "export", "--format", "parquet", "--dataset", ds).stderr.decode()
             for dev in (alice, bob)]
    return {"root": root, "ds": ds, "alice": alice, "bob": bob, "exports": exports, "files": files,
            "files_after": _files(ds), "again": again}


def test_exports_append_new_events_once(team):
    import sqlite3
    ds = team["ds"]
    for name, phase, added, msg in team["exports"]:
        assert added > 0 and "appended %d events" % added in msg, (name, phase, msg)
    # a third export of each ledger adds nothing and writes no file
    assert all("0 rows added" in m for m in team["again"]), team["again"]
    assert team["files"] == team["files_after"]
    total = 0
    for dev in (team["alice"], team["bob"]):
        with sqlite3.connect("file:%s?mode=ro" % dev.paths.ledger, uri=True) as c:
            total += c.execute("SELECT count(*) FROM events").fetchone()[0]
    assert _rows(ds) == total          # every event once: no loss, no duplicate
    assert _q("SELECT count(*) - count(DISTINCT uid) FROM read_parquet('%s/events/*/*/*/*.parquet')" % ds) == 0
    # hive layout: date, host, user; both developers, two exports each
    users = {p.split(os.sep)[3] for p in team["files"] if p.startswith("events" + os.sep)}
    assert users == {"user=alice", "user=bob"}
    assert len([p for p in team["files"] if p.startswith("inputs" + os.sep)]) == 4
    assert not [p for p in team["files"] if os.path.basename(p).startswith(".")]    # no tmp file left
    # alice-1 went on after the first export: two facts snapshots, the compile reads the newer
    assert _q("SELECT count(DISTINCT through_id) FROM read_parquet('%s/facts/*/*/*/*.parquet') "
              "WHERE session_id = 'alice-1'" % ds) == 2


def test_events_only_redacted_no_outputs(team):
    ds = team["ds"]
    data = _q("SELECT string_agg(coalesce(command, '') || ' ' || coalesce(data, ''), '\n') "
              "FROM read_parquet('%s/events/*/*/*/*.parquet')" % ds)
    assert SECRET not in data and "[REDACTED:github-token]" in data
    # the failing suite's output (pytest's assertion lines, the digest ctx printed) stayed home
    assert "assert 0 == 100" not in data and '"error"' not in data and "tool_response" not in data
    with open(team["alice"].paths.ledger, "rb") as f:
        assert b"assert 0 == 100" in f.read()          # ... though the local ledger has it


def test_duckdb_compile_equals_compiling_the_sqlite_ledgers(team):
    alice, ds = team["alice"], team["ds"]
    ledgers = ["--ledger", alice.paths.ledger, "--ledger", team["bob"].paths.ledger]
    for extra in ((), ("--plan-value",)):
        direct = _ctx(alice, "policy", "compile", *ledgers, *extra).stdout
        via_ds = _ctx(alice, "policy", "compile", "--dataset", ds, "--engine", "duckdb", *extra).stdout
        assert via_ds == direct
    assert b"from 2 ledger(s)" in direct and b"events=" in direct
    text = direct.decode()
    assert "pytest, all readers: 4 sessions" in text, text    # all four pytest sessions counted once


def test_spark_compile_gives_the_same_bytes(team):
    if not os.environ.get("CTX_REQUIRE_SPARK"):
        pytest.importorskip("pyspark")
        if not shutil.which("java"):
            pytest.skip("no java on PATH (Spark needs Java 17+)")
    from reflex.analysis.compile_sql import compile_dataset, spark_session
    from reflex.analysis.compile import compile_epoch
    ledgers = [team["alice"].paths.ledger, team["bob"].paths.ledger]
    spark = spark_session("local[1]", app="ctx-test")
    try:
        spark.sparkContext.setLogLevel("ERROR")
        got = compile_dataset(team["ds"], engine="spark", spark=spark, plan_value=True).text
    finally:
        spark.stop()
    assert got == compile_epoch(ledgers, plan_value=True).text


def test_team_scorecard_shows_both_developers(team):
    alice, ds = team["alice"], team["ds"]
    card = json.loads(_ctx(alice, "stats", "--dataset", ds, "--json").stdout)
    assert card["schema"] == "ctx-team-scorecard/v1"
    assert {r["user"] for r in card["rows"]} == {"alice", "bob"}
    assert card["totals"]["sessions"] == 4 and card["totals"]["users"] == 2
    for dev in (alice, team["bob"]):
        mine = [r for r in card["rows"] if r["user"] == dev.name]
        agg = json.loads(_ctx(dev, "stats", "--ledger", dev.paths.ledger, "--json").stdout)["totals"]
        assert sum(r["runs"] for r in mine) == agg["runs"]
        assert sum(r["raw_tokens"] for r in mine) == agg["raw_tokens"]
        assert sum(r["delivered_tokens"] for r in mine) == agg["delivered_ctx"]
        assert sum(r["saved_tokens"] for r in mine) == agg["saved"]
        assert sum(r["requeried"] for r in mine) == agg["requeries"]
        assert all(r["harness"] == "claude" and r["hook_events"] > 0 and r["hook_latency_p50_us"] > 0
                   and r["policy_epoch"] for r in mine)
        assert sum(r["landings"] for r in mine) > 0
    assert {r["family"] for r in card["rows"]} >= {"pytest"}
    csv_out = _ctx(alice, "stats", "--dataset", ds, "--csv").stdout.decode().splitlines()
    assert csv_out[0].startswith("user,project,harness,family,") and len(csv_out) == 1 + len(card["rows"])
    page = os.path.join(team["root"], "team.html")
    _ctx(alice, "stats", "--dataset", ds, "--html", "--out", page)
    html = open(page, encoding="utf-8").read()
    assert "ctx team stats · 2 users, 4 sessions" in html and '"alice"' in html and '"bob"' in html


def test_not_a_dataset_is_a_clear_error(team, tmp_path):
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "policy", "compile", "--dataset", str(tmp_path)],
                       env=team["alice"].env, capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "not a ctx team dataset" in p.stderr
