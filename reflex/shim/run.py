"""`ctx run -- CMD...`: run a command, keep a bounded copy of its output, print what the daemon says.

Contract with the agent: the command runs with bash semantics in the current
directory, stdin passes through, and the exit status is bash's own (128+N when a
signal N killed it).  Children start with SIGPIPE and SIGXFSZ at their defaults
(Python ignores both in itself), so pipelines end and fail as they do under bash.

Signals (INT, TERM, HUP, QUIT, USR1, USR2) reach the command exactly once, and ctx run
outlives it to keep and digest what it printed (see _Relay): one sent to the process group
(a terminal's Ctrl-C, a harness's killpg, a tree kill) already reached the command, so it is
not sent again; one sent to ctx run alone goes on to the command's whole process tree, so
nothing the command started outlives it.

Without a trailing slicer, stdout+stderr go to one pipe (merged in order, as `2>&1`
would) that ctx run moves into the capture file under CTX_HOME/captures (0600).
With one (`pytest 2>&1 | tail -20`, see pipesplit), bash runs the agent's whole
command with a tee inserted before the slicer (reflex.shim.pipetee): the capture holds
what the producer piped, the slicer's output (the "view") comes back to ctx run,
the producer's unpiped stderr reaches the agent directly, and `| head -5` stops the
producer exactly as it would without ctx.

Captures and views are bounded (reflex.shim.capture): the first and last part of a huge
output are kept, the middle is declared elided, and no output can fill a disk.  The
daemon turns the capture into a blob and a ledger row and answers with what to
print.  Without a daemon, the captured output is printed as is and the run is
spooled, so nothing more is lost and the exit status is kept.

Before anything reads the capture, the values of the secret files around the
command (reflex.safety.secrets: the project's .env and keys, the directories the
command reads recursively, the home secrets; found by a thread while the command
runs) are replaced in it, so no secret value is stored, sliced, printed or
spooled; a census line says what was hidden.
`ctx run --raw -- CMD` (what the safety plane rewrites a recursive read to)
prints the whole redacted output instead of a digest.

stdlib-only: no subprocess (it imports threading/selectors), no json.
"""

import os
import sys
import time

import _signal  # not `signal`: its enum wrappers cost ~3 ms per call here

from reflex import paths as paths_mod
from reflex.shim import capture as capture_mod
from reflex.shim import client
from reflex import protocol

FINISH_TIMEOUT = float(os.environ.get("CTX_RUN_FINISH_TIMEOUT", "10"))
CAPTURE_MIN_FREE = 16 * 1024 * 1024
# What a slicer printed is kept head + tail like a capture, at most this much: the
# digest shows at most a few thousand tokens of it.
VIEW_LIMIT = 2 * 1024 * 1024
# After the command exits, output still arriving from a background process it left
# behind is taken for at most this long; then the pipe is closed.
DRAIN_AFTER_EXIT_S = 0.5
# Claude Code's Bash tool moves a command that outlives its timeout (120 s unless the call sets
# one) to the background, and the model then sees what it printed so far. ctx run prints only at
# exit, so a command still running after this long gets its latest lines printed once, as they
# stand (redacted): never less than the model would have seen without ctx. 0 turns it off.
PROGRESS_AFTER_S = float(os.environ.get("CTX_PROGRESS_AFTER_S") or 110)
PROGRESS_LINES = 20
PROGRESS_BYTES = 8192
POLL_MS = 50
TEE_WAIT_S = 5.0
F_SETPIPE_SZ = 1031
# Python ignores these in itself; a child must start with them at their defaults,
# as it would under bash (subprocess does the same with restore_signals).
CHILD_DEFAULT_SIGNALS = (_signal.SIGPIPE, _signal.SIGXFSZ)
# What a harness or a user sends to stop or poke a command: ctx run relays each (see _Relay).
RELAYED_SIGNALS = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGQUIT, _signal.SIGUSR1,
                   _signal.SIGUSR2)
# How long a signal sent to the whole group may take to reach the sentinel after reaching us: a
# killpg reaches both in one system call, a tree kill (one kill per pid) within microseconds.
GROUP_GRACE_S = 0.03


def _shell():
    for sh in ("/bin/bash", "/usr/bin/bash", "/bin/sh"):
        if os.access(sh, os.X_OK):
            return sh
    return "/bin/sh"


