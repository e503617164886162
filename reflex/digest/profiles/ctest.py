"""ctest: per-test result lines, their output (--output-on-failure), and the FAILED list.

`3/7 Test #3: name ....***Failed    0.02 sec` (or `***Exception: SegFault`,
`Subprocess aborted***Exception:`, `***Timeout`, `***Not Run`) is one failing
test; the id is the ctest test name, what `-R '^name$'` re-runs.  With
--output-on-failure the test's own output follows its result line and is its
detail and message.  `The following tests FAILED:` repeats every failure with
ctest's reason and is read only for what the result lines did not say.
Counts are `14% tests passed, 6 tests failed out of 7`.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_RESULT = re.compile(r"^\s*\d+/\d+ Test\s+#(?P<n>\d+): (?P<name>\S+) \.*(?P<status>.*?)\s+(?P<t>[0-9.]+) sec$")
_START = re.compile(r"^\s+Start\s+\d+: \S+$")
_SUMMARY = re.compile(r"^(?P<pct>\d+)% tests passed, (?P<failed>\d+) tests? failed out of (?P<total>\d+)$")
_FAILED_HEAD = re.compile(r"^The following tests FAILED:$")
_FAILED_ITEM = re.compile(r"^\s+(?P<n>\d+) - (?P<name>\S+) \((?P<why>[^)]*)\)$")
_DID_NOT_RUN = re.compile(r"^The following tests did not run:$")
_PROJECT = re.compile(r"^Test project (?P<dir>\S+)$")


def _ends(s: str) -> bool:
    return bool(_RESULT.match(s) or _START.match(s) or _SUMMARY.match(s))


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format="ctest")
    by_name: dict[str, Failure] = {}
    summary = False
    project = False
    for i, s in enumerate(lines):
        if _PROJECT.match(s):
            project = True
            continue
        mr = _RESULT.match(s)
        if mr:
            status = mr["status"].replace("*", " ").strip()
            if status.startswith("Passed") or "Skipped" in status or "Disabled" in status:
                continue
            end = runner.block_end(lines, i, _ends)
            output = [x.strip() for x in lines[i + 1:end] if x.strip()]
            message = status + (f": {output[0]}" if output else "")
            f = Failure(id=mr["name"], message=one_line(message), span=out.span(i, end))
            parsed.failures.append(f)
            by_name[mr["name"]] = f
            continue
        ms = _SUMMARY.match(s)
        if ms:
            failed, total = int(ms["failed"]), int(ms["total"])
            # ctest prints a percentage of passes, not their number: stated as printed.
            parsed.counts = Counts(failed=failed, total=total, other={"% tests passed": int(ms["pct"])})
            parsed.summary = out.span(i, i + 1)
            summary = True
            continue
        mi = _FAILED_ITEM.match(s)
        if mi and mi["name"] not in by_name:  # only in the list (e.g. the result line was cut off)
            f = Failure(id=mi["name"], message=one_line(mi["why"]), span=out.span(i, i + 1))
            parsed.failures.append(f)
            by_name[mi["name"]] = f
    if not (summary or project):
        return None
    if not summary:
        parsed.notes.append("no summary line: the run did not finish")
    return parsed


PROFILE = runner.bind("ctest", 1, parse, detect=(_SUMMARY, _PROJECT))
