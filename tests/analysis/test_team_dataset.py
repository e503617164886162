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

import glob
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
    return _q("SELECT count(*) FROM read_parquet('%s/%s/*/*/*/*.parquet')" % (glob.escape(ds), table))


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("team"))
    # The team's share, named as people name folders: a name that is also a glob pattern must
    # still be one directory to the exporters (re-exports add nothing), DuckDB, Spark and stats.
    ds = os.path.join(root, "team [ctx] {a,b}")
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
    assert _q("SELECT count(*) - count(DISTINCT uid) FROM read_parquet('%s/events/*/*/*/*.parquet')" % glob.escape(ds)) == 0
    # hive layout: date, host, user; both developers, two exports each
    users = {p.split(os.sep)[3] for p in team["files"] if p.startswith("events" + os.sep)}
    assert users == {"user=alice", "user=bob"}
    assert len([p for p in team["files"] if p.startswith("inputs" + os.sep)]) == 4
    assert not [p for p in team["files"] if os.path.basename(p).startswith(".")]    # no tmp file left
    # alice-1 went on after the first export: two facts snapshots, the compile reads the newer
    assert _q("SELECT count(DISTINCT through_id) FROM read_parquet('%s/facts/*/*/*/*.parquet') "
              "WHERE session_id = 'alice-1'" % glob.escape(ds)) == 2


def test_events_only_redacted_no_outputs(team):
    ds = team["ds"]
    data = _q("SELECT string_agg(coalesce(command, '') || ' ' || coalesce(data, ''), '\n') "
              "FROM read_parquet('%s/events/*/*/*/*.parquet')" % glob.escape(ds))
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


@pytest.mark.parametrize("damage", ["drop the epoch's time", "remove"])
def test_summaries_from_an_older_ctx_are_a_clear_error(team, tmp_path, damage):
    """A dataset holding an export by an older ctx (hook summaries missing, or without a column
    the scorecard reads) asks for a re-export instead of failing inside the engine."""
    import glob
    import pyarrow.parquet as pq
    ds = str(tmp_path / "ds")
    shutil.copytree(team["ds"], ds)
    victim = sorted(glob.glob(os.path.join(ds, "hooks", "*", "*", "*", "*.parquet")))[0]
    if damage == "remove":
        os.unlink(victim)
    else:
        pq.write_table(pq.read_table(victim).drop(["epoch_ts"]), victim)
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "stats", "--dataset", ds], env=team["alice"].env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "1 export(s) have no hook summaries" in p.stderr and "re-export" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


# The hook latency and epoch columns as they were computed from the events themselves, before the
# exporter wrote summaries: the reference the summaries must reproduce exactly.
_HOOKS_FROM_EVENTS = """
WITH li AS (SELECT ledger, max(through_id) AS through_id FROM inputs GROUP BY ledger),
ev AS (
  SELECT e.part_user AS who, coalesce(e.project, '') AS project, coalesce(e.harness, 'claude') AS harness,
         e.ledger, e.id, e.ts, e.latency_us, e.policy_epoch
  FROM events e JOIN li ON e.ledger = li.ledger AND e.id <= li.through_id
  WHERE e.kind = 'hook' AND e.session_id <> '-'
),
newest AS (    -- each ledger's newest epoch-recording event (by id), then the newest of those by time
  SELECT who, project, harness, max_by(policy_epoch, CASE WHEN policy_epoch IS NULL THEN NULL ELSE id END) AS epoch,
         max_by(ts, CASE WHEN policy_epoch IS NULL THEN NULL ELSE id END) AS ts, ledger
  FROM ev GROUP BY ALL
)
SELECT who, project, harness, quantile_disc(latency_us, 0.5), quantile_disc(latency_us, 0.95),
       quantile_disc(latency_us, 0.99), count(latency_us),
       (SELECT max_by(n.epoch, CASE WHEN n.ts IS NULL THEN NULL ELSE (n.ts, n.ledger) END) FROM newest n
        WHERE n.who = ev.who AND n.project = ev.project AND n.harness = ev.harness)
FROM ev GROUP BY ALL ORDER BY ALL"""


def test_stats_from_hook_summaries_equal_stats_from_events(team):
    from reflex.analysis.compile_sql import DuckDB, SQL_LATEST_INPUTS
    from reflex.analysis.team import SQL_HOOKS
    eng = DuckDB(team["ds"])
    try:
        eng.materialize("li", SQL_LATEST_INPUTS)
        got = sorted(eng.rows(SQL_HOOKS))
        want = eng.rows(_HOOKS_FROM_EVENTS)
    finally:
        eng.close()
    assert len(want) >= 2 and all(r[6] > 0 for r in want)
    assert got == want


