"""Where ctx keeps its state: one resolver, one environment override, one notion of "ours".

Everything lives under a single home directory so a user (or a test) can move
or wipe it as a unit: `$CTX_HOME` when set, otherwise the XDG data directory
(`$XDG_DATA_HOME/ctx`, default `~/.local/share/ctx`).  The socket goes in a
runtime directory: `$XDG_RUNTIME_DIR/ctx-<uid>` when that directory is really
the user's private runtime dir (owned by us, mode 0700, as the XDG spec
requires) and `$CTX_HOME` is unset, else `<home>/run`.

Trust.  Other local users must not be able to answer for the daemon, read what
ctx writes, or make ctx write through their links.  So there is no shared or
predictable location at all: when the socket path is longer than AF_UNIX
allows (~107 bytes on Linux), it is reached through a descriptor of its own directory
(`/proc/self/fd/N/ctxd.sock`) instead of a fallback in /tmp; macOS (104 bytes, no such
path) puts the run directory under its per-user $TMPDIR instead (reflex/platform.py).  Every directory
ctx writes into is opened once and verified through that descriptor (a real
directory, owned by us; group/other bits are removed), and files in it are
opened relative to it without following links and checked to be our regular
files (`open_private_dir`, `open_private_file`).  Clients verify the server
end of the socket (SO_PEERCRED, LOCAL_PEERCRED on macOS) before sending a byte (client.py), the
mirror of the daemon's check on its clients.  A refusal is an UntrustedPath:
one line that says what is wrong and what to do next.

stdlib-only: imported by the hook shim on every tool call.
"""

import errno
import os
from reflex import platform
from reflex.errors import UserError


class UntrustedPath(UserError, PermissionError):
    """A path ctx would use belongs to someone else; str() is the one-line message for the user."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return self.message


class Paths:
    """Every path ctx uses, derived from one root.  Cheap to build."""

    __slots__ = ("home", "run_dir", "socket", "status", "lock", "spawn_lock",
                 "log", "ledger", "blobs", "spool", "captures", "config",
                 "http_token", "policies", "census")

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
        self.census = os.path.join(home, "census")      # ctx run's kept directory listings (safety.secrets)

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}


def resolve(environ=None):
    """Resolve the paths for this user from the environment (passed in for tests)."""
    env = os.environ if environ is None else environ
    explicit = env.get("CTX_HOME")
    if explicit:
        home = os.path.abspath(os.path.expanduser(explicit))
        run_dir = _fitting_run_dir(home, os.path.join(home, "run"), env)
    else:
        data = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
        home = os.path.join(data, "ctx")
        runtime = env.get("XDG_RUNTIME_DIR")
        if runtime and _is_private_runtime_dir(runtime):
            run_dir = os.path.join(runtime, "ctx-%d" % os.geteuid())
        else:
            run_dir = _fitting_run_dir(home, os.path.join(home, "run"), env)
    return Paths(home, run_dir)


def _fitting_run_dir(home, run_dir, env):
    """`run_dir`, or where the system cannot reach a socket that long (macOS), a short private one."""
    if len(os.fsencode(os.path.join(run_dir, "ctxd.sock"))) <= platform.socket_path_limit():
        return run_dir
    return platform.short_run_dir(home, env) or run_dir


def _is_private_runtime_dir(path):
    # An XDG_RUNTIME_DIR pointing at a shared directory (some setups use /tmp)
    # would make ctx-<uid> a name any local user can create first.
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_mode & 0o170000) == 0o040000 and st.st_uid == os.geteuid() and not st.st_mode & 0o077


# -- sockets ----------------------------------------------------------------------

def socket_address(sock_path, dir_fd=None):
    """(address, opened fd or None): the socket's full path, or its name through a
    descriptor of its directory when the full path is too long for AF_UNIX.

    `dir_fd`, when the caller already holds the (verified) directory, is used
    instead of opening it again.  The caller closes the returned fd (if any)
    after connect/bind.  Never a path in a shared directory: that is what
    another user could take over.  (The system calls: reflex.platform.)"""
    return platform.socket_address(sock_path, dir_fd)


# -- private directories and files --------------------------------------------------

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FILE_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _foreign(path, uid):
    return UntrustedPath(
        "ctx: refusing %s: it is owned by uid %d, not by you (uid %d), so another user could "
        "read or answer for ctx there; remove it, or set CTX_HOME to a directory you own"
        % (path, uid, os.geteuid()))


def open_private_dir(path, create=True, dir_fd=None):
    """A descriptor of directory `path` (relative to dir_fd when given), verified ours.

    Created 0700 (with missing parents) when absent; a directory we own with
    group/other bits gets them removed (0700), through the descriptor so no one
    can swap it in between.  Raises UntrustedPath for a directory owned by
    another user, a link another user made, or a sticky (shared) directory;
    OSError for the rest (not a directory, no permission...).
    """
    try:
        st = os.lstat(path, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    else:
        # A link is followed only if we (or root) made it: one another user planted where
        # our directory should be could point at a directory of ours we never meant.
        if (st.st_mode & 0o170000) == 0o120000 and st.st_uid not in (os.geteuid(), 0):
            raise UntrustedPath("ctx: refusing %s: it is a link made by uid %d, not by you (uid %d); "
                                "remove it, or set CTX_HOME to a directory you own"
                                % (path, st.st_uid, os.geteuid()))
    if create:
        try:
            os.mkdir(path, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            pass
        except FileNotFoundError:
            if dir_fd is not None:
                raise
            os.makedirs(path, mode=0o700, exist_ok=True)
    fd = os.open(path, _DIR_FLAGS, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise _foreign(path, st.st_uid)
        if st.st_mode & 0o1000:
            # Sticky: shared by design (/tmp itself, for root).  Tightening it would break
            # everyone else's use of it; keeping state in it would share ours.
            raise UntrustedPath("ctx: refusing %s: it is a directory shared with other users (sticky "
                                "bit); set CTX_HOME to a directory of your own" % path)
        if st.st_mode & 0o077:
            os.fchmod(fd, 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_private_subdir(path):
    """open_private_dir for `path` and for its parent too (the home of spool, logs, captures):
    a child we own inside another user's directory could still be swapped away."""
    parent_fd = open_private_dir(os.path.dirname(path))
    try:
        return open_private_dir(os.path.basename(path), dir_fd=parent_fd)
    finally:
        os.close(parent_fd)


