"""The signal matrix: `ctx run -- CMD` against `bash -c CMD`, same command, same run.

For every signal a harness or a user sends (INT, TERM, HUP, QUIT, USR1, USR2), sent to the
process the harness started (`kill PID`) or to its whole process group (`killpg`, what a
terminal's Ctrl-C and most harness timeouts do), four things must hold for ctx run as they
do for bash -c:

- the command receives the signal, exactly once (a second SIGINT aborts Python's cleanup:
  pytest's summary after a Ctrl-C is lost);
- the status a shell sees is the same (bash -c dies of signal N, ctx run exits 128+N: `$?`
  is 128+N for both);
- nothing survives (the command, ctx run's own helpers);
- what the command printed before the signal is kept (a run in the ledger) and printed.

The command is a Python program bash execs in place (one simple command), so under bash -c
the signal reaches exactly the program; it records each signal it gets, then dies of it as
most programs do, after a short cleanup during which a second delivery would be seen.  A
terminal's Ctrl-C and Ctrl-\\ are sent by the kernel to the foreground group (one test drives
a real pty).  A compound command (`prog; echo after`) is where bash -c leaves the program
running after `kill PID`; ctx run must not (last test).
"""

import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from ..conftest import ctx_cmd, ledger_rows
from .shared_daemon import shared  # noqa: F401 - a module-scoped fixture

SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"]
MODES = ["pid", "group"]

# Records its pid, prints a line, then waits; each relayed signal is appended to RECORD; the
# first one ends the program by its default action after a short cleanup (no core file for
# SIGQUIT), long enough for a duplicate delivery to be recorded too.
PROGRAM = r"""
import os, resource, signal, sys, time
record, ready = sys.argv[1], sys.argv[2]
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
first = []
def got(signum, frame):
    with open(record, "a") as f:
        f.write(str(signum) + "\n")
    first.append(signum)
for name in SIGNALS:
    signal.signal(getattr(signal, name), got)
print("partial output before the signal", flush=True)
with open(ready, "w") as f:
    f.write(str(os.getpid()))
deadline = time.monotonic() + 30
while time.monotonic() < deadline and not first:
    time.sleep(0.01)
if first:
    # Cleaning up, as pytest does after a Ctrl-C: a second delivery would show here.
    time.sleep(CLEANUP_S)
    signal.signal(first[0], signal.SIG_DFL)
    os.kill(os.getpid(), first[0])
print("nobody stopped me", flush=True)
""".replace("SIGNALS", repr(SIGNALS)).replace("CLEANUP_S", "0.3")


def _limits():
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))


def _limits_and_terminal():
    """In the child: the pty on stdin becomes the session's controlling terminal, so its
    Ctrl-C reaches the foreground group (the session's own) as a terminal's does."""
    import fcntl
    import termios
    _limits()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _wait_for(pred, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:][:1] != b"Z"


