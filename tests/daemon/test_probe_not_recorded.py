"""ctx's own self-test hook call (`ctx install --scope project`, `ctx doctor`: a `cat .env` PreToolUse
through the installed command) is answered like any call and never recorded: it is not the agent's
activity, and a scorecard, a replay or the first PreToolUse of a session must not see it."""

import json

from reflex import protocol
from tests.conftest import ledger_rows, pre_bash, run_hook


def test_the_probe_is_denied_and_leaves_no_event(paths, running_daemon, tmp_path):
    (tmp_path / ".env").write_text("API_KEY=probe-secret-1234567890\n")
    probe = pre_bash("cat .env", session=protocol.PROBE_SESSION, tool_use_id="ctx-doctor-probe", cwd=str(tmp_path))
    rc, out, _err, _ = run_hook(probe, timeout=30)
    assert rc == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    real = pre_bash("cat .env", session="sess-real", tool_use_id="toolu_real", cwd=str(tmp_path))
    rc, out, _err, _ = run_hook(real, timeout=30)
    assert rc == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    sessions = [r["session_id"] for r in ledger_rows(paths) if r.get("hook_event") == "PreToolUse"]
    assert sessions == ["sess-real"]
