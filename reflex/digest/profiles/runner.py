"""The frame every profile is bound into by name, and the pieces several runners share.

A profile needs the same frame around its own parsing: a cheap `detect`
(used to sniff npm-script output) and an `extract` that turns what it parsed
into Facts, or hands output it does not recognise to the generic profile.
A profile module writes only what is its own (its patterns and a
`parse(out) -> Parsed | None`) and binds it here:

    PROFILE = runner.bind("rspec", 1, parse, detect=(_SUMMARY, _FAILURES_HEADER))
    PROFILE = runner.bind("ruff", 2, parse, detect=(runner.tail(5, _FOUND, _PASSED),))

`detect` is a tuple of patterns, searched for in the first and last
DETECT_LINES lines, and of detectors (Output -> bool) for a profile that looks
elsewhere: `head(n, ...)`, `tail(n, ...)`, `anywhere(...)` or its own
function.  The output is the profile's when any of them says so.
`fallback` names the profile for another format of the same tool (gotestsum
without its summary is go test's text); it hands over to generic itself.

`Parsed` holds what the tool printed; Facts is filled from it and nothing
else.  The generic profile is not bound here: it is what the frame hands
over to.  Helpers below are the pieces several runners share: counts written
as `N word` / `word N`, and the path of nested test names (suites, describe
blocks, TAP subtests) by indentation depth.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from reflex.digest.facts import BuildError, Counts, Diagnostic, Facts, Failure, Item, Span
from reflex.digest.profiles.base import Profile
from reflex.digest.profiles.generic import handover
from reflex.digest.text import Output

DETECT_LINES = 200

Detector = Callable[[Output], bool]


@dataclass
class Parsed:
    counts: Counts = field(default_factory=Counts)
    failures: list[Failure] = field(default_factory=list)
    build_errors: list[BuildError] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    summary: Span | None = None
    format: str | None = "text"  # None: the tool has one output format
    tool_version: str | None = None


@dataclass(frozen=True)
class BoundProfile:
    name: str
    version: int
    parse: Callable[[Output], Parsed | None]
    detectors: tuple[Detector, ...]
    fallback: Profile | None = None

    def detect(self, out: Output) -> bool:
        return any(d(out) for d in self.detectors)

    def extract(self, raw: bytes, exit_code: int | None, command: str) -> Facts:
        out = Output.of(raw)
        parsed = self.parse(out)
        if parsed is None:
            if self.fallback is not None:
                return self.fallback.extract(raw, exit_code, command)
            return handover(raw, exit_code, command, self.name)
        return Facts(profile=self.name, profile_version=self.version, tool_version=parsed.tool_version,
                     format=parsed.format, recognized=True, exit_code=exit_code, counts=parsed.counts,
                     failures=parsed.failures, diagnostics=parsed.diagnostics, build_errors=parsed.build_errors,
                     summary=parsed.summary, notes=parsed.notes, items=parsed.items, total_lines=len(out.lines))


def bind(name: str, version: int, parse: Callable[[Output], Parsed | None],
         detect: Iterable[re.Pattern[str] | Detector], fallback: Profile | None = None) -> BoundProfile:
    """The profile `name` (parser `version`) made of `parse`; see the module docstring for `detect`."""
    given = tuple(detect)
    patterns = tuple(d for d in given if isinstance(d, re.Pattern))
    detectors = tuple(d for d in given if not isinstance(d, re.Pattern))
    if patterns:
        detectors = (ends(DETECT_LINES, *patterns),) + detectors
    return BoundProfile(name, version, parse, detectors, fallback)


def _searcher(lines_of: Callable[[list[str]], list[str]], patterns: tuple[re.Pattern[str], ...]) -> Detector:
    def detect(out: Output) -> bool:
        return any(p.search(s) for s in lines_of(out.lines) for p in patterns)

    return detect


def head(n: int, *patterns: re.Pattern[str]) -> Detector:
    """Any of `patterns` in the first `n` lines."""
    return _searcher(lambda lines: lines[:n], patterns)


def tail(n: int, *patterns: re.Pattern[str]) -> Detector:
    """Any of `patterns` in the last `n` lines."""
    return _searcher(lambda lines: lines[-n:], patterns)


def ends(n: int, *patterns: re.Pattern[str]) -> Detector:
    """Any of `patterns` in the first or the last `n` lines."""
    return _searcher(lambda lines: lines[:n] + lines[-n:], patterns)


def anywhere(*patterns: re.Pattern[str]) -> Detector:
    """Any of `patterns` on any line (for output whose telling line can be anywhere)."""
    return _searcher(lambda lines: lines, patterns)


def counts_from(pairs: Iterable[tuple[str, int]], words: dict[str, str]) -> Counts:
    """Counts from (word, n) pairs: `words` maps a runner's word onto a Counts field; a word it
    does not map is kept under the runner's own word, so every printed count is stated."""
    fixed: dict[str, int] = {}
    other: dict[str, int] = {}
    for word, n in pairs:
        key = words.get(word.lower(), None)
        if key is None:
            other[word.lower()] = other.get(word.lower(), 0) + n
        elif key:
            fixed[key] = fixed.get(key, 0) + n
    return Counts(**fixed, other=other)


class NamePath:
    """Names of the enclosing suites by depth: `enter(depth, name)` opens one, `path(depth, leaf)`
    is the id of a test at that depth (`suite > inner > test`)."""

    def __init__(self) -> None:
        self._names: list[str] = []

    def enter(self, depth: int, name: str) -> None:
        del self._names[depth:]
        self._names.extend([""] * (depth - len(self._names)))
        self._names.append(name)

    def path(self, depth: int, leaf: str) -> str:
        return " > ".join([n for n in self._names[:depth] if n] + [leaf])


def block_end(lines: list[str], start: int, stop: Callable[[str], bool], limit: int | None = None) -> int:
    """Index of the first line after `start` for which `stop` is true (or the end), trailing blanks trimmed."""
    end = len(lines) if limit is None else min(limit, len(lines))
    j = start + 1
    while j < end and not stop(lines[j]):
        j += 1
    while j > start + 1 and not lines[j - 1].strip():
        j -= 1
    return j


def relative(path: str, markers: tuple[str, ...] = ("file://",)) -> str:
    for m in markers:
        if path.startswith(m):
            path = path[len(m):]
    return path


# `java.lang.NullPointerException: …` -> `NullPointerException: …`: a JVM exception's package says
# nothing its simple name does not (Surefire, Gradle).
_JAVA_PACKAGE = re.compile(r"^(?:[a-z_]\w*\.)+(?=[A-Z])")


def unqualified(thrown: str) -> str:
    """A JVM exception line (or class name) without the package of the exception's class."""
    return _JAVA_PACKAGE.sub("", thrown)
