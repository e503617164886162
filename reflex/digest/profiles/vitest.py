"""vitest: the Failed Tests / Failed Suites sections, the Tests summary, and its JSON reporter.

Each failure block starts ` FAIL  <file> > <describe> > <test>`; that text is
the id.  Blocks under `Failed Suites` (a file that failed to import or
compile) are suite errors.  Counts come from the `Tests  2 failed | 1 passed
(4)` line.  The verbose reporter's `× <id>` / `→ message` lines name the
failures too, and are used when the detail sections are absent.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Failure
from reflex.digest.profiles import jsonreport, runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_SECTION = re.compile(r"^⎯+\s*Failed (?P<what>Tests|Suites) (?P<n>\d+)\s*⎯+$")
_SEPARATOR = re.compile(r"^⎯+(?:\[\d+/\d+\]⎯*)?$")
_FAIL = re.compile(r"^ FAIL\s+(?P<id>.+?)(?:\s+\[ (?P<file>[^\]]+) \])?$")
_TESTS = re.compile(r"^\s*Tests\s+(?P<body>\S.*)$")
_FILES = re.compile(r"^\s*Test Files\s+(?P<body>\S.*)$")
_NUM = re.compile(r"(\d+) (failed|passed|skipped|todo)")
_TOTAL = re.compile(r"\((\d+)\)\s*$")
_VERBOSE = re.compile(r"^ +× (?P<id>\S+ > .+?)(?: \d+m?s)?$")
_ARROW = re.compile(r"^ +→ (?P<msg>.+)$")
_LOC = re.compile(r"^\s*❯ (?:\S+ )?(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+)$")
_VERSION = re.compile(r"^\s*RUN\s+v(?P<v>\d[\w.\-]*)")


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)
    tool_version = None
    for s in lines[:5]:
        m = _VERSION.match(s)
        if m:
            tool_version = m["v"]
    section = None
    blocks: list[tuple[str, str, str | None, int]] = []  # (section, id, file, start)
    ends: list[int] = []
    counts = Counts()
    notes: list[str] = []
    verbose: dict[str, tuple[str, int]] = {}
    saw_summary = False
    for i, s in enumerate(lines):
        ms = _SECTION.match(s)
        if ms:
            if len(ends) < len(blocks):
                ends.append(i)
            section = ms["what"]
            continue
        if _SEPARATOR.match(s):
            if len(ends) < len(blocks):
                ends.append(i)
            continue
        mf = _FAIL.match(s)
        if mf and section:
            if len(ends) < len(blocks):
                ends.append(i)
            blocks.append((section, mf["id"].strip(), mf["file"], i))
            continue
        mv = _VERBOSE.match(s)
        if mv:
            msg = ""
            if i + 1 < n:
                ma = _ARROW.match(lines[i + 1])
                msg = ma["msg"] if ma else ""
            verbose.setdefault(mv["id"].strip(), (msg, i))
            continue
        mt = _TESTS.match(s)
        if mt and ("passed" in s or "failed" in s or "skipped" in s):
            c = {w: int(k) for k, w in _NUM.findall(mt["body"])}
            tot = _TOTAL.search(mt["body"])
            counts = Counts(failed=c.get("failed"), passed=c.get("passed"), skipped=c.get("skipped"),
                            todo=c.get("todo"), total=int(tot.group(1)) if tot else None)
            saw_summary = True
            if len(ends) < len(blocks):
                ends.append(i)
            continue
        mfi = _FILES.match(s)
        if mfi:
            notes.append("test files: " + mfi["body"].strip())
            saw_summary = True
            if len(ends) < len(blocks):
                ends.append(i)
    if len(ends) < len(blocks):
        ends.append(n)

    failures: list[Failure] = []
    build_errors: list[BuildError] = []
    for (sec, ident, file, start), end in zip(blocks, ends):
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        span = out.span(start, end)
        body = [s.strip() for s in lines[start + 1 : end] if s.strip()]
        msg = one_line(body[0]) if body else ""
        if sec == "Suites":
            build_errors.append(BuildError(where=file or ident, message=msg, span=span))
            continue
        f = Failure(id=ident, file=ident.split(" > ", 1)[0], message=msg, span=span)
        for s in lines[start + 1 : end]:
            ml = _LOC.match(s)
            if ml and ml["file"] == f.file:
                f.line = int(ml["line"])
                break
        failures.append(f)
    if not failures and verbose:
        for ident, (msg, i) in verbose.items():
            failures.append(Failure(id=ident, file=ident.split(" > ", 1)[0], message=one_line(msg),
                                    span=out.span(i, i + 2 if msg else i + 1)))

    fmt = "text"
    report = jsonreport.parse(out.raw, []) if b'"testResults"' in out.raw else None
    if report is not None:
        fmt = "json"
        by_id = {f.id: f for f in failures}
        failures = [by_id.get(jf.id, jf) for jf in report.failures]
        counts = report.counts
        if not build_errors:
            build_errors = report.build_errors
        saw_summary = True
    if not saw_summary and not failures:
        return None
    if not saw_summary:
        notes.append("no Tests summary line: run did not finish")
    return runner.Parsed(tool_version=tool_version, format=fmt, counts=counts, failures=failures,
                         build_errors=build_errors, notes=notes)


PROFILE = runner.bind("vitest", 1, parse, detect=(runner.head(5, _VERSION), runner.tail(20, _FILES)))
