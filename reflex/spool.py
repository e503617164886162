"""The spool: where events wait while the daemon is down.

One file per event, each holding exactly the frame the client would have sent
(header line + body), written to a temporary name and renamed into place so
the daemon never reads half a file.  Names start with a nanosecond timestamp,
so a sorted listing is arrival order; the event's uid inside the header makes
ingestion idempotent (the ledger ignores a uid it already holds), which is what
turns "ingest, commit, unlink" into exactly-once even if the daemon dies
between the commit and the unlink, or if a client spooled an event that the
daemon had in fact committed before its reply was lost.

stdlib-only.
"""

import os
import time

SUFFIX = ".frame"


def write(spool_dir, uid, frame):
    """Persist one frame; returns its path.  Raises OSError (disk full...)."""
    os.makedirs(spool_dir, mode=0o700, exist_ok=True)
    name = "%020d-%s%s" % (time.time_ns(), uid, SUFFIX)
    final = os.path.join(spool_dir, name)
    tmp = os.path.join(spool_dir, "." + name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(frame)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.close(fd)
    os.rename(tmp, final)
    return final


def pending(spool_dir):
    """Spooled frame paths in arrival order."""
    try:
        names = os.listdir(spool_dir)
    except FileNotFoundError:
        return []
    return [os.path.join(spool_dir, n) for n in sorted(names)
            if n.endswith(SUFFIX) and not n.startswith(".")]


def split_frame(data):
    """(header_bytes, body_bytes) of a stored frame; header_bytes ends in newline."""
    nl = data.find(b"\n")
    if nl < 0:
        return data, b""
    return data[:nl + 1], data[nl + 1:]
