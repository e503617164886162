"""ctx's hooks in the REAL Claude Code CLI, driven by a scripted model (a simulation of an agent;
the harness, hooks, shell, daemon and pytest are real).

Shows: the pytest rewrite applied (the model receives `ctx run` output), the secret deny reaching
the model with its remediation, PostToolUse and PostToolUseFailure recorded with exit codes, the
session's events in order; and the same session with the daemon killed completes with nothing lost.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.agent_sessions import wait_for
from tests.support.claude_harness import ClaudeEnv
from tests.support.scripted_model import ScriptedCommands

pytestmark = pytest.mark.e2e

VENV_BIN = os.path.dirname(sys.executable)
FAILING_TEST = '''
from calc import add

def test_add_ok():
    assert add(1, 2) == 3

def test_add_negative():
    assert add(-1, -1) == -2
'''


def _project(repo: Path) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b if a >= 0 else a - b\n")
    (repo / "test_calc.py").write_text(FAILING_TEST)
    (repo / ".env").write_text("API_KEY=sk-live-0123456789abcdef0123456789abcdef\n")


def _install(tmp_path: Path, ctx_home: Path) -> Path:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(pytest:*)"]}}))
    env = dict(os.environ, CTX_HOME=str(ctx_home))
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "install", "--settings", str(settings)],
                       env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return settings


def _env(ctx_home: Path) -> dict[str, str]:
    return {"CTX_HOME": str(ctx_home), "PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""),
            "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")}


def _events(ctx_home: Path, session: str) -> list[dict]:
    conn = sqlite3.connect(ctx_home / "ledger.db")
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute(
        "SELECT * FROM events WHERE session_id = ? ORDER BY seq", (session,))]
    conn.close()
    return rows


def _daemon_pid(ctx_home: Path) -> int:
    from reflex import paths
    from reflex.daemon import control as daemon_control
    return daemon_control.lock_pid(paths.resolve({"CTX_HOME": str(ctx_home)}))


def _kill_daemon(ctx_home: Path) -> None:
    pid = _daemon_pid(ctx_home)
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except OSError:
                return
            time.sleep(0.02)


_wait_for = wait_for


SCRIPT = ["pytest -q", "cat .env", "python3 -c 'import sys; sys.exit(3)'", "echo all-done"]


@pytest.fixture
def ctx_home(tmp_path):
    home = tmp_path / "ctxhome"
    yield home
    _kill_daemon(home)


def _check_session(run, ctx_home, *, expect_spooled):
    session = run.session_id
    assert session, run.describe()
    results = run.tool_results
    assert len(results) == 4, run.describe()

    # 1. the pytest rewrite was applied: the model received ctx run's output
    pytest_out = results[0].text
    assert "test_add_negative" in pytest_out and "1 failed" in pytest_out
    # a small output passes through unchanged (no footer); the ledger shows ctx run ran it
    runs_now = [e for e in _events(ctx_home, run.session_id) if e["kind"] == "run"]
    assert runs_now and runs_now[0]["command"] == "pytest -q", pytest_out[-400:]

    # 2. the secret deny reached the model, with its remediation, and no secret leaked
    deny = results[1]
    assert deny.is_error and "PreToolUse:Bash hook error" in deny.text
    assert "secret" in deny.text.lower() and "sk-live" not in deny.text

    # 3./4. post events with exit codes, in order
    assert _wait_for(lambda: len([e for e in _events(ctx_home, session) if e["hook_event"] == "PostToolUse"]) >= 1)
    assert _wait_for(lambda: not list((ctx_home / "spool").glob("*.frame")))
    events = _events(ctx_home, session)
    hooks = [(e["hook_event"], e["command"], e["exit_code"]) for e in events if e["kind"] == "hook"]
    names = [h[0] for h in hooks]
    assert names[0] == "SessionStart"
    tool_events = [h for h in hooks if h[0] != "SessionStart" and h[0] != "SessionEnd"]
    assert tool_events == [
        ("PreToolUse", "pytest -q", None), ("PostToolUseFailure", "pytest -q", 1),
        ("PreToolUse", "cat .env", None),
        ("PreToolUse", SCRIPT[2], None), ("PostToolUseFailure", SCRIPT[2], 3),
        ("PreToolUse", "echo all-done", None), ("PostToolUse", "echo all-done", 0),
    ], hooks
    pre_pytest = next(e for e in events if e["hook_event"] == "PreToolUse" and e["command"] == "pytest -q")
    post_pytest = next(e for e in events if e["hook_event"] == "PostToolUseFailure" and e["command"] == "pytest -q")
    if not expect_spooled:
        assert pre_pytest["decision"] == "rewrite"
    assert post_pytest["rewrite_applied"] == 1 or expect_spooled
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    uids = [e["uid"] for e in events]
    assert len(uids) == len(set(uids))
    # the ctx run event is attached to the same session through CLAUDE_CODE_SESSION_ID
    runs = [e for e in events if e["kind"] == "run"]
    assert len(runs) == 1 and runs[0]["exit_code"] == 1 and runs[0]["command"] == "pytest -q"
    verify = subprocess.run([sys.executable, "-m", "reflex.entry", "ledger", "verify"],
                            env=dict(os.environ, CTX_HOME=str(ctx_home)), capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    return events


def test_ctx_hooks_in_the_real_claude_code(claude_env: ClaudeEnv, tmp_path, ctx_home):
    _project(claude_env.repo)
    settings = _install(tmp_path, ctx_home)
    run = claude_env.run("fix the failing test", settings_path=settings,
                         policy=ScriptedCommands(SCRIPT, final_text="done"), env_extra=_env(ctx_home))
    assert run.returncode == 0, run.describe()
    _check_session(run, ctx_home, expect_spooled=False)


def test_session_with_daemon_killed_loses_nothing(claude_env: ClaudeEnv, tmp_path, ctx_home):
    """The daemon is killed before the session and again mid-session; hooks fail open, the shim
    still denies the secret read locally, the spool carries every event to the next daemon."""
    _project(claude_env.repo)
    settings = _install(tmp_path, ctx_home)
    env = dict(os.environ, **_env(ctx_home))
    subprocess.run([sys.executable, "-m", "reflex.entry", "daemon", "start"], env=env, check=True,
                   capture_output=True, timeout=60)
    _kill_daemon(ctx_home)
    # kill whatever daemon the shims start, while the session runs
    stop = {"flag": False}

    import threading

    def killer():
        while not stop["flag"]:
            _kill_daemon(ctx_home)
            time.sleep(0.05)
    t = threading.Thread(target=killer, daemon=True)
    t.start()
    try:
        run = claude_env.run("fix the failing test", settings_path=settings,
                             policy=ScriptedCommands(SCRIPT, final_text="done"), env_extra=_env(ctx_home))
    finally:
        stop["flag"] = True
        t.join()
    assert run.returncode == 0, run.describe()
    # nothing answered for the evidence plane: pytest ran raw (no ctx footer), but it ran
    assert "test_add_negative" in run.tool_results[0].text
    # a daemon comes back (the next hook or ctx call spawns one) and drains the spool
    subprocess.run([sys.executable, "-m", "reflex.entry", "daemon", "start"], env=env, check=True,
                   capture_output=True, timeout=60)
    events = _events(ctx_home, run.session_id)
    assert _wait_for(lambda: not list((ctx_home / "spool").glob("*.frame")))
    events = _events(ctx_home, run.session_id)
    hooks = [(e["hook_event"], e["command"]) for e in events if e["kind"] == "hook"]
    assert ("PreToolUse", "cat .env") in hooks
    deny = run.tool_results[1]
    assert deny.is_error and "secret" in deny.text.lower()
    assert sum(1 for e in events if e["spooled"]) >= 1
    assert [h[0] for h in hooks if h[0] != "SessionEnd"] == [
        "SessionStart", "PreToolUse", "PostToolUseFailure", "PreToolUse", "PreToolUse",
        "PostToolUseFailure", "PreToolUse", "PostToolUse"], hooks
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
