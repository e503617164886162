"""Shared fixtures: an isolated CTX_HOME per test and a real daemon process.

Every test gets its own CTX_HOME and HOME under tmp_path, so nothing can touch
the developer's real state; HOME points at a directory created read-only, so
a write that escapes CTX_HOME fails loudly instead of landing in ~.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# CI and these machines have no internet: use the shared o200k_base copy when
# it is there; elsewhere tiktoken downloads (or has cached) the encoding.
_SHARED_TIKTOKEN = os.path.join(REPO, "..", "shared", "tiktoken")
TIKTOKEN_DIR = os.environ.get("TIKTOKEN_CACHE_DIR") or (
    _SHARED_TIKTOKEN if os.path.isdir(_SHARED_TIKTOKEN) else None)


@pytest.fixture(autouse=True)
def ctx_env(tmp_path, monkeypatch):
    home = tmp_path / "ctxhome"
    fake_home = tmp_path / "home"
    fake_home.mkdir()
    monkeypatch.setenv("CTX_HOME", str(home))
    monkeypatch.setenv("HOME", str(fake_home))
    if TIKTOKEN_DIR:
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", os.path.abspath(TIKTOKEN_DIR))
    for var in ("CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID", "XDG_RUNTIME_DIR", "XDG_DATA_HOME",
                "CTX_REFLEXES"):
        monkeypatch.delenv(var, raising=False)
    yield home
    _kill_daemons_of(str(home))


def _kill_daemons_of(ctx_home):
    """Daemons a shim spawned during the test (detached, so no fixture owns them)."""
    if not os.path.exists(os.path.join(ctx_home, "run", "spawn.lock")):
        return
    deadline = time.monotonic() + 1.0
    while True:
        found = False
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if b"reflex.daemon" not in f.read():
                        continue
                with open("/proc/%s/environ" % pid, "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if ("CTX_HOME=" + ctx_home).encode() in env:
                found = True
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
        # a spawn may still be in flight (double fork): look once more shortly after
        if found or time.monotonic() > deadline:
            return
        time.sleep(0.2)


@pytest.fixture
def paths(ctx_env):
    from reflex import paths as paths_mod
    return paths_mod.resolve()


class DaemonProc:
    """A real daemon process on a real socket; always killed at teardown."""

    def __init__(self, paths):
        self.paths = paths
        self.proc = None

    def start(self, wait=15.0, extra_env=None):
        env = dict(os.environ)
        env.update(extra_env or {})
        os.makedirs(self.paths.home, exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "reflex.daemon", "run"], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.wait_ready(wait)
        return self

    def wait_ready(self, wait=15.0):
        from reflex.shim import client
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                hdr, _ = client.request_json(self.paths, "ping", connect_timeout=0.2, reply_timeout=1)
                if hdr.get("ok"):
                    return hdr
            except client.Unavailable:
                pass
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError("daemon exited: %s" % self.proc.stderr.read().decode())
            time.sleep(0.05)
        raise RuntimeError("daemon not ready; log:\n" + self.log())

    def log(self):
        try:
            with open(self.paths.log) as f:
                return f.read()
        except OSError:
            return "(no log)"

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill9()


def _kill_strays(paths):
    """Daemons spawned by shims (not by the fixture) are found by their lock file."""
    from reflex.daemon.control import lock_pid
    pid = lock_pid(paths)
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture
def daemon(paths):
    d = DaemonProc(paths)
    try:
        yield d
    finally:
        d.kill9()
        _kill_strays(paths)


@pytest.fixture
def running_daemon(daemon):
    return daemon.start()


def ctx_cmd():
    return [sys.executable, "-m", "reflex.entry"]


def run_hook(payload, *, env=None, timeout=10):
    """Run the real shim as a process: bytes in, (rc, stdout, stderr, seconds) out."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    # These tests check what the daemon answers, not how fast (evals/bench_hook.py does): on a
    # loaded 2-core machine a reply can take longer than the shim's 1.5 s budget, after which it
    # rightly fails open with no answer, which is not what is under test here.
    env = dict(os.environ if env is None else env)
    env.setdefault("CTX_HOOK_REPLY_TIMEOUT", "15")
    t0 = time.perf_counter()
    p = subprocess.run(ctx_cmd() + ["hook", "claude"], input=data, capture_output=True,
                       env=env, timeout=max(timeout, 20))
    return p.returncode, p.stdout, p.stderr, time.perf_counter() - t0


def ledger_rows(paths, sql="SELECT * FROM events ORDER BY id", args=()):
    import sqlite3
    conn = sqlite3.connect(paths.ledger)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql, args)]
    finally:
        conn.close()


@pytest.fixture
def user_allows_bash(ctx_env):
    """A user whose ~/.claude/settings.json allows every Bash command (as `--allowedTools Bash`
    would): the configuration in which the harness runs a test command unasked, so ctx rewrites."""
    settings = os.path.join(os.environ["HOME"], ".claude", "settings.json")
    os.makedirs(os.path.dirname(settings), exist_ok=True)
    with open(settings, "w") as f:
        json.dump({"permissions": {"allow": ["Bash"]}}, f)
    return settings


def pre_bash(command, session="sess-1", tool_use_id="toolu_1", cwd="/tmp", **extra):
    p = {"session_id": session, "hook_event_name": "PreToolUse", "cwd": cwd,
         "tool_name": "Bash", "tool_input": {"command": command, "description": "d", "timeout": 120000},
         "tool_use_id": tool_use_id, "permission_mode": "default", "transcript_path": "/tmp/t.jsonl"}
    p.update(extra)
    return p
