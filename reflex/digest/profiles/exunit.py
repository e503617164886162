"""ExUnit (`mix test`): numbered failure blocks, setup_all failures, compile errors, the summary line.

A failure is `  N) test <name> (<Module>)` followed by its `file:line` and the
assertion or exception; the id is `<Module> test <name>`, the module and the
test's own name as ExUnit knows them, and the `file:line` under it is what
`mix test file:line` re-runs.  `  0) <Module>: failure on setup_all callback,
all tests have been invalidated` is a build error labelled SETUP_ALL FAIL: the
module's tests are counted as invalid and never named one by one.
`== Compilation error in file F ==` (a test or lib file that does not compile)
is a build error with the compiler's message.  Counts are the summary's own
(`17 tests, 7 failures, 2 invalid, 1 skipped`); --trace's per-test lines and
progress dots carry no ids of failures that the blocks do not.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_HEADER = re.compile(r"^\s+\d+\) (?P<name>(?:test|doctest|property|describe) .+) \((?P<module>[\w.]+)\)$")
_SETUP_ALL = re.compile(r"^\s+\d+\) (?P<module>[\w.]+): failure on setup_all callback, (?P<why>.+)$")
_LOCATION = re.compile(r"^\s+(?P<file>[^\s:]+\.exs?):(?P<line>\d+)$")
_SUMMARY = re.compile(r"^(?:\d+ (?:doctests?|propert(?:y|ies)|tests?|failures?|invalid|skipped|excluded)(?:, |$))+")
_PAIR = re.compile(r"(\d+) (doctests?|propert(?:y|ies)|tests?|failures?|invalid|skipped|excluded)")
_COMPILE = re.compile(r"^== Compilation error in file (?P<file>\S+) ==$")
_COMPILE_MSG = re.compile(r"^\*\* \((?P<exc>\w+)\) (?P<msg>.+)$")
_FINISHED = re.compile(r"^Finished in [0-9.]+ seconds")
_TRACE = re.compile(r"^\s+\* (?:test|doctest|property) ")
_ABORTED = re.compile(r"^--max-failures reached, aborting test suite$")
_WORDS = {"tests": "total", "test": "total", "failures": "failed", "failure": "failed", "skipped": "skipped"}


def _ends_block(s: str) -> bool:
    return bool(_HEADER.match(s) or _SETUP_ALL.match(s) or _FINISHED.match(s) or _TRACE.match(s)
                or (s and not s[0].isspace()))


def _message(body: list[str]) -> str:
    """The assertion's first line with its left/right, or the exception line."""
    text = [s.strip() for s in body if s.strip()]
    if not text:
        return ""
    parts = [text[0]]
    for s in text[1:16]:
        if s.startswith(("left:", "right:")):
            parts.append(s)
    return one_line(" ".join(parts))


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed()
    pairs: list[tuple[str, int]] = []
    seen_summary = False
    i = 0
    while i < len(lines):
        s = lines[i]
        mh = _HEADER.match(s)
        ms = _SETUP_ALL.match(s) if mh is None else None
        if mh or ms:
            end = runner.block_end(lines, i, _ends_block)
            body = lines[i + 1:end]
            if ms:
                parsed.build_errors.append(BuildError(where=ms["module"], label="SETUP_ALL FAIL",
                                                      message=_message(body) + f" ({ms['why']})",
                                                      span=out.span(i, end)))
            else:
                assert mh is not None  # one of the two matched
                loc = _LOCATION.match(body[0]) if body else None
                f = Failure(id=f"{mh['module']} {mh['name']}", span=out.span(i, end),
                            message=_message(body[1:] if loc else body))
                if loc:
                    f.file, f.line = loc["file"], int(loc["line"])
                parsed.failures.append(f)
            i = max(end, i + 1)
            continue
        mc = _COMPILE.match(s)
        if mc:
            end = runner.block_end(lines, i, lambda x: bool(_COMPILE.match(x) or _FINISHED.match(x)))
            msg = next((m for m in map(_COMPILE_MSG.match, lines[i + 1:end]) if m), None)
            parsed.build_errors.append(BuildError(where=mc["file"], span=out.span(i, end),
                                                  message=one_line(f"{msg['exc']}: {msg['msg']}" if msg else s)))
            i = max(end, i + 1)
            continue
        if _SUMMARY.match(s):
            pairs = [(w, int(n)) for n, w in _PAIR.findall(s)]
            parsed.summary = out.span(i, i + 1)
            seen_summary = True
        elif _ABORTED.match(s):
            parsed.notes.append("--max-failures reached: the suite was aborted, later tests did not run")
        i += 1
    if not seen_summary and not parsed.failures and not parsed.build_errors:
        return None
    if not seen_summary and not parsed.build_errors:
        parsed.notes.append("no summary line: the run did not finish")
    parsed.counts = runner.counts_from(pairs, _WORDS)
    return parsed


PROFILE = runner.bind("exunit", 1, parse, detect=(_SUMMARY, _HEADER, _SETUP_ALL))
