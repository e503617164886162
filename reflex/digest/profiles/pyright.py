"""pyright: `  path:line:col - severity: message` under a file line, and --outputjson.

A message may go on over more indented lines (the elaboration: "Type X is not
assignable to type Y"); the rule (`(reportX)`) ends the last of them.  Syntax
errors have no rule.  The count is pyright's own `N errors, M warnings, K
informations` line (the JSON's summary); informations are notes here.  pyright
checks a file that does not parse as far as it can, so it is not named apart.
Lines and columns are 1-based in the text; the JSON's 0-based ones are
reported 1-based like the text.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.jsonspan import report_items
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_DIAG = re.compile(r"^  (?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning|information): (?P<msg>.*)$")
_RULE = re.compile(r"\s*\((?P<rule>report[A-Za-z]+)\)$")
_SUMMARY = re.compile(r"^(?P<e>\d+) errors?, (?P<w>\d+) warnings?, (?P<i>\d+) informations?\b")
_SEVERITY = {"error": "error", "warning": "warning", "information": "note"}
_JSON_PREFIXES = (b'{\n    "version"', b'{"version"')


def parse(out: Output) -> runner.Parsed | None:
    parsed = _json(out)
    if parsed is not None:
        return parsed
    lines = out.lines
    n = len(lines)
    diags: list[Diagnostic] = []
    counts = Counts()
    verdict = False
    i = 0
    while i < n:
        s = lines[i]
        m = _DIAG.match(s)
        if m:
            j = i + 1
            while j < n and lines[j].startswith("  ") and not _DIAG.match(lines[j]):
                j += 1
            msg = m["msg"]
            mr = _RULE.search(msg if j == i + 1 else lines[j - 1])
            if mr and j == i + 1:
                msg = msg[: mr.start()]
            diags.append(Diagnostic(file=m["file"], line=int(m["line"]), col=int(m["col"]),
                                    code=mr["rule"] if mr else None, severity=_SEVERITY[m["sev"]],
                                    message=one_line(msg), span=out.span(i, j)))
            i = j
            continue
        ms = _SUMMARY.match(s)
        if ms:
            counts = Counts(errors=int(ms["e"]), warnings=int(ms["w"]), other={"informations": int(ms["i"])})
            verdict = True
        i += 1
    if not verdict:
        return None
    return runner.Parsed(format="text", counts=counts, diagnostics=diags)


def _json(out: Output) -> runner.Parsed | None:
    found = report_items(out.raw, _JSON_PREFIXES, "generalDiagnostics")
    if found is None:
        return None
    doc, items, spans = found
    diags = []
    for k, d in enumerate(items):
        start = (d.get("range") or {}).get("start") or {}
        line, col = start.get("line"), start.get("character")
        diags.append(Diagnostic(file=d.get("file"), line=line + 1 if isinstance(line, int) else None,
                                col=col + 1 if isinstance(col, int) else None, code=d.get("rule"),
                                severity=_SEVERITY.get(str(d.get("severity")), "error"),
                                message=one_line(str(d.get("message", "")).split("\n")[0]),
                                span=spans[k]))
    summary = doc.get("summary") or {}
    counts = Counts()
    if summary:
        counts = Counts(errors=summary.get("errorCount"), warnings=summary.get("warningCount"),
                        other={"informations": summary.get("informationCount", 0),
                               "files analyzed": summary.get("filesAnalyzed", 0)})
    return runner.Parsed(format="json", counts=counts, diagnostics=diags)


def _json_report(out: Output) -> bool:
    return any(p in out.raw[:4096] for p in _JSON_PREFIXES) and b'"generalDiagnostics"' in out.raw


PROFILE = runner.bind("pyright", 1, parse, detect=(runner.tail(5, _SUMMARY), _json_report))
