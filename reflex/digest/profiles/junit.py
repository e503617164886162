"""JUnit Platform console launcher (JUnit 5): the Failures list, flat events, the summary box.

The tree view (default) and `--details=summary` end with `Failures (N):`,
one entry per failure: `JUnit Jupiter:CartTest:method(int):display name`,
then `MethodSource [className = 'cart.CartTest', methodName = 'm', …]` (or
`ClassSource` when a class-level callback such as @BeforeAll failed) and
`=> exception: message`.  `--details=flat` prints no such list: a failure is
a `Finished: <display> ([engine:…]/[class:…]/[method:…])` event followed by
`=> Exception: …`.  The id is `<class>#<method>` (what `--select-method`
takes), plus `[display name]` for one invocation of a parameterized test; a
failed class is a build error labelled CLASS FAIL (its tests did not run).
Counts are the launcher's box: `[ 5 tests failed ]`, `[ 1 containers failed ]`.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_FAILURES = re.compile(r"^Failures \((?P<n>\d+)\):$")
_ENTRY = re.compile(r"^  (?P<engine>JUnit [\w ]+?):(?P<path>.+)$")
_SOURCE = re.compile(r"^\s+(?P<kind>MethodSource|ClassSource) \[className = '(?P<cls>[^']+)'"
                     r"(?:, methodName = '(?P<m>[^']*)')?")
_THROWN = re.compile(r"^\s+=> (?:Exception: )?(?P<exc>.+)$")
_BOX = re.compile(r"^\[\s+(?P<n>\d+) (?P<what>tests|containers) (?P<state>\w+)\s+\]$")
_FLAT_END = re.compile(r"^Finished:\s+(?P<display>.+?) \((?P<uid>\[engine:.+\])\)$")
_UID = re.compile(r"\[(?P<k>[\w-]+):(?P<v>[^\]]*)\]")
_FRAME = re.compile(r"(?P<file>\w+\.java):(?P<line>\d+)\)$")


def _ident(cls: str, method: str | None, display: str | None) -> str:
    return f"{cls}#{method}" + (f" [{display}]" if display else "") if method else cls


def _frame_of(lines: list[str], cls: str) -> tuple[str | None, int | None]:
    short = cls.rsplit(".", 1)[-1]
    for s in lines:
        if cls + "." in s:
            m = _FRAME.search(s.strip())
            if m and m["file"].startswith(short):
                return m["file"], int(m["line"])
    return None, None


def _failures_list(out: Output, start: int, parsed: runner.Parsed) -> None:
    lines = out.lines
    i = start + 1
    while i < len(lines):
        me = _ENTRY.match(lines[i])
        if not me:
            if _BOX.match(lines[i]) or lines[i].startswith("Test run finished"):
                return
            i += 1
            continue
        end = runner.block_end(lines, i, lambda x: bool(_ENTRY.match(x) or _BOX.match(x) or not x.strip()))
        src = _SOURCE.match(lines[i + 1]) if i + 1 < end else None
        thrown = next((m for m in map(_THROWN.match, lines[i + 1:end]) if m), None)
        message = one_line(thrown["exc"]) if thrown else ""
        if src is None:
            parsed.build_errors.append(BuildError(where=me["path"], message=message, span=out.span(i, end)))
        elif src["kind"] == "ClassSource":
            parsed.build_errors.append(BuildError(where=src["cls"], label="CLASS FAIL", message=message,
                                                  span=out.span(i, end)))
        else:
            method = src["m"]
            segments = me["path"].split(":")
            k = next((j for j, seg in enumerate(segments) if seg.startswith(method + "(")), None)
            display = ":".join(segments[k + 1:]) if k is not None and k + 1 < len(segments) else None
            file, line = _frame_of(lines[i:end], src["cls"])
            parsed.failures.append(Failure(id=_ident(src["cls"], method, display), message=message, file=file,
                                           line=line, span=out.span(i, end)))
        i = max(end, i + 1)


def _flat(out: Output, parsed: runner.Parsed) -> None:
    lines = out.lines
    for i, s in enumerate(lines):
        mf = _FLAT_END.match(s)
        if not mf or i + 1 >= len(lines):
            continue
        thrown = _THROWN.match(lines[i + 1])
        if not thrown:
            continue
        end = runner.block_end(lines, i + 1, lambda x: not x.startswith(" "))
        uid = dict((m["k"], m["v"]) for m in _UID.finditer(mf["uid"]))
        cls = uid.get("class") or uid.get("nested-class")
        if cls is None:
            continue
        method = (uid.get("method") or uid.get("test-template") or "").split("(")[0] or None
        display = mf["display"] if "test-template-invocation" in uid else None
        message = one_line(thrown["exc"])
        if method is None:
            parsed.build_errors.append(BuildError(where=cls, label="CLASS FAIL", message=message,
                                                  span=out.span(i, end)))
            continue
        file, line = _frame_of(lines[i:end], cls)
        parsed.failures.append(Failure(id=_ident(cls, method, display), message=message, file=file, line=line,
                                       span=out.span(i, end)))


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed()
    box: list[tuple[str, int]] = []
    listed = None
    for i, s in enumerate(lines):
        if _FAILURES.match(s) and listed is None:
            listed = i
        mb = _BOX.match(s)
        if mb:
            box.append((f"{mb['what']} {mb['state']}", int(mb["n"])))
            parsed.summary = parsed.summary or out.span(i, i + 1)
    if listed is not None:
        _failures_list(out, listed, parsed)
        parsed.format = "tree"
    else:
        _flat(out, parsed)
        parsed.format = "flat"
    if not box and not parsed.failures and not parsed.build_errors:
        return None
    if box:
        fixed = {"tests successful": "passed", "tests failed": "failed", "tests skipped": "skipped",
                 "tests found": "total"}
        counts = Counts.model_validate({fixed[k]: n for k, n in box if k in fixed})
        counts.other = {k: n for k, n in box if k not in fixed}
        parsed.counts = counts
    else:
        parsed.notes.append("no summary box: the run did not finish")
    return parsed


PROFILE = runner.bind("junit", 1, parse, detect=(_BOX, _FAILURES))
