"""`ctx stats` over what a real daemon recorded (issue 30 item 5).

* ctx hooked twice (user and project settings both name it): Claude Code sends each event to
  both hooks, so one denied `cat .env` reaches the daemon twice with one tool_use_id.  That is
  one call, not a deny followed by a verbatim retry.
* `ctx run` typed by hand (no harness session id in the environment) is recorded under no
  session; `ctx stats` counts it.
"""

import json
import os
import subprocess

from tests.conftest import ctx_cmd, ledger_rows, pre_bash, run_hook
from tests.support.daemons import wait_for


def _stats(*args):
    p = subprocess.run(ctx_cmd() + ["stats", *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_one_denied_cat_env_seen_by_two_hooks_is_no_friction(running_daemon, paths, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text("API_TOKEN=not-a-real-token\n")
    denied = pre_bash("cat .env", session="sess-twice", tool_use_id="toolu_once", cwd=str(project))
    for _hook in ("user settings", "project settings"):
        rc, out, _err, _s = run_hook(denied)
        assert rc == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert wait_for(lambda: len(ledger_rows(paths, "SELECT id FROM events WHERE session_id = 'sess-twice'")) == 2)

    text = _stats("--session", "sess-twice")
    assert "1 Bash calls" in text and "0 retries after a deny, 1 denied" in text, text
    assert "friction" not in text and "verbatim retry" not in text, text
    assert ledger_rows(paths, "SELECT * FROM outcomes WHERE detector = 'friction'") == []

    # The same line again as a new call is a retry, and still fires.
    rc, out, _err, _s = run_hook(dict(denied, tool_use_id="toolu_again"))
    assert rc == 0
    assert wait_for(lambda: ledger_rows(paths, "SELECT * FROM outcomes WHERE detector = 'friction'") != [])


def test_hand_runs_outside_any_session_are_counted(running_daemon, paths, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CODE_SESSION_ID"}
    for text in ("one", "two"):
        p = subprocess.run(ctx_cmd() + ["run", "--", "echo", text], capture_output=True, text=True, env=env,
                           cwd=tmp_path, timeout=60)
        assert p.returncode == 0 and text in p.stdout, p.stderr
    assert wait_for(lambda: len(ledger_rows(paths, "SELECT id FROM events WHERE session_id = '-' AND kind = 'run'")) == 2)

    agg = json.loads(_stats("--json"))
    assert agg["sessions"] == 0
    assert agg["totals"]["runs"] == 2 and agg["outside_sessions"]["runs"] == 2, agg["totals"]
    assert agg["by_harness"]["(no session)"]["runs"] == 2
    assert "2 `ctx run` outside any harness session" in _stats()
    # A project filter that excludes them, excludes them.
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert json.loads(_stats("--json", "--project", str(other)))["totals"]["runs"] == 0


def test_a_call_whose_events_arrive_twice_is_one_call(running_daemon, paths, tmp_path):
    pre = pre_bash("echo hi", session="sess-dup", tool_use_id="toolu_dup", cwd=str(tmp_path))
    post = dict(pre, hook_event_name="PostToolUse",
                tool_response={"stdout": "hi", "stderr": "", "interrupted": False, "isImage": False})
    for payload in (pre, pre, post, post):       # two hooks, each sent every event
        assert run_hook(payload)[0] == 0
    assert wait_for(lambda: len(ledger_rows(paths, "SELECT id FROM events WHERE session_id = 'sess-dup'")) == 4)
    card = json.loads(_stats("--session", "sess-dup", "--json"))
    assert card["commands"]["total"] == 1, card["commands"]
    assert card["rounds"]["reissues"] == 0, card["rounds"]