# The session id each harness exports to its shell (Gemini exports none; the daemon links those).
SESSION_ENV = ("CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "COPILOT_AGENT_SESSION_ID")


def _session_id():
    for name in SESSION_ENV:
        value = os.environ.get(name)
        if value:
            return value
    return ""


def command_from_argv(argv):
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        return None
    if len(argv) == 1:
        return argv[0]
    import shlex
    return shlex.join(argv)


def _options(argv):
    raw = False
    while argv and argv[0] == "--raw":
        raw = True
        argv = argv[1:]
    return raw, argv


def main(argv):
    raw, argv = _options(list(argv))
    command = command_from_argv(argv)
    if command is None:
        sys.stderr.write("usage: ctx run [--raw] -- COMMAND [ARGS...]\n")
        return 2
    # First, so that no signal can end ctx run before the command has its output kept.
    relay = _Relay()
    paths = paths_mod.resolve()
    uid = os.urandom(10).hex()
    try:
        # The capture holds the command's output: only in a directory verified to be ours.
        cap_dir = paths_mod.open_private_subdir(paths.captures)
        try:
            # A full disk would let us create the capture and then silently swallow the
            # command's output (its writes fail with ENOSPC): check first, run uncaptured.
            st = os.fstatvfs(cap_dir)
            if st.f_bavail * st.f_frsize < CAPTURE_MIN_FREE:
                raise OSError(28, "only %d bytes free under %s" % (st.f_bavail * st.f_frsize, paths.captures))
            capture = os.path.join(paths.captures, uid + ".out")
            cfd = os.open(uid + ".out", os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                          dir_fd=cap_dir)
        finally:
            os.close(cap_dir)
    except OSError as e:
        # Cannot capture (disk full, read-only home): run the command plainly, unless there
        # are secret values its output could carry and nothing could redact them.
        if _census(command).values:
            sys.stderr.write("ctx run: cannot capture output (%s), so the values of the secret files "
                             "here could not be removed from it; not running it. Free some space or "
                             "run a command that does not read those files.\n" % e)
            return 1
        sys.stderr.write("ctx run: cannot capture output (%s); running uncaptured\n" % e)
        sys.stdout.flush()
        for s in CHILD_DEFAULT_SIGNALS + RELAYED_SIGNALS:
            _signal.signal(s, _signal.SIG_DFL)  # exec keeps ignored signals ignored
        relay.replay_to_self()
        os.execv(_shell(), [_shell(), "-c", command])
    limit = capture_mod.limit_from_env()
    from reflex.safety.pipesplit import split_point
    point = split_point(command)
    census_thread = _CensusThread(command)
    t0 = time.time()

    def announce():
        _announce(paths, uid, capture, limit)
    fields = {}
    if point is None:
        def progress(recent):
            _write(_progress_text(recent, census_thread.result(), time.time() - t0))
        code, kept = _run_captured(command, cfd, limit, announce, relay, progress)
        exit_code, view, view_kept = code, b"", None
    else:
        producer, pipe, slicer, stages = point
        exit_code, code, kept, view, view_kept = _run_sliced(producer, pipe, slicer, stages, capture, cfd, limit,
                                                             announce, relay)
        fields.update(producer=producer, slicer=slicer, slicer_exit=exit_code)
        if view_kept.elided:
            fields["view_bytes"] = view_kept.total
    duration_ms = (time.time() - t0) * 1000.0
    fields.update(kept.header_fields())
    census = census_thread.result()
    redacted, labels, partial = _redact(census, capture, cfd)
    if view and census.values:
        # The slicer read the output before the capture was redacted: its view is redacted too.
        from reflex.safety.secrets import redact_bytes
        view, n_view, view_labels = redact_bytes(view, census)
        redacted += n_view
        for k, v in view_labels.items():
            labels[k] = labels.get(k, 0) + v
    if raw:
        fields["raw"] = True
    if redacted:
        fields.update(redacted=redacted, redacted_from=sorted(labels))
    note = b""
    if redacted:
        from reflex.safety.secrets import census_line
        note = census_line(redacted, labels).encode()
    if partial and raw:
        # A recursive read over more than the census could cover: say so rather than imply
        # that everything was checked.
        note += (b"[ctx] note: the search for secret files stopped at its limit (files, size or "
                 b"time); values of secret files beyond it were not redacted.\n")
    head = protocol.request_header("run.finish", dict(
        uid=uid, ts=t0, capture=capture, command=command, cwd=os.getcwd(),
        session=_session_id(), exit=code, duration_ms=duration_ms,
        **fields), len(view))
    try:
        reply, body = client.request(paths, head, view, connect_timeout=0.1, reply_timeout=FINISH_TIMEOUT)
        ok = protocol.header_true(reply, "ok")
    except client.Unavailable as e:
        ok = False
        if isinstance(e, client.Impostor):
            sys.stderr.write("%s\n" % e)
    if ok:
        out, _err = protocol.split_reply(reply, body)
        if protocol.header_true(reply, "print_raw"):
            if point is not None:
                _write(view)
            else:
                _copy_to_stdout(cfd)
        _write(out)
        _write(note)
        os.close(cfd)
        return exit_code
    # Fail open: what the command printed (bounded like the capture), the run
    # spooled for the daemon to ingest later.
    if point is not None:
        _write(view)
    else:
        _copy_to_stdout(cfd)
    _write(note)
    os.close(cfd)
    from reflex import config
    config.tell_if_invalid(paths.config)    # the daemon refuses a broken config: say why, once
    from reflex.shim import spool
    try:
        spool.write(paths.spool, uid, protocol.with_fields(head, {"spooled": True}) + view)
    except OSError:
        pass
    try:
        client.spawn_daemon(paths)
    except OSError:
        pass
    return exit_code


VIEW_CAP = 4 * 1024 * 1024


def _census(command):
    try:
        from reflex.safety import secrets as secret_values
        return secret_values.collect(os.getcwd(), os.environ, command)
    except Exception:  # noqa: BLE001 - a census failure must not lose the run
        from reflex.safety.secrets import Census
        return Census()


class _CensusThread:
    """The census, taken while the command runs: for a test suite it costs nothing after."""

    def __init__(self, command):
        # _thread, not threading: threading imports functools and collections, a cost every
        # `ctx run` would pay before the command starts.
        import _thread
        self._value = None
        self._done = _thread.allocate_lock()
        self._done.acquire()
        _thread.start_new_thread(self._work, (command,))

    def _work(self, command):
        try:
            self._value = _census(command)
        finally:
            self._done.release()

    def result(self):
        """The census (waits for it); may be asked more than once."""
        self._done.acquire()
        self._done.release()
        if self._value is None:
            from reflex.safety.secrets import Census
            return Census()
        return self._value


def _redact(census, capture, cfd):
    """Replace the secret values in the capture before anything reads it.

    -> (values replaced, {file label: count}, whether the census stopped at a limit)."""
    try:
        from reflex.safety import secrets as secret_values
        count, labels = secret_values.redact_capture(cfd, capture, census)
        return count, labels, census.truncated
    except Exception as e:  # noqa: BLE001
        # The output may hold a secret we could not remove: show and store nothing of it.
        sys.stderr.write("ctx run: could not redact secret values from the output (%s); "
                         "output withheld\n" % e)
        os.ftruncate(cfd, 0)
        return 0, {}, census.truncated


def _announce(paths, uid, capture, limit):
    """Tell the daemon where the output goes, so it can count tokens while the command runs.

    Sent once the command has started, so the round trip is not added to the command's
    time (the pipe buffers what it writes meanwhile; the follower reads the capture from
    its start anyway).  `stable` is how many leading bytes of the capture never change
    once written (its head, see reflex.shim.capture).  Best effort with a tight budget:
    without a daemon the run proceeds unchanged."""
    head = protocol.request_header("run.start", {"uid": uid, "capture": capture,
                                             "stable": capture_mod.split_limit(limit)[0]})
    try:
        client.request(paths, head, connect_timeout=0.05, reply_timeout=0.2)
    except client.Unavailable:
        pass


def _spawn(command, stdio, relay):
    """Start `bash -c command` with `stdio` ({child fd: our fd}) and default signal dispositions.

    fork + exec rather than posix_spawn: glibc's posix_spawn leaves its internal real-time
    signals (32, 33) ignored in the child and cannot be told otherwise; a shell's fork never
    does.  The relayed signals are blocked from before the fork until the relay knows the
    command's pid, so none is lost in between: the child unblocks them after restoring their
    default actions (a pending one then acts on it, as it would have on the command)."""
    sh = _shell()
    old_mask = _signal.pthread_sigmask(_signal.SIG_BLOCK, RELAYED_SIGNALS)
    try:
        pid = os.fork()
        if pid == 0:
            try:
                for s in CHILD_DEFAULT_SIGNALS + RELAYED_SIGNALS:
                    _signal.signal(s, _signal.SIG_DFL)
                _signal.pthread_sigmask(_signal.SIG_SETMASK, old_mask)
                for child_fd, fd in stdio.items():
                    os.dup2(fd, child_fd)
                os.execv(sh, [sh, "-c", command])
            finally:
                os._exit(127)
        relay.start(pid)
    finally:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, old_mask)
    return pid


