"""The reflex arc through the real Claude Code CLI, real hooks and the real daemon (a scripted
model stands in for the agent).

The seed's loop: a pytest digest, then `pytest … | tail -50`, then `pytest --tb=long`.
Starvation fires exactly once (at the first re-run), the digest after it is densified and says
so in its header; the same sequence with an edit in between fires nothing.
"""

from __future__ import annotations

import sqlite3

import pytest

from tests.support.agent_sessions import SEED_TEST
from tests.support.claude_harness import ClaudeEnv
from tests.support.scripted_model import ScriptedCommands

from .test_claude_ctx import _env, _install, _kill_daemon, _wait_for

pytestmark = pytest.mark.e2e

# SEED_TEST: the seed suite of every harness's e2e session (3 parametrized failures, a KeyError,
# 12 passing).

LOOP = ["pytest -q", "pytest -q 2>&1 | tail -50", "pytest --tb=long -q"]


@pytest.fixture
def ctx_home(tmp_path):
    home = tmp_path / "ctxhome"
    yield home
    _kill_daemon(home)


def _outcomes(ctx_home, session):
    conn = sqlite3.connect(ctx_home / "ledger.db")
    rows = conn.execute("SELECT detector, reason, tool_use_id FROM outcomes WHERE session_id = ? ORDER BY id",
                        (session,)).fetchall()
    conn.close()
    return rows


def _run(claude_env, tmp_path, ctx_home, script):
    (claude_env.repo / "test_seed.py").write_text(SEED_TEST)
    settings = _install(tmp_path, ctx_home)
    run = claude_env.run("make the tests pass", settings_path=settings,
                         policy=ScriptedCommands(script, final_text="done"), env_extra=_env(ctx_home))
    assert run.returncode == 0, run.describe()
    return run


def test_seed_loop_fires_starvation_once_and_densifies(claude_env: ClaudeEnv, tmp_path, ctx_home):
    run = _run(claude_env, tmp_path, ctx_home, LOOP)
    seen = [r.text for r in run.tool_results]
    assert len(seen) == 3
    first, second, third = seen
    assert "| normal |" in first.splitlines()[0] or "| normal |" in first
    header2 = next(line for line in second.splitlines() if line.startswith("[ctx] pytest"))
    assert "dense" in header2 and "densified: re-run detected" in header2
    assert _wait_for(lambda: len(_outcomes(ctx_home, run.session_id)) >= 1)
    starvation = [o for o in _outcomes(ctx_home, run.session_id) if o[0] == "starvation"]
    assert len(starvation) == 1, _outcomes(ctx_home, run.session_id)
    # the firing is attached to the re-run that showed it (the second Bash call)
    assert starvation[0][2] == run.tool_uses[1]["id"]
    # the densified digest carries the assertion evidence the first one only hinted at
    assert "assert 7 == 6" in second or "score(alpha) gave 7" in second


def test_same_loop_with_an_edit_in_between_fires_nothing(claude_env: ClaudeEnv, tmp_path, ctx_home):
    # an edit before each re-run: every re-run is progress, not starvation
    script = [LOOP[0], "sed -i 's/\\* 2 + 1/* 2/' test_seed.py", LOOP[1],
              "sed -i 's/return DATA\\[name\\]/return DATA.get(name, 0)/' test_seed.py", LOOP[2]]
    run = _run(claude_env, tmp_path, ctx_home, script)
    seen = [r.text for r in run.tool_results]
    assert not any("densified" in s for s in seen)
    assert [o for o in _outcomes(ctx_home, run.session_id) if o[0] == "starvation"] == []
