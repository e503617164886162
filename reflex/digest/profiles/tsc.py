"""tsc: type errors in both output styles, and the `Found N errors` count.

`file(line,col): error TS1234: msg` (--pretty false, and any non-TTY run) and
`file:line:col - error TS1234: msg` followed by a code frame (--pretty).
Indented lines after a diagnostic continue its message chain; they belong
to its span.  The error count comes only from tsc's `Found N errors` line.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_PLAIN = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning|message) (?P<code>TS\d+): (?P<msg>.*)$")
_PRETTY = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning|message) (?P<code>TS\d+): (?P<msg>.*)$")
# `Found 6 errors in 2 files.`, `Found 2 errors in the same file, starting at: src/a.ts:3`,
# `Found 1 error in src/a.ts:3` (one file), or a bare `Found 3 errors.` (--pretty false).
_FOUND = re.compile(r"^Found (?P<n>\d+) errors?(?: in (?:(?P<f>\d+) files|(?P<same>the same file)|(?P<one>\S+:\d+)).*)?\.?$")
_GLOBAL = re.compile(r"^(?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$")


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)
    diags: list[Diagnostic] = []
    counts = Counts()
    pretty = False
    starts: list[int] = []
    found = False
    for i, s in enumerate(lines):
        m = _PLAIN.match(s) or _PRETTY.match(s) or _GLOBAL.match(s)
        if m:
            pretty = pretty or bool(_PRETTY.match(s))
            gd = m.groupdict()
            diags.append(Diagnostic(file=gd.get("file"), line=int(gd["line"]) if gd.get("line") else None,
                                    col=int(gd["col"]) if gd.get("col") else None, code=m["code"],
                                    severity=m["sev"], message=one_line(m["msg"])))
            starts.append(i)
            continue
        mf = _FOUND.match(s)
        if mf:
            files = int(mf["f"]) if mf["f"] else 1 if (mf["same"] or mf["one"]) else None
            counts = Counts(errors=int(mf["n"]), files=files)
            found = True
            starts.append(i)
    if not diags and not found:
        return None
    for k, d in enumerate(diags):
        a = starts[k]
        b = starts[k + 1] if k + 1 < len(starts) else n
        # A diagnostic owns its continuation lines (and, pretty, its code frame) up to the next one.
        while b > a + 1 and not lines[b - 1].strip():
            b -= 1
        if not pretty:
            b = a + 1
            while b < n and lines[b].startswith("  ") and not (_PLAIN.match(lines[b]) or _PRETTY.match(lines[b])):
                b += 1
        d.span = out.span(a, b)
    return runner.Parsed(format="pretty" if pretty else "text", counts=counts, diagnostics=diags)


PROFILE = runner.bind("tsc", 2, parse, detect=(runner.head(200, _PLAIN, _PRETTY), runner.tail(20, _FOUND)))
