"""Starting, stopping and inspecting the daemon from the CLI (not the hot path)."""

import json
import os
import signal
import subprocess
import sys
import time

from . import client, paths as paths_mod


class DaemonError(Exception):
    pass


def lock_pid(paths):
    """The pid the daemon wrote into its instance lock (the live one, or the last one), or 0.

    Unlike the status file it is written before the daemon serves, so it also finds a
    daemon that is still starting (tests and benchmarks use it to kill what shims spawned)."""
    try:
        with open(paths.lock) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def status(paths):
    """{'running': bool, ...} from a live handshake, falling back to the status file."""
    info = {"running": False, "socket": paths.socket, "status_file": paths.status}
    try:
        hdr, _ = client.request_json(paths, "status", connect_timeout=0.2, reply_timeout=2)
    except client.Unavailable as e:
        info["reason"] = str(e)
        try:
            with open(paths.status) as f:
                stale = json.load(f)
            info["stale_status"] = stale
        except (OSError, ValueError):
            pass
        return info
    if not hdr.get("ok"):
        info["reason"] = "handshake refused: %s" % hdr.get("detail")
        return info
    info.update(running=True, **{k: v for k, v in hdr.items() if k not in ("ok", "v", "out", "len")})
    try:
        with open(paths.status) as f:
            info["http_port"] = json.load(f).get("http_port", 0)
    except (OSError, ValueError):
        pass
    return info


def start(paths, *, wait=10.0, foreground=False):
    if foreground:
        from .daemon.__main__ import main as daemon_main
        return daemon_main(["run"])
    if status(paths)["running"]:
        return status(paths)
    paths_mod.ensure_private_dir(paths.run_dir)
    os.makedirs(os.path.dirname(paths.log), mode=0o700, exist_ok=True)
    with open(paths.log, "a") as log:
        subprocess.Popen([sys.executable, "-m", "reflex.daemon", "run", "--detached"],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        st = status(paths)
        if st["running"]:
            return st
        time.sleep(0.05)
    raise DaemonError("daemon did not come up within %.0fs; see %s" % (wait, paths.log))


def stop(paths, *, wait=15.0):
    st = status(paths)
    if not st["running"]:
        return False
    pid = st.get("pid")
    try:
        client.request_json(paths, "shutdown", connect_timeout=0.2, reply_timeout=2)
    except client.Unavailable:
        if pid:
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if pid and not _alive(pid):
            return True
        if not pid and not status(paths)["running"]:
            return True
        time.sleep(0.05)
    raise DaemonError("daemon pid %s did not stop within %.0fs" % (pid, wait))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours still "exists"; reap if we can.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True