def test_hook_summaries_give_exact_percentiles_over_many_exports():
    """Random latencies split into exports of random sizes: percentiles from the summed value
    counts equal quantile_disc over the events (nearest rank at every group size)."""
    import random
    import duckdb
    import pyarrow as pa
    import pyarrow.compute as pc
    from reflex.analysis.dataset import hook_summary
    from reflex.analysis.team import SQL_HOOKS
    rng = random.Random(15)
    ledgers = {"L1": (4000, 1_000.0), "L2": (1500, 9_000.0)}   # L2: fewer ids, newer events (another machine)
    tables, parts, inputs = [], [], {"ledger": [], "through_id": []}
    for ledger, (n, t0) in ledgers.items():
        ev = {"id": list(range(1, n + 1)), "ts": [t0 + k for k in range(n)],
              "session_id": [rng.choice(["s1", "s2", "-"]) for _ in range(n)],
              "kind": [rng.choice(["hook", "hook", "run"]) for _ in range(n)],
              "project": [rng.choice(["/p/a", "/p/b", None, ""]) for _ in range(n)],
              "harness": [rng.choice(["claude", None, "codex"]) for _ in range(n)],
              "latency_us": [None if rng.random() < 0.05 else rng.randint(1, 400) for _ in range(n)],
              "policy_epoch": [rng.choice([None, None, ledger + "-e1", ledger + "-e2"]) for _ in range(n)],
              "part_user": [rng.choice(["alice", "bob"]) for _ in range(n)]}
        events = pa.table(ev)
        tables.append(events.append_column("ledger", pa.array([ledger] * n)))
        cuts = sorted(rng.sample(range(1, n), 7)) + [n]
        lo = 0
        for hi in cuts:          # one export per (user, range); the last range is not committed
            for user in ("alice", "bob"):
                part = events.slice(lo, hi - lo)
                chunk = part.filter(pc.equal(part["part_user"], user))
                s = hook_summary(chunk, ledger, hi)
                parts.append(s.append_column("part_user", pa.array([user] * s.num_rows, pa.string())))
            lo = hi
        inputs["ledger"] += [ledger] * (len(cuts) - 1)
        inputs["through_id"] += cuts[:-1]
    con = duckdb.connect()
    try:
        con.register("hooks", pa.concat_tables(parts))
        con.register("events", pa.concat_tables(tables))
        con.register("inputs", pa.table(inputs))
        con.execute("CREATE TEMP TABLE li AS SELECT ledger, max(through_id) AS through_id FROM inputs GROUP BY ledger")
        got = sorted(con.execute(SQL_HOOKS).fetchall())
        want = con.execute(_HOOKS_FROM_EVENTS).fetchall()
    finally:
        con.close()
    # The newer machine's epoch is in force, though the older ledger's events have higher ids.
    assert {r[7][:2] for r in got if r[7]} == {"L2"}
    assert len(want) >= 12 and got == want


@pytest.mark.parametrize("summarize", ["hook_counts", "hook_summary"])
def test_merged_chunk_summaries_equal_the_summary_of_all_events(summarize):
    """An export's workers summarize their own chunks (random sizes here, one chunk without hook
    events, one empty; in Arrow, hook_counts, as the export does, or with hook_summary's SQL); the
    merged summary is the one table hook_summary gives over every event."""
    import random
    import pyarrow as pa
    from reflex.analysis import dataset as D
    from reflex.analysis.dataset import hook_summary, merge_hook_summaries
    part_summary = getattr(D, summarize)
    rng = random.Random(16)
    n = 6000
    ev = pa.table({"id": list(range(1, n + 1)), "ts": [1e9 + k * rng.random() for k in range(n)],
                   "session_id": [rng.choice(["s1", "s2", "-"]) for _ in range(n)],
                   "kind": [rng.choice(["hook", "hook", "run"]) if k < 5000 or k > 5300 else "run" for k in range(n)],
                   "project": [rng.choice(["/p/a", "/p/b", None, ""]) for _ in range(n)],
                   "harness": [rng.choice(["claude", None, "codex"]) for _ in range(n)],
                   "latency_us": [None if rng.random() < 0.05 else rng.randint(1, 300) for _ in range(n)],
                   "policy_epoch": [None if rng.random() < 0.9 else rng.choice(["e1", "e2", "e3"]) for _ in range(n)]})
    cuts = sorted(rng.sample(range(1, 5000), 9)) + [5000, 5300, 5300, n]
    parts, lo = [], 0
    for hi in cuts:
        parts.append(part_summary(ev.slice(lo, hi - lo), "L", 99))
        lo = hi
    assert any(p.num_rows == 0 for p in parts)
    parts.append(part_summary(ev.filter(pa.compute.equal(ev["kind"], "run")), "L", 99))   # no hook event
    whole = hook_summary(ev, "L", 99)
    assert whole.num_rows > 100 and whole["policy_epoch"].null_count < whole.num_rows
    assert merge_hook_summaries(parts, "L", 99).equals(whole)
    assert merge_hook_summaries([], "L", 99).equals(hook_summary(ev.slice(0, 0), "L", 99))


