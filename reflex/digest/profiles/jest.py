"""jest: failing tests per suite, suites that failed to run, and the Tests: summary.

Text output (default and --verbose) names each failure `● describe › test`
under its suite's `FAIL <file>` line; the id is `<file> > describe > test`.
`● Test suite failed to run` is a suite error, not a test.  Counts come only
from the `Tests:` summary line.  With --json the report (stdout) is parsed
for ids and counts; the human summary jest also writes (stderr, when merged)
supplies relative paths and readable detail blocks.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Failure
from reflex.digest.profiles import jsonreport, runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

# With colours (--colors, a TTY) jest prints the status inverse-video with a space either side.
_SUITE = re.compile(r"^ ?(?P<st>FAIL|PASS)\s+(?P<file>\S+)(?:\s+\(.*\))?$")
# Printed above a second listing of every failure, when a run has more suites than the summary
# threshold (20 by default): the blocks after it repeat the ones above.
_REPEAT = re.compile(r"^Summary of all failing tests$")
_BULLET = re.compile(r"^  ● (?P<title>.+)$")
_TESTS = re.compile(r"^Tests:\s+(?P<body>.+)$")
_SUITES = re.compile(r"^Test Suites:\s+(?P<body>.+)$")
_NUM = re.compile(r"(\d+) (failed|passed|skipped|todo|total|pending)")
_FRAME = re.compile(r"\((?P<file>[^():]+):(?P<line>\d+):(?P<col>\d+)\)")


def _counts(body: str) -> Counts:
    c: dict[str, int] = {}
    for n, w in _NUM.findall(body):
        key = {"pending": "skipped"}.get(w, w)
        c[key] = c.get(key, 0) + int(n)
    return Counts.model_validate(c)


def _json_report(out: Output) -> bool:
    return jsonreport.locate(out.raw) is not None and b'"assertionResults"' in out.raw and b"vitest" not in out.raw


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)
    json_at = jsonreport.locate(out.raw)
    json_lines = set()
    if json_at:
        a = out.line_index(json_at[0])
        b = out.line_index(max(json_at[1] - 1, json_at[0]))
        json_lines = set(range(a, b + 1))
    suite = None
    suites: list[str] = []
    blocks: list[tuple[str, str, int]] = []  # (file, title, start line)
    ends: list[int] = []
    counts = Counts()
    summary_at = None
    notes: list[str] = []
    repeat = False
    for i, s in enumerate(lines):
        if i in json_lines:
            continue
        if _REPEAT.match(s):
            if blocks and len(ends) < len(blocks):
                ends.append(i)
            repeat, suite = True, None
            continue
        if repeat and (_SUITE.match(s) or _BULLET.match(s)):
            continue
        m = _SUITE.match(s)
        if m:
            if blocks and len(ends) < len(blocks):
                ends.append(i)
            suite = m["file"]
            suites.append(suite)
            continue
        mb = _BULLET.match(s)
        if mb and suite is not None:
            if blocks and len(ends) < len(blocks):
                ends.append(i)
            blocks.append((suite, mb["title"].strip(), i))
            continue
        mt = _TESTS.match(s)
        if mt:
            counts = _counts(mt["body"])
            summary_at = i
        ms = _SUITES.match(s)
        if ms:
            if blocks and len(ends) < len(blocks):
                ends.append(i)
            notes.append("test suites: " + ms["body"].strip())
            summary_at = i if summary_at is None else summary_at
    if blocks and len(ends) < len(blocks):
        ends.append(n)

    failures: list[Failure] = []
    build_errors: list[BuildError] = []
    seen: set[str] = set()
    for (file, title, start), end in zip(blocks, ends):
        end = _trim(lines, start, end)
        span = out.span(start, end)
        body = [s.strip() for s in lines[start + 1 : end] if s.strip()]
        if title == "Test suite failed to run":
            build_errors.append(BuildError(where=file, message=one_line(body[0] if body else title), span=span))
            continue
        ident = " > ".join([file] + [t.strip() for t in title.split(" › ")])
        if ident in seen:
            continue
        seen.add(ident)
        f = Failure(id=ident, file=file, message=_message(body), span=span)
        for s in lines[start + 1 : end]:
            fm = _FRAME.search(s)
            if fm and fm["file"] == file:
                f.line = int(fm["line"])
                break
        failures.append(f)

    fmt = "text"
    if json_at:
        report = jsonreport.parse(out.raw, suites)
        if report is not None:
            fmt = "json"
            by_id = {f.id: f for f in failures}
            merged = []
            for jf in report.failures:
                tf = by_id.get(jf.id)
                merged.append(tf if tf is not None else jf)
            failures = merged
            if not build_errors:
                build_errors = report.build_errors
            counts = report.counts
    if summary_at is None and not failures and fmt == "text":
        return None
    if summary_at is None and fmt == "text":
        notes.append("no Tests: summary line: run did not finish")
    return runner.Parsed(format=fmt, counts=counts, failures=failures, build_errors=build_errors, notes=notes)


def _trim(lines: list[str], start: int, end: int) -> int:
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _message(body: list[str]) -> str:
    """The matcher line plus Expected/Received when jest printed them."""
    if not body:
        return ""
    parts = [body[0]]
    for s in body[1:6]:
        if s.startswith("Expected") or s.startswith("Received"):
            parts.append(s)
    return one_line(" ".join(parts))


PROFILE = runner.bind("jest", 2, parse, detect=(runner.tail(30, _TESTS, _SUITES), _json_report))
