"""ruff check: full (default), concise, grouped, --statistics and JSON output formats.

full: `CODE [*] message` then ` --> file:line:col` and a code frame up to the
next diagnostic; concise: `file:line:col: CODE [*] message`; grouped: a
`file:` line, then `  line:col CODE [*] message` rows; json: an array of
objects with code, message, filename and location.  --statistics prints no
locations at all, only `N<TAB>CODE<TAB>[*] rule-name` rows: each becomes a
note stating the code and its count (the digest cannot name locations the
output never had, and says so).  The count is ruff's
own `Found N errors.`; "All checks passed!" is ruff's verdict, quoted, never
inferred from an absence of findings.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.jsonspan import load_document, object_spans
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_CONCISE = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+[0-9]+|[a-z-]+) (?:\[\*\] )?(?P<msg>.*)$")
_HEAD = re.compile(r"^(?P<code>[A-Z]+[0-9]+|[a-z][a-z-]+) (?:\[\*\] )?(?P<msg>\S.*)$")
_ARROW = re.compile(r"^\s*--> (?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+)$")
_GROUP_FILE = re.compile(r"^(?P<file>[^\s:][^:]*):$")
_GROUP_ROW = re.compile(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<code>[A-Z]+[0-9]+|[a-z][a-z-]+) (?:\[\*\] )?(?P<msg>.*)$")
_STAT = re.compile(r"^\s*(?P<n>\d+)\t(?P<code>[A-Z]+[0-9]+|[a-z][a-z-]+)\s*\t\[(?P<fix>[* ])\] (?P<name>\S.*)$")
_FOUND = re.compile(r"^Found (?P<n>\d+) errors?\b")
_PASSED = re.compile(r"^All checks passed!$")
_FIXABLE = re.compile(r"^\[\*\] (?P<n>\d+) fixable with")


def parse(out: Output) -> runner.Parsed | None:
    parsed = _json(out)
    if parsed is not None:
        return parsed
    lines = out.lines
    n = len(lines)
    diags: list[Diagnostic] = []
    starts: list[int] = []
    counts = Counts()
    verdict = False
    fmt = "full"
    group_file = None
    fixable = None
    stats: list[str] = []
    for i, s in enumerate(lines):
        mg = _GROUP_FILE.match(s)
        if mg:
            group_file = mg["file"]
            continue
        mr = _GROUP_ROW.match(s) if group_file else None
        if mr:
            fmt = "grouped"
            diags.append(Diagnostic(file=group_file, line=int(mr["line"]), col=int(mr["col"]), code=mr["code"],
                                    message=one_line(mr["msg"]), span=out.span(i, i + 1)))
            continue
        ms = _STAT.match(s)
        if ms:
            fmt = "statistics"
            fix = ", fixable" if ms["fix"] == "*" else ""
            stats.append(f"{ms['code']} ×{ms['n']} ({ms['name'].strip()}{fix})")
            continue
        mc = _CONCISE.match(s)
        if mc:
            fmt = "concise"
            diags.append(Diagnostic(file=mc["file"], line=int(mc["line"]), col=int(mc["col"]), code=mc["code"],
                                    message=one_line(mc["msg"]), span=out.span(i, i + 1)))
            continue
        mh = _HEAD.match(s)
        if mh and i + 1 < n:
            ma = _ARROW.match(lines[i + 1])
            if ma:
                diags.append(Diagnostic(file=ma["file"], line=int(ma["line"]), col=int(ma["col"]), code=mh["code"],
                                        message=one_line(mh["msg"])))
                starts.append(i)
                continue
        mf = _FOUND.match(s)
        if mf:
            counts = Counts(errors=int(mf["n"]))
            verdict = True
            starts.append(i)
        elif _PASSED.match(s):
            counts = Counts(errors=0)
            verdict = True
        elif mf := _FIXABLE.match(s):
            fixable = int(mf["n"])
    if not verdict and not diags and not stats:
        return None
    if fixable is not None:
        counts.other["fixable"] = fixable
    notes = []
    if stats:
        notes = ["ruff --statistics printed counts by code, no locations: " + ", ".join(stats)]
    if fmt == "full":
        for k, d in enumerate(diags):
            a = starts[k]
            b = starts[k + 1] if k + 1 < len(starts) else n
            while b > a + 1 and not lines[b - 1].strip():
                b -= 1
            d.span = out.span(a, b)
    return runner.Parsed(format=fmt, counts=counts, diagnostics=diags, notes=notes)


def _json(out: Output) -> runner.Parsed | None:
    found = load_document(out.raw, (b"[\n  {", b"[{", b"[]"))
    if found is None:
        return None
    where, doc = found
    if not isinstance(doc, list) or (doc and not (isinstance(doc[0], dict) and "code" in doc[0])):
        return None
    spans = object_spans(out.raw, where[0], where[1], 2)
    exact = len(spans) == len(doc)
    diags = []
    for k, item in enumerate(doc):
        loc = item.get("location") or {}
        diags.append(Diagnostic(file=item.get("filename"), line=loc.get("row"), col=loc.get("column"),
                                code=item.get("code"), message=one_line(str(item.get("message", ""))),
                                span=spans[k] if exact else where))
    return runner.Parsed(format="json", counts=Counts(errors=len(doc)), diagnostics=diags)


PROFILE = runner.bind("ruff", 2, parse, detect=(runner.tail(5, _FOUND, _PASSED),))
