"""Golden scorecards: sessions recorded by the REAL daemon, checked field by field.

One daemon, three simulated agents (evals/team_ledgers_example.AgentSim: hook payloads through
reflex.shim.hook.deliver, rewritten commands through `ctx run`, a real pytest project):

  loop-1   the seed's loop: digest, `| tail -50`, `--tb=long`, edit, re-run (8 -> 5), edit, green
  plain-1  nothing ctx digests, and a pwd / echo alternation
  care-1   a digest whose hint is retrieved, a narrower re-run of a named failing test, a
           denied `cat .env` and its remediation, an edit, green

Values the scenario fixes are asserted literally (trajectory 8 8 8 5 0, two requeries, the
streak's tool_use_ids, zero savings without digests ...).  Values that depend on how the
daemon chose to render (densities, passthrough, token counts) are asserted against the
ledger's own rows, read here with plain SQL, so each field is checked against an independent
reading of the same ledger.
"""

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from tests.support.team_ledgers import Developer, careful_session, loop_session, plain_session


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("golden"))
    dev = Developer(root, "dev")
    try:
        dev.start()
        loop = loop_session(dev, "loop-1", "claude-haiku-4-5")
        plain = plain_session(dev, "plain-1", "claude-sonnet-4-5")
        care = careful_session(dev, "care-1", "claude-opus-4-1")
    finally:
        dev.stop()
    return {"dev": dev, "ledger": dev.paths.ledger, "loop": loop, "plain": plain, "care": care}


def ctx(recorded, *args, check=True):
    p = subprocess.run([sys.executable, "-m", "reflex.entry"] + list(args), env=dict(recorded["dev"].env, NO_COLOR="1"),
                       capture_output=True, text=True, timeout=60)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def card_of(recorded, session):
    return json.loads(ctx(recorded, "stats", "--ledger", recorded["ledger"], "--session", session, "--json").stdout)


def sql(recorded, query, args=()):
    conn = sqlite3.connect(recorded["ledger"])
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(query, args)]
    finally:
        conn.close()


def runs_of(recorded, session):
    rows = sql(recorded, "SELECT * FROM events WHERE session_id = ? AND kind = 'run' ORDER BY seq", (session,))
    for r in rows:
        r["data"] = json.loads(r["data"])
    return rows


def tid(session, n):
    return "toolu_%s_%02d" % (session, n)


