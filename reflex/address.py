"""Addresses into stored output, and the hints that carry them.  STDLIB-ONLY.

This module runs on the `ctx get` fast path, so it imports only the standard
library; hashing (BLAKE3) happens in the daemon, not here.

Handles and addresses
---------------------
A handle names one stored raw output: ``r:`` + the first 12 lowercase hex
digits of the BLAKE3 of the exact bytes (the blob store owns the full hash).
Three address forms select bytes of it:

    r:7f3a2c9d01ab               the whole output
    r:7f3a2c9d01ab:L120-188      lines 120..188, 1-based and inclusive
    r:7f3a2c9d01ab#<test id>     the detail block of one failing test, the id
                                 exactly as the runner printed it (pytest
                                 nodeid, go Test/sub, cargo path, jest title)
    r:7f3a2c9d01ab:B4096-70000   bytes 4096..69999 (0-based, end exclusive): how
                                 `ctx get` continues a page that had to end
                                 inside a line too long for one answer

Lines are split on b"\\n" only.  Line k covers the bytes from the start of the
line through its terminating b"\\n" (the last line may have none); a range is
therefore the half-open byte span ``line_span(raw, a, b)`` and always starts and
ends on a UTF-8 boundary.  A range that runs past the end is clamped to the last
line; one that starts past it names nothing (`ctx get` answers miss).

Hints
-----
A hint is a command the agent can run verbatim, followed by a BLAKE3 check
of the exact bytes it will return:

    ctx get r:7f3a2c9d01ab:L120-188 b3=1a2b3c4d
    ctx get 'r:7f3a2c9d01ab#tests/test_a.py::test_x[a b]' b3=9c0ffee1

``b3=`` is the first 8 lowercase hex digits of blake3(raw[start:end]) for the
span the address resolves to (for a ``#test`` address, the failure's detail
span recorded with the run).  `ctx get` accepts it as an optional second
argument and answers miss(denatured) when the stored bytes no longer hash to
it.  Addresses are shell-quoted (shlex) only when they contain characters a
shell would interpret, so the common case stays one bare word.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from itertools import accumulate

HANDLE_HEX = 12
B3_HEX = 8

HANDLE_RE = re.compile(r"r:[0-9a-f]{%d}" % HANDLE_HEX)
_ADDRESS_RE = re.compile(
    r"r:(?P<h>[0-9a-f]{%d})(?::L(?P<a>[0-9]{1,9})-(?P<b>[0-9]{1,9})|:B(?P<ba>[0-9]{1,12})-(?P<bb>[0-9]{1,12})"
    r"|#(?P<t>[^\n\r]+))?"
    % HANDLE_HEX
)
_B3_RE = re.compile(r"b3=(?P<b3>[0-9a-f]{%d,64})" % B3_HEX)
# Where our own parser sees a hint: `ctx get ` followed by an address,
# optionally quoted; the rest of the line is read with shlex.  neutralize.py
# guarantees program output never matches this.
_HINT_START_RE = re.compile(r"ctx get (?=['\"]?r:[0-9a-f]{%d})" % HANDLE_HEX)


@dataclass(frozen=True)
class Address:
    """A parsed address: kind is "whole", "lines", "bytes" or "test"."""

    handle: str  # "r:<12 hex>"
    kind: str
    first_line: int | None = None
    last_line: int | None = None
    test_id: str | None = None
    start: int | None = None  # bytes: half-open [start, end)
    end: int | None = None

    def __str__(self) -> str:
        if self.kind == "lines":
            return format_lines(self.handle, self.first_line, self.last_line)
        if self.kind == "bytes":
            return format_bytes(self.handle, self.start, self.end)
        if self.kind == "test":
            return format_test(self.handle, self.test_id)
        return self.handle


@dataclass(frozen=True)
class Hint:
    address: Address
    b3: str | None


def parse_address(s: str) -> Address | None:
    """The Address written in `s`, or None if `s` is not exactly an address."""
    m = _ADDRESS_RE.fullmatch(s)
    if m is None:
        return None
    handle = "r:" + m["h"]
    if m["a"] is not None:
        a, b = int(m["a"]), int(m["b"])
        if a < 1 or b < a:
            return None
        return Address(handle, "lines", first_line=a, last_line=b)
    if m["ba"] is not None:
        start, end = int(m["ba"]), int(m["bb"])
        if end <= start:
            return None
        return Address(handle, "bytes", start=start, end=end)
    if m["t"] is not None:
        return Address(handle, "test", test_id=m["t"])
    return Address(handle, "whole")


def parse_b3(arg: str) -> str | None:
    """The hex of a `b3=<hex>` argument, or None."""
    m = _B3_RE.fullmatch(arg.strip())
    return m["b3"] if m else None


def parse_hint(line: str) -> Hint | None:
    """The first hint (`ctx get <address> [b3=<hex>]`) written in `line`, or None."""
    m = _HINT_START_RE.search(line)
    if m is None:
        return None
    try:
        words = shlex.split(line[m.end():])
    except ValueError:
        return None
    if not words:
        return None
    addr = parse_address(words[0])
    if addr is None:
        return None
    return Hint(addr, parse_b3(words[1]) if len(words) > 1 else None)


def format_whole(handle: str) -> str:
    return handle


def format_lines(handle: str, first: int, last: int) -> str:
    return f"{handle}:L{first}-{last}"


def format_bytes(handle: str, start: int, end: int) -> str:
    return f"{handle}:B{start}-{end}"


def format_test(handle: str, test_id: str) -> str:
    return f"{handle}#{test_id}"


def format_hint(address: str, b3: str) -> str:
    """`ctx get <address> b3=<hex>`, quoting the address only when a shell would need it."""
    return f"ctx get {shlex.quote(address)} b3={b3[:B3_HEX]}"


def handle_of_hex(hexdigest: str) -> str:
    """The handle for a full BLAKE3 hex digest."""
    return "r:" + hexdigest[:HANDLE_HEX].lower()


# -- lines and byte spans ---------------------------------------------------


def count_lines(raw: bytes) -> int:
    """Number of lines in `raw` (a final line without b"\\n" counts; a trailing b"\\n" opens none)."""
    if not raw:
        return 0
    return raw.count(b"\n") + (0 if raw.endswith(b"\n") else 1)


def line_starts(raw: bytes) -> "LineStarts":
    """Byte offset where each line starts; entry k-1 is line k.  For repeated lookups."""
    return LineStarts(raw)


class LineStarts:
    """Where each line of `raw` starts, as a read-only sequence, without a list of every start.

    A 4 MiB output of one-character lines has two million lines: listing their starts
    costs ~1.5 s and ~70 MB.  This keeps the number of newlines before each block of
    BLOCK bytes (counted at C speed, a few ms); entry i is found from its block with at
    most BLOCK finds, and bisect_right(offset) is one count.
    """

    BLOCK = 1024

    def __init__(self, raw: bytes):
        self.raw = raw
        n = len(raw)
        block = self.BLOCK
        # before[k]: newlines in raw[:k * BLOCK]
        self._before = list(accumulate((raw.count(b"\n", k, k + block) for k in range(0, n, block)), initial=0))
        total = self._before[-1]
        self._len = 0 if not n else total + (0 if raw.endswith(b"\n") else 1)

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: int) -> int:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("line start index out of range")
        if i == 0:
            return 0
        # The start of line i+1 follows the i-th newline.
        from bisect import bisect_left

        k = bisect_left(self._before, i) - 1  # the block holding the i-th newline
        pos = k * self.BLOCK
        for _ in range(i - self._before[k]):
            pos = self.raw.index(b"\n", pos) + 1
        return pos

    def __iter__(self):
        if not self._len:
            return
        yield 0
        raw, n = self.raw, len(self.raw)
        at = raw.find(b"\n")
        while 0 <= at < n - 1:
            yield at + 1
            at = raw.find(b"\n", at + 1)

    def bisect_right(self, offset: int) -> int:
        """How many lines start at or before `offset` (bisect.bisect_right on the starts)."""
        if offset < 0 or not self._len:
            return 0
        return min(1 + self.raw.count(b"\n", 0, min(offset, len(self.raw))), self._len)


def bisect_starts(starts, offset: int) -> int:
    """bisect_right(starts, offset) for a LineStarts or any sorted sequence."""
    if isinstance(starts, LineStarts):
        return starts.bisect_right(offset)
    from bisect import bisect_right

    return bisect_right(starts, offset)


def line_span(raw: bytes, first: int, last: int, starts: list[int] | None = None) -> tuple[int, int]:
    """Half-open byte span of lines first..last (1-based, inclusive), clamped to the output.

    Pass `starts` (from line_starts) when resolving many ranges of one output.
    Raises ValueError for first < 1 or last < first.
    """
    if first < 1 or last < first:
        raise ValueError(f"bad line range L{first}-{last}")
    if starts is None:
        starts = line_starts(raw)
    n = len(starts)
    if first > n:
        return (len(raw), len(raw))
    start = starts[first - 1]
    end = starts[last] if last < n else len(raw)
    return (start, end)


def lines_of_span(starts: list[int] | LineStarts, span: tuple[int, int], total: int) -> tuple[int, int]:
    """The 1-based inclusive line range covering byte span [start, end) of an output of `total` bytes."""
    start, end = span
    first = bisect_starts(starts, start)
    last = bisect_starts(starts, max(start, end - 1))
    return (max(first, 1), max(last, first, 1))


# -- UTF-8 boundaries -------------------------------------------------------


def is_utf8_boundary(raw: bytes, i: int) -> bool:
    """True if offset i does not fall inside a UTF-8 multi-byte sequence."""
    if i <= 0 or i >= len(raw):
        return 0 <= i <= len(raw)
    return (raw[i] & 0xC0) != 0x80


def floor_utf8_boundary(raw: bytes | bytearray, i: int) -> int:
    """The nearest boundary at or before i (at most 3 steps back on valid UTF-8)."""
    i = max(0, min(i, len(raw)))
    steps = 0
    while 0 < i < len(raw) and (raw[i] & 0xC0) == 0x80 and steps < 3:
        i -= 1
        steps += 1
    return i


def ceil_utf8_boundary(raw: bytes | bytearray, i: int) -> int:
    """The nearest boundary at or after i."""
    i = max(0, min(i, len(raw)))
    steps = 0
    while 0 < i < len(raw) and (raw[i] & 0xC0) == 0x80 and steps < 3:
        i += 1
        steps += 1
    return i


def is_line_aligned(raw: bytes, span: tuple[int, int]) -> bool:
    """True if span starts at a line start and ends after a b"\\n" or at the end of raw."""
    start, end = span
    starts_ok = start == 0 or raw[start - 1 : start] == b"\n"
    ends_ok = end == len(raw) or raw[end - 1 : end] == b"\n"
    return starts_ok and ends_ok and start < end
