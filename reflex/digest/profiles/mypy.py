"""mypy: `file:line[:col]: error: message  [code]`, --pretty wrapping, and -O json.

Notes (`file:line: note: …`) continue the diagnostic before them and are not
counted.  The count is mypy's own `Found N errors in M files` line; "Success:
no issues found" is mypy's verdict, quoted, never inferred.  In -O json
columns are 0-based: they are reported 1-based like the text format.
"""

from __future__ import annotations

import json
import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>error|warning|note): (?P<msg>.*)$")
_CODE = re.compile(r"\s+\[(?P<code>[a-z][a-z0-9-]*)\]$")
_FOUND = re.compile(r"^Found (?P<n>\d+) errors? in (?P<f>\d+) files?(?: \(checked (?P<c>\d+) source files?\))?")
_CHECKED = re.compile(r"^Success: no issues found in (?P<c>\d+) source files?")
_SUCCESS = re.compile(r"^Success: no issues found")


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)
    diags: list[Diagnostic] = []
    counts = Counts()
    verdict = False
    fmt = "text"
    i = 0
    while i < n:
        s = lines[i]
        if s.startswith('{"file"'):
            d = _json_line(out, i)
            if d is not None:
                fmt = "json"
                diags.append(d)
            i += 1
            continue
        m = _DIAG.match(s)
        if m and m["sev"] != "note":
            msg = m["msg"]
            j = i + 1
            # --pretty wraps long messages onto unindented lines until the [code] suffix.
            while not _CODE.search(msg) and j < n and lines[j] and not lines[j].startswith(" ") \
                    and not _DIAG.match(lines[j]) and not _FOUND.match(lines[j]):
                msg += " " + lines[j].strip()
                j += 1
            while j < n and (lines[j].startswith(" ") or ((mn := _DIAG.match(lines[j])) is not None
                                                            and mn["sev"] == "note" and mn["file"] == m["file"]
                                                            and mn["line"] == m["line"])):
                j += 1
            mc = _CODE.search(msg)
            code = mc["code"] if mc else None
            if mc:
                msg = msg[: mc.start()]
            diags.append(Diagnostic(file=m["file"], line=int(m["line"]), col=int(m["col"]) if m["col"] else None,
                                    code=code, severity=m["sev"], message=one_line(msg), span=out.span(i, j)))
            i = j
            continue
        mf = _FOUND.match(s)
        if mf:
            counts = Counts(errors=int(mf["n"]), files=int(mf["f"]))
            if mf["c"]:
                counts.other["source files checked"] = int(mf["c"])
            verdict = True
        elif _SUCCESS.match(s):
            counts = Counts(errors=0)
            mc = _CHECKED.match(s)
            if mc:
                counts.other["source files checked"] = int(mc["c"])
            verdict = True
        i += 1
    if not verdict and not diags:
        return None
    if fmt == "json" and not verdict:
        counts = Counts(errors=sum(1 for d in diags if d.severity == "error"))
    return runner.Parsed(format=fmt, counts=counts, diagnostics=diags)


def _json_line(out: Output, i: int) -> Diagnostic | None:
    try:
        item = json.loads(out.lines[i])
    except ValueError:
        return None
    if not isinstance(item, dict) or item.get("severity") == "note":
        return None
    col = item.get("column")
    return Diagnostic(file=item.get("file"), line=item.get("line"), col=col + 1 if isinstance(col, int) and col >= 0 else None,
                      code=item.get("code"), severity=str(item.get("severity", "error")),
                      message=one_line(str(item.get("message", ""))), span=out.span(i, i + 1))


PROFILE = runner.bind("mypy", 2, parse, detect=(runner.tail(5, _FOUND, _SUCCESS),))
