"""The Grep tool over HOME through the REAL Claude Code CLI (issue 31 item 4).

Claude Code (2.1.332) starts its bundled ripgrep in the session's directory when the Grep's
`path` lies under it, else in the search directory, and ripgrep anchors `--glob`s to where it
runs; the globs ctx adds used to be anchored to the Grep's path, so `~/.kube/config` and
`~/.config/gh` leaked from a session whose directory holds HOME. A scripted model makes the calls; Claude Code, its Grep,
its hooks and ctx are real. The ground truth: no canary in any request the model server got.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import pytest

from tests.support.agent_sessions import kill_daemon
from tests.support.claude_harness import ClaudeEnv, claude_binary, make_scratch_repo
from tests.support.scripted_model import ScriptedCommands, ScriptedModelServer, ToolUse

pytestmark = pytest.mark.e2e

VENV_BIN = os.path.dirname(sys.executable)


@pytest.mark.parametrize("ripgrep", ["bundled", "on-path"])
def test_grep_over_home_and_types_never_reach_secrets(tmp_path, ripgrep):
    """bundled: on Linux Claude Code runs its ripgrep inside the opened search directory;
    on-path (USE_BUILTIN_RIPGREP=0, `rg` found by name): it runs it in the session's directory
    when the path lies under it (as on platforms without the open-directory spawn)."""
    cli = claude_binary()     # skips when the CLI (claude-agent-sdk) is not installed
    rg_env = {}
    if ripgrep == "on-path":
        rg_dir = tmp_path / "rgbin"
        rg_dir.mkdir()
        (rg_dir / "rg").write_text("#!/bin/bash\necho \"cwd=$PWD args=$*\" >> %s\nexec -a rg %s \"$@\"\n"
                                   % (tmp_path / "rg.log", cli))   # the CLI runs as ripgrep when invoked as rg
        (rg_dir / "rg").chmod(0o755)
        rg_env = {"USE_BUILTIN_RIPGREP": "0", "PATH_PREFIX": str(rg_dir)}
    canary = "ctxcanary" + secrets.token_hex(12)
    # The session runs in a directory that holds HOME (as a session started in /home or /Users
    # does): Claude Code then starts ripgrep there, not in the Grep's path.
    repo = make_scratch_repo(tmp_path / "repo")
    home = repo / "u"
    ctx_home = tmp_path / "ctxhome"
    for rel, text in {".kube/config": "users:\n- user:\n    token: %s\n" % canary,
                      ".config/gh/hosts.yml": "github.com:\n    oauth_token: %s\n" % canary,
                      "todo.txt": "token rotation is on the list\n"}.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    for rel, text in {".docker/config.json": '{"auths": {"x": {"auth": "%s"}}}\n' % canary,
                      ".npmrc": "//registry.npmjs.org/:_authToken=%s\n" % canary,
                      "package.json": '{"name": "app", "auth": "none", "token": "none"}\n'}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Grep", "Read"], "additionalDirectories": [str(home)]}}))
    env = dict(os.environ, CTX_HOME=str(ctx_home))
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "install", "--settings", str(settings)],
                       env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    script = ScriptedCommands([
        ToolUse("grep home", name="Grep", extra={"pattern": "token", "path": str(home), "output_mode": "content"}),
        ToolUse("grep json", name="Grep", extra={"pattern": "auth", "type": "json", "output_mode": "content"}),
        ToolUse("grep project", name="Grep", extra={"pattern": "token|auth", "path": str(repo),
                                                    "output_mode": "content"}),
    ], final_text="done")
    try:
        with ScriptedModelServer() as server:
            claude_env = ClaudeEnv(repo=repo, home=home, model_server=server)
            run = claude_env.run("find the tokens", settings_path=settings, policy=script,
                                 extra_args=("--allowedTools", "Grep"),
                                 env_extra={"CTX_HOME": str(ctx_home),
                                            "PATH": os.pathsep.join(
                                                ([rg_env["PATH_PREFIX"]] if rg_env else []) +
                                                [VENV_BIN, os.environ.get("PATH", "")]),
                                            "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", ""),
                                            **{k: v for k, v in rg_env.items() if k != "PATH_PREFIX"}})
    finally:
        kill_daemon(ctx_home)
    assert run.returncode == 0, run.describe()
    if ripgrep == "on-path":
        # The searches really ran the ripgrep on PATH (2.1.332 on Linux starts it inside the
        # search directory; other platforms and versions in the session's: the globs hold in both).
        assert "--hidden" in (tmp_path / "rg.log").read_text()
    results = run.tool_results
    assert len(results) == 3, run.describe()
    home_hits, json_hits, project_hits = (r.text for r in results)
    assert "todo.txt" in home_hits, home_hits                # ordinary files are still searched
    assert "package.json" in json_hits and "package.json" in project_hits, (json_hits, project_hits)
    for req in run.requests:
        body = json.dumps(req.body) if not isinstance(req.body, (str, bytes)) else str(req.body)
        assert canary not in body and canary[9:21] not in body, body[:3000]
