"""Every operating-system-specific call ctx makes, in one place, for Linux and macOS.

ctx runs on Linux and macOS (`SUPPORTED`); anywhere else `unsupported()` says so in one line and
the CLI refuses (Windows has no Unix-domain socket credentials, and the shim's fail-open path
relies on them).  Each function below states the system call it stands for, per system:

- `peer_uid(sock)`: who is at the other end of a connected AF_UNIX socket.  Linux:
  getsockopt(SOL_SOCKET, SO_PEERCRED) -> struct ucred {pid_t pid; uid_t uid; gid_t gid} (socket(7),
  unix(7)).  macOS: getsockopt(SOL_LOCAL=0, LOCAL_PEERCRED=1) -> struct xucred {u_int cr_version;
  uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]} (<sys/un.h>, <sys/ucred.h>; what libc's
  getpeereid(3) reads).  Both are the credentials of the process that called connect()/listen(),
  which no other user can forge.
- `SOCKET_PATH_LIMIT` and `socket_address(path, dir_fd)`: sun_path holds 108 bytes on Linux, 104
  on macOS (<sys/un.h>), the terminating NUL included.  A longer path is reached on Linux through a
  descriptor of its directory (`/proc/self/fd/N/name`, proc(5)); macOS has no such path, so
  `short_run_dir(home)` puts the socket's directory under the per-user temporary directory
  (`$TMPDIR`, which macOS sets to confstr(_CS_DARWIN_USER_TEMP_DIR), a 0700 directory of the
  user's own, /var/folders/xx/.../T/) — private, never a shared /tmp.
- `cpu_count()`: the CPUs this process may run on.  Linux: sched_getaffinity(2) (a container's
  cpuset); macOS has no affinity call, so os.cpu_count().
- `watch_limit_message(exc)`: what a failed file-system watch means.  Linux (watchdog's inotify
  backend, inotify(7)): ENOSPC is fs.inotify.max_user_watches, EMFILE fs.inotify.max_user_instances,
  read from /proc/sys/fs/inotify/ (and the user namespace's /proc/sys/user/ limits).  macOS
  (watchdog's kqueue backend, kqueue(2)): one open descriptor per watched file, so EMFILE/ENFILE is
  the open-files limit (getrlimit(RLIMIT_NOFILE), `ulimit -n`).

tests/test_platform.py exercises the macOS branches by simulation on Linux (sys.platform and the
socket constants monkeypatched, a byte buffer laid out as struct xucred): the real macOS calls are
not run in CI.  stdlib-only: the hook shim imports it on every call.
"""

from __future__ import annotations

import errno
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket

SUPPORTED = ("linux", "darwin")
LINUX_SOCKET_PATH_LIMIT = 100      # sun_path is 108 with its NUL; ctx has always kept a margin
DARWIN_SOCKET_PATH_LIMIT = 104 - 1
_PROC_FD = "/proc/self/fd"
# macOS <sys/un.h>, <sys/ucred.h>: SOL_LOCAL, LOCAL_PEERCRED, sizeof(struct xucred), XUCRED_VERSION.
_SOL_LOCAL = 0
_LOCAL_PEERCRED = 0x001
_XUCRED_SIZE = 76
_XUCRED_VERSION = 0


def system() -> str:
    """'linux', 'darwin', or what else sys.platform says (read on every call: tests simulate)."""
    return "linux" if sys.platform.startswith("linux") else sys.platform


def unsupported() -> str | None:
    """One line saying why ctx cannot run here, or None on a supported system."""
    name = system()
    if name in SUPPORTED:
        return None
    return ("ctx: %s is not supported: ctx runs on Linux and macOS (it needs Unix-domain sockets with "
            "peer credentials); nothing was changed" % name)


