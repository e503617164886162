"""prove (Perl's TAP harness): failed tests from Test::More's diagnostics, files that died, the report.

A failing assertion is `#   Failed test 'name'` then `#   at t/x.t line N.` and
its got/expected lines; the id is `t/x.t: name` (the file prove runs and the
test's own description).  A file that failed without a failing assertion —
it died, bailed out, or ran fewer tests than it planned — has none of those:
the Test Summary Report says why (`Non-zero exit status`, `Parse errors: Bad
plan`), and it is a build error labelled TEST FILE FAIL; `Bailout called`
stops the whole run and is one too.  Counts are prove's `Files=3, Tests=9`
and each file's `Tests: 6 Failed: 4`.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_FAILED = re.compile(r"^#\s+Failed (?:\(TODO\) )?test (?:'(?P<name>.*)'|(?P<bare>\d+))$")
_AT = re.compile(r"^#\s+at (?P<file>\S+) line (?P<line>\d+)\.$")
_RESULT = re.compile(r"^(?P<file>\S+?) \.{2,} ?(?P<rest>.*)$")
_REPORT_FILE = re.compile(r"^(?P<file>\S+) \(Wstat: \d+.*Tests: (?P<tests>\d+) Failed: (?P<failed>\d+)\)$")
_REPORT_DETAIL = re.compile(r"^\s{2}(?P<what>Failed tests|Non-zero exit status|Parse errors|TODO passed):\s+(?P<v>.+)$")
_TOTALS = re.compile(r"^Files=(?P<files>\d+), Tests=(?P<tests>\d+),")
_RESULT_LINE = re.compile(r"^Result: (?P<r>PASS|FAIL|NOTESTS)$")
_BAILOUT = re.compile(r"^Bailout called\.\s+Further testing stopped:\s*(?P<why>.*)$")
_DIAG = re.compile(r"^#\s+(?P<text>\S.*)$")


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format="prove")
    totals = None
    result = None
    report: dict[str, list[str]] = {}
    report_at: dict[str, int] = {}
    report_failed = 0
    current_report = None
    bailed: tuple[int, str] | None = None
    i = 0
    while i < len(lines):
        s = lines[i]
        mf = _FAILED.match(s)
        if mf:
            at = _AT.match(lines[i + 1]) if i + 1 < len(lines) else None
            end = runner.block_end(lines, i + 1, lambda x: bool(_FAILED.match(x) or not x.startswith("#")
                                                                 or x.startswith("# Looks like")))
            diag = [m["text"] for m in map(_DIAG.match, lines[i + 2:end]) if m]
            name = mf["name"] if mf["name"] is not None else f"test {mf['bare']}"
            file = at["file"] if at else None
            parsed.failures.append(Failure(id=f"{file}: {name}" if file else name, file=file,
                                           line=int(at["line"]) if at else None,
                                           message=one_line(" ".join(diag[:2])), span=out.span(i, end)))
            i = max(end, i + 1)
            continue
        mb = _BAILOUT.match(s)
        if mb:
            bailed = (i, mb["why"])
        mr = _REPORT_FILE.match(s)
        if mr:
            current_report = mr["file"]
            report[current_report] = []
            report_at[current_report] = i
            report_failed += int(mr["failed"])
        elif current_report and (md := _REPORT_DETAIL.match(s)):
            report[current_report].append(f"{md['what']}: {md['v'].strip()}")
        elif not s.startswith(" "):
            current_report = None
        mt = _TOTALS.match(s)
        if mt:
            totals = (int(mt["files"]), int(mt["tests"]))
            parsed.summary = out.span(i, i + 1)
        mres = _RESULT_LINE.match(s)
        if mres:
            result = mres["r"]
        i += 1
    if totals is None and not parsed.failures:
        return None
    failing_files = {f.file for f in parsed.failures}
    for file, details in report.items():
        if file in failing_files:
            continue
        why = "; ".join(d for d in details if not d.startswith("Failed tests")) or "failed"
        a = report_at[file]
        parsed.build_errors.append(BuildError(where=file, label="TEST FILE FAIL", message=one_line(why),
                                              span=out.span(a, a + 1 + len(details))))
    if bailed is not None:
        parsed.notes.append(f"Bail out: {bailed[1]} (further test files did not run)")
    if totals:
        # prove prints failures per file only (`Tests: 6 Failed: 4`): their sum, and Files=/Tests=.
        parsed.counts = Counts(total=totals[1], failed=report_failed, files=totals[0])
    if result:
        parsed.notes.append(f"prove result: {result}")
    if totals is None:
        parsed.notes.append("no Files=/Tests= line: the run did not finish")
    return parsed


PROFILE = runner.bind("prove", 1, parse, detect=(_TOTALS, _RESULT_LINE))
