"""The raw output as a digest quotes it (Source) and the hints that point into it (HintRef).

A leaf of reflex.digest: the renderer and the layout, census and detail planners all
read a Source and make HintRefs, and this module imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from blake3 import blake3

from reflex.address import B3_HEX, format_hint, format_lines, format_test, is_line_aligned, lines_of_span
from reflex.digest.facts import Span
from reflex.digest.neutralize import clean_line, looks_like_control
from reflex.digest.redact import private_key_lines, redact_line
from reflex.digest.text import Output


@dataclass(frozen=True)
class HintRef:
    """A hint printed in a digest: its address, the BLAKE3 prefix and the byte span it covers."""

    address: str
    b3: str
    span: Span

    @property
    def command(self) -> str:
        return format_hint(self.address, self.b3)


class Kept(Protocol):
    """What an elided capture kept (a reflex.shim.capture.Kept; a protocol, since digest
    imports only the top level)."""

    @property
    def total(self) -> int: ...
    @property
    def head(self) -> int: ...
    @property
    def tail(self) -> int: ...
    @property
    def elided(self) -> int: ...


class Source:
    """The raw output as the renderer quotes it: cleaned, redacted lines and hints into its bytes."""

    def __init__(self, raw: bytes, handle: str, cwd: str | None = None):
        self.raw = raw
        self.handle = handle
        self.kept: Kept | None = None  # a reflex.shim.capture.Kept when raw is the kept part of an elided output
        self.counted: int | None = None  # bytes the raw token count covers, when fewer than raw
        # Paths under the command's directory are shown relative to it (display only).
        self.cwd = cwd.rstrip("/") + "/" if cwd and cwd.startswith("/") and cwd != "/" else None
        self.out = Output.of(raw)
        self._secret_lines = (
            private_key_lines(self.out.lines) if b"PRIVATE KEY" in raw else set()
        )
        self._clean: dict[int, str] = {}

    def line(self, i: int) -> str:
        """Line i (0-based) as shown to the agent."""
        s = self._clean.get(i)
        if s is None:
            if i in self._secret_lines:
                s = "[REDACTED:private-key]"
            else:
                s = clean_line(redact_line(self.out.lines[i]))
            self._clean[i] = s
        return s

    def lines(self, i: int, j: int) -> list[str]:
        return [self.line(k) for k in range(i, j)]

    def line_range(self, span: Span) -> tuple[int, int]:
        """0-based half-open line indexes covering a byte span."""
        a, b = lines_of_span(self.out.starts, span, len(self.raw))
        if span[0] >= span[1]:
            return (a - 1, a - 1)
        return (a - 1, b)

    def hint(self, span: Span, test_id: str | None = None) -> HintRef:
        """A hint for exactly these bytes: an L-range if line-aligned, else the test id."""
        start, end = span
        b3 = blake3(self.raw[start:end]).hexdigest()[:B3_HEX]
        if is_line_aligned(self.raw, span):
            first, last = lines_of_span(self.out.starts, span, len(self.raw))
            return HintRef(format_lines(self.handle, first, last), b3, span)
        if test_id and not looks_like_control(test_id) and "\n" not in test_id:
            return HintRef(format_test(self.handle, test_id), b3, span)
        # Widen to whole lines: an L-range can only name whole lines.
        a, b = self.line_range(span)
        wide = self.out.span(a, max(b, a + 1))
        b3 = blake3(self.raw[wide[0] : wide[1]]).hexdigest()[:B3_HEX]
        first, last = lines_of_span(self.out.starts, wide, len(self.raw))
        return HintRef(format_lines(self.handle, first, last), b3, wide)
