"""Secret reads through the REAL Claude Code CLI (issue 16 class 2): what reaches the model.

A scripted model (a simulation of an agent) makes the calls; Claude Code, its hooks, its Grep
(its own ripgrep), its Read, the shell, ctx's daemon and `ctx run` are real. The ground truth is
every request the model server received: no canary may appear in any of them.

- a Grep tool call over the project: ctx adds secret-excluding globs; the model sees the
  ordinary matches and not the .env line (Claude Code searches hidden files);
- `grep -rn` in Bash: rewritten to `ctx run --raw`; the model sees `[REDACTED:.env]` and the
  census line;
- `cat notes.txt` where notes.txt links to .env, and a Read of it: denied.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.agent_sessions import kill_daemon
from tests.support.claude_harness import ClaudeEnv
from tests.support.scripted_model import ScriptedCommands, ToolUse

pytestmark = pytest.mark.e2e

VENV_BIN = os.path.dirname(sys.executable)


@pytest.fixture
def ctx_home(tmp_path):
    home = tmp_path / "ctxhome"
    yield home
    kill_daemon(home)


def test_secret_reads_never_reach_the_model(claude_env: ClaudeEnv, tmp_path, ctx_home):
    canary = "ctxcanary" + secrets.token_hex(12)
    repo: Path = claude_env.repo
    (repo / ".env").write_text("API_KEY=%s\n" % canary)
    (repo / "README.md").write_text("Set API_KEY in .env\n")
    (repo / "notes.txt").symlink_to(".env")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(grep:*)"]}}))
    env = dict(os.environ, CTX_HOME=str(ctx_home))
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "install", "--settings", str(settings)],
                       env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    script = ScriptedCommands([
        ToolUse("grep tool", name="Grep", extra={"pattern": "API_KEY", "output_mode": "content"}),
        ToolUse("grep -rn API_KEY ."),
        ToolUse("cat notes.txt"),
        ToolUse("read tool", name="Read", extra={"file_path": str(repo / "notes.txt")}),
    ], final_text="done")
    # 2.1.332 offers Grep only to sessions that opt in to it (else searches go through Bash).
    run = claude_env.run("find where API_KEY is configured", settings_path=settings, policy=script,
                         extra_args=("--allowedTools", "Grep"),
                         env_extra={"CTX_HOME": str(ctx_home),
                                    "PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""),
                                    "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")})
    assert run.returncode == 0, run.describe()
    results = run.tool_results
    tools = {t.get("name") for t in (run.requests[0].body or {}).get("tools", [])}
    assert {"Grep", "Read", "Bash"} <= tools, tools
    assert len(results) == 4, run.describe()
    grep_tool, grep_bash, cat_link, read_link = results
    assert "README.md" in grep_tool.text and ".env" not in grep_tool.text.replace("in .env", ""), grep_tool.text
    assert "[REDACTED:.env]" in grep_bash.text and "[ctx] redacted 1 secret value" in grep_bash.text, grep_bash.text
    assert cat_link.is_error and "secret" in cat_link.text.lower(), cat_link.text
    assert read_link.is_error and "secret" in read_link.text.lower(), read_link.text
    # The ground truth: nothing of the canary in anything the model was sent.
    for req in run.requests:
        body = json.dumps(req.body) if not isinstance(req.body, (str, bytes)) else str(req.body)
        assert canary not in body and canary[9:21] not in body
