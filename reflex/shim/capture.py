"""Bounded captures: how much of a command's output `ctx run` keeps, and how it says what it dropped.

The limit (LIMIT, 4 MiB; `CTX_CAPTURE_LIMIT` overrides it, in bytes) is a cap on the
capture file at every moment of the run, not only at its end, so no output (`yes`, a
runaway log) can fill a disk through ctx.  An output of at most LIMIT bytes is kept
whole, byte for byte.  A longer one keeps its first HEAD bytes and its last TAIL bytes
(half the limit each) joined by one marker line, so what is stored says itself where
the cut is and how big the whole was:

    <the first HEAD bytes>[\\n]
    ~~~ ctx: output of 1073741824 bytes; 1069547565 bytes elided here, kept the first 2097152 and the last 2097107 ~~~
    <the last bytes, from the first line start among the last TAIL>

While the command runs the file holds the head, then a ring of TAIL bytes written at
HEAD + (position - HEAD) mod TAIL; finish() puts the ring in order behind the marker.
The first HEAD bytes never change once written, so the daemon can count their tokens
while the command still runs (reflex.daemon.follow); everything after them is read
only once the run has finished.

Why these numbers: the daemon digests what is kept in well under a second and within
its memory target (a capture of 4 MiB of one-character lines is the worst case: ~2M
lines), exact o200k counting of it takes ~0.3 s, and 4 MiB is still ~140 times what
the harness itself shows of one output (30,000 characters).

stdlib-only (used by `ctx run` and by its pipeline tee, reflex.shim.pipetee).
"""

import os

LIMIT = 4 * 1024 * 1024
MIN_LIMIT = 4096
MAX_LIMIT = 1 << 30
# The tail starts at a line start when one is this close to the cut, so the kept
# lines are whole; otherwise at a UTF-8 boundary.
ALIGN = 64 * 1024
CHUNK = 1 << 20
MARKER_PREFIX = b"~~~ ctx: "


def limit_from_env(environ=None):
    env = os.environ if environ is None else environ
    try:
        n = int(env.get("CTX_CAPTURE_LIMIT", ""))
    except ValueError:
        return LIMIT
    return max(MIN_LIMIT, min(MAX_LIMIT, n))


def split_limit(limit):
    """(head, tail) byte counts for a limit."""
    head = limit // 2
    return head, limit - head


def marker(noun, total, elided, head, tail):
    return (b"~~~ ctx: %s of %d bytes; %d bytes elided here, kept the first %d and the last %d ~~~\n"
            % (noun.encode(), total, elided, head, tail))


class Kept:
    """What a bounded capture holds: `total` bytes were produced, `elided` of them are not kept.

    When elided, the stored bytes are head bytes, a marker line of `marker_len` bytes at
    offset `head`, then `tail` bytes."""

    __slots__ = ("total", "head", "marker_len", "tail", "elided", "error")

    def __init__(self, total, head, marker_len=0, tail=0, elided=0, error=None):
        self.total = total
        self.head = head
        self.marker_len = marker_len
        self.tail = tail
        self.elided = elided
        self.error = error

    @property
    def stored(self):
        return self.head + self.marker_len + self.tail

    def header_fields(self):
        """The run.finish header fields that describe what was kept."""
        fields = {"output_bytes": self.total, "elided_bytes": self.elided, "kept_head": self.head,
                  "marker_len": self.marker_len}
        if self.error:
            fields["capture_error"] = "".join(c for c in self.error if c.isalnum() or c in " :-_.")[:120]
        return fields


def tail_start(data):
    """Where the kept tail should start: after the first newline near the cut, else on a UTF-8 boundary."""
    nl = data.find(b"\n", 0, ALIGN)
    if 0 <= nl < len(data) - 1:
        return nl + 1
    i = 0
    while i < min(3, len(data)) and (data[i] & 0xC0) == 0x80:
        i += 1
    return i


