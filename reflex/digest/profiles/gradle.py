"""Gradle: failed tests as the test task prints them, javac's errors, and what went wrong.

The test task prints each failing test as `cart.DiscountTest > tenTakesTenPercentOff[80 cents]
FAILED` followed by an indented `java.lang.AssertionError at DiscountTest.java:29` (more lines with
`exceptionFormat full`); the id is the line as printed (`--tests 'cart.DiscountTest.ten*'` selects
it).  A failing @BeforeClass is the test `classMethod`, as Gradle prints and counts it.  Counts are
`8 tests completed, 6 failed, 1 skipped` (no pass count).  javac's `/path/File.java:10: error:
message` lines (with the caret frame and `symbol:`/`location:` after them) are the diagnostics of a
source that does not compile, and `N errors` their count.  `* What went wrong:` names the failed
task and Gradle's reason; when neither tests nor javac explain the failure it is the build error.
`gradle -q` prints no test names: only the counts and what went wrong are stated.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Diagnostic, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_TEST = re.compile(r"^(?P<cls>[\w.$]+) > (?P<name>.+) FAILED$")
_THROWN = re.compile(r"^\s+(?P<exc>[\w.$]+)(?:: (?P<msg>.*?))?(?: at (?P<file>[\w$]+\.(?:java|kt|groovy|scala)):(?P<line>\d+))?$")
_COMPLETED = re.compile(r"^(?P<total>\d+) tests? completed, (?P<failed>\d+) failed(?:, (?P<skipped>\d+) skipped)?$")
_JAVAC = re.compile(r"^(?:[:\w]+)?(?P<file>/\S+\.(?:java|kt)):(?P<line>\d+): (?P<sev>error|warning): (?P<msg>.+)$")
_JAVAC_COUNT = re.compile(r"^(?P<n>\d+) (?P<what>errors?|warnings?)$")
_WRONG = re.compile(r"^\* What went wrong:$")
_BUILD = re.compile(r"^BUILD (?P<result>SUCCESSFUL|FAILED) in ")


def _what_went_wrong(lines: list[str], i: int) -> str:
    said = []
    for s in lines[i + 1:i + 6]:
        if not s.strip() or s.startswith("* "):
            break
        said.append(s.strip().lstrip("> "))
    return " ".join(said)


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format=None)
    wrong = None
    build = None
    javac: dict[str, int] = {}
    for i, s in enumerate(lines):
        mt = _TEST.match(s)
        if mt:
            end = runner.block_end(lines, i, lambda x: not x.startswith((" ", "\t")))
            thrown = _THROWN.match(lines[i + 1]) if i + 1 < end else None
            message, file, line = "", None, None
            if thrown:
                message = runner.unqualified(thrown["exc"]) + (f": {thrown['msg']}" if thrown["msg"] else "")
                file, line = thrown["file"], int(thrown["line"]) if thrown["line"] else None
            if mt["name"] == "classMethod":
                message = (message + ": " if message else "") + "the class's setup failed: its tests did not run"
            parsed.failures.append(Failure(id=f"{mt['cls']} > {mt['name']}", message=one_line(message), file=file,
                                           line=line, span=out.span(i, end)))
            continue
        mc = _COMPLETED.match(s)
        if mc:
            parsed.counts = Counts(total=int(mc["total"]), failed=int(mc["failed"]),
                                   skipped=int(mc["skipped"]) if mc["skipped"] else None)
            parsed.summary = out.span(i, i + 1)
            continue
        mj = _JAVAC.match(s)
        if mj:
            end = runner.block_end(lines, i, lambda x: bool(_JAVAC.match(x) or _JAVAC_COUNT.match(x)
                                                            or x.startswith(("Note: ", "FAILURE", "* "))))
            parsed.diagnostics.append(Diagnostic(file=mj["file"], line=int(mj["line"]), col=None, code=None,
                                                 severity=mj["sev"], message=one_line(mj["msg"]),
                                                 span=out.span(i, end)))
            continue
        mn = _JAVAC_COUNT.match(s)
        if mn and parsed.diagnostics:
            javac["errors" if mn["what"].startswith("error") else "warnings"] = int(mn["n"])
            continue
        if _WRONG.match(s):
            wrong = (i, _what_went_wrong(lines, i))
            continue
        mb = _BUILD.match(s)
        if mb:
            build = mb["result"]
    if not (parsed.failures or parsed.diagnostics or parsed.summary or wrong or build):
        return None
    if javac and parsed.summary is None:
        parsed.counts = Counts(errors=javac.get("errors"), warnings=javac.get("warnings"))
    if wrong:
        at, said = wrong
        if parsed.failures or parsed.diagnostics or parsed.summary:
            parsed.notes.append(said)
        else:  # a build script error, a dependency that does not resolve, an unknown option
            parsed.build_errors.append(BuildError(where="gradle", label="BUILD FAILED", message=one_line(said),
                                                  span=out.span(at, at + 1)))
    return parsed


PROFILE = runner.bind("gradle", 1, parse, detect=(_COMPLETED, _BUILD))
