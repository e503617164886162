"""Facts: what a profile parsed out of one raw output, and nothing it did not see.

A profile turns raw bytes into Facts; render.py turns Facts into a digest.
Every field is either parsed from the output or left empty (None / []):
counts the runner never printed stay None, so a digest can never state a
verdict ("0 failed", "no issues") that the output did not contain.

Spans are half-open byte ranges into the raw output, on line boundaries
(hence on UTF-8 boundaries), so each one is also an `r:<h>:L<a>-<b>` address.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Span = tuple[int, int]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Counts(_Model):
    """Outcome counts exactly as the runner reported them; None = not reported."""

    passed: int | None = None
    failed: int | None = None
    errors: int | None = None
    skipped: int | None = None
    xfailed: int | None = None
    xpassed: int | None = None
    deselected: int | None = None
    todo: int | None = None
    warnings: int | None = None
    total: int | None = None
    files: int | None = None  # "in N files": how many files the failures/findings are in
    # Counts the runner printed that have no field above ("subtests failed", "suites failed",
    # "assertions"), under the runner's own words, so that every count it printed is stated.
    other: dict[str, int] = Field(default_factory=dict)

    def reported(self) -> dict[str, int]:
        """The counts the runner printed, in a fixed order."""
        fixed = {k: v for k, v in self.model_dump(exclude={"other"}).items() if v is not None}
        return {**fixed, **{k: v for k, v in self.other.items() if k not in fixed}}


class Failure(_Model):
    """One failing (or erroring) test."""

    id: str | None  # the runner's own id (pytest nodeid, go Test/sub, ...); None if never printed
    kind: Literal["failed", "error"] = "failed"
    file: str | None = None
    line: int | None = None
    message: str = ""  # one line
    span: Span | None = None  # its detail block in raw
    # Decoded evidence when the raw span is not readable as text (JSON reporters).
    detail: str | None = None


class Diagnostic(_Model):
    """One compiler/linter/type-checker finding."""

    file: str | None
    line: int | None = None
    col: int | None = None
    code: str | None = None
    severity: str = "error"
    message: str = ""
    span: Span | None = None
    detail: str | None = None


class BuildError(_Model):
    """A failure to even run tests: collection errors, compile errors, crashed suites."""

    where: str | None
    message: str
    # How the census names it when the profile's usual label ("BUILD ERROR", "COLLECTION ERROR")
    # would mislead: a go package whose TestMain exited non-zero, a file a linter could not parse.
    label: str | None = None
    span: Span | None = None
    detail: str | None = None


class Highlight(_Model):
    """An error/warning line found by the generic profile; repeats folded into `count`."""

    line: int  # 1-based line of the first occurrence
    count: int = 1
    severity: Literal["error", "warning"]
    text: str
    span: Span


class Item(_Model):
    """One census entry of a tool that is not a test runner or a linter: a changed path (git
    status), a file of a diff with its stats, a commit, a search match, a listed file, a failing CI
    step, an install warning.  Census before detail holds for them as for failures: every item is
    named (or counted, with an address to its bytes) before any body is shown.

    `group` is the heading the item is listed under, in first-seen order ("modified", "untracked",
    "commits", a matched file's path); `noun` is what the omission note calls items of that group
    when the census cannot list them all ("paths", "commits", "matches"); `text` is the entry as one
    line (program-derived: the census clips, redacts and neutralizes it; a clipped line carries an
    address to its whole line; the tightest census names it by `ref`).  `span` covers the item's own bytes in raw; with `body` set, the
    lines of `span` after the first are its body (a file's hunks in a diff, a failing CI step's
    log), shown after the whole census as far as the budget allows, each cut one with an address.
    """

    group: str
    noun: str = "entries"
    text: str
    severity: Literal["error", "warning", "info"] = "info"
    span: Span | None = None
    body: bool = False
    # How the tightest census names it (`L12` for a match); None: the first word of `text`.
    ref: str | None = None


class Facts(_Model):
    profile: str
    profile_version: int
    tool_version: str | None = None
    format: str | None = None  # e.g. "text", "verbose", "json"
    recognized: bool
    handed_over_from: str | None = None  # the profile that did not recognise this output
    exit_code: int | None = None
    counts: Counts = Field(default_factory=Counts)
    failures: list[Failure] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    build_errors: list[BuildError] = Field(default_factory=list)
    # The runner's own verdict/summary lines, kept verbatim in every digest.
    summary: Span | None = None
    notes: list[str] = Field(default_factory=list)
    highlights: list[Highlight] = Field(default_factory=list)
    items: list[Item] = Field(default_factory=list)
    total_lines: int = 0