def append_log(log_path, line):
    """Append one line to ctx's log (under the verified home); never raises."""
    try:
        dir_fd = open_private_subdir(os.path.dirname(log_path))
        try:
            fd = open_private_file(dir_fd, os.path.basename(log_path), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        finally:
            os.close(dir_fd)
        try:
            os.write(fd, line.encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def ensure_private_dir(path):
    """Create `path` 0700 if needed and verify it is ours (see open_private_dir); returns path."""
    os.close(open_private_dir(path))
    return path


def open_private_file(dir_fd, name, flags, mode=0o600):
    """Open `name` in a verified directory without following a link; -> fd of our regular file.

    A link, a FIFO or a file of another user planted there (possible only while
    the directory was open to others) is removed and replaced: the directory is
    ours, and nothing legitimate looks like that.  Only with O_CREAT.
    """
    for attempt in (0, 1):
        try:
            fd = os.open(name, flags | _FILE_NOFOLLOW, mode, dir_fd=dir_fd)
        except OSError as e:
            # ELOOP: a symlink; ENXIO: a socket; opening either is never what we meant.
            if attempt or not flags & os.O_CREAT or e.errno not in (errno.ELOOP, errno.ENXIO):
                raise
            os.unlink(name, dir_fd=dir_fd)
            continue
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) == 0o100000 and st.st_uid == os.geteuid():
            return fd
        os.close(fd)
        if attempt or not flags & os.O_CREAT:
            raise _foreign(name, st.st_uid) if st.st_uid != os.geteuid() else \
                UntrustedPath("ctx: refusing %s: not a regular file; remove it" % name)
        os.unlink(name, dir_fd=dir_fd)
    raise AssertionError("unreachable")


def read_private_file(path, limit=1 << 20):
    """Bytes of `path` if it is our regular file (links followed), else None.

    For files whose content ctx trusts (config, token, status): one planted by
    another user is ignored rather than believed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or st.st_uid != os.geteuid() or st.st_mode & 0o002:
            return None
        chunks = []
        total = 0
        while total <= limit:
            c = os.read(fd, 65536)
            if not c:
                break
            chunks.append(c)
            total += len(c)
        return b"".join(chunks)[:limit]
    except OSError:
        return None
    finally:
        os.close(fd)
