"""Starting and stopping real ctx daemons for tests and benchmarks."""

import os
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def isolated_home(prefix="ctx-bench-"):
    """A fresh CTX_HOME for this process (os.environ), -> its reflex.paths.Paths."""
    home = tempfile.mkdtemp(prefix=prefix)
    os.environ["CTX_HOME"] = os.path.join(home, "ctxhome")
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(REPO, "..", "shared", "tiktoken"))
    from reflex import paths as paths_mod
    return paths_mod.resolve()


def start_daemon(paths, env=None, wait=20):
    """A real daemon (`python -m reflex.daemon run`) for `paths`, answering pings; -> its Popen."""
    from reflex.shim import client
    os.makedirs(paths.home, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "reflex.daemon", "run"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            if client.request_json(paths, "ping", connect_timeout=0.2, reply_timeout=1)[0].get("ok"):
                return proc
        except client.Unavailable:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("daemon for %s did not start within %ds" % (paths.home, wait))


def stop_daemon(paths, proc=None):
    """Stop the daemon of `paths` politely, then for sure (SIGKILL the lock holder)."""
    from reflex.daemon import control as daemon_control
    try:
        daemon_control.stop(paths)
    except Exception:  # noqa: BLE001 - a daemon that will not stop is killed below
        pass
    pid = daemon_control.lock_pid(paths)
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if proc is not None:
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_for(pred, timeout: float = 20.0, step: float = 0.1) -> bool:
    """Poll pred until it is true or timeout seconds pass; -> its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()