class _Relay:
    """Gets every relayed signal to the command exactly once, while ctx run survives to keep its output.

    The command runs in ctx run's process group, as it would under `bash -c` (so a SIGKILL to
    the group, which nothing can catch, still ends everything).  A signal that reached ctx run
    may then have reached the command too (a terminal's Ctrl-C, a harness's killpg or tree
    kill) or not (`kill PID`); the signal itself cannot tell which.  A sentinel, a forked
    process in the same group that keeps the relayed signals blocked, can: a signal sent to
    the group is left pending in it.  When the sentinel has it, the command has it; otherwise
    the signal goes to the command's process tree (the shell and everything under it, as a
    signal to its group would), so `ctx run -- 'cd x && pytest'` stops the same on either."""

    def __init__(self):
        self.owner = os.getpid()
        self.pid = None
        self.done = False
        self.early = []  # signals received before the command started
        self.sentinel = None
        self._to_sentinel = self._from_sentinel = -1
        for s in RELAYED_SIGNALS:
            _signal.signal(s, self._received)

    def start(self, pid):
        """The command runs as `pid` (called with the relayed signals blocked)."""
        self.pid = pid
        try:
            self._start_sentinel()
        except OSError:
            self.sentinel = None  # without it every signal is relayed: at worst twice, never lost
        early, self.early = self.early, []
        for signum in early:
            self._send_to_tree(signum)

    def stop(self):
        """The command has exited: signals from now on are ignored (ctx run is about to finish)."""
        self.done = True
        if self.sentinel is not None:
            os.close(self._to_sentinel)
            os.close(self._from_sentinel)
            try:
                os.kill(self.sentinel, _signal.SIGKILL)
                os.waitpid(self.sentinel, 0)
            except OSError:
                pass
            self.sentinel = None

    def replay_to_self(self):
        """Before exec'ing the command in place of ctx run: what arrived early acts on it."""
        for signum in self.early:
            os.kill(os.getpid(), signum)

    def _received(self, signum, _frame):
        if os.getpid() != self.owner or self.done:
            return  # a child between fork and exec, or the command is already gone
        if self.pid is None:
            self.early.append(signum)
        elif not self._group_got(signum):
            self._send_to_tree(signum)

    def _group_got(self, signum):
        if self.sentinel is None:
            return False
        deadline = time.monotonic() + GROUP_GRACE_S
        while True:
            if signum in _pending_signals(self.sentinel):
                self._drain_sentinel()
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)

    def _drain_sentinel(self):
        # The sentinel consumes what it has pending, so the next signal is told apart afresh.
        import select
        try:
            os.write(self._to_sentinel, b"d")
            if select.select([self._from_sentinel], [], [], 0.5)[0]:
                os.read(self._from_sentinel, 1)
        except OSError:
            pass

    def _send_to_tree(self, signum):
        for pid in _process_tree(self.pid):
            try:
                os.kill(pid, signum)
            except OSError:
                pass

    def _start_sentinel(self):
        to_r, to_w = os.pipe2(os.O_CLOEXEC)
        from_r, from_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            # The relayed signals are blocked here (we are inside _spawn): they stay so.
            try:
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)  # holds none of the harness's pipes open
                keep = sorted((to_r, from_w))
                os.closerange(3, keep[0])
                os.closerange(keep[0] + 1, keep[1])
                os.closerange(keep[1] + 1, 1 << 16)
                while os.read(to_r, 1):  # EOF: ctx run is gone, however it ended
                    while _signal.sigtimedwait(RELAYED_SIGNALS, 0) is not None:
                        pass
                    os.write(from_w, b"k")
            finally:
                os._exit(0)
        os.close(to_r)
        os.close(from_w)
        self.sentinel, self._to_sentinel, self._from_sentinel = pid, to_w, from_r


