"""The stage `ctx run` puts between a producer and the agent's own slicer.

Under ctx, `pytest 2>&1 | tail -20` runs as

    pytest 2>&1 | <python> -S -c '<start pipetee>' CAPTURE LIMIT STATS | tail -20

so bash still parses and runs the agent's whole command: list prefixes (`cd x && …`),
`set -o pipefail`, subshells, signals and exit statuses are bash's own.  This stage
copies the producer's stream to the slicer unchanged and keeps a bounded copy in the
capture file (reflex.shim.capture).  Two properties keep the pipeline's observable
behaviour identical to bash's:

- it exits 0 whatever happens, so a pipefail status is the one bash computes from the
  agent's own stages;
- it exits as soon as the slicer stops reading, closing the producer's pipe: the
  producer's next write fails (SIGPIPE) exactly as it would without ctx, so
  `yes | head -5` ends at once instead of writing until the disk is full.

At the end it writes what it kept (reflex.shim.capture.Kept) to STATS (created by `ctx run`)
and exits, releasing the lock it holds on the capture while it writes it.

stdlib-only; started once per sliced `ctx run`, so it imports next to nothing.
"""

import os
import sys

import _signal

from reflex.shim.capture import CHUNK, FileRing



def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ring = None
    try:
        capture, limit, stats = argv[0], int(argv[1]), argv[2]
        # Terminated with the pipeline: still leave a capture in order behind us.
        for s in (_signal.SIGTERM, _signal.SIGHUP):
            _signal.signal(s, _raise_exit)
        # The signals that interrupt or poke a command are for the agent's own stages: this one is
        # invisible, so it keeps copying what the producer prints as it stops (pytest's summary
        # after a Ctrl-C) until the producer closes the pipe or the slicer stops reading.
        for s in (_signal.SIGINT, _signal.SIGQUIT, _signal.SIGUSR1, _signal.SIGUSR2):
            _signal.signal(s, _signal.SIG_IGN)
        try:
            fd = os.open(capture, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
            import fcntl
            # Held until we exit: `ctx run` takes it before reading what we kept, so it never
            # reads a capture we are still putting in order (the pipeline may be dying).
            fcntl.flock(fd, fcntl.LOCK_EX)
            ring = FileRing(fd, limit)
        except OSError:
            ring = None  # no copy: forwarding the agent's output matters more
        _pump(ring)
    except BaseException:
        pass
    finally:
        try:
            if ring is not None:
                _write_stats(stats, ring.finish())
        except BaseException:
            pass
        os._exit(0)


def _raise_exit(signum, frame):
    raise SystemExit(0)


def _pump(ring):
    # The pipe from the producer keeps its default size: a bigger one would let a producer
    # that the slicer is about to stop write (and ctx keep, and count) that much more.
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    while True:
        try:
            n = os.readv(0, [buf])
        except OSError:
            return
        if not n:
            return
        if ring is not None:
            ring.write(view[:n])
        out = view[:n]
        try:
            while out:
                out = out[os.write(1, out):]
        except OSError:  # the slicer is gone (EPIPE): stop reading, so the producer gets SIGPIPE
            return


def _write_stats(path, kept):
    # `ctx run` created the file and removes it when done: never create it after that.
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.write(fd, ("%d %d %d %d %d %s\n" % (kept.total, kept.head, kept.marker_len, kept.tail, kept.elided,
                                                (kept.error or "-").replace(" ", "_"))).encode())
    finally:
        os.close(fd)


def read_stats(path):
    """The Kept a tee wrote to `path`, or None (it never ran, or was killed)."""
    from reflex.shim.capture import Kept
    try:
        with open(path, "rb") as f:
            words = f.read(4096).split()
    except OSError:
        return None
    try:
        total, head, marker_len, tail, elided = (int(w) for w in words[:5])
    except ValueError:
        return None
    error = words[5].decode(errors="replace").replace("_", " ") if len(words) > 5 and words[5] != b"-" else None
    return Kept(total, head, marker_len, tail, elided, error)