@pytest.mark.parametrize("text", [
    '{"tool_input":{"command":"x","description":"curl https://u:pw@h/ ghp_' + "a" * 40 + '"},"tool_response":"y"}',
    '{"tool_input":{"description":"https:\\/\\/u:pw@host\\/p"},"error":"e"}',
    '{"tool_input":{"description":"tok\\u0065n ghp\\u005f' + "b" * 40 + '"},"stdout":"s"}',
    '{"a":"-----BEGIN RSA PRIVATE KEY-----\\nabc\\n-----END RSA PRIVATE KEY-----","error":"e"}',
    '{"prompt":"p","x":[{"message":1,"y":"sk-' + "c" * 40 + '"}],"k":"line\\n?token=abc"}',
    '{"tool_input":{"description":"plain words","file_path":"/x/y"},"tool_response":"https://a:b@c ghp_'
    + "d" * 40 + '"}',
])
def test_scrub_fast_path_equals_redacting_every_string(text):
    from reflex.analysis.dataset import _OUTPUT_KEYS, _drop_outputs, _dumps, _redact_strings, scrub_data
    got = scrub_data(text)
    assert got == _dumps(_redact_strings(_drop_outputs(json.loads(text))))
    assert not any('"%s"' % k in got for k in _OUTPUT_KEYS) and "ghp_" not in got and "pw@" not in got


@pytest.mark.parametrize("text", [
    # no output key, but a secret only visible once the JSON string is decoded
    '{"tool_input":{"description":"https:\\/\\/u:pw@host\\/p"}}',
    '{"note":"tok ghp\\u005f' + "e" * 40 + '"}',
    # a key spelled with an escape is still an output key
    '{"\\u0065rror":"the output","permission_mode":"default"}',
    # tool_input content keys are dropped even when nothing else is
    '{"tool_input":{"description":"d","old_string":"what an edit removed"}}',
    '{"a":{"b":[{"stdout":"nested output"}]},"tool_input":{"file_path":"/p","timeout":5}}',
    # nothing to drop, nothing to redact: the text leaves as it is
    '{"permission_mode":"default","tool_input":{"description":"step 1","run_in_background":false}}',
])
def test_scrub_reads_escapes_and_tool_input(text):
    from reflex.analysis.dataset import _OUTPUT_KEYS, _drop_outputs, _dumps, _redact_strings, scrub_data
    got = scrub_data(text)
    assert got == _dumps(_redact_strings(_drop_outputs(json.loads(text))))
    assert not any(k in json.loads(got) for k in _OUTPUT_KEYS)
    assert "pw@" not in got and "ghp_" not in got and "output" not in got and "removed" not in got


def test_export_in_parallel_chunks_equals_one_pass(team, tmp_path, monkeypatch):
    """A large export is cut into jobs (ranges of event ids, chunks of sessions for the facts) run
    by a pool of processes: the dataset it writes holds the same rows as one pass in this process."""
    from reflex.analysis import dataset as D
    ledger = team["alice"].paths.ledger
    one = str(tmp_path / "one")
    res_one = D.export_dataset(ledger, one, host="h", user="u", now=1.0, workers=1)
    monkeypatch.setattr(D, "CHUNK_EVENTS", 1)          # every session its own chunk
    many = str(tmp_path / "many")
    res_many = D.export_dataset(ledger, many, host="h", user="u", now=1.0, workers=2)
    assert res_one.sessions == res_many.sessions >= 2 and res_one.rows == res_many.rows > 0
    assert len(D._chunks([(sid, n) for sid, n, _h in D._touched(D_reader(ledger), 0, res_one.last_id)])) == res_one.sessions
    for table in D.TABLES:
        # (an inputs row records the files its export wrote: the pool writes the events in more files)
        cols = "* EXCLUDE (files)" if table == "inputs" else "*"
        a = _q("SELECT list(t ORDER BY t) FROM (SELECT CAST(x AS VARCHAR) AS t FROM (SELECT %s FROM "
               "read_parquet('%s/%s/*/*/*/*.parquet')) x)" % (cols, one, table))
        b = _q("SELECT list(t ORDER BY t) FROM (SELECT CAST(x AS VARCHAR) AS t FROM (SELECT %s FROM "
               "read_parquet('%s/%s/*/*/*/*.parquet')) x)" % (cols, many, table))
        assert a == b and a, table
    for res, root in ((res_one, one), (res_many, many)):
        recorded = json.loads(_q("SELECT files FROM read_parquet('%s/inputs/*/*/*/*.parquet')" % root))
        assert set(recorded) == {D.dataset_key(root, p) for p in res.files if os.sep + "inputs" + os.sep not in p}
        assert all(recorded[D.dataset_key(root, p)] == D.file_hash(p) for p in res.files if p.endswith(".parquet")
                   and os.sep + "inputs" + os.sep not in p)
    # The events are written by ranges of ids, each file named by the ids it holds; the other
    # tables once per export.  The names depend on the ranges, never on the pool's timing.
    def names(res, root, events):
        return sorted(os.path.relpath(p, root) for p in res.files if (os.sep + "events" + os.sep in p) == events)
    assert names(res_one, one, False) == names(res_many, many, False)
    assert len(names(res_one, one, True)) == 1 and len(names(res_many, many, True)) == res_many.rows
    for p in res_many.files:
        m = D.parse_part_name(p)
        if os.sep + "events" + os.sep in p:
            assert _q("SELECT list(id ORDER BY id) FROM read_parquet('%s')" % p) == list(range(m["first"], m["last"] + 1))
    again = str(tmp_path / "again")
    res_again = D.export_dataset(ledger, again, host="h", user="u", now=1.0, workers=1)
    assert names(res_again, again, True) == names(res_many, many, True)


