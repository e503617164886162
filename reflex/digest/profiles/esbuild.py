"""esbuild: its messages (`✘ [ERROR] text`, `▲ [WARNING] text [id]`) and their locations.

Each message is a header, a blank line, then `    file:line:col:` and a code frame; notes
("The original key "id" is here:") follow with locations of their own, which belong to the message
and are not findings.  The column is printed as esbuild counts it (0-based).  Warnings carry their
id in brackets (`[duplicate-object-key]`: what `--log-override:ID=` takes); errors carry none.  The
run ends with `1 warning and 3 errors` (or `3 errors`, `1 warning`).
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

# ✘/▲ in a UTF-8 terminal; X/! where esbuild falls back to ASCII.
_HEAD = re.compile(r"^(?:✘|▲|X|!) \[(?P<sev>ERROR|WARNING)\] (?P<text>.+?)(?: \[(?P<id>[\w-]+)\])?$")
_WHERE = re.compile(r"^    (?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+):$")
_TOTAL = re.compile(r"^(?:(?P<w>\d+) warnings?)?(?: and )?(?:(?P<e>\d+) errors?)?$")


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format=None)
    for i, s in enumerate(lines):
        mh = _HEAD.match(s)
        if mh:
            end = runner.block_end(lines, i, lambda x: bool(_HEAD.match(x) or (x and not x[0].isspace())))
            where = next((m for m in map(_WHERE.match, lines[i + 1:end]) if m), None)
            parsed.diagnostics.append(Diagnostic(
                file=where["file"] if where else None, line=int(where["line"]) if where else None,
                col=int(where["col"]) if where else None, code=mh["id"],
                severity="error" if mh["sev"] == "ERROR" else "warning", message=one_line(mh["text"]),
                span=out.span(i, end)))
            continue
        mt = _TOTAL.match(s)
        if s and mt and (mt["w"] or mt["e"]):
            parsed.counts = Counts(errors=int(mt["e"]) if mt["e"] else None,
                                   warnings=int(mt["w"]) if mt["w"] else None)
            parsed.summary = out.span(i, i + 1)
    if not parsed.diagnostics:
        return None
    return parsed


PROFILE = runner.bind("esbuild", 1, parse, detect=(_HEAD,))
