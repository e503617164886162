"""Starting, stopping and inspecting the daemon from the CLI (not the hot path)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

from reflex import paths as paths_mod
from reflex.shim import client
from reflex.errors import FatalError


class DaemonError(FatalError):
    pass


def lock_pid(paths: paths_mod.Paths) -> int:
    """The pid the daemon wrote into its instance lock (the live one, or the last one), or 0.

    Unlike the status file it is written before the daemon serves, so it also finds a
    daemon that is still starting (tests and benchmarks use it to kill what shims spawned)."""
    try:
        with open(paths.lock) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def status(paths: paths_mod.Paths) -> dict[str, Any]:
    """{'running': bool, ...} from a live handshake, falling back to the status file."""
    info: dict[str, Any] = {"running": False, "socket": paths.socket, "status_file": paths.status}
    try:
        hdr, _ = client.request_json(paths, "status", connect_timeout=0.2, reply_timeout=2)
    except client.Unavailable as e:
        info["reason"] = str(e)
        stale = _read_status(paths)
        if stale is not None:
            info["stale_status"] = stale
        return info
    if not hdr.get("ok"):
        info["reason"] = "handshake refused: %s" % hdr.get("detail")
        return info
    info.update(running=True, **{k: v for k, v in hdr.items() if k not in ("ok", "v", "out", "len")})
    info["http_port"] = (_read_status(paths) or {}).get("http_port", 0)
    return info


def _read_status(paths: paths_mod.Paths) -> dict[str, Any] | None:
    """The status file's content if it is ours, else None (another user's is not believed)."""
    data = paths_mod.read_private_file(paths.status)
    try:
        parsed = json.loads(data) if data else None
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def start(paths: paths_mod.Paths, *, wait: float = 10.0, foreground: bool = False) -> dict[str, Any] | int:
    if foreground:
        from reflex.daemon.__main__ import main as daemon_main
        return daemon_main(["run"])
    if status(paths)["running"]:
        return status(paths)
    paths_mod.ensure_private_dir(paths.home)
    os.close(paths_mod.open_private_subdir(paths.run_dir))
    dir_fd = paths_mod.open_private_subdir(os.path.dirname(paths.log))
    try:
        log_fd = paths_mod.open_private_file(dir_fd, os.path.basename(paths.log),
                                             os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    finally:
        os.close(dir_fd)
    from reflex.config_model import require_valid
    require_valid(paths.config)     # the daemon would refuse it: say why here, not "did not come up"
    try:
        proc = subprocess.Popen([sys.executable, "-I", "-m", "reflex.daemon", "run", "--detached"],
                                stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd, start_new_session=True)
    finally:
        os.close(log_fd)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        st = status(paths)
        if st["running"]:
            return st
        if proc.poll() not in (None, 0):
            raise DaemonError("the daemon exited with status %s at start; see %s" % (proc.returncode, paths.log))
        time.sleep(0.05)
    raise DaemonError("daemon did not come up within %.0fs; see %s" % (wait, paths.log))


def stop(paths: paths_mod.Paths, *, wait: float = 15.0) -> bool:
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


def _alive(pid: int) -> bool:
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