def test_export_and_compile_while_the_daemon_writes(tmp_path):
    """The user's world: the daemon is up and an agent is working while a cron job exports the
    ledger and someone compiles it.  Each reads one state of the ledger (the events up to the one
    its digest names); the exports lose and duplicate nothing; and once the work stops, the dataset
    compiles to the bytes of the ledger's own compile, although the daemon rewrote the file (its
    WAL checkpointed when it stopped) after the last event had been exported."""
    import re
    import sqlite3
    import threading
    from tests.support.team_ledgers import tests_file
    dev = _developer(str(tmp_path), "carol")
    ds = str(tmp_path / "dataset")
    live, exported = [], []
    dev.start()
    try:
        loop_session(dev, "carol-1", "claude-haiku-4-5")
        stop, worked = threading.Event(), []

        def agent_at_work():
            a = dev.agent("carol-2", "claude-sonnet-4-5", failing=2)
            a.start()
            while not stop.is_set():
                a.bash("python -m pytest -q")            # rewritten to ctx run: hook and run events
                worked.append(1)
            a.edit("test_a.py", tests_file(0))
            a.bash("python -m pytest -q")
            a.end()

        t = threading.Thread(target=agent_at_work)
        t.start()
        try:
            for k in range(3):
                msg = _ctx(dev, "ledger", "export", "--format", "parquet", "--dataset", ds).stderr.decode()
                exported.append(msg)
                out = str(tmp_path / ("live-%d.toml" % k))
                _ctx(dev, "policy", "compile", "--ledger", dev.paths.ledger, "--out", out)
                live.append(out)
        finally:
            stop.set()
            t.join(300)
        assert not t.is_alive() and len(worked) >= 2
    finally:
        dev.stop()
    with sqlite3.connect("file:%s?mode=ro" % dev.paths.ledger, uri=True) as c:
        ids = {h: i for i, h in c.execute("SELECT id, hash FROM events")}
        total = c.execute("SELECT count(*) FROM events").fetchone()[0]
        for out in live:
            # each live compile names the event it read up to and counts exactly the events up to it
            digest, events = re.search(r"#\s+(b3:\S+)\s+sqlite\s+events=(\d+)", open(out).read()).groups()
            assert digest in ids, "the digest names no event of the ledger"
            assert c.execute("SELECT count(*) FROM events WHERE id <= ?", (ids[digest],)).fetchone()[0] == int(events)
    assert any("appended" in m for m in exported)
    _ctx(dev, "ledger", "export", "--format", "parquet", "--dataset", ds)        # what came after the last one
    assert _rows(ds) == total > 0
    assert _q("SELECT count(DISTINCT uid) FROM read_parquet('%s/events/*/*/*/*.parquet')" % ds) == total
    a, b = str(tmp_path / "ledger.toml"), str(tmp_path / "dataset.toml")
    _ctx(dev, "policy", "compile", "--ledger", dev.paths.ledger, "--out", a)
    _ctx(dev, "policy", "compile", "--dataset", ds, "--out", b)
    with open(a, "rb") as f, open(b, "rb") as g:
        assert f.read() == g.read()


def test_two_live_ledgers_compile_as_two(tmp_path):
    """Two developers' daemons are up, their new events still in the WAL: both main files are the
    same fresh schema, byte for byte.  Read as file bytes they were "the same ledger named twice"
    and one developer's sessions were silently dropped; they are two ledgers."""
    devs = [_developer(str(tmp_path), n) for n in ("dana", "eli")]
    try:
        for dev, session in zip(devs, (loop_session, careful_session)):
            dev.start()
            session(dev, dev.name + "-1", "claude-haiku-4-5")
        out = _ctx(devs[0], "policy", "compile", "--ledger", devs[0].paths.ledger,
                   "--ledger", devs[1].paths.ledger).stdout.decode()
    finally:
        for dev in devs:
            dev.stop()
    assert out.count("  sqlite  events=") == 2, out
    ledgers = next(line for line in out.splitlines() if line.startswith("ledgers = "))
    assert ledgers.count('"b3:') == 2, ledgers


