"""vite build (vite 8, rolldown): `[CODE] message` errors with their `╭─[ file:line:col ]` frames.

`vite build` prints its progress (`✓ 8 modules transformed.`), then `✗ Build failed in 117ms`,
`Build failed with 3 errors:` and one block per error: `[UNRESOLVED_IMPORT] Could not resolve
'./currency.js' in src/format.js`, a frame headed `╭─[ src/format.js:2:27 ]` (1-based column),
and rolldown's help; the JavaScript stack of the build call follows and is not a finding.  The
code (UNRESOLVED_IMPORT, PARSE_ERROR, MISSING_EXPORT, …) is the error's kind.  Other vite
versions (rollup's `[vite]: Rollup failed to resolve import …`) are not read here: they go to
the generic profile.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_ERROR = re.compile(r"^\[(?P<code>[A-Z][A-Z_]+)\] (?P<msg>.+)$")
_FRAME = re.compile(r"^\s*╭─\[ (?P<file>\S+?):(?P<line>\d+):(?P<col>\d+) \]$")
_FAILED = re.compile(r"^Build failed with (?P<n>\d+) errors?:$")
_TRANSFORMED = re.compile(r"^✓ (?P<n>\d+) modules? transformed\.$")
_BUILDING = re.compile(r"^vite v(?P<version>\d[\w.-]*) building ")
_STACK = re.compile(r"^\s+at ")


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format=None)
    other: dict[str, int] = {}
    errors = None
    for i, s in enumerate(lines):
        me = _ERROR.match(s)
        if me:
            end = runner.block_end(lines, i, lambda x: bool(_ERROR.match(x) or _STACK.match(x)))
            frame = next((m for m in map(_FRAME.match, lines[i + 1:end]) if m), None)
            parsed.diagnostics.append(Diagnostic(
                file=frame["file"] if frame else None, line=int(frame["line"]) if frame else None,
                col=int(frame["col"]) if frame else None, code=me["code"], message=one_line(me["msg"]),
                span=out.span(i, end)))
            continue
        mf = _FAILED.match(s)
        if mf:
            errors = int(mf["n"])
            parsed.summary = out.span(i, i + 1)
            continue
        mt = _TRANSFORMED.match(s)
        if mt:
            other["modules transformed"] = int(mt["n"])
            continue
        mv = _BUILDING.match(s)
        if mv:
            parsed.tool_version = mv["version"]
    if parsed.tool_version is None and not parsed.diagnostics:
        return None
    parsed.counts = Counts(errors=errors, other=other)
    return parsed


PROFILE = runner.bind("vite", 1, parse, detect=(_BUILDING, _FAILED))
