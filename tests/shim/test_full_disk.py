"""A full disk: the agent is never blocked, every failure says so clearly, and ctx recovers.

CTX_HOME is put on a small tmpfs (needs root and mount(2); skipped where the sandbox refuses),
the disk is filled, hooks and `ctx run` are exercised, then space is freed.
"""

import json
import subprocess

import pytest

from tests.conftest import DaemonProc, ctx_cmd, pre_bash, run_hook


@pytest.fixture
def small_home(tmp_path, monkeypatch):
    mnt = tmp_path / "smallfs"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True)
    if p.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here: %s" % p.stderr.decode().strip())
    home = mnt / "ctxhome"
    monkeypatch.setenv("CTX_HOME", str(home))
    try:
        yield mnt, home
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(mnt):
    filler = mnt / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    return filler


def test_full_disk_never_blocks_and_recovers(small_home):
    mnt, home = small_home
    from reflex import paths as paths_mod
    paths = paths_mod.resolve()
    d = DaemonProc(paths)
    try:
        d.start()
        rc, out, err, _ = run_hook(pre_bash("ls", session="s-full-0"))
        assert rc == 0 and err == b""
        filler = fill(mnt)
        # hook calls: exit 0, nothing on stdout, one clear stderr line about the lost event
        for i in range(3):
            rc, out, err, _ = run_hook(pre_bash("git status", session="s-full", tool_use_id="t%d" % i))
            assert rc == 0 and out == b""
            assert b"could not spool event" in err
        # the safety plane still answers with no disk at all
        rc, out, err, _ = run_hook(pre_bash("cat .env", session="s-full", tool_use_id="t-env"))
        assert rc == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
        # ctx run still runs the command and keeps its exit code
        p = subprocess.run(ctx_cmd() + ["run", "--", "echo still-running; exit 3"], capture_output=True,
                           timeout=60)
        assert p.returncode == 3 and b"still-running" in p.stdout
        assert b"cannot capture output" in p.stderr
        # the daemon survived; free the space and everything lands again
        filler.unlink()
        rc, out, err, _ = run_hook(pre_bash("ls -la", session="s-full-after"))
        assert rc == 0 and err == b""
        v = subprocess.run(ctx_cmd() + ["ledger", "verify"], capture_output=True, text=True, timeout=60)
        assert v.returncode == 0, v.stdout + v.stderr
        assert d.proc.poll() is None, "the daemon must survive a full disk"
        assert "ledger write failed" in d.log() or "op 'hook' failed" in d.log()
    finally:
        d.kill9()
