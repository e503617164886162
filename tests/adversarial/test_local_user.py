"""Class 1: another local user must not be able to answer for the daemon, read what ctx
sends or writes, or make ctx write through their links.

Each WORLDS row prepares, as a real second uid, a hostile version of the places ctx
uses (a run dir or home created first, a socket served by an impostor that records
every byte and answers "allow, command replaced", links planted to files of ours),
and says whether ctx must refuse the place (one line naming the next step) or can
use it safely.  The same scenario runs against every row: a hook for `cat .env`
with the daemon down, every client (ctx run, get, search, daemon status/start),
then the invariants: the secret read is denied, the impostor received nothing,
our files are intact, and nothing of ours landed in the other user's directories.
Add a row for a new way to prepare a hostile world.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile

import pytest

from reflex import doctor, paths as paths_mod
from reflex.daemon import control as daemon_control

from ..conftest import ctx_cmd, pre_bash, run_hook
from ._other_user import Impostor, as_other, other_uid, wait_for

PRECIOUS = b"precious, must not be truncated\n"


class World:
    def __init__(self, base, uid):
        self.base = base
        self.uid = uid
        self.env = {}
        self.refuses = False          # ctx must refuse the place (and say so in one line)
        self.victims = []             # files of ours that links point at
        self.foreign_dirs = []        # the other user's directories: nothing of ours may appear there
        self.impostors = []
        self.cleanup = []
        self.home = None
        self.untouched_dirs = []      # directories of ours ctx must not write into
        self.modes_kept = {}          # path: mode ctx must not change
        self.says = None              # words the one-line refusal must contain (default: the uid)

    def victim(self, name):
        path = os.path.join(self.base, "victim", name)
        with open(path, "wb") as f:
            f.write(PRECIOUS)
        self.victims.append(path)
        return path

    def impostor_at(self, sock_path):
        record_dir = os.path.join(self.base, "other")
        imp = Impostor(self.uid, os.path.join(record_dir, "record-%d" % len(self.impostors)))
        self.impostors.append(imp.serve_unix(sock_path))
        return imp


def _mkdir_as_other(world, path, mode=0o755):
    as_other(world.uid, os.mkdir, path, mode)
    world.foreign_dirs.append(path)


def _plant_links(world, run_dir, names):
    def plant():
        for name in names:
            os.symlink(world.victim_paths[name], os.path.join(run_dir, name))
    world.victim_paths = {name: world.victim("target-of-" + name) for name in names}
    as_other(world.uid, plant)


# -- the hostile worlds -------------------------------------------------------------------------

def tmp_fallback_taken(w):
    """The socket path is too long, and the other user created the /tmp directory the old
    fallback would have used, with their socket and a spawn.lock link to a file of ours."""
    w.home = os.path.join(w.base, "victim", "l" * 90, "ctxhome")
    w.env["CTX_HOME"] = w.home
    old_run = os.path.join(w.home, "run")
    taken = "/tmp/ctx-%d-%s" % (os.getuid(), hashlib.blake2b(old_run.encode(), digest_size=6).hexdigest())
    shutil.rmtree(taken, ignore_errors=True)
    _mkdir_as_other(w, taken)
    w.cleanup.append(lambda: shutil.rmtree(taken, ignore_errors=True))
    _plant_links(w, taken, ["spawn.lock"])
    w.impostor_at(os.path.join(taken, "ctxd.sock"))


def xdg_runtime_dir_shared(w):
    """XDG_RUNTIME_DIR points at a shared sticky directory (as some setups set it to /tmp),
    where the other user created ctx-<uid> first."""
    shared = os.path.join(w.base, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    w.env.update(CTX_HOME=None, XDG_RUNTIME_DIR=shared, XDG_DATA_HOME=os.path.join(w.base, "victim", "data"))
    w.home = os.path.join(w.base, "victim", "data", "ctx")
    run = os.path.join(shared, "ctx-%d" % os.getuid())
    _mkdir_as_other(w, run)
    _plant_links(w, run, ["spawn.lock", "ctxd.lock"])
    w.impostor_at(os.path.join(run, "ctxd.sock"))


def ctx_home_of_other_user(w):
    """CTX_HOME names a directory the other user owns, run dir and socket included."""
    w.home = os.path.join(w.base, "other", "ctxhome")
    w.env["CTX_HOME"] = w.home
    w.refuses = True
    _mkdir_as_other(w, w.home, 0o777)
    _mkdir_as_other(w, os.path.join(w.home, "run"), 0o777)
    _plant_links(w, os.path.join(w.home, "run"), ["spawn.lock", "ctxd.lock"])
    w.impostor_at(os.path.join(w.home, "run", "ctxd.sock"))


def run_dir_of_other_user(w):
    """Our home, but its run dir belongs to the other user (made while the home was open)."""
    w.home = os.path.join(w.base, "victim", "ctxhome")
    w.env["CTX_HOME"] = w.home
    w.refuses = True
    os.mkdir(w.home, 0o755)
    run = os.path.join(w.home, "run")
    os.mkdir(run, 0o755)
    os.chown(run, w.uid, w.uid)
    w.foreign_dirs.append(run)
    _plant_links(w, run, ["spawn.lock"])
    w.impostor_at(os.path.join(run, "ctxd.sock"))


def loose_run_dir_with_planted_links(w):
    """Our run dir, but left open to everyone (0777): the other user planted links to our
    files under every name ctx opens there, and their own socket."""
    w.home = os.path.join(w.base, "victim", "ctxhome")
    w.env["CTX_HOME"] = w.home
    os.mkdir(w.home, 0o711)
    run = os.path.join(w.home, "run")
    os.mkdir(run)
    os.chmod(run, 0o777)
    _plant_links(w, run, ["spawn.lock", "ctxd.lock", "ctxd.status.json"])
    w.impostor_at(os.path.join(run, "ctxd.sock"))


def ctx_home_a_link_of_other_user(w):
    """CTX_HOME names a link the other user made, to a directory of ours (say, one that holds
    keys): following it would make ctx write its socket, spool and ledger in there."""
    ours = os.path.join(w.base, "victim", "keys")
    os.mkdir(ours, 0o700)
    w.untouched_dirs.append(ours)
    w.home = os.path.join(w.base, "other", "ctxhome")
    w.env["CTX_HOME"] = w.home
    w.refuses = True
    as_other(w.uid, os.symlink, ours, w.home)


def ctx_home_a_shared_sticky_dir(w):
    """CTX_HOME names a shared sticky directory (/tmp, say, which root owns): ctx must neither
    keep its state there nor 'fix' its mode for everyone."""
    shared = os.path.join(w.base, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    w.home = shared
    w.env["CTX_HOME"] = shared
    w.refuses = True
    w.says = ("shared with other users", "CTX_HOME")
    w.modes_kept[shared] = 0o1777
    w.untouched_dirs.append(shared)


WORLDS = {f.__name__: f for f in (tmp_fallback_taken, xdg_runtime_dir_shared, ctx_home_of_other_user,
                                   run_dir_of_other_user, loose_run_dir_with_planted_links,
                                   ctx_home_a_link_of_other_user, ctx_home_a_shared_sticky_dir)}


# -- the scenario ---------------------------------------------------------------------------------

@pytest.fixture
def world(request):
    uid = other_uid()
    base = tempfile.mkdtemp(prefix="ctx-adv-", dir="/tmp")
    os.chmod(base, 0o755)
    os.mkdir(os.path.join(base, "victim"), 0o755)
    os.mkdir(os.path.join(base, "victim", "project"), 0o755)
    os.mkdir(os.path.join(base, "other"), 0o755)
    os.chown(os.path.join(base, "other"), uid, uid)
    w = World(base, uid)
    try:
        yield w
    finally:
        for imp in w.impostors:
            imp.stop()
        _kill_daemons(w)
        for fn in w.cleanup:
            fn()
        shutil.rmtree(base, ignore_errors=True)


def _env(w):
    env = dict(os.environ)
    for k, v in w.env.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def _paths(w):
    return paths_mod.resolve(_env(w))


def _kill_daemons(w):
    pid = daemon_control.lock_pid(_paths(w))
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    # a daemon a shim spawned into a run dir we could not read the lock of
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                if b"reflex.daemon" not in f.read():
                    continue
            with open("/proc/%s/environ" % entry, "rb") as f:
                if w.base.encode() not in f.read():
                    continue
            os.kill(int(entry), signal.SIGKILL)
        except OSError:
            continue


def _one_line(stderr, *must):
    text = stderr.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    for m in must:
        assert m in lines[0], (m, lines[0])
    return lines[0]


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_another_user_cannot_answer_for_ctx_or_make_it_write(world, name):
    w = world
    WORLDS[name](w)
    env = _env(w)
    paths = _paths(w)

    # 1. the hook, daemon down: denied by the local safety plane, nothing sent anywhere
    payload = pre_bash("cat .env", cwd=os.path.join(w.base, "victim", "project"), session="adv-" + name)
    rc, out, err, _ = run_hook(payload, env=env, timeout=30)
    assert rc == 0
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "updatedInput" not in answer, out
    says = w.says or ("uid %d" % w.uid, "CTX_HOME")
    if w.refuses:
        _one_line(err, *says, "local safety plane")

    # 2. the other clients (search shares get's client path; daemon status is the first thing
    #    `ctx daemon start` does in step 3)
    for args in (["run", "--", "echo hello"], ["get", "r:000000000000"]):
        p = subprocess.run(ctx_cmd() + args, env=env, capture_output=True, timeout=60)
        assert b"Traceback" not in p.stderr and b"PWNED" not in p.stdout, (args, p.stderr)
        if args[0] == "run":
            assert p.returncode == 0 and b"hello" in p.stdout
        if w.refuses:
            assert len(p.stderr.decode().strip().splitlines()) <= 1, (args, p.stderr)

    # 3. the daemon's own start-up in the place the other user prepared
    p = subprocess.run(ctx_cmd() + ["daemon", "start"], env=env, capture_output=True, timeout=60)
    if w.refuses:
        assert p.returncode == 1
        _one_line(p.stderr, *says)
        p = subprocess.run(ctx_cmd()[:1] + ["-m", "reflex.daemon", "run"], env=env, capture_output=True, timeout=60)
        assert p.returncode == 1
        _one_line(p.stderr, *says)
    else:
        assert p.returncode == 0, p.stderr
        assert paths.run_dir == os.path.join(w.home, "run"), "never a directory another user can take"
        st = os.stat(paths.run_dir)
        assert st.st_uid == os.geteuid() and st.st_mode & 0o077 == 0
        rc, out, _, _ = run_hook(payload, env=env, timeout=30)
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert daemon_control.status(paths)["running"]

    # the invariants
    for imp in w.impostors:
        assert imp.received() == b"", "the impostor received %r" % imp.received()[:200]
    for path in w.victims:
        with open(path, "rb") as f:
            assert f.read() == PRECIOUS, "%s was written through a planted link" % path
    for d in w.untouched_dirs:
        assert os.listdir(d) == [], "ctx wrote into %s: %s" % (d, os.listdir(d))
    for path, mode in w.modes_kept.items():
        assert os.stat(path).st_mode & 0o7777 == mode, "ctx changed the mode of %s" % path
    for d in w.foreign_dirs:
        for root, dirs, files in os.walk(d):
            for n in dirs + files:
                st = os.lstat(os.path.join(root, n))
                assert st.st_uid == w.uid, "ctx created %s in another user's directory" % os.path.join(root, n)


# -- ports and files outside the run dir ------------------------------------------------------------

def _free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_http_port_held_by_another_user_is_named(paths, daemon, tmp_path):
    uid = other_uid()
    record = tmp_path / "record"
    os.chmod(tmp_path, 0o777)
    port = _free_port()
    imp = Impostor(uid, str(record)).serve_tcp(port)
    try:
        os.makedirs(paths.home, exist_ok=True)
        with open(paths.config, "w") as f:
            json.dump({"http_port": port}, f)
        daemon.start()
        assert wait_for(lambda: "held by uid %d" % uid in daemon.log(), 10), daemon.log()
        check = [c for c in doctor.run_checks(paths) if c.name == "http port"][0]
        assert not check.ok and "uid %d" % uid in check.detail and check.fix
    finally:
        imp.stop()


def test_config_of_another_user_is_not_believed(paths, daemon, tmp_path):
    """The config names the paths the safety plane allows: one planted by another user is
    ignored with the daemon down and up, and doctor says so; ours is honoured (the control)."""
    uid = other_uid()
    os.makedirs(paths.home, exist_ok=True)
    with open(paths.config, "w") as f:
        json.dump({"safety_allow": ["**"]}, f)
    payload = pre_bash("cat .env", cwd=str(tmp_path))

    def decision():
        rc, out, _, _ = run_hook(payload, timeout=30)
        return json.loads(out)["hookSpecificOutput"]["permissionDecision"] if out else "none"

    os.chown(paths.config, uid, uid)
    assert decision() == "deny"          # daemon down (this call spawns one)
    daemon.wait_ready(60)
    assert decision() == "deny"          # daemon up
    assert any(c.name == "config" and not c.ok for c in doctor.run_checks(paths))
    os.chown(paths.config, os.geteuid(), os.getegid())
    os.utime(paths.config)               # the allow list is cached by mtime
    assert decision() == "none"
