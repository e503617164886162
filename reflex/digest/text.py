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


# What a terminal does within one line: CSI sequences (group 1: parameters, group 2: the final
# byte; `K` erases), OSC and two-byte escapes (shown as nothing), carriage return, backspace.
_TERMINAL_TOKEN = re.compile(r"\x1b\[([0-?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|[\r\b]")
# Text that reports a failure, as the generic profile reads it ("0 failed" and "no errors" do not).
_FAILURE = re.compile(
    r"\b(?:errors?|fail(?:s|ed|ure|ures|ing)?|fatal|panic(?:ked)?|exception|traceback|critical"
    r"|segmentation fault|abort(?:ed)?)\b|[\u2717\u2718]",
    re.IGNORECASE,
)
_NO_FAILURE = re.compile(r"\b(?:0|no) (?:errors?|failures?|failed)\b", re.IGNORECASE)
# Between a failure that was drawn over and what the terminal finally shows: SYMBOL FOR
# CARRIAGE RETURN, so the reader sees that the line was redrawn.
REDRAWN = " \u240d "


def _terminal_line(s: str) -> str:
    """The line a terminal finally shows for `s` (carriage returns, backspaces and erase-in-line
    applied, other escapes dropped), with every drawn-over piece that reads as a failure kept
    in front of it: output that prints `FAILED x - boom\\rall good` must not read as `all good`.
    Progress bars and spinners, whose drawn-over pieces report no failure, render as on screen."""
    body = s.rstrip("\r")  # `\r\n` line ends draw nothing over the line
    if "\r" not in body and "\b" not in body:
        return strip_ansi(body)
    cells: list[str] = []
    col = 0
    pieces: list[str] = []  # text as printed, cut wherever it may have been drawn over
    piece: list[str] = []
    at = 0
    for m in _TERMINAL_TOKEN.finditer(body):
        if m.start() > at:
            col = _draw(cells, col, body[at:m.start()])
            piece.append(body[at:m.start()])
        at = m.end()
        token = m.group(0)
        if token == "\r":
            col = 0
        elif token == "\b":
            col = max(col - 1, 0)
        elif m.group(2) == "K":
            mode = m.group(1) or "0"
            if mode == "0":
                del cells[col:]
            elif mode == "1":
                cells[:col + 1] = " " * min(col + 1, len(cells))
            elif mode == "2":
                cells.clear()
        else:
            continue  # colours and the like draw nothing over the line
        if piece:
            pieces.append("".join(piece))
            piece = []
    if at < len(body):
        _draw(cells, col, body[at:])
        piece.append(body[at:])
    if piece:
        pieces.append("".join(piece))
    shown = "".join(cells).rstrip()
    hidden = []
    for text in pieces:
        text = text.strip()
        if text and text not in shown and text not in hidden and _FAILURE.search(_NO_FAILURE.sub("", text)):
            hidden.append(text)
    if not hidden:
        return shown
    return REDRAWN.join(hidden + ([shown] if shown else []))


def _draw(cells: list[str], col: int, text: str) -> int:
    """Write `text` over `cells` from column `col`, as a terminal does; -> the new column."""
    if col > len(cells):
        cells.extend(" " * (col - len(cells)))
    end = col + len(text)
    cells[col:min(end, len(cells))] = text[:max(len(cells) - col, 0)]
    if end > len(cells):
        cells.extend(text[len(cells) - col:])
    return end


class Output:
    __slots__ = ("raw", "lines", "starts")

    def __init__(self, raw: bytes):
        self.raw = raw
        self.starts = line_starts(raw)
        text = raw.decode("utf-8", errors="replace")
        redrawn = "\r" in text or "\b" in text
        # A line that redraws itself is read as the terminal shows it, erase sequences included,
        # so its escapes are interpreted before they are stripped.
        lines = text.split("\n") if redrawn else strip_ansi(text).split("\n")
        if raw.endswith(b"\n"):
            lines.pop()
        if not raw:
            lines = []
        if redrawn:
            lines = [_terminal_line(s) if ("\r" in s or "\b" in s) else strip_ansi(s) for s in lines]
        self.lines = lines

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