def test_loop_session_scorecard(recorded):
    card = card_of(recorded, "loop-1")
    assert card["schema"] == "ctx-scorecard/v1"
    s = card["session"]
    n_events = sql(recorded, "SELECT count(*) AS n FROM events WHERE session_id = 'loop-1'")[0]["n"]
    assert (s["id"], s["model"], s["reader"], s["events"], s["boundaries"], s["ended"]) == (
        "loop-1", "claude-haiku-4-5", "haiku", n_events, 2, True)
    assert card["commands"] == {"total": 5, "by_decision": {"pass": 0, "rewrite": 5, "deny": 0, "none": 0},
                                "rewrites_held_back": 0, "retrievals": 0, "edits": 2}
    runs = runs_of(recorded, "loop-1")
    assert [r["data"]["failed_count"] for r in runs] == [8, 8, 8, 5, 0]
    digested = sum(1 for r in runs if not r["data"]["passthrough"] and r["data"]["delivered_tokens"] is not None)
    assert card["runs"]["total"] == 5 and card["runs"]["failing"] == 4
    assert card["runs"]["digested"] == digested and card["runs"]["passthrough"] == 5 - digested
    assert card["runs"]["by_family"] == {"pytest": {"runs": 5, "digested": digested, "failing": 4}}

    # rounds: two requeries (tail -50, --tb=long) before the first edit; the failures fall to 0
    ro = card["rounds"]
    assert (ro["reissues"], ro["requeries"], ro["retries"], ro["denied"], ro["extra"]) == (4, 2, 0, 0, 2)
    (sig,) = ro["by_signature"]
    assert (sig["command"], sig["issues"], sig["requeries"], sig["trajectory"], sig["verdict"]) == (
        "python -m pytest -q", 5, 2, [8, 8, 8, 5, 0], "fixed")
    assert sig["tool_use_ids"] == [tid("loop-1", n) for n in (1, 2, 3, 5, 7)]

    # evidence: the first two digests were asked for again; the edit after the third landed
    assert card["evidence"]["by_outcome"] == {
        "retrieved": 0, "narrowed": 0, "landed": 2, "validated_after_edit": 1, "discriminated": 1,
        "reversed": 0, "equivalent_requery": 2, "redundant": 2, "abandoned": 0}
    assert card["evidence"]["censored_runs"] == 0
    rw = card["interventions"]["rewrite"]
    assert (rw["count"], rw["applied"], rw["landed"], rw["censored"], rw["rate"]) == (5, 5, 3, 0, 0.6)
    assert rw["not_landed"] == [tid("loop-1", 1), tid("loop-1", 2)]
    hinted = [i + 1 for i, r in enumerate(runs) if r["data"]["hints"] and not r["data"]["passthrough"]]
    assert card["interventions"]["hints"]["count"] == len(hinted)
    assert card["interventions"]["hints"]["landed"] == 0

    # tokens, against the ledger: the daemon counted every run's harness-alone baseline exactly
    # (for the sliced run: the agent's own slice), and these outputs are under the harness limit
    t = card["tokens"]
    assert t["raw"] == sum(r["data"]["raw_tokens"] for r in runs)
    assert t["delivered"]["ctx_runs"] == sum(r["data"]["delivered_tokens"] for r in runs)
    unsliced = [r for r in runs if not r["data"]["slicer"]]
    assert all(r["data"]["harness_tokens"] == r["data"]["raw_tokens"] for r in unsliced)
    sliced = [r for r in runs if r["data"]["slicer"]]
    assert all(r["data"]["harness_tokens"] == r["data"]["view_tokens"] for r in sliced)
    base = sum(r["data"]["harness_tokens"] for r in runs)
    assert t["harness_baseline"] == base
    assert t["saved"] == base - sum(r["data"]["delivered_tokens"] for r in runs)
    assert t["baseline"] == {"runs_counted": 5, "exact": 5, "estimated": 0, "unknown": 0, "excluded_search": 0,
                             "cut_failure": 0, "cut_success": 0}
    co = card["cost"]
    assert co["price_per_extra_round"] == 2000 and co["extra_rounds"] == 2
    assert co["total"] == t["delivered"]["total"] + 2 * 2000
    requeried_digests = 2 if digested >= 2 else digested
    assert co["requeries_after_digest"] == requeried_digests
    assert co["digest_net"] == t["saved"] - 2000 * requeried_digests

    # latency: every hook event, every paired run
    hooks = sql(recorded, "SELECT latency_us FROM events WHERE session_id='loop-1' AND kind='hook' ORDER BY latency_us")
    lat = card["latency"]["hook_us"]
    assert lat["n"] == len(hooks) and lat["max"] == hooks[-1]["latency_us"]
    assert lat["p50"] == hooks[(len(hooks) + 1) // 2 - 1]["latency_us"]
    assert card["latency"]["run_overhead_ms"]["n"] == 5

    # anomalies: one starvation streak (the two re-runs), the repeated signature, unused hints
    an = card["anomalies"]
    (streak,) = an["starvation_streaks"]
    assert streak["length"] == 2 and streak["tool_use_ids"] == [tid("loop-1", n) for n in (1, 2, 3)]
    assert streak["commands"] == ["python -m pytest -q", "python -m pytest -q | tail -50",
                                  "python -m pytest -q --tb=long"]
    (rep,) = an["repeated_signatures"]
    assert (rep["issues"], rep["requeries"]) == (5, 2)
    assert an["thrash"] == []
    if len(hinted) >= 2:
        assert [z["class"] for z in an["zero_landing_interventions"]] == ["hints"]


def test_loop_session_detectors_match_the_outcomes_table(recorded):
    card = card_of(recorded, "loop-1")
    rows = sql(recorded, "SELECT seq, detector, reason, tool_use_id FROM outcomes WHERE session_id='loop-1' "
                         "ORDER BY seq, id")
    det = card["detectors"]
    if rows:
        assert det["source"] == "ledger"
        assert [(f["seq"], f["detector"], f["tool_use_id"]) for f in det["firings"]] == [
            (r["seq"], r["detector"], r["tool_use_id"]) for r in rows]
    else:
        assert det["source"] == "replayed"
    starving = [f for f in det["firings"] if f["detector"] == "starvation" and "circuit breaker" not in f["reason"]]
    assert [f["tool_use_id"] for f in starving] == [tid("loop-1", 2)]      # starvation fires once


def test_a_session_without_digests_shows_zero_savings(recorded):
    card = card_of(recorded, "plain-1")
    assert card["runs"]["total"] == 0 and card["commands"]["by_decision"]["pass"] == 5
    t = card["tokens"]
    assert (t["raw"], t["delivered"]["ctx_runs"], t["harness_baseline"], t["saved"], t["saved_pct"]) == (
        0, 0, 0, 0, None)
    posts = sql(recorded, "SELECT output_bytes FROM events WHERE session_id='plain-1' AND hook_event='PostToolUse'")
    assert t["delivered"]["other_calls_est"] == sum(round(p["output_bytes"] / 4.0) for p in posts) > 0
    # the second pwd and the second echo asked again with nothing changed: two extra rounds, no digest
    assert card["cost"]["digest_net"] == 0 and card["cost"]["requeries_after_digest"] == 0
    assert card["cost"]["extra_rounds"] == 2 == card["rounds"]["requeries"]
    assert all(v["count"] == 0 for v in card["interventions"].values())
    (th,) = card["anomalies"]["thrash"]
    assert th["variants"] == ["pwd", "echo hello"] and th["length"] == 4
    assert th["tool_use_ids"] == [tid("plain-1", n) for n in (1, 2, 3, 4)]


def test_careful_session_landings(recorded):
    card = card_of(recorded, "care-1")
    assert recorded["care"].hint, "the first digest should carry a ctx get hint"
    assert card["commands"]["by_decision"] == {"pass": 1, "rewrite": 3, "deny": 1, "none": 0}
    assert card["commands"]["retrievals"] == 1
    ev = card["evidence"]["by_outcome"]
    assert (ev["retrieved"], ev["narrowed"], ev["validated_after_edit"]) == (1, 1, 1)
    assert ev["equivalent_requery"] == 0 and ev["abandoned"] == 0 and ev["redundant"] == 0
    iv = card["interventions"]
    assert (iv["deny"]["count"], iv["deny"]["landed"], iv["deny"]["rate"]) == (1, 1, 1.0)
    assert (iv["hints"]["count"], iv["hints"]["landed"]) == (1, 1)
    assert (iv["rewrite"]["count"], iv["rewrite"]["landed"], iv["rewrite"]["rate"]) == (3, 3, 1.0)
    assert card["rounds"]["denied"] == 1 and card["rounds"]["extra"] == 1
    assert card["anomalies"]["starvation_streaks"] == [] and card["anomalies"]["zero_landing_interventions"] == []


def test_terminal_view_and_last(recorded):
    out = ctx(recorded, "stats", "--ledger", recorded["ledger"], "--session", "loop-1").stdout
    assert "\x1b[" not in out                                  # not a TTY: no colour
    assert "8 → 8 → 8 → 5 → 0" in out and "fixed" in out
    assert "starvation streak" in out and tid("loop-1", 3) in out
    lines = out.splitlines()
    header = next(ln for ln in lines if ln.strip().startswith("class") and "rate" in ln)
    row = next(ln for ln in lines if ln.strip().startswith("rewrite"))
    assert len(header) == len(row) and header.endswith("rate") and row.endswith("60%")   # aligned columns
    last = json.loads(ctx(recorded, "stats", "--ledger", recorded["ledger"], "--last", "--json").stdout)
    assert last["session"]["id"] == "care-1"


def test_across_sessions_json_and_csv(recorded):
    agg = json.loads(ctx(recorded, "stats", "--ledger", recorded["ledger"], "--json").stdout)
    assert agg["schema"] == "ctx-stats-aggregate/v1" and agg["sessions"] == 3
    cards = [card_of(recorded, s) for s in ("loop-1", "plain-1", "care-1")]
    t = agg["totals"]
    assert t["saved"] == sum(c["tokens"]["saved"] for c in cards)
    assert t["runs"] == 8 and t["requeries"] == 4 == sum(c["rounds"]["requeries"] for c in cards)
    assert t["denied"] == 1
    assert t["cost_total"] == sum(c["cost"]["total"] for c in cards)
    assert agg["by_family"]["pytest"]["runs"] == 8 and agg["by_family"]["pytest"]["requeried"] == 2
    assert set(agg["by_reader"]) == {"haiku", "sonnet", "opus"}
    assert agg["starved_profiles"][0]["starved"] == 2
    iv = agg["interventions"]["rewrite"]
    assert (iv["count"], iv["landed"]) == (8, 6)
    csv_out = ctx(recorded, "stats", "--ledger", recorded["ledger"], "--csv").stdout.splitlines()
    assert csv_out[0].startswith("session_id,first_ts,cwd,model,reader")
    assert sorted(ln.split(",")[0] for ln in csv_out[1:]) == ["care-1", "loop-1", "plain-1"]
    proj = os.path.dirname(recorded["loop"].project)
    only = json.loads(ctx(recorded, "stats", "--ledger", recorded["ledger"], "--project",
                          recorded["loop"].project, "--json").stdout)
    assert only["sessions"] == 1 and only["per_session"][0]["session_id"] == "loop-1"
    assert json.loads(ctx(recorded, "stats", "--ledger", recorded["ledger"], "--project", proj,
                          "--json").stdout)["sessions"] == 3
    future = json.loads(ctx(recorded, "stats", "--ledger", recorded["ledger"], "--since", "2100-01-01",
                            "--json").stdout)
    assert future["sessions"] == 0 and future["totals"]["saved"] == 0
    text = ctx(recorded, "stats", "--ledger", recorded["ledger"]).stdout
    assert "per family" in text and "most starved digests" in text


def test_compiled_epoch_from_the_recorded_ledger(recorded, tmp_path):
    from reflex.arc.policy import load_policy
    out = tmp_path / "epoch.toml"
    ctx(recorded, "policy", "compile", "--ledger", recorded["ledger"], "--out", str(out))
    p = load_policy(out)
    assert p.epoch.source == "compiled" and p.epoch.version == 2 and p.epoch.created == ""
    n = sql(recorded, "SELECT count(*) AS n FROM events")[0]["n"]
    assert p.epoch.events == n and len(p.epoch.ledgers) == 1 and p.epoch.ledgers[0].startswith("b3:")
    # 8 pytest runs are far from the evidence needed to move anything
    assert p.families["pytest"].density == "normal" and p.families["pytest"].tiers == {}
    text = out.read_text()
    assert "# pytest, all readers: 2 sessions, 8 runs" in text
    ctx(recorded, "policy", "evidence", "--ledger", recorded["ledger"])
    stored = sql(recorded, "SELECT count(*) AS n FROM evidence_outcomes")[0]["n"]
    ctx(recorded, "policy", "evidence", "--ledger", recorded["ledger"])
    assert sql(recorded, "SELECT count(*) AS n FROM evidence_outcomes")[0]["n"] == stored > 0