class FileRing:
    """A capture file bounded by head + tail bytes (see the module docstring)."""

    def __init__(self, fd, limit=None):
        self.fd = fd
        self.head, self.tail = split_limit(limit or LIMIT)
        self.total = 0
        self.error = None
        self._splice = hasattr(os, "splice")
        self._buf = None

    def _offset(self):
        cap = self.head + self.tail
        if self.total < cap:
            return self.total, cap - self.total
        off = self.head + (self.total - self.head) % self.tail
        return off, cap - off

    def write(self, data):
        """Append bytes to the stream (kept or not, per the limit)."""
        view = memoryview(data)
        while view:
            off, room = self._offset()
            n = min(len(view), room)
            if self.error is None:
                try:
                    _pwrite_all(self.fd, view[:n], off)
                except OSError as e:
                    self._fail(e)
            self.total += n
            view = view[n:]

    def take(self, src_fd):
        """Move what is available on pipe `src_fd` into the capture; -> bytes moved (0 at EOF).

        Raises BlockingIOError when a non-blocking pipe is empty.  Uses splice(2)
        (no copy through Python) when the kernel and filesystem allow it."""
        off, room = self._offset()
        n = min(room, CHUNK)
        if self._splice and self.error is None:
            try:
                got = os.splice(src_fd, self.fd, n, offset_dst=off)
                self.total += got
                return got
            except BlockingIOError:
                raise
            except OSError:
                self._splice = False  # e.g. EINVAL on a filesystem without splice: copy instead
        if self._buf is None:
            self._buf = bytearray(CHUNK)
        got = os.readv(src_fd, [self._buf])
        if got:
            self.write(memoryview(self._buf)[:got])
        return got

    def recent(self, n):
        """The last (at most) `n` bytes written so far, in order, while the run goes on: what a
        progress note quotes. Empty if the capture failed."""
        if self.error is not None or self.total == 0:
            return b""
        cap = self.head + self.tail
        if self.total <= cap:
            start = max(0, self.total - n)
            return os.pread(self.fd, self.total - start, start)
        end = self.head + (self.total - self.head) % self.tail  # where the next byte goes
        n = min(n, self.tail)
        newer = end - self.head
        if newer >= n:
            return os.pread(self.fd, n, end - n)
        older = n - newer
        return os.pread(self.fd, older, cap - older) + os.pread(self.fd, newer, self.head)

    def _fail(self, e):
        # Out of space (or quota) mid-run: keep what is intact, declare the rest elided.
        self.error = "%s: %s" % (type(e).__name__, e.strerror or e)
        self._intact = min(self.total, self.head)

    def finish(self):
        """Put the file in its final form; -> Kept."""
        fd = self.fd
        if self.error is not None:
            return cut_short(fd, self._intact, self.total, self.error)
        if self.total <= self.head + self.tail:
            return Kept(self.total, self.total)
        k = (self.total - self.head) % self.tail
        ring = os.pread(fd, self.tail, self.head)
        data = ring[k:] + ring[:k]
        del ring
        data = data[tail_start(data):]
        elided = self.total - self.head - len(data)
        lead = b"" if _last_byte(fd, self.head) == b"\n" else b"\n"
        note = lead + marker("output", self.total, elided, self.head, len(data))
        _pwrite_all(fd, note + data, self.head)
        os.ftruncate(fd, self.head + len(note) + len(data))
        return Kept(self.total, self.head, len(note), len(data), elided)


def cut_short(fd, keep, total, error):
    """End a capture that could not be completed after its first `keep` (intact) bytes; -> Kept."""
    try:
        os.ftruncate(fd, keep)
        lead = b"" if keep == 0 or _last_byte(fd, keep) == b"\n" else b"\n"
        note = lead + marker("output", total, total - keep, keep, 0)
        _pwrite_all(fd, note, keep)
        return Kept(total, keep, len(note), 0, total - keep, error)
    except OSError:
        try:
            os.ftruncate(fd, keep)
        except OSError:
            pass
        return Kept(total, keep, 0, 0, total - keep, error)


class MemoryHeadTail:
    """The same head + tail policy in memory (for the view a slicer prints)."""

    def __init__(self, limit):
        self.head_cap, self.tail_cap = split_limit(limit)
        self.head = bytearray()
        self.tail = []
        self.tail_len = 0
        self.total = 0

    def write(self, data):
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(bytes(data))
        self.tail_len += len(data)
        while self.tail_len - len(self.tail[0]) >= self.tail_cap:
            self.tail_len -= len(self.tail.pop(0))

    def finish(self, noun="view"):
        """-> (bytes, Kept)."""
        if not self.tail:
            return bytes(self.head), Kept(self.total, len(self.head))
        data = b"".join(self.tail)[-self.tail_cap:]
        self.tail = []
        if self.total <= self.head_cap + self.tail_cap:
            return bytes(self.head) + data, Kept(self.total, self.total)
        data = data[tail_start(data):]
        elided = self.total - len(self.head) - len(data)
        lead = b"" if self.head.endswith(b"\n") else b"\n"
        note = lead + marker(noun, self.total, elided, len(self.head), len(data))
        return bytes(self.head) + note + data, Kept(self.total, len(self.head), len(note), len(data), elided)


def _last_byte(fd, end):
    return os.pread(fd, 1, end - 1) if end > 0 else b""


def _pwrite_all(fd, data, offset):
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view = view[n:]
        offset += n
