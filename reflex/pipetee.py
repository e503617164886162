"""The stage `ctx run` puts between a producer and the agent's own slicer.

Under ctx, `pytest 2>&1 | tail -20` runs as

    pytest 2>&1 | <python> -S -c '<start pipetee>' CAPTURE LIMIT STATS | tail -20

so bash still parses and runs the agent's whole command: list prefixes (`cd x && …`),
`set -o pipefail`, subshells, signals and exit statuses are bash's own.  This stage
copies the producer's stream to the slicer unchanged and keeps a bounded copy in the
capture file (reflex.capture).  Two properties keep the pipeline's observable
behaviour identical to bash's:

- it exits 0 whatever happens, so a pipefail status is the one bash computes from the
  agent's own stages;
- it exits as soon as the slicer stops reading, closing the producer's pipe: the
  producer's next write fails (SIGPIPE) exactly as it would without ctx, so
  `yes | head -5` ends at once instead of writing until the disk is full.

At the end it writes what it kept (reflex.capture.Kept) to STATS for `ctx run`.

stdlib-only; started once per sliced `ctx run`, so it imports next to nothing.
"""

import os
import sys

import _signal

from .capture import CHUNK, FileRing

F_SETPIPE_SZ = 1031


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ring = None
    try:
        capture, limit, stats = argv[0], int(argv[1]), argv[2]
        # Terminated with the pipeline: still leave a capture in order behind us.
        for s in (_signal.SIGTERM, _signal.SIGHUP):
            _signal.signal(s, _raise_exit)
        try:
            ring = FileRing(os.open(capture, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC), limit)
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
    try:
        import fcntl
        fcntl.fcntl(0, F_SETPIPE_SZ, CHUNK)
    except OSError:
        pass  # not a pipe, or over the user's pipe limit: smaller reads, same bytes
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
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, ("%d %d %d %d %d %s\n" % (kept.total, kept.head, kept.marker_len, kept.tail, kept.elided,
                                                (kept.error or "-").replace(" ", "_"))).encode())
    finally:
        os.close(fd)


def read_stats(path):
    """The Kept a tee wrote to `path`, or None (it never ran, or was killed)."""
    from .capture import Kept
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
