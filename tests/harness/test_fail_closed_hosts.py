"""Fail-closed hosts: Cursor (a `failClosed` hook that errs, hangs or prints nothing blocks the
tool) and OpenCode (a plugin that throws blocks the tool).  ctx must still say "let it be", fast,
when its daemon is killed mid-session or hangs, and deny a secret read the same either way.

Real `ctx hook cursor` processes against a real daemon on a real socket; the OpenCode plugin is
ctx's shipped plugin, run by node (OpenCode's own runtime is Bun; the plugin uses node:* only),
calling the real `ctx hook opencode` shim.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reflex import paths as paths_mod
from reflex.daemon import control as daemon_control
from reflex.harness import install as hinst
from tests.support.daemons import start_daemon, stop_daemon

SECRET = "sk-live-0123456789abcdef0123456789abcdef"
# A call answered by the shim alone (no daemon) costs a Python start and the local safety plane;
# the bound leaves room for a loaded 2-core CI machine, and is far below Cursor's hook timeout.
FAST_S = 1.5
HUNG_DAEMON_S = float(os.environ.get("CTX_HOOK_REPLY_TIMEOUT", "1.5")) + 1.5


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".env").write_text("API_KEY=%s\n" % SECRET)
    return repo


def _cursor(event: str, repo: Path, **fields) -> dict:  # noqa: ANN003
    base = {"conversation_id": "conv-fc", "generation_id": "g", "model": "m", "hook_event_name": event,
            "cursor_version": "2.1.0", "workspace_roots": [str(repo)], "cwd": str(repo), "transcript_path": None}
    return dict(base, **fields)


def _hook(ctx_home: Path, repo: Path, harness: str, payload: dict) -> tuple[bytes, float]:
    env = dict(os.environ, CTX_HOME=str(ctx_home), CTX_SESSION_START_WAIT="0")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "hook", "--harness", harness],
                       input=json.dumps(payload).encode(), capture_output=True, cwd=repo, env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout, time.monotonic() - t0


@pytest.fixture
def daemon(tmp_path, monkeypatch):
    ctx_home = tmp_path / "ctxhome"
    monkeypatch.setenv("CTX_HOME", str(ctx_home))
    paths = paths_mod.resolve({"CTX_HOME": str(ctx_home)})
    proc = start_daemon(paths, env=dict(os.environ, CTX_HOME=str(ctx_home)))
    yield ctx_home, paths
    pid = daemon_control.lock_pid(paths)
    if pid:
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass
    stop_daemon(paths, proc)


def test_cursor_gets_an_answer_fast_with_the_daemon_killed_mid_session_and_hung(daemon, tmp_path):
    ctx_home, paths = daemon
    repo = _repo(tmp_path)
    ls = _cursor("preToolUse", repo, tool_name="Shell", tool_input={"command": "ls"}, tool_use_id="t1")
    secret = _cursor("preToolUse", repo, tool_name="Shell", tool_input={"command": "cat .env"}, tool_use_id="t2")
    post = _cursor("postToolUse", repo, tool_name="Shell", tool_input={"command": "ls"}, tool_use_id="t1",
                   tool_output="a\nb\n", duration_ms=3)
    up = {name: _hook(ctx_home, repo, "cursor", p)[0] for name, p in (("ls", ls), ("secret", secret), ("post", post))}
    assert up["ls"] == b"{}" and up["post"] == b"{}", up
    assert json.loads(up["secret"])["permission"] == "deny" and SECRET.encode() not in up["secret"]

    os.kill(daemon_control.lock_pid(paths), signal.SIGKILL)  # mid-session: the next calls meet no daemon
    for name, payload in (("ls", ls), ("secret", secret), ("post", post)):
        out, seconds = _hook(ctx_home, repo, "cursor", payload)
        assert out == up[name], (name, out, up[name])  # same answer, the secret denial byte for byte
        assert seconds < FAST_S, (name, seconds)

    # A daemon that accepts but never answers (stopped): the shim gives up on it and answers itself.
    fresh = start_daemon(paths, env=dict(os.environ, CTX_HOME=str(ctx_home)))
    os.kill(daemon_control.lock_pid(paths), signal.SIGSTOP)
    try:
        for name, payload in (("ls", ls), ("secret", secret)):
            out, seconds = _hook(ctx_home, repo, "cursor", payload)
            assert out == up[name] and seconds < HUNG_DAEMON_S, (name, out, seconds)
    finally:
        os.kill(daemon_control.lock_pid(paths), signal.SIGCONT)
        stop_daemon(paths, fresh)


NODE_DRIVER = r"""
const [pluginPath, tool, args] = process.argv.slice(2);
const mod = await import(pluginPath);
const hooks = await mod.CtxPlugin({ directory: process.cwd() });
const output = { args: JSON.parse(args) };
const t0 = Date.now();
try {
  await hooks["tool.execute.before"]({ tool, sessionID: "ses_fc", callID: "call_1" }, output);
  console.log(JSON.stringify({ ok: true, args: output.args, ms: Date.now() - t0 }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e.message), ms: Date.now() - t0 }));
}
"""


def _plugin_call(tmp_path: Path, repo: Path, launcher: str, tool: str, args: dict, ctx_home: Path) -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: cannot load the OpenCode plugin outside OpenCode")
    plugin = tmp_path / ("plugin-%d.mjs" % abs(hash(launcher)))
    plugin.write_text(hinst.plugin_source(launcher))
    driver = tmp_path / "driver.mjs"
    driver.write_text(NODE_DRIVER)
    env = dict(os.environ, CTX_HOME=str(ctx_home), CTX_OPENCODE_TIMEOUT_MS="1500", CTX_SESSION_START_WAIT="0")
    p = subprocess.run([node, str(driver), str(plugin), tool, json.dumps(args)], capture_output=True, text=True,
                       cwd=repo, env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def _launcher(tmp_path: Path, body: str) -> str:
    path = tmp_path / ("ctx-%d" % abs(hash(body)))
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_opencode_plugin_denies_secrets_without_a_daemon_and_otherwise_never_blocks(tmp_path):
    repo = _repo(tmp_path)
    ctx_home = tmp_path / "ctxhome"  # no daemon: the shim's local safety plane answers
    ctx = _launcher(tmp_path, 'exec "%s" -m reflex.entry "$@"' % sys.executable)
    try:
        denied = _plugin_call(tmp_path, repo, ctx, "bash", {"command": "cat .env", "description": "d"}, ctx_home)
        assert not denied["ok"] and "secret" in denied["error"].lower() and SECRET not in denied["error"], denied
        read = _plugin_call(tmp_path, repo, ctx, "read", {"filePath": str(repo / ".env")}, ctx_home)
        assert not read["ok"] and "secret" in read["error"].lower(), read
        plain = _plugin_call(tmp_path, repo, ctx, "bash", {"command": "ls", "description": "d"}, ctx_home)
        assert plain["ok"] and plain["args"]["command"] == "ls", plain
    finally:
        pid = daemon_control.lock_pid(paths_mod.resolve({"CTX_HOME": str(ctx_home)}))  # the shim starts one
        if pid:
            os.kill(pid, signal.SIGKILL)
    # ctx missing, crashing or hanging: the call goes through untouched, within the plugin's timeout
    for body in ("exit 0", "echo 'not json'; exit 3", "sleep 30"):
        broken = _plugin_call(tmp_path, repo, _launcher(tmp_path, body), "bash", {"command": "ls"}, ctx_home)
        assert broken["ok"] and broken["args"] == {"command": "ls"} and broken["ms"] < 3000, (body, broken)
    missing = _plugin_call(tmp_path, repo, str(tmp_path / "no-such-ctx"), "bash", {"command": "ls"}, ctx_home)
    assert missing["ok"] and missing["args"] == {"command": "ls"}, missing


QWEN_BASE = {"session_id": "s-qwen-default", "transcript_path": "/t.jsonl", "timestamp": "t",
             "permission_mode": "default", "prompt_id": "p", "tool_name": "run_shell_command"}
FAILING_TESTS = "import pytest\n\n@pytest.mark.parametrize('n', range(40))\ndef test_many(n):\n    assert n % 5, 'n=%d' % n\n"


def _qwen_llm_content(command: str, output: str, exit_code: int) -> str:
    return ("Command: %s\nDirectory: (root)\nOutput: %s\nError: (none)\nExit Code: %d\nSignal: (none)\n"
            "Process Group PGID: 1" % (command, output, exit_code))


def test_qwen_outside_yolo_gets_the_digest_after_a_success_and_its_output_after_a_failure(daemon, tmp_path):
    """Qwen asks before commands outside YOLO, so ctx does not rewrite there: after a success its
    post hook replaces the output with the digest (`continue: false` + stopReason); a failure's
    output cannot be replaced (PostToolUseFailure reads only additionalContext), so ctx adds nothing."""
    ctx_home, _ = daemon
    repo = _repo(tmp_path)
    (repo / "test_many.py").write_text(FAILING_TESTS)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_many.py"], cwd=repo,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "8 failed, 32 passed" in run.stdout, run.stdout
    for n, (command, output, exit_code) in enumerate((("pytest -q | tail -400", run.stdout, 0),
                                                      ("pytest -q", run.stdout, 1))):
        tool_id = "toolu_%d" % n
        pre = dict(QWEN_BASE, cwd=str(repo), hook_event_name="PreToolUse", tool_use_id=tool_id,
                   tool_input={"command": command, "description": "d"})
        assert _hook(ctx_home, repo, "qwen", pre)[0] == b""  # Qwen decides; nothing to rewrite with
        if exit_code == 0:
            post = dict(pre, hook_event_name="PostToolUse",
                        tool_response={"llmContent": _qwen_llm_content(command, output, 0), "returnDisplay": output})
            answer = json.loads(_hook(ctx_home, repo, "qwen", post)[0])
            assert answer["continue"] is False and answer["stopReason"].startswith("[ctx] pytest"), answer
            assert "test_many.py::test_many[0] [5] [10]" in answer["stopReason"] and "[35]" in answer["stopReason"]
            assert len(answer["stopReason"]) < len(output)
        else:
            post = dict(pre, hook_event_name="PostToolUseFailure", error=_qwen_llm_content(command, output, 1))
            assert _hook(ctx_home, repo, "qwen", post)[0] == b""