def test_teammates_share_a_group_writable_dataset_whatever_their_umask(team):
    """A team's dataset on a shared disk: its root group-owned by the team and setgid (2775), each
    developer a different uid with the usual umask 022.  The first exporter creates
    `events/date=D/`; the second must be able to add its `host=` directory there (it used to get
    0755 from the first, and the teammate's export died on a PermissionError traceback).  Where a
    directory really is not writable, the export is a clear error that commits nothing."""
    import shutil
    import sqlite3
    import tempfile
    from tests.adversarial._other_user import as_other, other_uid
    from tests.analysis.test_policy_compile import ledger as make_ledger, session
    from reflex.analysis import dataset as D
    alice = other_uid()
    bob, carol, group = alice + 1, alice + 2, alice + 500
    base = tempfile.mkdtemp(prefix="ctx-team-", dir="/tmp")
    try:
        os.chmod(base, 0o755)
        root = os.path.join(base, "team")
        os.mkdir(root)
        os.chown(root, 0, group)
        os.chmod(root, 0o2775)
        ledgers = {}
        for uid, src in ((alice, team["alice"].paths.ledger), (bob, team["bob"].paths.ledger), (carol, None)):
            home = os.path.join(base, str(uid))
            os.mkdir(home)
            ledgers[uid] = os.path.join(home, "ledger.db")
            if src:
                shutil.copy(src, ledgers[uid])
            else:
                make_ledger(ledgers[uid], [session("carol-1")])
            with open(os.path.join(home, "said"), "w"):
                pass
            for name in ("", "ledger.db", "said"):
                os.chown(os.path.join(home, name), uid, group)
        # what the export imports, imported before the forks (another uid may not read this interpreter's tree)
        shutil.copy(ledgers[carol], os.path.join(base, "warm.db"))
        D.export_dataset(os.path.join(base, "warm.db"), os.path.join(base, "warm"), host="h", user="u", workers=1)

        def export(uid):
            os.umask(0o022)
            try:
                D.export_dataset(ledgers[uid], root, host="box-%d" % uid, user="u%d" % uid, workers=1)
            except D.DatasetError as e:
                with open(os.path.join(os.path.dirname(ledgers[uid]), "said"), "w") as f:
                    f.write(str(e))

        def export_as(uid):
            """The export in a child process running as uid, in the team's group, umask 022."""
            as_other(uid, export, uid, group=group)

        export_as(alice)
        export_as(bob)
        events = 0
        for uid in (alice, bob):
            with sqlite3.connect("file:%s?mode=ro" % ledgers[uid], uri=True) as c:
                events += c.execute("SELECT count(*) FROM events").fetchone()[0]
        assert _rows(root) == events > 0
        for d, _s, _f in os.walk(root):
            st = os.stat(d)
            assert st.st_mode & 0o7777 == 0o2775 and st.st_gid == group, (d, oct(st.st_mode))
        # the directories as an umask-022 exporter used to leave them: carol cannot add hers
        for d, _s, _f in os.walk(root):
            if d != root:
                os.chmod(d, 0o755)
        before = _files(root)
        export_as(carol)
        with open(os.path.join(os.path.dirname(ledgers[carol]), "said")) as f:
            said = f.read()
        assert "cannot write" in said and "Permission denied" in said and "Nothing was committed" in said, said
        assert _files(root) == before
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_full_disk_stops_the_export_cleanly(tmp_path):
    """The disk fills up mid-export (here: a file-size limit, with SIGXFSZ ignored as a full disk
    would give ENOSPC instead of a signal).  The export says which file it could not write and
    that nothing was committed, leaves no temp file and no commit, and the next export, with
    room again, writes every event exactly once."""
    import resource
    import signal
    import sqlite3
    from tests.analysis.test_policy_compile import ledger as make_ledger, session
    led = make_ledger(tmp_path / "ledger.db", [session("s%03d" % i) for i in range(400)])
    ds = str(tmp_path / "ds")
    env = dict(os.environ, CTX_HOME=str(tmp_path / "home"))
    args = [sys.executable, "-m", "reflex.entry", "ledger", "export", "--ledger", led, "--format", "parquet",
            "--dataset", ds, "--workers", "1"]

    def full_disk(room):
        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (room, room))
        return limit

    # No room even for SQLite's -shm file next to the ledger: the disk is named, not the ledger
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, preexec_fn=full_disk(4096))
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
    assert "cannot read" in p.stderr and "is the disk full" in p.stderr and "damaged" not in p.stderr, p.stderr
    # Room to read, not to write the dataset: the file is named, nothing is committed or left
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, preexec_fn=full_disk(64 * 1024))
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
    assert "cannot write" in p.stderr and "File too large" in p.stderr and "Nothing was committed" in p.stderr, p.stderr
    assert _files(ds) == [], _files(ds)
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    with sqlite3.connect(led) as c:
        total = c.execute("SELECT count(*) FROM events").fetchone()[0]
    assert _rows(ds) == total > 1000
    assert _q("SELECT count(DISTINCT uid) FROM read_parquet('%s/events/*/*/*/*.parquet')" % glob.escape(ds)) == total


