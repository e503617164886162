"""pylint: text/colorized (`path:line:col: CODE: message (symbol)` under `************* Module m`
headers), parseable (`path:line: [CODE(symbol), obj] message`), and the -ry report tables.

The score line (`Your code has been rated at x/10`) is pylint's verdict: kept
verbatim as the summary.  Severities come from the message id's letter:
E/F error, W warning, C/R/I note.  The report's "Messages by category" table
is a count pylint printed: stated under its own words.  A `syntax-error`
(E0001) means pylint checked nothing else in that file: named NOT LINTED.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.profiles import lintline, runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_TEXT = re.compile(r"^(?P<code>[CRWEFI]\d{4}): (?P<msg>.*?)(?: \((?P<symbol>[a-z][a-z0-9-]*)\))?$")
_PARSEABLE = re.compile(r"^\[(?P<code>[CRWEFI]\d{4})\((?P<symbol>[a-z][a-z0-9-]*)\), [^\]]*\] (?P<msg>.*)$")
_MODULE = re.compile(r"^\*{13} Module (?P<module>\S+)")
_RATED = re.compile(r"^Your code has been rated at (?P<score>-?[\d.]+)/10")
_CATEGORY = re.compile(r"^\|(?P<type>convention|refactor|warning|error|fatal|info)\s*\|(?P<n>\d+)\s*\|")
_STATEMENTS = re.compile(r"^(?P<n>\d+) statements analysed\.$")
_SEVERITY = {"E": "error", "F": "error", "W": "warning", "C": "note", "R": "note", "I": "note"}


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    diags: list[Diagnostic] = []
    summary = None
    notes: list[str] = []
    fmt = None
    categories: dict[str, int] = {}
    statements = None
    modules = 0
    for i, s in enumerate(lines):
        m = lintline.LOCATION.match(s)
        if m:
            mt = _TEXT.match(m["rest"]) if m["col"] else None
            mp = _PARSEABLE.match(m["rest"]) if not m["col"] else None
            hit = mt or mp
            if hit:
                fmt = fmt or ("parseable" if mp else "text")
                diags.append(Diagnostic(file=m["file"], line=int(m["line"]), col=int(m["col"]) if m["col"] else None,
                                        code=hit["code"], severity=_SEVERITY[hit["code"][0]],
                                        message=one_line(hit["msg"]), span=out.span(i, i + 1)))
                continue
        if _MODULE.match(s):
            modules += 1
        elif _RATED.match(s):
            summary = out.span(i, i + 1)
            notes.append("pylint: " + s.strip())
        elif mc := _CATEGORY.match(s):
            categories[mc["type"]] = int(mc["n"])
        elif ms := _STATEMENTS.match(s):
            statements = int(ms["n"])
    if not diags and (summary is None or modules):
        return None  # module headers with no message we can read: a format we do not know (msvs, a template)
    counts = Counts()
    if categories:
        counts = Counts(errors=categories.get("error", 0) + categories.get("fatal", 0),
                        warnings=categories.get("warning", 0),
                        other={k: v for k, v in categories.items() if k not in ("error", "warning", "fatal")})
        if "fatal" in categories:
            counts.other["fatal"] = categories["fatal"]
    if statements is not None:
        counts.other["statements analysed"] = statements
    return runner.Parsed(format=(fmt or "text") + ("+reports" if categories else ""), counts=counts,
                         diagnostics=diags, summary=summary, notes=notes,
                         build_errors=lintline.not_linted(diags, lambda d: d.code == "E0001"))


PROFILE = runner.bind("pylint", 1, parse, detect=(runner.tail(5, _RATED),))
