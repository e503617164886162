"""generic: any output no profile recognises (make, mix test, scripts, unknown runners).

It claims nothing it cannot point at: no counts, no verdict, only the exit
code the caller saw, the lines that say error/warning (repeats folded into
one template with a count), compiler-style `file:line:col: error: msg`
diagnostics, and the head and tail the renderer keeps verbatim.

Log-template folding: a line's template is the line with its numbers and
hex runs replaced by '#', so "retry 1 of 5 (0x7f3a)" and "retry 2 of 5
(0x7f3b)" fold into one entry seen twice.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Diagnostic, Facts, Highlight
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

NAME = "generic"
VERSION = 1
MAX_HIGHLIGHTS = 400

_VARYING = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-fA-F]{8,}\b|\d+(?:\.\d+)*")
_ERROR = re.compile(
    r"\b(?:errors?|fail(?:s|ed|ure|ures|ing)?|fatal|panic(?:ked)?|exception|traceback|critical"
    r"|segmentation fault|abort(?:ed)?|undefined reference|cannot|unable to|denied)\b",
    re.IGNORECASE,
)
_WARNING = re.compile(r"\bwarn(?:ing|ings)?\b|\bdeprecat\w*", re.IGNORECASE)
# "0 failures", "no errors": a summary that says nothing went wrong is not an error line.
_ZERO = re.compile(r"\b(?:0|no) (?:errors?|failures?|failed|warnings?)\b", re.IGNORECASE)
_CC_DIAG = re.compile(
    r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>error|warning|fatal error): (?P<msg>.+)$"
)


def template(line: str) -> str:
    return _VARYING.sub("#", line.strip())


def classify(line: str) -> str | None:
    """'error', 'warning' or None for one line of output."""
    if not line or len(line) > 2000:
        return None
    if _ERROR.search(line):
        if _ZERO.search(line) and not _ERROR.search(_ZERO.sub("", line)):
            return None
        return "error"
    if _WARNING.search(line):
        return None if _ZERO.search(line) and not _WARNING.search(_ZERO.sub("", line)) else "warning"
    return None


def fold(lines: list[str], first: int, last: int) -> list[tuple[int, int, str]]:
    """Runs of consecutive lines with one template in lines[first:last]: (index, run length, text)."""
    runs: list[tuple[int, int, str]] = []
    prev = None
    for i in range(first, last):
        t = template(lines[i])
        if runs and t == prev and t:
            idx, cnt, text = runs[-1]
            runs[-1] = (idx, cnt + 1, text)
        else:
            runs.append((i, 1, lines[i]))
        prev = t
    return runs


_CC_FLAG = re.compile(r"\s*\[(?P<flag>-W[\w=+-]+|-f[\w=+-]+)\]$")


# Lower-case stems every error/warning pattern contains; substring search over the whole
# text is far cheaper than a case-insensitive alternation regex on each of 100k lines.
_STEMS = ("error", "fail", "fatal", "panic", "exception", "traceback", "critical", "segmentation", "abort",
          "undefined reference", "cannot", "unable to", "denied", "warn", "deprecat")


def _candidate_lines(out: Output) -> list[int]:
    """Indexes of lines that contain an error/warning stem, in order."""
    text = "\n".join(out.lines).lower()
    if len(text) < 20_000:
        return list(range(len(out.lines)))
    offsets = []
    for stem in _STEMS:
        at = text.find(stem)
        while at != -1:
            offsets.append(at)
            at = text.find(stem, at + 1)
    if not offsets:
        return []
    # Line index of each offset by counting newlines between consecutive offsets (C speed,
    # no list of every line start: a 4 MiB output can have two million lines).
    offsets.sort()
    found: list[int] = []
    line = 0
    at = 0
    for o in offsets:
        line += text.count("\n", at, o)
        at = o
        if not found or found[-1] != line:
            found.append(line)
    return found


class GenericProfile:
    name = NAME
    version = VERSION

    def detect(self, out: Output) -> bool:
        return True

    def extract(self, raw: bytes, exit_code: int | None, command: str) -> Facts:
        out = Output.of(raw)
        highlights: dict[str, Highlight] = {}
        counts: dict[str, int] = {}
        diagnostics: list[Diagnostic] = []
        # A log repeats its lines (a 4 MiB capture of one warning is 170,000 of them): each
        # distinct line is classified once.
        seen: dict[str, tuple] = {}
        for i in _candidate_lines(out):
            s = out.lines[i]
            known = seen.get(s)
            if known is None:
                sev = classify(s)
                m = _CC_DIAG.match(s.strip()) if sev is not None else None
                known = seen[s] = (sev, m, template(s) if sev is not None else None)
            sev, m, key = known
            if sev is None:
                continue
            if m:
                msg = m["msg"]
                code = _CC_FLAG.search(msg)
                if code:
                    msg = msg[: code.start()]
                diagnostics.append(
                    Diagnostic(
                        file=m["file"], line=int(m["line"]), col=int(m["col"]) if m["col"] else None,
                        code=code["flag"] if code else None,
                        severity="warning" if m["sev"] == "warning" else "error",
                        message=one_line(msg), span=out.span(i, i + 1),
                    )
                )
            if key in highlights:
                counts[key] += 1
            elif len(highlights) < MAX_HIGHLIGHTS:
                highlights[key] = Highlight(line=i + 1, severity=sev, text=one_line(s, 300), span=out.span(i, i + 1))
                counts[key] = 1
        for key, h in highlights.items():
            h.count = counts[key]
        return Facts(
            profile=NAME,
            profile_version=VERSION,
            recognized=False,
            exit_code=exit_code,
            diagnostics=diagnostics,
            highlights=list(highlights.values()),
            total_lines=len(out.lines),
        )


PROFILE = GenericProfile()


def handover(raw: bytes, exit_code: int | None, command: str, tried: str) -> Facts:
    """Generic Facts for output the `tried` profile did not recognise."""
    facts = PROFILE.extract(raw, exit_code, command)
    facts.handed_over_from = tried
    return facts
