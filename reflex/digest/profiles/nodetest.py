"""node --test: node's built-in test runner, in its tap (the default when not a TTY), spec and dot reporters.

Ids are the test's name under its enclosing `describe` suites, joined with
` > ` (`total > multiplies quantity 10`), which is what `--test-name-pattern`
matches and what node's own junit reporter nests; a file that failed to load
is named by its path.  TAP puts each test's `location:` (file:line:col) in its
YAML block; spec and dot name it in the `failing tests:` list at the end
(`test at file:line:col`), which repeats every failure and is read for
locations only.

A suite whose hook failed (`failureType: 'hookFailed'`) is a build error
labelled HOOK FAIL: its tests are reported as cancelled, and the hook's
error is the reason.  Suites that failed only because a test inside failed
add nothing.  Counts are node's own `# tests N` / `ℹ tests N` lines.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_TAP_HEAD = re.compile(r"^TAP version \d+$")
_SUBTEST = re.compile(r"^(?P<ind>\s*)# Subtest: (?P<name>.+)$")
_TAP_RESULT = re.compile(r"^(?P<ind>\s*)(?P<st>not ok|ok) \d+ - (?P<name>.*?)(?P<dir> # (?:SKIP|TODO)\b.*)?$")
_YAML_KEY = re.compile(r"^\s*(?P<k>location|failureType|error|type): (?P<v>.*)$")
_COUNT = re.compile(r"^(?:# |ℹ )(?P<w>tests|suites|pass|fail|cancelled|skipped|todo) (?P<n>\d+)$")
_SPEC_SUITE = re.compile(r"^(?P<ind>\s*)▶ (?P<name>.+)$")
_SPEC_RESULT = re.compile(r"^(?P<ind>\s*)(?P<st>[✔✖﹣]) (?P<name>.+?)(?: \([0-9.]+m?s\))?(?P<dir> # (?:SKIP|TODO)\b.*)?$")
_FAILING_LIST = re.compile(r"^(?:✖ failing tests:|Failed tests:)$")
_TEST_AT = re.compile(r"^test at (?P<loc>\S+):(?P<line>\d+):(?P<col>\d+)$")
_SUBTESTS_FAILED = re.compile(r"^'?\d+ subtests? failed'?$")
_DOTS = re.compile(r"[.X*]+")  # the dot reporter's progress line: one mark per test
_WORDS = {"tests": "total", "pass": "passed", "fail": "failed", "skipped": "skipped", "todo": "todo"}


def _loc(value: str) -> tuple[str, int | None]:
    m = re.match(r"^'?(?P<f>.+?):(?P<l>\d+):(?P<c>\d+)'?$", value.strip())
    return (runner.relative(m["f"]), int(m["l"])) if m else (value, None)


def _file_name(name: str) -> bool:
    return name.startswith("/") or name.startswith("file://")


def _parse_tap(out: Output) -> runner.Parsed:
    lines = out.lines
    parsed = runner.Parsed(format="tap")
    names = runner.NamePath()
    counts: list[tuple[str, int]] = []
    i = 0
    while i < len(lines):
        s = lines[i]
        ms = _SUBTEST.match(s)
        if ms:
            names.enter(len(ms["ind"]) // 4, ms["name"])
            i += 1
            continue
        mr = _TAP_RESULT.match(s)
        if mr:
            depth = len(mr["ind"]) // 4
            meta: dict[str, str] = {}
            j = i + 1
            if j < len(lines) and lines[j].strip() == "---":
                while j < len(lines) and lines[j].strip() != "...":
                    mk = _YAML_KEY.match(lines[j])
                    if mk and mk["k"] not in meta:
                        value = mk["v"]
                        if value in ("|-", "|", ">-"):  # a block scalar: its first line is the message
                            value = lines[j + 1].strip() if j + 1 < len(lines) else ""
                        meta[mk["k"]] = value.strip("'")
                    j += 1
                j += 1
            if mr["st"] == "not ok" and not mr["dir"]:
                _tap_failure(out, parsed, names, depth, mr["name"], meta, i, j)
            i = j
            continue
        mc = _COUNT.match(s)
        if mc:
            counts.append((mc["w"], int(mc["n"])))
            parsed.summary = parsed.summary or out.span(i, i + 1)
        i += 1
    parsed.counts = runner.counts_from(counts, _WORDS)
    return parsed


def _tap_failure(out: Output, parsed: runner.Parsed, names: runner.NamePath, depth: int, name: str,
                 meta: dict[str, str], start: int, end: int) -> None:
    kind = meta.get("failureType", "")
    if kind == "subtestsFailed":
        return
    file, line = _loc(meta.get("location", "")) if "location" in meta else (None, None)
    message = one_line(meta.get("error", ""))
    if kind == "hookFailed":
        parsed.build_errors.append(BuildError(where=names.path(depth, name), label="HOOK FAIL",
                                              message=message, span=out.span(start, end)))
        return
    ident = runner.relative(name) if depth == 0 and _file_name(name) else names.path(depth, name)
    parsed.failures.append(Failure(id=ident, file=file, line=line, message=message, span=out.span(start, end)))


def _parse_spec(out: Output) -> runner.Parsed:
    lines = out.lines
    parsed = runner.Parsed(format="spec")
    names = runner.NamePath()
    counts: list[tuple[str, int]] = []
    listing = None
    by_name: dict[str, list[Failure]] = {}
    i = 0
    while i < len(lines):
        s = lines[i]
        if _FAILING_LIST.match(s):
            listing = i
            break
        msu = _SPEC_SUITE.match(s)
        if msu:
            names.enter(len(msu["ind"]) // 2, msu["name"])
            i += 1
            continue
        mr = _SPEC_RESULT.match(s)
        if mr and mr["st"] == "✖" and not mr["dir"]:
            depth = len(mr["ind"]) // 2
            def ends(x: str, d: int = len(mr["ind"])) -> bool:
                return bool((_SPEC_RESULT.match(x) or _SPEC_SUITE.match(x)) and len(x) - len(x.lstrip()) <= d
                            or _COUNT.match(x) or _FAILING_LIST.match(x))

            end = runner.block_end(lines, i, ends)
            body = [x.strip() for x in lines[i + 1:end] if x.strip()]
            name = mr["name"]
            is_suite = any(_SPEC_SUITE.match(x) and x.strip()[2:] == name for x in lines[max(0, i - 400):i])
            if not is_suite:
                ident = runner.relative(name) if depth == 0 and _file_name(name) else names.path(depth, name)
                f = Failure(id=ident, message=one_line(body[0].strip("'") if body else ""), span=out.span(i, end))
                parsed.failures.append(f)
                by_name.setdefault(name, []).append(f)
            elif body and not body[0].startswith("'") and "subtest" not in body[0]:
                parsed.build_errors.append(BuildError(where=names.path(depth, name), label="HOOK FAIL",
                                                      message=one_line(body[0]), span=out.span(i, end)))
            i = end
            continue
        mc = _COUNT.match(s)
        if mc:
            counts.append((mc["w"], int(mc["n"])))
        i += 1
    if listing is not None:
        _read_listing(out, listing, parsed, by_name, counts)
    parsed.counts = runner.counts_from(counts, _WORDS)
    return parsed


def _read_listing(out: Output, start: int, parsed: runner.Parsed, by_name: dict[str, list[Failure]],
                  counts: list[tuple[str, int]]) -> None:
    """The `failing tests:` list after a spec/dot run: locations for spec, the failures themselves for dot."""
    lines = out.lines
    at = None
    for i in range(start + 1, len(lines)):
        s = lines[i]
        mc = _COUNT.match(s)
        if mc:
            counts.append((mc["w"], int(mc["n"])))
            continue
        mt = _TEST_AT.match(s)
        if mt:
            at = (runner.relative(mt["loc"]), int(mt["line"]))
            continue
        mr = _SPEC_RESULT.match(s)
        if mr and mr["st"] == "✖" and not mr["ind"]:
            name = mr["name"]
            known = by_name.get(name)
            if known is not None:
                for f in known:
                    if at and f.file is None:
                        f.file, f.line = at
                        break
            elif parsed.format == "dot":
                end = runner.block_end(lines, i, lambda x: bool(_SPEC_RESULT.match(x) or _TEST_AT.match(x)
                                                                  or _COUNT.match(x)))
                body = [x.strip() for x in lines[i + 1:end] if x.strip()]
                # dot lists suites among tests: one failing for its tests says so; one whose hook
                # threw has a TestHook frame in its stack.
                if body and _SUBTESTS_FAILED.match(body[0]):
                    continue
                if any("TestHook." in x for x in body):
                    parsed.build_errors.append(BuildError(where=name, label="HOOK FAIL", message=one_line(body[0]),
                                                          span=out.span(i, end)))
                    continue
                f = Failure(id=runner.relative(name) if _file_name(name) else name,
                            file=at[0] if at else None, line=at[1] if at else None,
                            message=one_line(body[0].strip("'") if body else ""), span=out.span(i, end))
                parsed.failures.append(f)
            at = None


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    if any(_TAP_HEAD.match(s) for s in lines[:200]):
        return _parse_tap(out)
    if lines and _DOTS.fullmatch(lines[0]) and any(_FAILING_LIST.match(s) for s in lines):
        parsed = runner.Parsed(format="dot")
        counts: list[tuple[str, int]] = []
        idx = next(i for i, s in enumerate(lines) if _FAILING_LIST.match(s))
        _read_listing(out, idx, parsed, {}, counts)
        parsed.counts = runner.counts_from(counts, _WORDS)
        return parsed
    if any(_SPEC_SUITE.match(s) or _SPEC_RESULT.match(s) for s in lines[:400]):
        return _parse_spec(out)
    return None


PROFILE = runner.bind("nodetest", 1, parse, detect=(_TAP_HEAD, re.compile(r"^ℹ (?:tests|pass|fail) \d+$")))
