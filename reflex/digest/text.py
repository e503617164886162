"""One raw output seen as lines: decoded text for parsing, byte offsets for spans.

Profiles parse decoded, ANSI-stripped lines (terminal colour codes carry no
facts) and report spans in raw bytes via `span(i, j)`, so every span starts at
a line start and ends after a newline: a UTF-8 boundary and an L-range address.
Invalid UTF-8 decodes to U+FFFD without shifting lines (b"\\n" is never part
of a multi-byte sequence).  A 5 MB output is decoded once per digest: the last
two Output objects are cached by content (extract and render share one).
"""

from __future__ import annotations

import re
from functools import lru_cache

from reflex.address import bisect_starts, line_starts

# CSI (colours, cursor moves), OSC (titles, hyperlinks; never across a newline), two-byte escapes.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")


def strip_ansi(s: str) -> str:
    return ANSI_RE.sub("", s) if "\x1b" in s else s


def _terminal_line(s: str) -> str:
    # A carriage return redraws the line: what a terminal finally shows is the last segment.
    if "\r" not in s:
        return s
    parts = [p for p in s.split("\r") if p]
    return parts[-1] if parts else ""


class Output:
    __slots__ = ("raw", "lines", "starts")

    def __init__(self, raw: bytes):
        self.raw = raw
        self.starts = line_starts(raw)
        text = strip_ansi(raw.decode("utf-8", errors="replace"))
        lines = text.split("\n")
        if raw.endswith(b"\n"):
            lines.pop()
        if not raw:
            lines = []
        self.lines = [_terminal_line(s) for s in lines] if "\r" in text else lines

    @staticmethod
    def of(raw: bytes) -> "Output":
        return _cached(raw)

    def __len__(self) -> int:
        return len(self.lines)

    def span(self, i: int, j: int) -> tuple[int, int]:
        """Byte span of lines i..j-1 (0-based, half-open); empty at the end if i >= len."""
        n = len(self.starts)
        if i >= n or j <= i:
            at = self.starts[i] if i < n else len(self.raw)
            return (at, at)
        end = self.starts[j] if j < n else len(self.raw)
        return (self.starts[i], end)

    def line_index(self, offset: int) -> int:
        """0-based index of the line containing byte `offset`."""
        return max(bisect_starts(self.starts, offset) - 1, 0)


@lru_cache(maxsize=2)
def _cached(raw: bytes) -> Output:
    return Output(raw)
