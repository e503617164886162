"""Talking to the daemon from short-lived processes (hook shim, ctx run/get).

Discovery is by socket path only: a refused or missing socket, a timeout or a
bad reply all mean "not running", and the caller falls back.  Before a byte is
sent, the process at the other end must be ours (SO_PEERCRED): a socket served
by another user is an Impostor, never talked to (see paths.py on trust).
Starting the daemon is fire-and-forget under a spawn lock, so a burst of hooks starts one
daemon and none of them waits for it (the daemon's own lock is the real
single-instance guarantee; the spawn lock only avoids a thundering herd of
interpreter starts).

stdlib-only; imports `_socket` rather than `socket` (the latter pulls in enum
and selectors, ~5 ms per hook call here).
"""

import os
import sys
import time

import _socket

from reflex import paths as paths_mod
from reflex import protocol
from reflex.errors import CtxError


class Unavailable(CtxError):
    """The daemon could not answer in time; the caller must fail open."""


class Impostor(Unavailable):
    """The daemon's socket or directory belongs to another user: nothing was sent to it;
    str() is the one-line message for the user."""


def connect(sock, paths):
    """Connect `sock` to the daemon's socket and verify the server is ours.

    Raises OSError when nothing listens, Impostor when someone else does."""
    address, dir_fd = paths_mod.socket_address(paths.socket)
    try:
        sock.connect(address)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    uid = _peer_uid(sock)
    if uid is not None and uid != os.geteuid():
        raise Impostor("ctx: the socket %s is served by uid %d, not by you (uid %d); nothing was sent "
                       "to it. Remove %s (or set CTX_HOME to a directory you own)"
                       % (paths.socket, uid, os.geteuid(), paths.run_dir))


def _peer_uid(sock):
    # The credentials the server had when it called listen(), which no other user can forge
    # (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS: reflex.platform).
    from reflex import platform
    return platform.peer_uid(sock)


def request(paths, header_bytes, body=b"", *, connect_timeout=0.05, reply_timeout=1.0,
            max_reply=protocol.MAX_BODY + protocol.MAX_HEADER):
    """Send one frame, return (reply_header_bytes, reply_body_bytes).

    `header_bytes` is a complete header line (ending in newline).  Raises
    Unavailable on any transport failure so callers have one thing to catch.
    """
    deadline = time.monotonic() + connect_timeout + reply_timeout
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(connect_timeout)
        try:
            connect(s, paths)
        except OSError as e:
            raise Unavailable("connect: %s" % e) from None
        s.settimeout(reply_timeout)
        try:
            s.sendall(header_bytes + body)
            chunks = []
            total = 0
            head = None
            need = None
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Unavailable("reply timeout")
                s.settimeout(remaining)
                chunk = s.recv(262144)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
                if total > max_reply:
                    raise Unavailable("reply too large")
                if head is None:
                    buf = b"".join(chunks)
                    nl = buf.find(b"\n")
                    if nl >= 0:
                        head = buf[:nl + 1]
                        need = len(head) + (protocol.header_int(head, "len", 0) or 0)
                if need is not None and total >= need:
                    break
        except OSError as e:
            raise Unavailable("io: %s" % e) from None
    finally:
        s.close()
    buf = b"".join(chunks)
    if head is None:
        raise Unavailable("no reply header")
    body_out = buf[len(head):need]
    if len(body_out) != need - len(head):
        raise Unavailable("short reply")
    return head, body_out


def request_json(paths, op, fields=None, body=b"", **timeouts):
    """Convenience for clients that may import json: returns (header_dict, body)."""
    import json
    head, out = request(paths, protocol.request_header(op, fields or {}, len(body)), body, **timeouts)
    try:
        parsed = json.loads(head)
    except ValueError:
        raise Unavailable("unparseable reply header") from None
    if not isinstance(parsed, dict):
        raise Unavailable("reply header is not an object")
    return parsed, out


def with_daemon(paths, call, wait_s):
    """call(), starting the daemon and retrying for up to wait_s if it is unavailable.

    For the few callers for whom an answer is worth a wait (a session's first hook, an
    explicit `ctx get`); everything else fails open at once instead.
    """
    deadline = time.monotonic() + wait_s
    spawned = False
    while True:
        try:
            return call()
        except Impostor:
            raise  # starting our daemon cannot help: its directory is not ours
        except Unavailable:
            if not spawned:
                try:
                    spawn_daemon(paths)
                except paths_mod.UntrustedPath as e:
                    raise Impostor(str(e)) from None
                spawned = True
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def spawn_daemon(paths, python=None):
    """Start the daemon in the background unless another client just did.

    Never waits for it to come up.  Returns True when a start was attempted.
    Raises UntrustedPath when the run dir belongs to someone else (the caller
    tells the user); other OSErrors mean "could not try".
    """
    try:
        dir_fd = paths_mod.open_private_subdir(paths.run_dir)
    except paths_mod.UntrustedPath:
        raise
    except OSError:
        return False
    try:
        import fcntl
        fd = paths_mod.open_private_file(dir_fd, os.path.basename(paths.spawn_lock), os.O_RDWR | os.O_CREAT)
    except paths_mod.UntrustedPath:
        raise
    except OSError:
        return False
    finally:
        os.close(dir_fd)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # someone else is spawning right now
        # Rate-limit: the lock file's mtime is the last spawn attempt.  A
        # daemon that cannot start (bad install) must not be re-exec'd by
        # every hook call; one attempt per second is plenty.
        try:
            if time.time() - os.fstat(fd).st_mtime < 1.0 and os.fstat(fd).st_size > 0:
                return False
        except OSError:
            pass
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        _detached_spawn([python or _daemon_python(), "-I", "-m", "reflex.daemon", "run", "--detached"], paths)
        return True
    finally:
        os.close(fd)


def _daemon_python():
    # The shim may run with -S (no site-packages); the daemon needs them, so
    # it gets the same interpreter without -S.
    return sys.executable or "python3"


def _detached_spawn(argv, paths):
    env = os.environ  # same environment, so the daemon resolves the same paths
    pid = os.fork()
    if pid == 0:  # child: double fork so the daemon is reparented to init
        try:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execve(argv[0], argv, env)
        except BaseException:
            pass
        os._exit(127)
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass
