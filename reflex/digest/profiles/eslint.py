"""eslint: stylish (file header + `line:col severity message rule` rows), compact, unix and -f json.

compact: `file: line L, col C, Error - message (rule)`; unix: `file:L:C: message
[Error/rule]`; both end with `N problems`.  The problem count comes from
eslint's own `✖ N problems (E errors, W warnings)` / `N problems` line (or the
JSON's per-file counts); a run that printed none of them and no findings is
not recognised (it is not "no problems").

A fatal parse error (`Parsing error: …`, no rule) means eslint linted nothing
else in that file: besides the diagnostic, the file is a build error labelled
NOT LINTED, so "1 error" cannot read as "one small problem".
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Diagnostic
from reflex.digest.jsonspan import load_document, object_spans
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_ROW = re.compile(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<sev>error|warning)\s+(?P<rest>.+?)\s*$")
_RULE = re.compile(r"^(?P<msg>.*\S)\s{2,}(?P<rule>[@\w/.\-]+)$")
_PROBLEMS = re.compile(r"^✖ (?P<n>\d+) problems? \((?P<e>\d+) errors?, (?P<w>\d+) warnings?\)")
_FILE = re.compile(r"^(?P<file>[^\s].*\S)$")
_COMPACT = re.compile(r"^(?P<file>\S.*?): line (?P<line>\d+), col (?P<col>\d+), (?P<sev>Error|Warning) - (?P<msg>.*?)"
                      r"(?: \((?P<rule>[@\w/.\-]+)\))?$")
_UNIX = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*) \[(?P<sev>Error|Warning)(?:/(?P<rule>[@\w/.\-]+))?\]$")
_PROBLEMS_PLAIN = re.compile(r"^(?P<n>\d+) problems?$")
_PARSING = "Parsing error:"


def parse(out: Output) -> runner.Parsed | None:
    parsed = _json(out) or _one_per_line(out) or _stylish(out)
    return _not_linted(parsed) if parsed is not None else None


def _json_report(out: Output) -> bool:
    return out.raw.startswith(b'[{"filePath"')


def _stylish(out: Output) -> runner.Parsed | None:
    """stylish (the default): a file line, then its `line:col severity message rule` rows."""
    lines = out.lines
    diags: list[Diagnostic] = []
    counts = Counts()
    file = None
    summary = False
    for i, s in enumerate(lines):
        m = _ROW.match(s)
        if m and file is not None:
            rest = m["rest"]
            mr = _RULE.match(rest)
            msg, rule = (mr["msg"], mr["rule"]) if mr else (rest, None)
            diags.append(Diagnostic(file=file, line=int(m["line"]), col=int(m["col"]), code=rule,
                                    severity=m["sev"], message=one_line(msg), span=out.span(i, i + 1)))
            continue
        mp = _PROBLEMS.match(s)
        if mp:
            counts = Counts(errors=int(mp["e"]), warnings=int(mp["w"]), total=int(mp["n"]))
            summary = True
            continue
        if s and not s.startswith(" ") and _FILE.match(s):
            file = s.strip()
    if not summary and not diags:
        return None
    return runner.Parsed(format="stylish", counts=counts, diagnostics=diags)


def _one_per_line(out: Output) -> runner.Parsed | None:
    """compact and unix: one finding per line, the file on each, then `N problems`."""
    diags: list[Diagnostic] = []
    total = None
    fmt = None
    for i, s in enumerate(out.lines):
        m = _COMPACT.match(s)
        if m:
            fmt = "compact"
        else:
            m = _UNIX.match(s)
            if m:
                fmt = fmt or "unix"
        if m:
            diags.append(Diagnostic(file=m["file"], line=int(m["line"]), col=int(m["col"]), code=m["rule"],
                                    severity=m["sev"].lower(), message=one_line(m["msg"].rstrip(".")),
                                    span=out.span(i, i + 1)))
            continue
        mp = _PROBLEMS_PLAIN.match(s)
        if mp:
            total = int(mp["n"])
    if total is None:
        return None
    errors = sum(1 for d in diags if d.severity == "error")
    counts = Counts(total=total, errors=errors, warnings=len(diags) - errors) if len(diags) == total else Counts(total=total)
    return runner.Parsed(format=fmt or "compact", counts=counts, diagnostics=diags)


def _not_linted(parsed: runner.Parsed) -> runner.Parsed:
    for d in parsed.diagnostics:
        if d.code is None and d.message.startswith(_PARSING):
            parsed.build_errors.append(BuildError(where=d.file, label="NOT LINTED", span=d.span,
                                                  message=f"{d.message} (line {d.line}); no rule ran on this file"))
    return parsed


def _json(out: Output) -> runner.Parsed | None:
    found = load_document(out.raw, (b'[{"filePath"', b'[\n  {\n    "filePath"'))
    if found is None:
        return None
    where, doc = found
    spans = object_spans(out.raw, where[0], where[1], 3)
    k = 0
    diags: list[Diagnostic] = []
    errors = warnings = 0
    for f in doc:
        errors += int(f.get("errorCount", 0))
        warnings += int(f.get("warningCount", 0))
        for key, value in f.items():  # arrays of objects at depth 3, in printed order
            if not isinstance(value, list):
                continue
            for item in value:
                if not isinstance(item, dict):
                    continue
                span = spans[k] if k < len(spans) else where
                k += 1
                if key != "messages":
                    continue
                diags.append(Diagnostic(file=f.get("filePath"), line=item.get("line"), col=item.get("column"),
                                        code=item.get("ruleId"), severity="error" if item.get("severity") == 2 else "warning",
                                        message=one_line(str(item.get("message", ""))), span=span))
    if k != len(spans):
        for d in diags:
            d.span = where
    return runner.Parsed(format="json", counts=Counts(errors=errors, warnings=warnings, total=errors + warnings),
                         diagnostics=diags)


PROFILE = runner.bind("eslint", 2, parse, detect=(runner.tail(10, _PROBLEMS), _json_report))
