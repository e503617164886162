"""ctx in the REAL Codex, Gemini, Copilot, Qwen Code, OpenCode and Droid CLIs (npm, pinned),
offline, each driven by a scripted model for its own API (Responses API for Codex and Copilot,
Gemini API for Gemini, Chat Completions for Qwen, OpenCode and Droid): digest, densified re-run,
followable hint, secret deny, harness-labelled ledger, replay.  The session itself is
tests/support/agent_sessions.py.  OpenCode also runs with ctx's daemon killed mid-session (a plugin
that throws blocks OpenCode's tool: ctx must keep answering from the shim)."""

from __future__ import annotations

import pytest

from tests.support.agent_sessions import check_loop, kill_daemon, run_session

pytestmark = pytest.mark.e2e


@pytest.fixture
def tmp(tmp_path):
    yield tmp_path
    kill_daemon(tmp_path / "ctxhome")


@pytest.mark.parametrize("harness", ["codex", "gemini", "copilot", "qwen", "opencode", "droid"])
def test_session_through_ctx(harness, tmp):
    check_loop(run_session(harness, tmp))


def test_opencode_with_the_daemon_killed_mid_session(tmp):
    """OpenCode blocks a tool when a plugin throws: with ctx's daemon killed after the first call,
    every later call still gets ctx's answer from the shim (the secret denied, everything else
    through), each within seconds, and the session ends normally."""
    from tests.support.agent_sessions import SECRET
    ctx_home = tmp / "ctxhome"
    script = ["pytest -q", "cat .env", "echo MARK-$((40+2))", "@read .env"]

    def policy(outputs):  # noqa: ANN001, ANN202
        if len(outputs) == 1:
            kill_daemon(ctx_home)  # mid-session, between two tool calls
        return script[len(outputs)] if len(outputs) < len(script) else None

    s = run_session("opencode", tmp, policy)
    assert s.run.returncode == 0 and len(s.outputs) == 4, s.describe()
    first, secret, echo, read = s.outputs
    assert "[ctx] pytest" in first, s.describe()  # the daemon was up for the first call
    assert "secret" in secret.lower() and "ctx" in secret.lower(), s.describe()
    assert "MARK-42" in echo, s.describe()
    assert "secret" in read.lower() and SECRET not in "".join(s.outputs), s.describe()
    # each call after the kill came back fast: from one model request to the next
    times = [r.t for r in s.api.requests if isinstance(r.body, dict) and r.body.get("tools")]
    gaps = [b - a for a, b in zip(times[1:], times[2:])]
    assert gaps and max(gaps) < 10, gaps
    # the shim answered those itself (spooled), and the daemon it restarted took the rest in
    from tests.support.agent_sessions import events, wait_for
    assert wait_for(lambda: any(e["spooled"] and e["command"] == "cat .env" and e["decision"] == "deny"
                                for e in events(ctx_home))), events(ctx_home)
