"""Where ctx keeps its state: one resolver, one environment override.

Everything lives under a single home directory so a user (or a test) can move
or wipe it as a unit: `$CTX_HOME` when set, otherwise the XDG data directory
(`$XDG_DATA_HOME/ctx`, default `~/.local/share/ctx`).  The socket goes in a
runtime directory (`$XDG_RUNTIME_DIR/ctx-<uid>` when that exists and
`$CTX_HOME` is unset, else `<home>/run`) because sockets must live on a local
filesystem with a short path (AF_UNIX paths are limited to ~107 bytes).

stdlib-only: imported by the hook shim on every tool call.
"""

import os

_SOCKET_PATH_LIMIT = 100


class Paths:
    """Every path ctx uses, derived from one root.  Cheap to build."""

    __slots__ = ("home", "run_dir", "socket", "status", "lock", "spawn_lock",
                 "log", "ledger", "blobs", "spool", "captures", "config",
                 "http_token", "policies")

    def __init__(self, home, run_dir):
        self.home = home
        self.run_dir = run_dir
        self.socket = os.path.join(run_dir, "ctxd.sock")
        self.status = os.path.join(run_dir, "ctxd.status.json")
        self.lock = os.path.join(run_dir, "ctxd.lock")
        self.spawn_lock = os.path.join(run_dir, "spawn.lock")
        self.log = os.path.join(home, "logs", "ctxd.log")
        self.ledger = os.path.join(home, "ledger.db")
        self.blobs = os.path.join(home, "blobs")
        self.spool = os.path.join(home, "spool")
        self.captures = os.path.join(home, "captures")
        self.config = os.path.join(home, "config.json")
        self.http_token = os.path.join(home, "http-token")
        self.policies = os.path.join(home, "policies")

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}


def resolve(environ=None):
    """Resolve the paths for this user from the environment (passed in for tests)."""
    env = os.environ if environ is None else environ
    explicit = env.get("CTX_HOME")
    if explicit:
        home = os.path.abspath(os.path.expanduser(explicit))
        run_dir = os.path.join(home, "run")
    else:
        data = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
        home = os.path.join(data, "ctx")
        runtime = env.get("XDG_RUNTIME_DIR")
        if runtime and os.path.isdir(runtime):
            run_dir = os.path.join(runtime, "ctx-%d" % os.getuid())
        else:
            run_dir = os.path.join(home, "run")
    if len(os.path.join(run_dir, "ctxd.sock")) > _SOCKET_PATH_LIMIT:
        # AF_UNIX path limit: fall back to a short per-user directory in /tmp.
        # It is created 0700 and ownership-checked like any other run dir.
        import hashlib
        digest = hashlib.blake2b(run_dir.encode(), digest_size=6).hexdigest()
        run_dir = os.path.join("/tmp", "ctx-%d-%s" % (os.getuid(), digest))
    return Paths(home, run_dir)


def ensure_private_dir(path):
    """Create `path` (and parents) 0700 and refuse one owned by someone else.

    The run dir guards the socket: a directory another user can write to would
    let them replace our socket, so we check ownership instead of trusting it.
    """
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.stat(path)
    if st.st_uid != os.getuid():
        raise PermissionError("%s is owned by uid %d, not us" % (path, st.st_uid))
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path
