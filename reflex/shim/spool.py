"""The spool: where events wait while the daemon is down.

One file per event, each holding exactly the frame the client would have sent
(header line + body), written to a temporary name and renamed into place so
the daemon never reads half a file.  Names start with a nanosecond timestamp,
so a sorted listing is arrival order; the event's uid inside the header makes
ingestion idempotent (the ledger ignores a uid it already holds), which is what
turns "ingest, commit, unlink" into exactly-once even if the daemon dies
between the commit and the unlink, or if a client spooled an event that the
daemon had in fact committed before its reply was lost.

A frame the daemon cannot ingest must not hold up the frames behind it: it is
moved, bytes untouched, to `quarantine/` with a `.why` file beside it saying
why, and `ctx doctor` and `ctx ledger verify` show it until the user removes it.
The spool lives under the user's verified home and is written through a
verified directory descriptor (paths.py), so no other user can read a frame
or redirect one.

stdlib-only.
"""

import os
import time

from reflex import paths as paths_mod

SUFFIX = ".frame"
QUARANTINE = "quarantine"
WHY = ".why"
IN_PROGRESS = ".ingesting"   # the frame the daemon is ingesting right now (name and attempt)


def write(spool_dir, uid, frame):
    """Persist one frame; returns its path.  Raises OSError (disk full...) or UntrustedPath."""
    dir_fd = paths_mod.open_private_subdir(spool_dir)
    try:
        name = "%020d-%s%s" % (time.time_ns(), uid, SUFFIX)
        tmp = "." + name + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=dir_fd)
        try:
            view = memoryview(frame)
            while view:
                n = os.write(fd, view)
                view = view[n:]
        except BaseException:
            os.close(fd)
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            raise
        os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    return os.path.join(spool_dir, name)


def pending(spool_dir):
    """Spooled frame paths in arrival order."""
    try:
        names = os.listdir(spool_dir)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [os.path.join(spool_dir, n) for n in sorted(names)
            if n.endswith(SUFFIX) and not n.startswith(".")]


def split_frame(data):
    """(header_bytes, body_bytes) of a stored frame; header_bytes ends in newline."""
    nl = data.find(b"\n")
    if nl < 0:
        return data, b""
    return data[:nl + 1], data[nl + 1:]


def read_frame(path, limit):
    """The bytes of a spooled frame, or raise ValueError saying why it cannot be one
    (FileNotFoundError when it is gone).

    Not following links and not blocking on a FIFO: a file that is not our
    regular file, or is larger than any frame a client writes, is refused
    without being read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise  # ingested (or quarantined) meanwhile: nothing to say about it
    except OSError as e:
        raise ValueError("cannot open: %s" % e.strerror) from None
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000:
            raise ValueError("not a regular file")
        if st.st_uid != os.geteuid():
            raise ValueError("owned by uid %d, not by the daemon's user" % st.st_uid)
        if st.st_size > limit:
            raise ValueError("%d bytes, larger than any frame (%d)" % (st.st_size, limit))
        chunks = []
        total = 0
        while total <= limit:
            c = os.read(fd, 1 << 20)
            if not c:
                break
            chunks.append(c)
            total += len(c)
        if total > limit:
            raise ValueError("grew past %d bytes while read" % limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def quarantine(path, reason):
    """Move a frame aside with its reason; returns the new path (None if it vanished)."""
    spool_dir, name = os.path.split(path)
    qdir = os.path.join(spool_dir, QUARANTINE)
    os.makedirs(qdir, mode=0o700, exist_ok=True)
    target = os.path.join(qdir, name)
    try:
        os.rename(path, target)
    except FileNotFoundError:
        return None
    line = "%s\t%s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), " ".join(str(reason).split())[:2000])
    fd = os.open(target + WHY, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, line.encode("utf-8", "backslashreplace"))
    finally:
        os.close(fd)
    return target


def quarantined(spool_dir):
    """[(frame path, reason)] of quarantined frames, oldest first."""
    qdir = os.path.join(spool_dir, QUARANTINE)
    try:
        names = sorted(os.listdir(qdir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for n in names:
        if n.endswith(WHY) or n.startswith("."):
            continue
        why = "(no reason recorded)"
        try:
            with open(os.path.join(qdir, n + WHY), "rb") as f:
                text = f.read(4096).decode("utf-8", "replace").strip()
            why = text.split("\t", 1)[-1] or why
        except OSError:
            pass
        out.append((os.path.join(qdir, n), why))
    return out
