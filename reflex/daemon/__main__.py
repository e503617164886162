"""`python -m reflex.daemon run [--detached]`: the daemon's process entry.

The single-instance lock is taken with the standard library BEFORE the heavy
imports (pydantic, sqlite_utils, tiktoken...): a burst of hooks may start
several of these, and the losers must exit in milliseconds, not after
half a second of imports.
"""

import os
import sys
import time


def _logger(paths):
    os.makedirs(os.path.dirname(paths.log), mode=0o700, exist_ok=True)
    f = open(paths.log, "a", buffering=1)

    def log(msg):
        f.write("%s ctxd[%d] %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), os.getpid(), msg))
    return log


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "run":
        sys.stderr.write("usage: python -m reflex.daemon run [--detached]\n")
        return 2
    import fcntl

    from .. import paths as paths_mod
    paths = paths_mod.resolve()
    paths_mod.ensure_private_dir(paths.run_dir)
    os.makedirs(paths.home, mode=0o700, exist_ok=True)
    fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        if "--detached" not in argv:
            sys.stderr.write("ctx daemon: already running (lock %s held)\n" % paths.lock)
        return 0 if "--detached" in argv else 1
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    log = _logger(paths)
    try:
        from .server import Server
        Server(paths, log=log).run()
    except Exception as e:
        import traceback
        log("daemon crashed: %r\n%s" % (e, traceback.format_exc()))
        return 1
    finally:
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
