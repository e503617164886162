"""`ctx hook <harness>` (every harness but Claude) against a real daemon and with none, and `ctx install --harness`.

Safety answers are byte-identical whether the daemon or the shim's fallback gives them; an ordinary
call gets no answer from the fallback and is spooled; install is idempotent, backs up, respects
CODEX_HOME / COPILOT_HOME / GEMINI_CLI_HOME and never touches hooks that are not ctx's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflex.harness import install as hinst

PAYLOADS = {
    "codex": {"session_id": "s-codex", "cwd": None, "hook_event_name": "PreToolUse", "permission_mode": "default",
              "tool_name": "Bash", "tool_input": {"command": "cat .env"}, "tool_use_id": "call_1"},
    "gemini": {"session_id": "s-gemini", "cwd": None, "hook_event_name": "BeforeTool", "timestamp": "t",
               "tool_name": "run_shell_command", "tool_input": {"command": "cat .env", "description": "d"}},
    "copilot": {"sessionId": "s-copilot", "timestamp": 1, "cwd": None, "toolName": "bash",
                "toolArgs": {"command": "cat .env", "description": "d"}},
    # The shapes recorded from Qwen 0.24.4 and Droid 0.225.2, Cursor's documented schema, and
    # what ctx's OpenCode plugin sends.
    "qwen": {"session_id": "s-qwen", "transcript_path": "/t.jsonl", "cwd": None, "hook_event_name": "PreToolUse",
             "timestamp": "t", "permission_mode": "yolo", "prompt_id": "p", "tool_name": "run_shell_command",
             "tool_input": {"command": "cat .env", "description": "d"}, "tool_use_id": "toolu_1",
             "tool_call_id": "call_1"},
    "droid": {"session_id": "s-droid", "transcript_path": "/t.jsonl", "cwd": None, "permission_mode": "auto-low",
              "hook_event_name": "PreToolUse", "tool_name": "Execute",
              "tool_input": {"command": "cat .env", "description": "d"}},
    "cursor": {"conversation_id": "s-cursor", "generation_id": "g1", "model": "m", "hook_event_name": "preToolUse",
               "cursor_version": "2.0", "workspace_roots": [], "tool_name": "Shell",
               "tool_input": {"command": "cat .env"}, "tool_use_id": "tu_1", "cwd": None, "transcript_path": None},
    "opencode": {"hook_event_name": "tool.execute.before", "session_id": "ses_1", "call_id": "call_1",
                 "tool": "bash", "args": {"command": "cat .env", "description": "d"}, "cwd": None},
}
FILE_READS = {  # the harness's own file tool on the same secret
    "gemini": {"session_id": "s-gemini", "cwd": None, "hook_event_name": "BeforeTool", "timestamp": "t",
               "tool_name": "read_file", "tool_input": {"file_path": ".env"}},
    "copilot": {"sessionId": "s-copilot", "timestamp": 1, "cwd": None, "toolName": "view",
                "toolArgs": {"path": ".env"}},
    "qwen": dict(PAYLOADS["qwen"], tool_name="read_file", tool_input={"file_path": ".env"}),
    "droid": dict(PAYLOADS["droid"], tool_name="Read", tool_input={"file_path": ".env"}),
    "cursor": dict(PAYLOADS["cursor"], tool_name="Read", tool_input={"file_path": ".env"}),
    "opencode": dict(PAYLOADS["opencode"], tool="read", args={"filePath": ".env"}),
}
DENY_SHAPE = {"codex": lambda a: a["hookSpecificOutput"]["permissionDecision"] == "deny",
              "gemini": lambda a: a["decision"] == "deny",
              "copilot": lambda a: a["permissionDecision"] == "deny",
              "qwen": lambda a: a["hookSpecificOutput"]["permissionDecision"] == "deny",
              "droid": lambda a: a["hookSpecificOutput"]["permissionDecision"] == "deny",
              "cursor": lambda a: a["permission"] == "deny",
              "opencode": lambda a: isinstance(a["deny"], str)}
NO_ANSWER = {"cursor": b"{}"}  # Cursor blocks a failClosed hook that prints nothing


def _hook(name: str, payload: dict, ctx_home: Path, cwd: Path) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "reflex.entry", "hook", name] + (["preToolUse"] if name == "copilot" else [])
    env = dict(os.environ, CTX_HOME=str(ctx_home), CTX_HOOK_REPLY_TIMEOUT="10")
    return subprocess.run(args, input=json.dumps(payload).encode(), capture_output=True, cwd=cwd, env=env, timeout=60)


def _ctx(ctx_home: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = dict(os.environ, CTX_HOME=str(ctx_home), **(env or {}))
    return subprocess.run([sys.executable, "-m", "reflex.entry", *args], capture_output=True, text=True, env=full,
                          timeout=60)


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_secret_read_denied_the_same_with_the_daemon_down_and_up(name, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    (repo / ".env").write_text("API_KEY=sk-live-0123456789abcdef0123456789abcdef\n")
    calls = [dict(PAYLOADS[name], cwd=str(repo))]
    if name in FILE_READS:
        calls.append(dict(FILE_READS[name], cwd=str(repo)))
    ctx_home = tmp_path / "ctxhome"
    env = {"CTX_SESSION_START_WAIT": "0"}
    try:
        down = [_hook(name, c, ctx_home, repo) for c in calls]   # no daemon: the shim's fallback answers
        assert all(p.returncode == 0 for p in down), [p.stderr for p in down]
        assert _ctx(ctx_home, "daemon", "start", env=env).returncode == 0
        up = [_hook(name, c, ctx_home, repo) for c in calls]
        assert all(p.returncode == 0 for p in up), [p.stderr for p in up]
    finally:
        _ctx(ctx_home, "daemon", "stop")
    for d, u in zip(down, up):
        answer = json.loads(d.stdout)
        assert DENY_SHAPE[name](answer), answer
        assert "secret" in d.stdout.decode().lower() and b"sk-live" not in d.stdout
        assert u.stdout == d.stdout


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_fallback_is_silent_for_ordinary_calls_and_spools_them(name, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    payload = json.loads(json.dumps(PAYLOADS[name]).replace("cat .env", "ls"))
    payload["cwd"] = str(repo)
    ctx_home = tmp_path / "ctxhome"
    try:
        p = _hook(name, payload, ctx_home, repo)
    finally:
        _ctx(ctx_home, "daemon", "stop")
    assert p.returncode == 0 and p.stdout == NO_ANSWER.get(name, b""), p
    # the call reached the ledger (spooled, then ingested by the daemon the shim started)
    import sqlite3
    import time
    deadline = time.monotonic() + 20
    rows = []
    while time.monotonic() < deadline:
        if (ctx_home / "ledger.db").exists():
            try:
                rows = sqlite3.connect(ctx_home / "ledger.db").execute(
                    "SELECT harness, hook_event, command, spooled FROM events").fetchall()
            except sqlite3.OperationalError:
                rows = []
            if rows:
                break
        _ctx(ctx_home, "daemon", "start")
        time.sleep(0.2)
    _ctx(ctx_home, "daemon", "stop")
    assert (name, "PreToolUse", "ls", 1) in rows, rows


FLAT = ("copilot", "cursor")


@pytest.mark.parametrize("name", [h for h in hinst.HARNESSES if h != "opencode"])
def test_install_is_idempotent_backs_up_and_keeps_foreign_hooks(name, tmp_path):
    home = tmp_path / "h"
    env = {"HOME": str(home), "CODEX_HOME": str(tmp_path / "cx"), "COPILOT_HOME": str(tmp_path / "cp"),
           "GEMINI_CLI_HOME": str(tmp_path / "gm")}
    target = Path(hinst.config_path(name, "user", environ=env))
    assert str(target).startswith(str(tmp_path / {"codex": "cx", "copilot": "cp", "gemini": "gm"}.get(name, "h")))
    target.parent.mkdir(parents=True)
    event = {"gemini": "BeforeTool", "copilot": "preToolUse", "cursor": "preToolUse"}.get(name, "PreToolUse")
    foreign = {"type": "command", "command": "my-own-hook", "bash": "my-own-hook"}
    seed = {"hooks": {event: [foreign] if name in FLAT else [{"matcher": "x", "hooks": [foreign]}]},
            "other": {"keep": True}}
    target.write_text(json.dumps(seed))
    ctx_home = tmp_path / "ctxhome"
    first = _ctx(ctx_home, "install", "--harness", name, env=env)
    assert first.returncode == 0 and "backup:" in first.stdout, first.stdout + first.stderr
    installed = json.loads(target.read_text())
    second = _ctx(ctx_home, "install", "--harness", name, env=env)
    assert "already current" in second.stdout and json.loads(target.read_text()) == installed
    assert installed["other"] == {"keep": True}
    assert json.dumps(foreign) in json.dumps(installed)
    ours = [h for groups in installed["hooks"].values() for g in groups
            for h in ([g] if name in FLAT else g["hooks"]) if hinst.is_ours(h, name)]
    assert len(ours) == len(hinst.entries(name, "ctx"))
    if name == "cursor":  # fail-open by default; a failClosed the user set on ctx's entry survives
        assert "failClosed" not in installed["hooks"]["preToolUse"][-1]
        installed["hooks"]["preToolUse"][-1]["failClosed"] = True
        target.write_text(json.dumps(installed))
        assert _ctx(ctx_home, "install", "--harness", name, env=env).returncode == 0
        assert json.loads(target.read_text())["hooks"]["preToolUse"][-1]["failClosed"] is True
    removed = _ctx(ctx_home, "uninstall", "--harness", name, env=env)
    assert removed.returncode == 0, removed.stderr
    assert json.loads(target.read_text()) == (dict(seed, version=1) if name in FLAT else seed)


def test_opencode_plugin_install_file_and_config_forms(tmp_path):
    home = tmp_path / "h"
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    ctx_home = tmp_path / "ctxhome"
    plugin = home / ".config" / "opencode" / "plugins" / "ctx.js"
    first = _ctx(ctx_home, "install", "--harness", "opencode", env=env)
    assert first.returncode == 0 and plugin.exists(), first.stdout + first.stderr
    text = plugin.read_text()
    assert hinst.PLUGIN_MARKER in text and "__CTX_LAUNCHER__" not in text and '"hook", "opencode"' in text
    assert "already current" in _ctx(ctx_home, "install", "--harness", "opencode", env=env).stdout
    assert _ctx(ctx_home, "uninstall", "--harness", "opencode", env=env).returncode == 0 and not plugin.exists()
    # someone else's plugin of the same name is never overwritten
    plugin.write_text("export const Mine = async () => ({})\n")
    refused = _ctx(ctx_home, "install", "--harness", "opencode", env=env)
    assert refused.returncode == 1 and "not ctx's plugin" in refused.stderr and "Mine" in plugin.read_text()
    # --settings opencode.json: the plugin's file:// URL joins the user's own plugin list
    config = tmp_path / "proj" / "opencode.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"plugin": ["some-npm-plugin"], "model": "m"}))
    assert _ctx(ctx_home, "install", "--harness", "opencode", "--settings", str(config), env=env).returncode == 0
    installed = json.loads(config.read_text())
    assert installed["plugin"][0] == "some-npm-plugin" and installed["plugin"][1].startswith("file://")
    assert Path(installed["plugin"][1][len("file://"):]).read_text().count(hinst.PLUGIN_MARKER) == 1
    assert _ctx(ctx_home, "uninstall", "--harness", "opencode", "--settings", str(config), env=env).returncode == 0
    assert json.loads(config.read_text()) == {"plugin": ["some-npm-plugin"], "model": "m"}


def test_install_refuses_a_config_that_is_not_json(tmp_path):
    env = {"HOME": str(tmp_path / "h"), "CODEX_HOME": str(tmp_path / "cx")}
    target = tmp_path / "cx" / "hooks.json"
    target.parent.mkdir(parents=True)
    target.write_text("{not json")
    p = _ctx(tmp_path / "ctxhome", "install", "--harness", "codex", env=env)
    assert p.returncode == 1 and "not valid JSON" in p.stderr
    assert target.read_text() == "{not json"


def test_doctor_reports_each_harness_and_codex_trust(tmp_path):
    env = {"HOME": str(tmp_path / "h"), "CODEX_HOME": str(tmp_path / "cx"), "PATH": os.environ.get("PATH", "")}
    ctx_home = tmp_path / "ctxhome"
    assert _ctx(ctx_home, "install", "--harness", "codex", env=env).returncode == 0
    p = _ctx(ctx_home, "doctor", env=env)
    assert "codex" in p.stdout and "all 3 events hooked" in p.stdout, p.stdout
    assert "Codex has not trusted ctx's hooks" in p.stdout and "/hooks" in p.stdout, p.stdout
    hooks_json = str(tmp_path / "cx" / "hooks.json")
    state = "".join('[hooks.state."%s:%s:0:0"]\ntrusted_hash = "sha256:abc"\n\n' % (hooks_json, e)
                    for e in ("pre_tool_use", "post_tool_use", "session_start"))
    (tmp_path / "cx" / "config.toml").write_text(state)
    p = _ctx(ctx_home, "doctor", env=env)
    assert "3 hook(s) trusted" in p.stdout, p.stdout
