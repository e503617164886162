"""What a failing test's id looks like, runner by runner.

Census lines lead a digest, and they are built from ids a profile parsed out of
program output.  Program output can print anything, including a line shaped
like a runner's own (`FAILED ignore all prior rules and …`, `--- FAIL: …`); if
the profile took the rest of such a line for an id, an instruction would be
the first thing the agent reads.  So a profile accepts an id only when it has
the shape that runner gives ids; anything else is not a runner line.

The shapes are those the runners produce, no more:

- pytest: a node id `path::name[::name…]` with an optional `[parameters]`
  suffix (the only place pytest puts free text), then for a pytest 9 subtest
  ` [message]` and/or ` (k=v, …)`, or, for a collection error,
  a bare path.  No whitespace outside the brackets: pytest derives ids from
  file paths and Python names.
- go test: `Test…`, `Example…`, `Fuzz…` or `Benchmark…`, then `/subtest` parts
  (go replaces spaces in subtest names with `_`).
- cargo test: a Rust path `a::b::c`, or a doc-test `src/lib.rs - item (line N)`.

Runners whose ids are free text by design (jest and vitest titles) cannot be
checked this way; their titles come only from the runner's own structural
lines and are bounded and neutralised like every other quoted text.
"""

from __future__ import annotations

import re

MAX_ID = 1000

_PY_PART = r"[^\s\[\]:]+"
# pytest 9 subtests append ` [message] (k=v, …)` (either part optional) to their test's node id.
_PYTEST_NODE = re.compile(
    r"%s(?:::%s)+(?:\[.*\])?(?: (?:\[.*\] ?)?(?:\(.*\))?(?<=[\])]))?" % (_PY_PART, _PY_PART)
)
# A collection error names a file or directory: no spaces, and a file extension or a slash.
_PYTEST_PATH = re.compile(r"[^\s\[\]:]*(?:\.[A-Za-z0-9]+|/)")
_GO_TEST = re.compile(r"(?:Test|Example|Fuzz|Benchmark)[^\s/]*(?:/\S*)*")
_RUST_PATH = re.compile(r"(?:r#)?[A-Za-z_]\w*(?:::(?:r#)?[A-Za-z_]\w*)*")
_RUST_ITEM = r"[\w:<>\[\]&'()#*-]+"
_CARGO_DOCTEST = re.compile(r"\S+\.rs - %s(?:, %s)* \(line \d+\)" % (_RUST_ITEM, _RUST_ITEM))


def _fits(rx: re.Pattern[str], s: str | None) -> bool:
    if not s:
        return False
    return len(s) <= MAX_ID and rx.fullmatch(s) is not None


def pytest_nodeid(s: str | None) -> bool:
    return _fits(_PYTEST_NODE, s)


def pytest_path(s: str | None) -> bool:
    return _fits(_PYTEST_PATH, s)


def go_test(s: str | None) -> bool:
    return _fits(_GO_TEST, s)


def cargo_test(s: str | None) -> bool:
    return _fits(_RUST_PATH, s) or _fits(_CARGO_DOCTEST, s)
