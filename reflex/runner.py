"""`ctx run -- CMD...`: run a command, keep its full output, print what the daemon says.

Contract with the agent: the command runs with bash semantics in the current
directory, stdin passes through, the exit code is the command's own (128+N
when a signal N killed it), and stdout+stderr are captured merged, in order,
exactly as the command wrote them (one file descriptor shared by both, as
`2>&1` would).  The capture goes to a 0600 file under CTX_HOME/captures; the
daemon turns it into a blob and a ledger row and answers with what to print.
Without a daemon the raw output is printed unchanged and the capture is
spooled, so nothing is lost and the exit code is kept.

Before anything reads the capture, the values of the secret files around the
command (reflex.secret_values: the project's .env and keys, the directories the
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

from . import client, paths as paths_mod, wire

FINISH_TIMEOUT = float(os.environ.get("CTX_RUN_FINISH_TIMEOUT", "10"))
CAPTURE_MIN_FREE = 16 * 1024 * 1024


def _shell():
    for sh in ("/bin/bash", "/usr/bin/bash", "/bin/sh"):
        if os.access(sh, os.X_OK):
            return sh
    return "/bin/sh"


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
    paths = paths_mod.resolve()
    uid = os.urandom(10).hex()
    try:
        os.makedirs(paths.captures, mode=0o700, exist_ok=True)
        # A full disk would let us create the capture and then silently swallow the
        # command's output (its writes fail with ENOSPC): check first, run uncaptured.
        st = os.statvfs(paths.captures)
        if st.f_bavail * st.f_frsize < CAPTURE_MIN_FREE:
            raise OSError(28, "only %d bytes free under %s" % (st.f_bavail * st.f_frsize, paths.captures))
        capture = os.path.join(paths.captures, uid + ".out")
        cfd = os.open(capture, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
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
        os.execv(_shell(), [_shell(), "-c", command])
    from .pipesplit import split
    parts = split(command)
    producer, slicer = parts if parts else (command, None)
    _announce(paths, uid, capture)
    census = _CensusThread(command)
    t0 = time.time()
    code = _run(producer, cfd)
    duration_ms = (time.time() - t0) * 1000.0
    redacted, labels, partial = _redact(census.result(), capture, cfd)
    view = b""
    exit_code = code
    if slicer is not None:
        # The agent's own slicer, verbatim, over the full output: what the
        # pipeline would have printed, and (no pipefail) its exit status.
        view, exit_code = _slice(slicer, cfd, capture + ".view")
    extra = ""
    if slicer is not None:
        extra = ',"producer":%s,"slicer":%s,"slicer_exit":%d' % (
            wire.json_str(producer), wire.json_str(slicer), exit_code)
    if raw:
        extra += ',"raw":true'
    if redacted:
        extra += ',"redacted":%d,"redacted_from":[%s]' % (
            redacted, ",".join(wire.json_str(k) for k in sorted(labels)))
    note = b""
    if redacted:
        from .secret_values import census_line
        note = census_line(redacted, labels).encode()
    if partial and raw:
        # A recursive read over more than the census could cover: say so rather than imply
        # that everything was checked.
        note += (b"[ctx] note: the search for secret files stopped at its limit (files, size or "
                 b"time); values of secret files beyond it were not redacted.\n")
    body = view[:VIEW_CAP]
    head = ('{"v":%d,"op":"run.finish","uid":"%s","ts":%.6f,"capture":%s,"command":%s,"cwd":%s,'
            '"session":%s,"exit":%d,"duration_ms":%.3f%s,"len":%d}\n'
            % (wire.PROTOCOL, uid, t0, wire.json_str(capture), wire.json_str(command),
               wire.json_str(os.getcwd()), wire.json_str(os.environ.get("CLAUDE_CODE_SESSION_ID", "")),
               code, duration_ms, extra, len(body))).encode()
    try:
        reply, out = client.request(paths, head, body, connect_timeout=0.1, reply_timeout=FINISH_TIMEOUT)
        ok = wire.header_true(reply, "ok")
    except client.Unavailable:
        ok = False
    if ok:
        n_out = wire.header_int(reply, "out", 0) or 0
        if wire.header_true(reply, "print_raw"):
            if slicer is not None:
                _write(view)
            else:
                _copy_to_stdout(cfd)
        _write(out[:n_out])
        _write(note)
        os.close(cfd)
        return exit_code
    # Fail open: what the command would have printed, capture spooled for
    # the daemon to ingest later.
    if slicer is not None:
        _write(view)
    else:
        _copy_to_stdout(cfd)
    _write(note)
    os.close(cfd)
    from . import spool
    try:
        spool.write(paths.spool, uid, head[:-2] + b',"spooled":true}\n' + body)
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
        from . import secret_values
        return secret_values.collect(os.getcwd(), os.environ, command)
    except Exception:  # noqa: BLE001 - a census failure must not lose the run
        from .secret_values import Census
        return Census()


class _CensusThread:
    """The census, taken while the command runs: for a test suite it costs nothing after."""

    def __init__(self, command):
        import threading
        self._value = None
        self._thread = threading.Thread(target=self._work, args=(command,), daemon=True)
        self._thread.start()

    def _work(self, command):
        self._value = _census(command)

    def result(self):
        self._thread.join()
        if self._value is None:
            from .secret_values import Census
            return Census()
        return self._value


def _redact(census, capture, cfd):
    """Replace the secret values in the capture before anything reads it.

    -> (values replaced, {file label: count}, whether the census stopped at a limit)."""
    try:
        from . import secret_values
        count, labels = secret_values.redact_capture(cfd, capture, census)
        return count, labels, census.truncated
    except Exception as e:  # noqa: BLE001
        # The output may hold a secret we could not remove: show and store nothing of it.
        sys.stderr.write("ctx run: could not redact secret values from the output (%s); "
                         "output withheld\n" % e)
        os.ftruncate(cfd, 0)
        return 0, {}, census.truncated


def _announce(paths, uid, capture):
    """Tell the daemon where the output goes, so it can count tokens while the command runs.

    Best effort with a tight budget: without a daemon the run proceeds unchanged."""
    head = ('{"v":%d,"op":"run.start","uid":"%s","capture":%s}\n'
            % (wire.PROTOCOL, uid, wire.json_str(capture))).encode()
    try:
        client.request(paths, head, connect_timeout=0.05, reply_timeout=0.2)
    except client.Unavailable:
        pass


def _slice(slicer, cfd, view_path):
    """Run the slicer over the captured output; -> (its output, its exit code)."""
    os.lseek(cfd, 0, os.SEEK_SET)
    vfd = os.open(view_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.unlink(view_path)  # anonymous from here on; closed below
        sh = _shell()
        pid = os.posix_spawn(sh, [sh, "-c", slicer], os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, cfd, 0),
                                           (os.POSIX_SPAWN_DUP2, vfd, 1),
                                           (os.POSIX_SPAWN_DUP2, vfd, 2)])
        code = _wait(pid)
        os.lseek(vfd, 0, os.SEEK_SET)
        chunks = []
        total = 0
        while total <= VIEW_CAP:
            c = os.read(vfd, 1 << 20)
            if not c:
                break
            chunks.append(c)
            total += len(c)
        return b"".join(chunks), code
    finally:
        os.close(vfd)


def _run(command, out_fd):
    sh = _shell()
    pid = os.posix_spawn(sh, [sh, "-c", command], os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, out_fd, 1),
                                       (os.POSIX_SPAWN_DUP2, out_fd, 2)])

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except OSError:
            pass
    for s in (_signal.SIGTERM, _signal.SIGHUP):
        _signal.signal(s, forward)
    # SIGINT from a terminal reaches the child through the process group;
    # we only need to survive it long enough to record the run.
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    return _wait(pid)


def _wait(pid):
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


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
