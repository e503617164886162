"""Talking to the daemon from short-lived processes (hook shim, ctx run/get).

Discovery is by socket path only: a refused or missing socket, a timeout or a
bad reply all mean "not running", and the caller falls back.  Starting the
daemon is fire-and-forget under a spawn lock, so a burst of hooks starts one
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

from . import wire


class Unavailable(Exception):
    """The daemon could not answer in time; the caller must fail open."""


def request(paths, header_bytes, body=b"", *, connect_timeout=0.05, reply_timeout=1.0,
            max_reply=wire.MAX_BODY + wire.MAX_HEADER):
    """Send one frame, return (reply_header_bytes, reply_body_bytes).

    `header_bytes` is a complete header line (ending in newline).  Raises
    Unavailable on any transport failure so callers have one thing to catch.
    """
    deadline = time.monotonic() + connect_timeout + reply_timeout
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(connect_timeout)
        try:
            s.connect(paths.socket)
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
                        need = len(head) + (wire.header_int(head, "len", 0) or 0)
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
    hdr = {"v": wire.PROTOCOL, "op": op}
    if fields:
        hdr.update(fields)
    if body:
        hdr["len"] = len(body)
    head, out = request(paths, wire.encode_header(hdr), body, **timeouts)
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
        except Unavailable:
            if not spawned:
                spawn_daemon(paths)
                spawned = True
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def spawn_daemon(paths, python=None):
    """Start the daemon in the background unless another client just did.

    Never waits for it to come up.  Returns True when a start was attempted.
    """
    try:
        os.makedirs(paths.run_dir, mode=0o700, exist_ok=True)
        import fcntl
        fd = os.open(paths.spawn_lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
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
        _detached_spawn([python or _daemon_python(), "-m", "reflex.daemon", "run", "--detached"], paths)
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
