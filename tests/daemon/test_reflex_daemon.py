"""The reflex arc in the daemon: same state after a kill -9 mid-session, intents recorded,
a bad policy epoch rejected while the previous one stays in force."""

import json
import os
import subprocess
import sys

from reflex.shim import hook

from tests.conftest import ctx_cmd, ledger_rows

SEED = '''
import pytest

@pytest.mark.parametrize("n", range(4))
def test_even(n):
    assert n % 2 == 0, "odd: %d" % n

def test_missing():
    assert {}["k"]
'''


def _loop(paths, project, session, commands, between=None):
    outs = []
    env = dict(os.environ, CLAUDE_CODE_SESSION_ID=session,
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    for i, cmd in enumerate(commands):
        if between:
            between(i)
        payload = {"session_id": session, "hook_event_name": "PreToolUse", "cwd": str(project),
                   "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "%s-%d" % (session, i)}
        hook.deliver(paths, "claude", json.dumps(payload).encode())
        p = subprocess.run(ctx_cmd() + ["run", "--", cmd + " -p no:cacheprovider"], cwd=project, env=env,
                           capture_output=True, text=True, timeout=120)
        outs.append(p.stdout)
        post = dict(payload, hook_event_name="PostToolUseFailure", error="Exit code 1")
        hook.deliver(paths, "claude", json.dumps(post).encode())
    return outs


LOOP = ["pytest -q", "pytest -q", "pytest --tb=short -q"]


def test_kill_and_restart_mid_session_gives_the_same_decisions(paths, daemon, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "test_seed.py").write_text(SEED)
    daemon.start()
    straight = _loop(paths, project, "sess-straight", LOOP)

    def kill_before_second(i):
        if i == 1:
            daemon.kill9()
            daemon.start()  # a fresh daemon rebuilds the session from the ledger
    restarted = _loop(paths, project, "sess-restart", LOOP, between=kill_before_second)
    # The decisions as the daemon recorded them, not the header's mode word: a digest no smaller
    # than the raw output is shown as "passthrough", and whether it is depends on token counts
    # that pytest's timing line ("in 0.05s" / "in 12.34s") moves by a few.
    decided = lambda s: [(json.loads(r["data"])["density"], json.loads(r["data"])["reason"]) for r in ledger_rows(
        paths, "SELECT data FROM events WHERE session_id=? AND kind='run' ORDER BY id", (s,))]
    # The kill falls just before the second run: the restarted daemon must rebuild from the
    # ledger the state that densifies it.
    assert decided("sess-straight")[:2] == decided("sess-restart")[:2] == [
        ("normal", None), ("dense", "densified: re-run detected")]
    for outs in (straight, restarted):  # and the agent is told why
        assert "(densified: re-run detected)" in [line for line in outs[1].splitlines()
                                                  if line.startswith("[ctx] pytest")][0]
    # From there on a session follows what its agent was shown (a passthrough has no hints to
    # follow), so the two sessions may part; each must still be exactly what one uninterrupted
    # fold over its own ledger events fires.
    from reflex.analysis.replay import load, replay
    replayed = {r["session_id"]: r["firings"] for r in replay(load(paths.ledger))["sessions"]}
    for session in ("sess-straight", "sess-restart"):
        live = [(r["detector"], r["tool_use_id"]) for r in ledger_rows(
            paths, "SELECT detector, tool_use_id FROM outcomes WHERE session_id=? ORDER BY id", (session,))]
        offline = [(f["detector"], f["tool_use_id"]) for f in replayed[session]]
        assert live == offline and ("starvation", session + "-1") in live, (session, live, offline)


def test_intents_are_recorded_with_interventions(paths, running_daemon, user_allows_bash, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "test_seed.py").write_text(SEED)
    _loop(paths, project, "sess-int", LOOP[:1])
    pre = ledger_rows(paths, "SELECT data FROM events WHERE session_id='sess-int' AND hook_event='PreToolUse'")
    assert json.loads(pre[0]["data"])["intents"] == [{"intervention": "rewrite", "expect": "no-route-around"}]
    run = ledger_rows(paths, "SELECT data FROM events WHERE session_id='sess-int' AND kind='run'")
    intents = json.loads(run[0]["data"])["intents"]
    assert {"intervention": "digest", "expect": "no-rerun-unchanged"} in intents


def test_bad_policy_epoch_is_rejected_and_the_previous_stays(paths, running_daemon, tmp_path):
    project = tmp_path / "p"
    (project / ".ctx" / "policies").mkdir(parents=True)
    (project / "test_seed.py").write_text(SEED)
    good = (open(os.path.join(os.path.dirname(__file__), "..", "..", "policies", "default.toml")).read()
            .replace('density = "normal"', 'density = "lean"').replace('name = "default"', 'name = "lean-epoch"'))
    (project / ".ctx" / "policies" / "001-lean.toml").write_text(good)
    (project / ".ctx" / "policies" / "002-broken.toml").write_text("[starvation]\nfire_at = 'often'\n")
    outs = _loop(paths, project, "sess-pol", LOOP[:1])
    assert "| lean |" in outs[0], outs[0][:300]
    assert "policy epoch rejected" in running_daemon.log() and "002-broken.toml" in running_daemon.log()
    pre = ledger_rows(paths, "SELECT data FROM events WHERE session_id='sess-pol' AND hook_event='PreToolUse'")
    assert json.loads(pre[0]["data"])["policy_epoch"] == "001-lean.toml@lean-epoch"
