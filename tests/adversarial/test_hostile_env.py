"""The agent's shell environment belongs to the project, not to ctx.

A project that sets PYTHONPATH=src, with a module there named like one of the standard
library's (`shlex.py`, `json.py`, `signal.py` …), must not change what ctx does: the launcher
runs Python isolated (-I), and the daemon a shim starts is isolated too.  The command `ctx run`
runs still sees the environment as the agent set it.
"""

import json
import os
import subprocess
import time

from reflex.shim import client, launcher

from ..conftest import pre_bash

SHADOWED = ("shlex", "json", "re", "fcntl", "threading", "subprocess", "signal", "tempfile", "socket", "select")


def _hostile_path(tmp_path):
    d = tmp_path / "src"
    d.mkdir()
    for name in SHADOWED:
        (d / (name + ".py")).write_text("raise SystemExit('the project shadowed %s')\n" % name)
    return str(d)


def _env(src):
    env = dict(os.environ, PYTHONPATH=src)
    env.pop("CTX_HOOK_REPLY_TIMEOUT", None)
    return env


def test_the_shadowing_is_real(tmp_path):
    # Without isolation the interpreter does load the project's module: the attack works.
    src = _hostile_path(tmp_path)
    p = subprocess.run(["python3", "-S", "-c", "import shlex"], env=_env(src), capture_output=True, text=True,
                       timeout=30)
    assert p.returncode != 0 and "shadowed shlex" in p.stderr


def test_ctx_run_runs_the_command_and_the_command_keeps_the_environment(paths, tmp_path):
    src = _hostile_path(tmp_path)
    fast = launcher.write_launcher(paths)
    p = subprocess.run([fast, "run", "--", "echo hi; echo \"PYTHONPATH=$PYTHONPATH\""], env=_env(src),
                       capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    assert "shadowed" not in p.stderr, p.stderr
    assert p.returncode == 0 and "hi" in p.stdout and ("PYTHONPATH=" + src) in p.stdout


def test_the_shim_answers_and_the_daemon_it_starts_runs(paths, tmp_path):
    src = _hostile_path(tmp_path)
    fast = launcher.write_launcher(paths)
    env = _env(src)
    payload = json.dumps(pre_bash("cat .env", cwd=str(tmp_path))).encode()
    p = subprocess.run([fast, "hook", "claude"], input=payload, env=env, capture_output=True, timeout=60)
    assert b"shadowed" not in p.stderr, p.stderr
    assert p.returncode == 0 and b'"deny"' in p.stdout, (p.stdout, p.stderr)
    # The daemon the shim spawned (cold start) came up in spite of the environment it inherited.
    deadline = time.monotonic() + 30
    while True:
        try:
            hdr, _ = client.request_json(paths, "ping", connect_timeout=0.2, reply_timeout=2)
            assert hdr.get("ok")
            break
        except client.Unavailable:
            assert time.monotonic() < deadline, "the spawned daemon never answered"
            time.sleep(0.2)