def socket_path_limit() -> int:
    """The longest AF_UNIX path this system binds (bytes, without the terminating NUL)."""
    return DARWIN_SOCKET_PATH_LIMIT if system() == "darwin" else LINUX_SOCKET_PATH_LIMIT


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a connected AF_UNIX socket; None where this
    system offers no way to ask.  OSError from the call itself propagates."""
    import socket as _socket
    name = system()
    if name == "linux":
        opt = getattr(_socket, "SO_PEERCRED", None)
        if opt is None:
            return None
        creds = sock.getsockopt(_socket.SOL_SOCKET, opt, 12)       # struct ucred: 3 x 32 bits
        return int.from_bytes(creds[4:8], sys.byteorder)
    if name == "darwin":
        level = getattr(_socket, "SOL_LOCAL", _SOL_LOCAL)
        opt = getattr(_socket, "LOCAL_PEERCRED", _LOCAL_PEERCRED)
        return xucred_uid(sock.getsockopt(level, opt, _XUCRED_SIZE))
    return None


def xucred_uid(raw: bytes) -> int | None:
    """cr_uid from a struct xucred (None when the buffer is short or of another version)."""
    if len(raw) < 8 or int.from_bytes(raw[0:4], sys.byteorder) != _XUCRED_VERSION:
        return None
    return int.from_bytes(raw[4:8], sys.byteorder)


def socket_address(sock_path: str, dir_fd: int | None = None) -> tuple[str, int | None]:
    """(address, opened fd or None) to bind or connect `sock_path`: the path itself when it fits,
    else (Linux) its name through a descriptor of its directory.  The caller closes the fd."""
    if len(sock_path.encode()) <= socket_path_limit():
        return sock_path, None
    directory, name = os.path.split(sock_path)
    if system() != "linux" or not os.path.isdir(_PROC_FD):
        raise OSError("socket path %s is %d bytes, over this system's AF_UNIX limit of %d; set CTX_HOME to a "
                      "shorter path" % (sock_path, len(sock_path.encode()), socket_path_limit()))
    if dir_fd is not None:
        return "%s/%d/%s" % (_PROC_FD, dir_fd, name), None
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return "%s/%d/%s" % (_PROC_FD, fd, name), fd


def short_run_dir(home: str, environ: dict[str, str] | None = None) -> str | None:
    """macOS: a private run directory short enough for the socket when `home`'s is not —
    `$TMPDIR/ctx-<uid>-<hash of home>` (one per ctx home), when $TMPDIR is ours and 0700.  None on
    Linux (the descriptor path serves) or when there is no private temporary directory."""
    if system() != "darwin":
        return None
    env = os.environ if environ is None else environ
    tmp = env.get("TMPDIR") or ""
    try:
        st = os.stat(tmp) if tmp else None
    except OSError:
        return None
    if st is None or (st.st_mode & 0o170000) != 0o040000 or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        return None
    import hashlib
    tag = hashlib.blake2s(os.fsencode(home), digest_size=4).hexdigest()
    return os.path.join(tmp, "ctx-%d-%s" % (os.geteuid(), tag))


def cpu_count() -> int:
    """CPUs this process may use (Linux: its affinity mask; elsewhere all of them)."""
    if system() == "linux" and hasattr(os, "sched_getaffinity"):
        try:
            return len(os.sched_getaffinity(0))
        except OSError:
            pass
    return os.cpu_count() or 1


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _inotify_limit(name: str, ns_name: str) -> str:
    """The sysctl, plus the user namespace's own limit when that is lower (containers)."""
    value = _read("/proc/sys/fs/inotify/" + name) or "?"
    ns_value = _read("/proc/sys/user/" + ns_name)
    if ns_value and value.isdigit() and ns_value.isdigit() and int(ns_value) < int(value):
        return "%s, user.%s=%s" % (value, ns_name, ns_value)
    return value


def watch_limit_message(exc: BaseException) -> str | None:
    """What a file-system watch failure means on this system, or None when it is no limit."""
    if not isinstance(exc, OSError):
        return None
    if system() == "darwin":
        if exc.errno in (errno.EMFILE, errno.ENFILE):
            import resource
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            return "kqueue open-file limit reached (ulimit -n = %s; kqueue holds one descriptor per watched file)" % (
                "unlimited" if soft == resource.RLIM_INFINITY else soft)
        return None
    if exc.errno == errno.ENOSPC:
        return "inotify watch limit reached (fs.inotify.max_user_watches=%s)" % _inotify_limit(
            "max_user_watches", "max_inotify_watches")
    if exc.errno == errno.EMFILE:
        return "inotify instance limit reached (fs.inotify.max_user_instances=%s)" % _inotify_limit(
            "max_user_instances", "max_inotify_instances")
    return None