def _with_tag(tag):
    """Pids whose command line carries `tag` (the program, and anything that copied its argv)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                if tag.encode() in f.read() and _alive(int(name)):
                    found.append(int(name))
        except OSError:
            pass
    return found


def _shell_status(returncode):
    """What `$?` shows for a process that ended with this Popen returncode."""
    return 128 - returncode if returncode < 0 else returncode


class Subject:
    """One command run either as `bash -c` or as `ctx run --`, in a session of its own."""

    def __init__(self, kind, tmp, shared, command_text, tty=None):
        self.kind = kind
        self.record = str(tmp / (kind + ".signals"))
        self.ready = str(tmp / (kind + ".ready"))
        self.tag = "sigmatrix-%s-%s" % (kind, os.urandom(4).hex())
        prog = str(tmp / "prog.py")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        command = command_text.format(prog="%s %s %s %s %s" % (sys.executable, prog, self.record, self.ready,
                                                               self.tag))
        argv = ["bash", "-c", command] if kind == "bash" else ctx_cmd() + ["run", "--", command]
        self.tty = tty
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL if tty is None else tty[1],
                                     env=shared.env(), cwd=str(tmp), start_new_session=True,
                                     preexec_fn=_limits if tty is None else _limits_and_terminal)

    def wait_ready(self):
        assert _wait_for(lambda: os.path.exists(self.ready) and open(self.ready).read()), \
            "%s: the program never started" % self.kind
        self.program = int(open(self.ready).read())

    def send(self, signum, mode):
        if mode == "tty":
            os.write(self.tty[0], {signal.SIGINT: b"\x03", signal.SIGQUIT: b"\x1c"}[signum])
        elif mode == "pid":
            os.kill(self.proc.pid, signum)
        else:
            os.killpg(self.proc.pid, signum)

    def finish(self):
        try:
            self.out, self.err = self.proc.communicate(timeout=30)
        finally:
            self.cleanup()
        try:
            with open(self.record) as f:
                self.received = [int(x) for x in f.read().split()]
        except FileNotFoundError:
            self.received = []

    def cleanup(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        for pid in _with_tag(self.tag):
            os.kill(pid, signal.SIGKILL)


def _run(tmp_path, shared, signum, mode, kinds=("bash", "ctx"), command_text="{prog}"):
    ttys = {kind: os.openpty() if mode == "tty" else None for kind in kinds}
    subjects = [Subject(kind, tmp_path, shared, command_text, ttys[kind]) for kind in kinds]
    try:
        for s in subjects:
            s.wait_ready()
        for s in subjects:
            s.send(signum, mode)
        for s in subjects:
            s.finish()
    finally:
        for s in subjects:
            s.cleanup()
        for pair in ttys.values():
            for fd in pair or ():
                os.close(fd)
    return subjects


def _survivors(subject):
    # Orphans are reparented and reaped by whoever adopts them: give that a moment.
    _wait_for(lambda: not _with_tag(subject.tag), timeout=3)
    return _with_tag(subject.tag)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SIGNALS)
def test_signal_matrix(tmp_path, shared, name, mode):
    _check_row(tmp_path, shared, name, mode)


@pytest.mark.parametrize("name", ["SIGINT", "SIGQUIT"])
def test_terminal_keys(tmp_path, shared, name):
    """Ctrl-C and Ctrl-\\ on a real terminal: the kernel signals the foreground group, ctx run included."""
    _check_row(tmp_path, shared, name, "tty")


def _check_row(tmp_path, shared, name, mode):
    signum = getattr(signal, name)
    bash, ctx = _run(tmp_path, shared, signum, mode)
    # bash -c is the reference: check it shows what the row claims, then that ctx run matches.
    assert bash.received == [signum], "bash -c: the program got %r" % bash.received
    assert ctx.received == [signum], "ctx run: the program got %r (want exactly one %s)" % (ctx.received, name)
    assert _shell_status(bash.proc.returncode) == 128 + signum
    assert _shell_status(ctx.proc.returncode) == _shell_status(bash.proc.returncode), ctx.err.decode()[-500:]
    assert not _survivors(bash)
    assert not _survivors(ctx), "ctx run left the program running"
    assert b"partial output before the signal" in ctx.out, ctx.out[-500:]
    assert b"nobody stopped me" not in ctx.out
    rows = ledger_rows(shared.paths, "SELECT exit_code, raw_bytes FROM runs WHERE command LIKE ?",
                       ("%" + ctx.tag + "%",))
    assert rows == [{"exit_code": 128 + signum, "raw_bytes": len(b"partial output before the signal\n")}], rows


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGUSR1"])
def test_compound_command_leaves_no_survivor(tmp_path, shared, name):
    """`kill PID` on `bash -c 'prog; echo after'` reaches bash alone (which then dies, or waits, leaving
    the program running); ctx run sends it on to the program, as a signal to the group would."""
    signum = getattr(signal, name)
    ctx, = _run(tmp_path, shared, signum, "pid", ("ctx",), "{prog}; echo after")
    assert ctx.received == [signum], ctx.received
    assert not _survivors(ctx)
    assert _shell_status(ctx.proc.returncode) == 128 + signum
    assert b"partial output before the signal" in ctx.out
    assert b"\nafter" not in ctx.out
