"""`python -m reflex.daemon run [--detached]`: the daemon's process entry.

The single-instance lock is taken with the standard library BEFORE the heavy
imports (pydantic, sqlite_utils, tiktoken...): a burst of hooks may start
several of these, and the losers must exit in milliseconds, not after
half a second of imports.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reflex.paths import Paths


def _logger(paths: Paths) -> Callable[[str], None]:
    from reflex import paths as paths_mod
    dir_fd = paths_mod.open_private_subdir(os.path.dirname(paths.log))
    try:
        fd = paths_mod.open_private_file(dir_fd, os.path.basename(paths.log),
                                         os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    finally:
        os.close(dir_fd)
    f = os.fdopen(fd, "a", buffering=1, encoding="utf-8", errors="backslashreplace")

    def log(msg: str) -> None:
        f.write("%s ctxd[%d] %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), os.getpid(), msg))
    return log


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "run":
        sys.stderr.write("usage: python -m reflex.daemon run [--detached]\n")
        return 2
    import fcntl

    from reflex import paths as paths_mod
    paths = paths_mod.resolve()
    try:
        # Start-up in directories someone else may have prepared: each is ours
        # or we refuse, in one line, before writing anything.
        paths_mod.ensure_private_dir(paths.home)
        run_fd = paths_mod.open_private_subdir(paths.run_dir)
        try:
            fd = paths_mod.open_private_file(run_fd, os.path.basename(paths.lock), os.O_RDWR | os.O_CREAT)
        finally:
            os.close(run_fd)
    except paths_mod.UntrustedPath as e:
        sys.stderr.write("%s\n" % e)
        paths_mod.append_log(paths.log, "%s ctxd[%d] not started: %s\n" % (
            time.strftime("%Y-%m-%dT%H:%M:%S"), os.getpid(), e))
        return 1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        if "--detached" not in argv:
            sys.stderr.write("ctx daemon: already running (lock %s held)\n" % paths.lock)
        return 0 if "--detached" in argv else 1
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    try:
        log = _logger(paths)
        for sub in (paths.spool, paths.captures, paths.blobs, paths.policies):
            try:
                os.close(paths_mod.open_private_dir(sub, create=False))
            except FileNotFoundError:
                pass
        _refuse_foreign_ledger(paths)
    except paths_mod.UntrustedPath as e:
        sys.stderr.write("%s\n" % e)
        os.close(fd)
        return 1
    try:
        # A broken config is refused here, naming the file and the key, rather than run
        # with defaults nobody chose (the hot path fails open and says so; reflex.config).
        from reflex.config_model import ConfigInvalid, require_valid
        require_valid(paths.config)
    except ConfigInvalid as e:
        log("not started: %s" % e)
        sys.stderr.write("%s\n" % e)
        os.close(fd)
        return 1
    try:
        from reflex.daemon.server import Server
        Server(paths, log=log).run()
    except paths_mod.UntrustedPath as e:
        log(str(e))
        sys.stderr.write("%s\n" % e)
        return 1
    except Exception as e:
        import traceback
        log("daemon crashed: %r\n%s" % (e, traceback.format_exc()))
        return 1
    finally:
        os.close(fd)
    return 0


def _refuse_foreign_ledger(paths: Paths) -> None:
    # sqlite follows links: a ledger planted while the home was open to others
    # would have us append every event to someone else's file.
    from reflex import paths as paths_mod
    for name in (paths.ledger, paths.ledger + "-wal", paths.ledger + "-shm"):
        try:
            st = os.lstat(name)
        except FileNotFoundError:
            continue
        if (st.st_mode & 0o170000) != 0o100000 or st.st_uid != os.geteuid():
            raise paths_mod.UntrustedPath(
                "ctx: refusing %s: it is a link or belongs to uid %d, not to you (uid %d); move it "
                "away and start the daemon again" % (name, st.st_uid, os.geteuid()))


if __name__ == "__main__":
    sys.exit(main())