def test_hash_user_leaves_no_name_of_the_exporter(tmp_path):
    """`--hash-user` is asked for so that nobody reading the dataset can tell whose sessions these
    are.  Hashing the user partition alone left the name in the host partition, in every working
    directory and project (/home/NAME/...), in the hook payloads' transcript paths and in commands
    that name a file under home.  With --hash-user none of it is left, and projects read `~/...`."""
    from tests.support.team_ledgers import AgentSim, tests_file
    name, host = "zed-tester", "zeds-laptop"
    dev = _developer(str(tmp_path), name)
    home = dev.env["HOME"]
    project = os.path.join(home, "src", "app")
    os.makedirs(project)
    with open(os.path.join(project, "test_a.py"), "w") as f:
        f.write(tests_file(2))
    dev.start()
    try:
        a = AgentSim(dev.paths, dev.env, "zed-1", project, "claude-haiku-4-5")
        a.start()
        a.bash("python -m pytest -q")
        a.bash("cat %s/src/app/test_a.py" % home)
        a.end()
    finally:
        dev.stop()
    ds = str(tmp_path / "ds")
    _ctx(dev, "ledger", "export", "--format", "parquet", "--dataset", ds, "--hash-user", "--host", host)
    seen = "\n".join(_files(ds))
    import duckdb
    con = duckdb.connect()
    for table in ("events", "facts", "hooks", "inputs"):
        rel = con.sql("SELECT * FROM read_parquet('%s/%s/*/*/*/*.parquet', hive_partitioning = true)"
                      % (glob.escape(ds), table))
        texts = [c for c, t in zip(rel.columns, rel.types) if str(t) == "VARCHAR"]
        for row in rel.select(*texts).fetchall():
            seen += "\n" + "\n".join(v for v in row if v)
    con.close()
    assert "zed-1" in seen and "pytest" in seen          # the events are there ...
    for needle in (name, host, home):
        assert needle not in seen, needle                  # ... but not whose they are
    assert "~/src/app" in seen
    board = json.loads(_ctx(dev, "stats", "--dataset", ds, "--json").stdout)
    assert {r["project"] for r in board["rows"]} == {"~/src/app"}
    # ... and it compiles to the ledger's epoch, byte for byte
    assert _ctx(dev, "policy", "compile", "--dataset", ds).stdout == _ctx(
        dev, "policy", "compile", "--ledger", dev.paths.ledger).stdout
    # without --hash-user the same export names them (the assertion above can fail)
    plain = str(tmp_path / "plain")
    _ctx(dev, "ledger", "export", "--format", "parquet", "--dataset", plain, "--host", host)
    assert any(host in f for f in _files(plain)) and any(name in f for f in _files(plain))


def D_reader(path):
    from reflex.analysis.stats.ledger_read import Reader
    return Reader(path)


@pytest.mark.parametrize("args, says", [
    (["--workers", "2"], "--workers go with --dataset"),
    (["--format", "parquet", "--dataset", "DS", "--workers", "0"], "0 is not in the range x>=1"),
])
def test_workers_option_misuse_is_a_clear_error(team, tmp_path, args, says):
    args = [str(tmp_path / "ds") if a == "DS" else a for a in args]
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "ledger", "export"] + args, env=team["alice"].env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and says in p.stderr, p.stderr
    assert not os.path.exists(tmp_path / "ds")


# Pieces of event data texts: kept and dropped keys, escapes, secret shapes and near misses.
_PIECES = ['{"tool_input":{"description":"d","timeout":5}', '{"tool_input":{"old_string":"o"}}', '"tool_input":{}',
           '"error":"e"', '"errors":1', '"stdout"', '"policy_epoch":"e1"', '"policy_epoch"', "\\u0065", "\\/",
           "\\n", "https://", "ghp_", "PRIVATE KEY", "PRIVATE  KEY", "?a=", "&", "sk-", "xoxb-", "AKIA", "{", "}",
           "sEcReT", "\u017fecret", "\u00dfecret", "?pa\u017f\u017fword=", "&api_\u212aey=",
           '"', ",", ":", " ", "plain", "é", "null", "true", "-1.5e3"]


def _data_texts(n, seed):
    import random
    rnd = random.Random(seed)
    for _ in range(n):
        yield "".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 8)))


