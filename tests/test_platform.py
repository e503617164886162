"""reflex.platform: every OS-specific call, for Linux (run for real here) and macOS (SIMULATED).

What is simulated: `sys.platform` is monkeypatched to "darwin", and the socket's getsockopt is a
stand-in returning a byte buffer laid out as macOS's struct xucred (<sys/ucred.h>); the kqueue
limit message reads this machine's real RLIMIT_NOFILE.  The Linux branches run the real calls
(SO_PEERCRED on a real socketpair, /proc/self/fd, sched_getaffinity, /proc/sys/fs/inotify).
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys

import pytest

from reflex import paths, platform


@pytest.fixture
def darwin(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")


def test_supported_systems_and_a_clear_refusal_elsewhere(monkeypatch):
    assert platform.unsupported() is None  # this Linux machine
    monkeypatch.setattr(sys, "platform", "darwin")
    assert platform.unsupported() is None
    monkeypatch.setattr(sys, "platform", "win32")
    msg = platform.unsupported()
    assert msg and "win32 is not supported" in msg and "Linux and macOS" in msg


def test_the_cli_refuses_on_an_unsupported_system_and_hooks_fail_open(tmp_path):
    # A real `ctx` process whose sys.platform says win32 (set before reflex.entry runs).
    env = dict(os.environ, CTX_HOME=str(tmp_path / "home"))
    code = "import sys; sys.platform = 'win32'; from reflex.entry import main; main(sys.argv[1:])"
    p = subprocess.run([sys.executable, "-c", code, "stats"], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 1 and "win32 is not supported" in p.stderr, p.stderr
    hook = subprocess.run([sys.executable, "-c", code, "hook", "claude"], input="{}", capture_output=True, text=True,
                          env=env, timeout=60)
    assert hook.returncode == 0 and "not supported" not in hook.stderr, hook.stderr


def test_linux_peer_uid_is_so_peercred_on_a_real_socket():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        assert platform.peer_uid(a) == os.getuid()


class _FakeDarwinSocket:
    """getsockopt as macOS answers LOCAL_PEERCRED: struct xucred {u_int cr_version; uid_t cr_uid;
    short cr_ngroups; gid_t cr_groups[16]} (76 bytes)."""

    def __init__(self, uid, version=0):
        self.asked = None
        self.raw = (version.to_bytes(4, sys.byteorder) + uid.to_bytes(4, sys.byteorder)
                    + (1).to_bytes(2, sys.byteorder) + b"\0\0" + (20).to_bytes(4, sys.byteorder) + b"\0" * 60)

    def getsockopt(self, level, opt, size):
        self.asked = (level, opt, size)
        return self.raw[:size]


def test_darwin_peer_uid_reads_local_peercred_xucred(darwin, monkeypatch):
    monkeypatch.delattr(socket, "SOL_LOCAL", raising=False)
    monkeypatch.delattr(socket, "LOCAL_PEERCRED", raising=False)
    s = _FakeDarwinSocket(uid=501)
    assert platform.peer_uid(s) == 501
    assert s.asked == (0, 1, 76)  # SOL_LOCAL, LOCAL_PEERCRED, sizeof(struct xucred)
    # where Python exposes the constants (CPython on macOS), they are used
    monkeypatch.setattr(socket, "LOCAL_PEERCRED", 1, raising=False)
    monkeypatch.setattr(socket, "SOL_LOCAL", 0, raising=False)
    assert platform.peer_uid(_FakeDarwinSocket(uid=0)) == 0
    assert platform.peer_uid(_FakeDarwinSocket(uid=501, version=7)) is None  # another struct version


def test_socket_path_limits_per_system(darwin):
    assert platform.socket_path_limit() == 103
    short = "/Users/a/.local/share/ctx/run/ctxd.sock"
    assert platform.socket_address(short) == (short, None)
    with pytest.raises(OSError, match="over this system's AF_UNIX limit of 103"):
        platform.socket_address("/Users/a/" + "x" * 100 + "/ctxd.sock")


def test_linux_long_socket_path_goes_through_proc_self_fd(tmp_path):
    d = tmp_path / ("d" * 120)
    d.mkdir()
    address, fd = platform.socket_address(str(d / "ctxd.sock"))
    try:
        assert address == "/proc/self/fd/%d/ctxd.sock" % fd
        srv = socket.socket(socket.AF_UNIX)
        with srv:
            srv.bind(address)
            srv.listen(1)
            assert (d / "ctxd.sock").exists()
    finally:
        os.close(fd)


def test_darwin_long_ctx_home_gets_a_short_private_run_dir(darwin, tmp_path):
    tmpdir = tmp_path / "T"
    tmpdir.mkdir(mode=0o700)
    home = tmp_path / ("h" * 110)
    env = {"CTX_HOME": str(home), "TMPDIR": str(tmpdir)}
    p = paths.resolve(env)
    assert p.home == str(home)
    assert os.path.dirname(p.run_dir) == str(tmpdir)
    assert len(p.socket.encode()) <= 103
    assert paths.resolve(env).run_dir == p.run_dir  # deterministic: client and daemon agree
    other = paths.resolve(dict(env, CTX_HOME=str(home) + "2"))
    assert other.run_dir != p.run_dir               # one per ctx home
    # a $TMPDIR others may write is never used
    os.chmod(tmpdir, 0o777)
    assert paths.resolve(env).run_dir == os.path.join(str(home), "run")


def test_linux_run_dir_is_unchanged_for_a_long_home(tmp_path):
    home = tmp_path / ("h" * 110)
    assert paths.resolve({"CTX_HOME": str(home), "TMPDIR": str(tmp_path)}).run_dir == os.path.join(str(home), "run")


def test_cpu_count(monkeypatch):
    assert platform.cpu_count() == len(os.sched_getaffinity(0))
    monkeypatch.setattr(sys, "platform", "darwin")
    assert platform.cpu_count() == (os.cpu_count() or 1)


def test_watch_limit_messages(monkeypatch):
    enospc, emfile = OSError(errno.ENOSPC, "full"), OSError(errno.EMFILE, "too many")
    assert "fs.inotify.max_user_watches=" in platform.watch_limit_message(enospc)
    assert "fs.inotify.max_user_instances=" in platform.watch_limit_message(emfile)
    assert platform.watch_limit_message(ValueError("x")) is None
    monkeypatch.setattr(sys, "platform", "darwin")
    import resource
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    msg = platform.watch_limit_message(emfile)
    assert msg.startswith("kqueue open-file limit reached") and str(soft) in msg
    assert platform.watch_limit_message(enospc) is None
