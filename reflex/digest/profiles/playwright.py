"""Playwright test runner: the list (default when not a TTY), line and dot reporters.

Every reporter prints each failure as a numbered block headed
`  1) tests/shop.spec.ts:20:3 › cart › counts one item ────` (with a project,
`[chromium] › ` first); the id is that location and title path, which
`npx playwright test tests/shop.spec.ts:20` re-runs.  The block holds the
`Error: …` line, Expected/Received, the code frame and `at` lines.  The
summary repeats the failing ids under `  5 failed` and counts `N passed (14s)`,
`N skipped`, `N did not run` (tests after a failed beforeAll or an early
stop), `N flaky`, `N interrupted`, and `N error(s) was not a part of any test`.

A test file that cannot be loaded stops the run before any test: Playwright
prints `Error: …` and `   at broken/checkout.spec.ts:3` with no `Running N
tests` line.  It is a build error named by that file.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_RUNNING = re.compile(r"^Running (?P<n>\d+) tests? using (?P<w>\d+) workers?")
_HEADER = re.compile(r"^  (?P<k>\d+)\) (?:\[(?P<project>[^\]]+)\] › )?(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+) "
                     r"› (?P<titles>.+?)(?: ─+)?$")
_COUNT = re.compile(r"^  (?P<n>\d+) (?P<w>failed|passed|skipped|did not run|flaky|interrupted)(?: \([0-9.]+m?s\))?$")
_OUTSIDE = re.compile(r"^  (?P<n>\d+) errors? (?:was|were) not a part of any test")
_STOPPED = re.compile(r"^Testing stopped early after (?P<n>\d+) maximum allowed failures?\.$")
_ERROR = re.compile(r"^\s*(?P<kind>\w*Error): (?P<msg>.*)$")
_LOAD_AT = re.compile(r"^\s+at (?P<file>[^\s:()]+\.[cm]?[jt]sx?):(?P<line>\d+)$")
_MATCHER = re.compile(r"^Error: expect\(\w+\)(?:\.not)?\.(?P<m>\w+)\(.*\) failed$")
_PROGRESS = re.compile(r"^\[\d+/\d+\] ")  # the line reporter's progress lines, between failure blocks


def _message(body: list[str]) -> str:
    for k, s in enumerate(body):
        m = _ERROR.match(s)
        if m:
            extra = [x.strip() for x in body[k + 1:k + 8] if x.strip().startswith(("Expected:", "Received:"))]
            head = s.strip()
            matcher = _MATCHER.match(head)
            if matcher and extra:  # `Error: expect(locator).toHaveText(expected) failed`: the values say it
                head = matcher["m"] + ":"
            return one_line(" ".join([head, *extra]))
    return one_line(next((s for s in body if s.strip()), ""))


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format="text")
    running = None
    headers: list[tuple[int, re.Match[str]]] = []
    summary_at = None
    pairs: list[tuple[str, int]] = []
    for i, s in enumerate(lines):
        mr = _RUNNING.match(s)
        if mr and running is None:
            running = i
            continue
        mh = _HEADER.match(s)
        if mh:
            headers.append((i, mh))
            continue
        mc = _COUNT.match(s)
        if mc and running is not None:
            pairs.append((mc["w"], int(mc["n"])))
            summary_at = i if summary_at is None else summary_at
            parsed.summary = out.span(summary_at, i + 1)
            continue
        mo = _OUTSIDE.match(s)
        if mo:
            pairs.append(("errors not part of any test", int(mo["n"])))
            continue
        ms = _STOPPED.match(s)
        if ms:
            parsed.notes.append(s.strip() + " (later tests did not run)")
    ends = [i for i, _ in headers[1:]] + [summary_at if summary_at is not None else len(lines)]
    for (i, mh), end in zip(headers, ends):
        end = runner.block_end(lines, i, lambda x: bool(_PROGRESS.match(x)), limit=end)
        ident = f"{mh['file']}:{mh['line']}:{mh['col']} › {mh['titles']}"
        if mh["project"]:
            ident = f"[{mh['project']}] › {ident}"
        # the id is the location (file:line:col): the census needs no other
        parsed.failures.append(Failure(id=ident, message=_message(lines[i + 1:end]), span=out.span(i, end)))
    if running is None:
        # No test ran: a file that could not be loaded (its `Error:` and `at file:line`).
        for i, s in enumerate(lines):
            ma = _LOAD_AT.match(s)
            if not ma:
                continue
            a = max((k for k in range(i) if _ERROR.match(lines[k]) and not lines[k].startswith(" ")), default=None)
            if a is None:
                continue
            parsed.build_errors.append(BuildError(where=ma["file"], label="LOAD ERROR",
                                                  message=one_line(lines[a]), span=out.span(a, i + 1)))
        if not parsed.build_errors:
            return None
        return parsed
    parsed.counts = runner.counts_from(pairs, {"failed": "failed", "passed": "passed", "skipped": "skipped"})
    if summary_at is None:
        parsed.notes.append("no `N passed` / `N failed` summary: the run did not finish")
    return parsed


PROFILE = runner.bind("playwright", 1, parse, detect=(runner.head(12, _RUNNING),))