def test_column_masks_say_what_the_python_fast_paths_say():
    """The export finds the texts redaction may change with Arrow (RE2, a column at once): its
    masks must agree with the Python fast paths text by text, and what neither flags is unchanged."""
    import pyarrow as pa

    from reflex.analysis import dataset as D
    from reflex.digest import redact as R
    texts = list(_data_texts(40_000, 11)) + ["", None]
    arr = pa.array(texts, pa.string())
    data_mask = D.flagged_data(arr).to_pylist()
    text_mask = D.flagged_text(arr).to_pylist()
    epoch_mask = D._names_epoch(arr).to_pylist()
    seen = {True: 0, False: 0}
    for t, dm, tm, em in zip(texts, data_mask, text_mask, epoch_mask):
        if t is None:
            assert dm is tm is em is None
            continue
        secret = "PRIVATE KEY" in t or R.may_hold_secret(t)
        assert tm is secret, t
        assert dm is (secret or D._ESCAPES.search(t) is not None or not D._nothing_to_drop(t)), t
        assert em is ('"policy_epoch"' in t), t
        if not dm:
            assert D.scrub_data(t) == t
        seen[dm] += 1
    assert min(seen.values()) > 4_000          # both answers were exercised


def test_event_tables_equal_the_per_row_functions():
    """A date's events as the export writes them: each data, command and decision_detail exactly as
    scrub_data / _red make it, and the epoch _policy_epoch reads."""
    from reflex.analysis import dataset as D
    texts = list(_data_texts(3_000, 12))
    cols = D.EXPORT_COLUMNS
    rows = []
    for k, t in enumerate(texts):
        r = dict.fromkeys(cols)
        r.update(id=k + 1, ts=86400.0 * 20000 + k, session_id="s", data=t,
                 command=None if k % 7 == 0 else texts[-k - 1], decision_detail=texts[k // 2] if k % 3 else None)
        rows.append(tuple(r[c] for c in cols))
    tables = D._EventTables("L", {"s": "/p"})
    tables.add(D.rows_table(rows))
    (table,) = tables.tables().values()
    got = table.to_pydict()
    assert got["data"] == [D.scrub_data(t) for t in texts]
    assert got["command"] == [None if r[cols.index("command")] is None else D._red(r[cols.index("command")])
                              for r in rows]
    assert got["decision_detail"] == [None if r[cols.index("decision_detail")] is None
                                      else D._red(r[cols.index("decision_detail")]) for r in rows]
    assert got["policy_epoch"] == [D._policy_epoch(t) for t in texts]
    assert sum(a != b for a, b in zip(got["data"], texts)) > 5 and set(got["project"]) == {"/p"}


def test_date_masks_put_each_row_in_its_date():
    """The export splits a batch by date in Arrow: each row lands in _date(ts)'s partition, near
    midnight (where ts / 86400 rounds up to the next day), before 1970, and for timestamps that
    are no date (none, infinite, beyond year 9999)."""
    import math
    import random
    import pyarrow as pa
    from reflex.analysis import dataset as D
    rnd = random.Random(5)
    # (-5e-324 / 86400 rounds to -0.0, whose floor is day 0; ts // 86400 is day -1)
    ts = [None, math.inf, -math.inf, 1e300, -1.5, 0.0, -86400.0, 86400.0, 253402300800.0 * 2, -5e-324, -1e-320]
    for _ in range(4000):
        day = rnd.randint(-400, 40000)
        edge = math.nextafter(day * 86400.0, -math.inf) if rnd.random() < 0.3 else day * 86400.0 + rnd.random() * 86400
        ts.append(edge)
    ts += [1.7e9 + k * 0.37 for k in range(2000)]
    rnd.shuffle(ts)
    masks = D.date_masks(pa.array(ts, pa.float64()))
    got = [None] * len(ts)
    for date, mask in masks:
        for j, hit in enumerate(mask.to_pylist()):
            if hit:
                assert got[j] is None, (ts[j], got[j], date)      # one date a row
                got[j] = date
    assert got == [D._date(t) for t in ts]
    assert len({d for d, _m in masks}) > 3000 and "1970-01-01" in dict(masks)


def test_event_tables_split_batches_by_date_in_row_order():
    """Rows of many dates, added in several calls and more than one batch: each date's table holds
    exactly that date's rows, in the order they were added."""
    from reflex.analysis import dataset as D
    cols = D.EXPORT_COLUMNS
    rows = []
    for k in range(D.BATCH + 5000):
        r = dict.fromkeys(cols)
        r.update(id=k + 1, ts=86400.0 * (20000 + (k * 7919) % 13) + k % 86400, session_id="s%d" % (k % 50),
                 data='{"k":%d}' % k)
        rows.append(tuple(r[c] for c in cols))
    tables = D._EventTables("L", {})
    for lo in range(0, len(rows), 997):
        tables.add(D.rows_table(rows[lo:lo + 997]))
    got = {d: t.column("id").to_pylist() for d, t in tables.tables().items()}
    want = {}
    for r in rows:
        want.setdefault(D._date(r[cols.index("ts")]), []).append(r[0])
    assert got == want and len(got) == 13


def test_sessions_without_runs_give_the_same_facts_from_fewer_rows(team):
    """A session with no run event has its facts computed from its fact-bearing rows alone
    (dataset._fact_bearing): they are the facts of its whole history."""
    from reflex.analysis import dataset as D
    from reflex.analysis.stats.ledger_read import Reader
    cols = D.EXPORT_COLUMNS
    checked = 0
    for dev in (team["alice"], team["bob"]):
        reader = Reader(dev.paths.ledger, migrate=False)
        try:
            rows = reader.query("SELECT %s FROM events WHERE session_id != '-' ORDER BY session_id, seq"
                                % ", ".join(cols))
        finally:
            reader.close()
        by = {}
        for r in rows:
            by.setdefault(r[cols.index("session_id")], []).append(r)
        for sid, srows in by.items():
            assert D._fact_bearing(srows) is srows          # every session here ran something
            runless = [r for r in srows if r[cols.index("kind")] != "run"]
            kept = D._fact_bearing(runless)
            assert len(kept) < len(runless)
            whole, fewer = ({c: [] for c, _k in D.FACT_COLUMNS} for _ in range(2))
            D._facts_rows(whole, sid, [dict(zip(cols, r)) for r in runless], "L", 9)
            D._facts_rows(fewer, sid, [dict(zip(cols, r)) for r in kept], "L", 9)
            assert whole == fewer and whole["model"][0] and whole["project"][0]
            checked += 1
    assert checked >= 4


def _json_docs():
    """JSON texts shaped like event data and unlike it: nested values, the epoch key at the top,
    nested, twice, spelled with an escape, non-string epochs, NaN, whitespace, broken texts."""
    from hypothesis import strategies as st
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
    values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(st.sampled_from(["a", "policy_epoch", "b\"", "é", "c\\"]),
                                                                           inner, max_size=4)), max_leaves=12)
    top = st.dictionaries(st.sampled_from(["permission", "policy_epoch", "tool_input", "x", "policy\u005fepoch"]),
                          values, max_size=5)
    epoch = st.one_of(st.text(max_size=16), st.sampled_from(["default@default", "e-1@abc", 'q"uote', "new\nline"]))

    @st.composite
    def doc(draw):
        d = draw(top)
        if draw(st.booleans()):
            d["policy_epoch"] = draw(epoch)
        text = json.dumps(d, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1, "\t"])),
                          separators=draw(st.sampled_from([None, (",", ":"), (" , ", " : ")])), sort_keys=draw(st.booleans()))
        cut = draw(st.sampled_from(["", "dup", "escape", "truncate", "trail", "array"]))
        if cut == "dup" and text.startswith("{") and len(text) > 2:
            text = '{"policy_epoch":"first",' + text[1:]
        elif cut == "escape":
            text = text.replace('"policy_epoch"', '"policy\\u005fepoch"', 1)
        elif cut == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        elif cut == "trail":
            text += draw(st.sampled_from([" ", "\n", " x", ",", "}"]))
        elif cut == "array":
            text = "[" + text + "]"
        return text
    return doc()


