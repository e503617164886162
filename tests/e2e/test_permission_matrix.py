"""ctx never changes whether a command runs: the permission matrix on the real Claude Code CLI.

Each configuration a user runs is run twice in identical fresh repositories — once without ctx,
once after `ctx install --scope project` — with a scripted model (a simulation of an agent) that
asks for one `python -m pytest -v` of a failing suite.  Nothing about permissions is seeded
beyond what the configuration itself says.  The test then asserts:

- the same commands ran: the suite's own conftest appends to `ran.log` (a side effect in the
  repo), and the model server saw a test session in the tool_result, in both runs or in neither;
- wherever the command ran with ctx, the model received ctx's digest naming every failing id
  (as the tool_result after a rewrite, or as context from the post hook where ctx let the
  command through untouched to keep the harness's decision its own);
- wherever it was refused without ctx, it was refused with ctx.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support import claude_harness as H
from tests.support.scripted_model import ScriptedCommands, ScriptedModelServer

pytestmark = pytest.mark.e2e

VENV_BIN = os.path.dirname(sys.executable)
COMMAND = "python -m pytest -v"
FAILING = ["test_calc.py::test_sub", "test_calc.py::test_mul_negative", "test_calc.py::test_div_zero",
           "test_calc.py::test_pow[3]"]

CALC = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a + b\n\n" \
       "def mul(a, b):\n    return abs(a * b)\n\ndef div(a, b):\n    return a / b\n\n" \
       "def pw(a, b):\n    return a ** b if b < 3 else 0\n"
TESTS = "import pytest\nfrom calc import add, sub, mul, div, pw\n\n" + "".join(
    "def test_add_%d():\n    assert add(%d, 1) == %d\n\n" % (i, i, i + 1) for i in range(24)) + \
    "def test_sub():\n    assert sub(5, 3) == 2\n\n" \
    "def test_mul_negative():\n    assert mul(-2, 3) == -6\n\n" \
    "def test_div_zero():\n    assert div(1, 0) == 0\n\n" \
    "@pytest.mark.parametrize('n', [1, 2, 3])\ndef test_pow(n):\n    assert pw(2, n) == 2 ** n\n"
# The side effect that says the suite ran, written by pytest itself.
CONFTEST = "import os\n\ndef pytest_sessionstart(session):\n" \
           "    with open(os.path.join(os.path.dirname(__file__), 'ran.log'), 'a') as f:\n" \
           "        f.write('ran\\n')\n"


@dataclass(frozen=True)
class Config:
    name: str
    allowed: tuple[str, ...] | None = None          # --allowedTools
    user_permissions: dict = field(default_factory=dict)  # ~/.claude/settings.json "permissions"
    extra_args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    sdk: str | None = None                            # None | "allowed_tools" | "can_use_tool"
    runs: bool = True                                  # what the harness does WITHOUT ctx


PYTEST_RULE = "Bash(python -m pytest:*)"
CONFIGS = [
    Config("allowedTools Bash", allowed=("Bash",)),
    Config("allowedTools prefix rule", allowed=(PYTEST_RULE,)),
    Config("settings allow rule", user_permissions={"allow": [PYTEST_RULE]}),
    Config("settings ask rule", allowed=("Bash",), user_permissions={"ask": [PYTEST_RULE]}, runs=False),
    Config("settings deny rule", allowed=("Bash",), user_permissions={"deny": [PYTEST_RULE]}, runs=False),
    Config("no rule (headless)", runs=False),
    Config("acceptEdits mode, no rule", extra_args=("--permission-mode", "acceptEdits"), runs=False),
    # The CLI refuses bypassPermissions as root unless it is told it runs in a sandbox.
    Config("bypassPermissions", extra_args=("--permission-mode", "bypassPermissions"),
           env=(("IS_SANDBOX", "1"),)),
    Config("SDK allowed_tools=[Bash]", sdk="allowed_tools"),
    Config("SDK can_use_tool allows", sdk="can_use_tool"),
]


def _project(repo: Path) -> None:
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)
    (repo / "conftest.py").write_text(CONFTEST)


def _install_ctx(repo: Path, ctx_home: Path) -> None:
    env = dict(os.environ, CTX_HOME=str(ctx_home))
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "install", "--scope", "project"], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def _run_cli(cfg: Config, repo: Path, home: Path, server: ScriptedModelServer, env_extra: dict) -> list:
    settings = home.parent / "cli-settings.json"
    settings.write_text("{}")
    scrubbed = set(H._SCRUBBED_NAMES)
    if any(k == "IS_SANDBOX" for k, _ in cfg.env):
        H._SCRUBBED_NAMES.discard("IS_SANDBOX")
    try:
        run = H.run_claude("run the tests", cwd=repo, settings_path=settings, model_server=server,
                           env_extra={**env_extra, **dict(cfg.env)}, timeout=150, home=home,
                           allowed_tools=cfg.allowed, extra_args=cfg.extra_args)
    finally:
        H._SCRUBBED_NAMES.clear()
        H._SCRUBBED_NAMES.update(scrubbed)
    assert run.returncode == 0, run.describe()
    return run.tool_results


def _run_sdk(cfg: Config, repo: Path, home: Path, server: ScriptedModelServer, env_extra: dict) -> list:
    from claude_agent_sdk import ClaudeAgentOptions, query
    from claude_agent_sdk.types import PermissionResultAllow

    env = H.offline_env(home, server.url, env_extra)
    kwargs = {}
    if cfg.sdk == "allowed_tools":
        kwargs["allowed_tools"] = ["Bash"]
    else:
        async def allow_everything(tool_name, tool_input, context):
            return PermissionResultAllow()
        kwargs["can_use_tool"] = allow_everything
    options = ClaudeAgentOptions(cwd=str(repo), env=env, cli_path=str(H.claude_binary()), **kwargs)

    async def prompt():
        yield {"type": "user", "message": {"role": "user", "content": "run the tests"},
               "parent_tool_use_id": None, "session_id": "default"}

    async def main():
        return [m async for m in query(prompt=prompt(), options=options)]

    first = len(server.requests)
    asyncio.run(asyncio.wait_for(main(), 150))
    seen = []
    for request in server.requests[first:]:
        if request.kind == "main":
            found = H.tool_results_in(request.body or {})
            if len(found) > len(seen):
                seen = found
    return seen


def _session(tmp_path: Path, cfg: Config, with_ctx: bool):
    """-> (tool_results the model saw, times the suite ran, ctx home)."""
    base = tmp_path / ("ctx" if with_ctx else "raw")
    repo = H.make_scratch_repo(base / "repo")
    _project(repo)
    home = base / "home"
    (home / ".claude").mkdir(parents=True)
    if cfg.user_permissions:
        (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": cfg.user_permissions}))
    ctx_home = base / "ctxhome"
    env_extra = {"PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""),
                 "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")}
    if with_ctx:
        _install_ctx(repo, ctx_home)
        env_extra["CTX_HOME"] = str(ctx_home)
    with ScriptedModelServer(ScriptedCommands([COMMAND])) as server:
        runner = _run_sdk if cfg.sdk else _run_cli
        try:
            results = runner(cfg, repo, home, server, env_extra)
        finally:
            if with_ctx:
                subprocess.run([sys.executable, "-m", "reflex.entry", "daemon", "stop"],
                               env=dict(os.environ, CTX_HOME=str(ctx_home)), capture_output=True, timeout=30)
    log = repo / "ran.log"
    ran = len(log.read_text().splitlines()) if log.exists() else 0
    return results, ran, ctx_home


def _ledger_decision(ctx_home: Path) -> dict:
    conn = sqlite3.connect(ctx_home / "ledger.db")
    try:
        row = conn.execute("SELECT decision, data FROM events WHERE hook_event = 'PreToolUse' "
                           "ORDER BY id LIMIT 1").fetchone()
    finally:
        conn.close()
    return {"decision": row[0], **json.loads(row[1])} if row else {}


def _post_digests(ctx_home: Path) -> list:
    conn = sqlite3.connect(ctx_home / "ledger.db")
    try:
        rows = conn.execute("SELECT data FROM events WHERE hook_event LIKE 'PostToolUse%'").fetchall()
    finally:
        conn.close()
    return [json.loads(r[0])["post_digest"] for r in rows if "post_digest" in json.loads(r[0])]


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c.name for c in CONFIGS])
def test_ctx_never_changes_whether_a_command_runs(tmp_path, cfg):
    H.claude_binary()
    raw_results, raw_ran, _ = _session(tmp_path, cfg, with_ctx=False)
    ctx_results, ctx_ran, ctx_home = _session(tmp_path, cfg, with_ctx=True)
    assert len(raw_results) == 1 and len(ctx_results) == 1, (raw_results, ctx_results)

    # The configuration behaves as its users know it, without ctx.
    assert bool(raw_ran) == cfg.runs, raw_results[0].text[:500]
    # The invariant: with ctx, exactly the same.
    assert ctx_ran == raw_ran, (cfg.name, ctx_results[0].text[:800], _ledger_decision(ctx_home))

    seen = ctx_results[0].text + "\n" + "\n".join(ctx_results[0].context)
    decision = _ledger_decision(ctx_home)
    if cfg.runs:
        # ctx's digest (its header, then the census), wherever it reached the model.
        assert "[ctx] pytest" in seen, ("no ctx digest reached the model", seen[:1500], decision)
        digest = seen[seen.index("[ctx] pytest"):]
        missing = [t for t in FAILING if t not in digest]
        assert not missing, ("digest lacks failing ids", missing, digest[:1500])
        assert "ctx get r:" in digest
        assert decision.get("decision") == "rewrite" or _post_digests(ctx_home), decision
    else:
        # Refused without ctx, refused with ctx; the command reached the harness untouched.
        assert decision.get("decision") == "pass" and decision.get("rewrite_held_back"), decision
        assert "test session starts" not in ctx_results[0].text