def _pending_signals(pid):
    """The signals pending in process `pid` (its own and its threads' shared set), from /proc."""
    pending = 0
    try:
        with open("/proc/%d/status" % pid, "rb") as f:
            for line in f:
                if line.startswith((b"SigPnd:", b"ShdPnd:")):
                    pending |= int(line.split()[1], 16)
    except (OSError, ValueError):
        return set()
    return {n for n in range(1, 65) if pending >> (n - 1) & 1}


def _process_tree(root):
    """`root` and its descendants, from /proc, parents before children."""
    children = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return [root]
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        try:
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        except (ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    tree = [root]
    for pid in tree:
        tree.extend(children.get(pid, ()))
    return tree


def _progress_text(recent, census, seconds):
    """What a long command printed lately, once, for a harness that may stop waiting for it: its
    last lines (from a line start), secret values redacted, control bytes dropped."""
    from reflex.safety.secrets import redact_bytes
    if len(recent) >= PROGRESS_BYTES and b"\n" in recent:
        recent = recent[recent.index(b"\n") + 1:]
    if census is not None and census.values:
        recent, _n, _labels = redact_bytes(recent, census)
    lines = recent.decode("utf-8", "replace").splitlines()[-PROGRESS_LINES:]
    shown = ["".join(c for c in line if c == "\t" or c >= " ") for line in lines]
    head = ("[ctx] still running after %d s; its last %d lines so far (the whole output is kept, and "
            "its digest follows when it ends):\n" % (seconds, len(shown)))
    return (head + "".join(line + "\n" for line in shown)).encode("utf-8", "replace")


def _run_captured(command, cfd, limit, announce, relay, progress=None):
    """Run `command` with stdout+stderr into the bounded capture; -> (exit status, Kept).
    `progress(recent_bytes)` is called once if the command outlives PROGRESS_AFTER_S."""
    rfd, wfd = os.pipe2(os.O_CLOEXEC)
    try:
        _bigger_pipe(rfd)
        pid = _spawn(command, {1: wfd, 2: wfd}, relay)
    finally:
        os.close(wfd)
    announce()
    ring = capture_mod.FileRing(cfd, limit)
    late = None
    if progress is not None and PROGRESS_AFTER_S > 0:
        def late():
            progress(ring.recent(PROGRESS_BYTES))
    try:
        status = _pump(pid, rfd, ring.take, relay, late)
    finally:
        os.close(rfd)
    return status, ring.finish()


def _run_sliced(producer, pipe, slicer, stages, capture, cfd, limit, announce, relay):
    """Run the whole command with the tee before the slicer.

    -> (bash's exit status, the producer's status, Kept of the capture, view bytes, Kept of the view)."""
    stats_path = capture + ".kept"
    status_path = capture + ".status"
    try:
        os.close(os.open(stats_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except OSError:
        pass  # the tee then reports nothing, and only the capture's head is trusted
    tee = _tee_command(capture, limit, stats_path)
    text = "%s %s %s | %s" % (producer, pipe, tee, slicer)
    if _shell().endswith("bash"):
        # The producer's own status for the digest header (bash reports the slicer's);
        # hidden from `set -x`, and the shell still exits with the pipeline's status.
        text += ('\n{ __ctx_rc=$? __ctx_ps="${PIPESTATUS[*]}"; set +x; } 2>/dev/null; '
                 '{ printf "%%s\\n" "$__ctx_ps" >%s; } 2>/dev/null; exit $__ctx_rc' % _sh_quote(status_path))
    rfd, wfd = os.pipe2(os.O_CLOEXEC)
    try:
        pid = _spawn(text, {1: wfd}, relay)
    finally:
        os.close(wfd)
    announce()
    view = capture_mod.MemoryHeadTail(VIEW_LIMIT)

    def take(fd):
        data = os.read(fd, 1 << 16)
        view.write(data)
        return len(data)
    try:
        status = _pump(pid, rfd, take, relay)
    finally:
        os.close(rfd)
    view_bytes, view_kept = view.finish()
    _wait_for_tee(cfd)
    kept = _tee_kept(capture, stats_path, limit)
    producer_status = status
    statuses = _read_small(status_path).split()
    # PIPESTATUS holds the producer's stages, the tee, then `stages` slicer stages.
    if len(statuses) >= stages + 2:
        try:
            producer_status = int(statuses[-(stages + 2)])
        except ValueError:
            pass
    for p in (stats_path, status_path):
        try:
            os.unlink(p)
        except OSError:
            pass
    return status, producer_status, kept, view_bytes, view_kept


def _wait_for_tee(cfd):
    """Wait (bounded) until no tee holds the capture's lock: when the pipeline was killed, the
    tee may still be putting the capture in order after bash is gone."""
    import fcntl
    deadline = time.monotonic() + TEE_WAIT_S
    while True:
        try:
            fcntl.flock(cfd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return  # held until cfd is closed: a tee starting this late leaves the capture alone
        except BlockingIOError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        except OSError:
            return


def _tee_command(capture, limit, stats_path):
    # -I -S: the tee needs the standard library and this package only; the agent's environment
    # (PYTHONPATH) and working directory must not supply modules, and it starts faster without site.
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = "import sys;sys.path.insert(0,%r);from reflex.shim.pipetee import main;main()" % package_parent
    python = sys.executable or "python3"
    return " ".join(_sh_quote(w) for w in (python, "-I", "-S", "-c", code, capture, str(limit), stats_path))


def _tee_kept(capture, stats_path, limit):
    from reflex.shim.pipetee import read_stats
    kept = read_stats(stats_path)
    if kept is not None:
        return kept
    try:
        size = os.stat(capture).st_size
    except OSError:
        size = 0
    head, _ = capture_mod.split_limit(limit)
    if size <= head:
        # The tee never ran (`false && x | tail`) or was stopped inside the head, which is in order.
        return capture_mod.Kept(size, size)
    # Stopped while its ring was not yet in order: only the head can be trusted.
    try:
        fd = os.open(capture, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return capture_mod.Kept(size, 0, 0, 0, size, "the pipeline's tee did not finish")
    try:
        return capture_mod.cut_short(fd, head, size, "the pipeline's tee did not finish")
    finally:
        os.close(fd)


def _pump(pid, rfd, take, relay, late=None):
    """Feed the command's pipe to `take` until it closes (or the command exits and goes quiet).

    -> the command's exit status.  A background process the command left running may
    hold the pipe open forever: after the command exits, output is taken for at most
    DRAIN_AFTER_EXIT_S, then the pipe is closed.  `late()` is called once if the command is
    still running PROGRESS_AFTER_S after it started."""
    import select
    os.set_blocking(rfd, False)
    poller = select.poll()
    poller.register(rfd, select.POLLIN)
    status = None
    deadline = None
    late_at = time.monotonic() + PROGRESS_AFTER_S if late is not None else None
    while True:
        if late_at is not None and status is None and time.monotonic() >= late_at:
            late_at = None
            try:
                late()
            except Exception:  # noqa: BLE001 - a progress note must never cost the run
                pass
        try:
            if take(rfd) == 0:
                break  # every writer closed the pipe
            if deadline is not None and time.monotonic() > deadline:
                break  # a background writer that never stops
            continue
        except BlockingIOError:
            pass
        if status is None:
            status = _reap(pid)
            if status is not None:
                deadline = time.monotonic() + DRAIN_AFTER_EXIT_S
        elif time.monotonic() > deadline:
            break
        poller.poll(POLL_MS)
    if status is None:
        status = _wait(pid)
    relay.stop()
    return status


def _reap(pid):
    try:
        got, st = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    if got == 0:
        return None
    return _status(st)


def _wait(pid):
    while True:
        try:
            _, st = os.waitpid(pid, 0)
            return _status(st)
        except InterruptedError:
            continue


def _status(st):
    if os.WIFSIGNALED(st):
        return 128 + os.WTERMSIG(st)
    return os.waitstatus_to_exitcode(st)


def _bigger_pipe(fd):
    try:
        import fcntl
        fcntl.fcntl(fd, F_SETPIPE_SZ, capture_mod.CHUNK)
    except OSError:
        pass  # over the user's pipe limit: smaller moves, same bytes


def _read_small(path):
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode(errors="replace")
    except OSError:
        return ""


def _sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def _copy_to_stdout(fd):
    os.lseek(fd, 0, os.SEEK_SET)
    sys.stdout.flush()
    out = sys.stdout.fileno()
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        _write_fd(out, chunk)


def _write(data):
    if data:
        sys.stdout.flush()
        _write_fd(sys.stdout.fileno(), data)


def _write_fd(fd, data):
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BrokenPipeError:
            return  # the reader went away (`| head`); the exit code still stands
        view = view[n:]