def test_policy_epochs_read_by_arrow_are_the_json_ones():
    """The export reads most events' policy epoch with RE2 over the column (policy_epochs): for
    every text, the value json.loads gives (_policy_epoch)."""
    import pyarrow as pa
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from reflex.analysis import dataset as D

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.lists(_json_docs(), min_size=1, max_size=40))
    def check(texts):
        got = D.policy_epochs(pa.array(texts, pa.string())).to_pylist()
        assert got == [D._policy_epoch(t) for t in texts]
    check()
    # ctx's own data (the fast path) and what it must leave to json
    texts = ['{"permission":{"mode":"b","verdict":"allow"},"permission_mode":"b","policy_epoch":"default@default",'
             '"tool_input":{"description":"step 2"}}', '{"a":{"policy_epoch":"y"}}', '{"policy_epoch":5}',
             '{"policy_epoch":"a","policy_epoch":"b"}', '{"policy\\u005fepoch":"q","policy_epoch":"w"}',
             '{"a":NaN,"policy_epoch":"n"}', '{"policy_epoch":"e"} x', '{"a":"policy_epoch"}', None]
    assert D.policy_epochs(pa.array(texts, pa.string())).to_pylist() == [
        "default@default", None, None, "b", "w", "n", None, None, None]


def test_an_export_without_the_parquet_extra_says_what_to_install(team, tmp_path):
    """A ctx installed without the parquet extra's ADBC driver (an older extra) says what to
    install, and writes nothing."""
    ds = str(tmp_path / "ds")
    code = ("import sys; sys.modules['adbc_driver_sqlite'] = None; sys.modules['adbc_driver_sqlite.dbapi'] = None; "
            "sys.argv = ['ctx'] + sys.argv[1:]; from reflex.entry import main; sys.exit(main())")
    p = subprocess.run([sys.executable, "-c", code, "ledger", "export", "--ledger", team["alice"].paths.ledger,
                        "--format", "parquet", "--dataset", ds], env=team["alice"].env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode != 0 and "pip install 'ctx-reflex[parquet]'" in p.stderr, p.stderr[-2000:]
    assert "Traceback" not in p.stderr and not os.path.exists(ds)
