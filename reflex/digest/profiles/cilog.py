"""cilog: GitHub Actions logs as `gh run view --log` / `--log-failed` (and `--job N --log`) print them.

gh prints every log line as `JOB<TAB>STEP<TAB>TIMESTAMP CONTENT` (the runner's UTC ISO-8601 stamp,
7 fractional digits and `Z`; the first line of each step's log file starts with a BOM).  When the
run's archive lacks per-step logs gh prints `UNKNOWN STEP` for every line of the whole-job log;
a log downloaded from the web UI has no job/step prefix at all (`TIMESTAMP CONTENT`).  In both the
step boundaries are the runner's own: `##[group]Run <command>` opens a step at the top level,
`Post job cleanup.` and `Cleaning up orphan processes` open the post and complete steps.

A step failed when the runner wrote `##[error]` in it (`##[error]Process completed with exit code
N.`, or a problem matcher's annotation).  Census: each failed step as a FAILED STEP build error
(`job / step`, the runner's error lines and the step's last lines as its evidence, prefixes
stripped), then what the step's own tool printed, parsed by that tool's profile (pytest, ruff,
eslint ... picked by `sniff` on the step's content with the prefixes stripped; spans mapped back to
the prefixed lines in raw, evidence shown stripped), then one item per job (its steps, which
failed) and every `##[warning]` line.  Passing steps are counted, never listed line by line; the
runner's set-up groups (`Set up job`, `with:` blocks, `##[group]`s) are not shown at all.
Nothing here is inferred: a log that does not have the shape is handed to generic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reflex.digest.facts import (
    BuildError,
    Counts,
    Diagnostic,
    Facts,
    Failure,
    Item,
    Span,
)
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import Profile, one_line
from reflex.digest.text import Output

_STAMP = r"\ufeff?(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ?"
_GH_LINE = re.compile(r"^(?P<job>[^\t]+)\t(?P<step>[^\t]*)\t" + _STAMP + r"(?P<body>.*)$")
_RAW_LINE = re.compile(r"^" + _STAMP + r"(?P<body>.*)$")
_UNKNOWN = ("UNKNOWN STEP", "UNKNOWN")  # gh's fallback label (older releases print the short one)
_EXIT = re.compile(r"^Process completed with exit code (?P<code>\d+)\.?$")
_RUN = re.compile(r"^##\[group\]Run (?P<cmd>.*)$")
_GROUP, _ENDGROUP = "##[group]", "##[endgroup]"
_ERROR, _WARNING = "##[error]", "##[warning]"
# Whole-job logs: the runner's own lines that open its set-up, post and complete steps.
_SETUP_OPENERS = ("Current runner version:",)
_POST_OPENER = "Post job cleanup."
_COMPLETE_OPENER = "Cleaning up orphan processes"

DETECT_SAMPLE = 40
CONTEXT_LINES = 8  # a failed step's lines before its error shown as evidence (the tool's own last words)
RUNNER_CONTEXT = 3  # ... when the step's tool was parsed by its profile: its findings are the evidence


@dataclass
class _Line:
    index: int  # line index in raw
    job: str
    step: str
    text: str  # the content, prefix and timestamp stripped


@dataclass
class _Step:
    job: str
    label: str  # the step as gh labelled its lines (`UNKNOWN STEP` when it could not name it)
    name: str  # as shown: gh's label, or the runner's `Run <command>` when gh had none
    lines: list[_Line] = field(default_factory=list)

    @property
    def errors(self) -> list[_Line]:
        return [ln for ln in self.lines if ln.text.startswith(_ERROR)]

    @property
    def failed(self) -> bool:
        return bool(self.errors)

    def exit_code(self) -> int | None:
        for ln in self.errors:
            m = _EXIT.match(ln.text[len(_ERROR):])
            if m:
                return int(m["code"])
        return None

    def body(self) -> list[_Line]:
        """The step's own output: without the `##[group]Run …` header (script, shell, env) the
        runner prints, and without the runner's error lines."""
        lines = self.lines
        start = 0
        if lines and _RUN.match(lines[0].text):
            for k, ln in enumerate(lines):
                if ln.text == _ENDGROUP:
                    start = k + 1
                    break
        return [ln for ln in lines[start:] if not ln.text.startswith(_ERROR)]


def _lines(out: Output) -> tuple[list[_Line], str] | None:
    """Every line with its job, step and content, and the format; None if this is not such a log."""
    sample = [s for s in out.lines[:DETECT_SAMPLE] if s.strip()]
    if not sample:
        return None
    if all(_GH_LINE.match(s) for s in sample):
        fmt, pattern = "gh", _GH_LINE
    elif all(_RAW_LINE.match(s) for s in sample) and any("##[" in s for s in out.lines):
        fmt, pattern = "raw", _RAW_LINE
    else:
        return None
    parsed: list[_Line] = []
    for i, s in enumerate(out.lines):
        m = pattern.match(s)
        if m:
            job = m["job"] if fmt == "gh" else ""
            step = m["step"] if fmt == "gh" else _UNKNOWN[0]
            parsed.append(_Line(i, job, step, m["body"]))
        elif parsed:  # a line the log itself broke: it belongs where it is
            prev = parsed[-1]
            parsed.append(_Line(i, prev.job, prev.step, s))
    if fmt == "gh" and all(ln.step in _UNKNOWN for ln in parsed):
        fmt = "gh-unknown-steps"
    return parsed, fmt


def _steps(lines: list[_Line]) -> list[_Step]:
    """Consecutive lines of one job and step form a step; a step gh could not name is split where
    the runner opens one (a top-level `##[group]Run …`, the post and complete steps)."""
    steps: list[_Step] = []
    depth = 0
    for ln in lines:
        cur = steps[-1] if steps else None
        if cur is None or (cur.job, cur.label) != (ln.job, ln.step):
            cur = _Step(ln.job, ln.step, ln.step)
            steps.append(cur)
            depth = 0
        if ln.step in _UNKNOWN:
            name = _opened_step(ln.text) if depth == 0 else None
            if name is not None and cur.lines:
                cur = _Step(ln.job, ln.step, name)
                steps.append(cur)
            elif name is not None:
                cur.name = name
        if ln.text.startswith(_GROUP):
            depth += 1
        elif ln.text == _ENDGROUP and depth:
            depth -= 1
        cur.lines.append(ln)
    return steps


def _opened_step(text: str) -> str | None:
    """The name of the step this top-level line of a whole-job log opens, if it opens one."""
    m = _RUN.match(text)
    if m:
        return f"Run {m['cmd']}"
    if text.startswith(_SETUP_OPENERS):
        return "Set up job"
    if text == _POST_OPENER:
        return "Post job cleanup"
    if text == _COMPLETE_OPENER:
        return "Complete job"
    return None


def _step_title(step: _Step) -> str:
    return f"{step.job} / {step.name}" if step.job else step.name


class _Mapper:
    """Spans in a step's stripped content (what its tool's profile parsed) -> spans in raw."""

    def __init__(self, out: Output, body: list[_Line]):
        self.out = out
        self.indexes = [ln.index for ln in body]
        self.text = "".join(ln.text + "\n" for ln in body)
        self.raw = self.text.encode("utf-8")
        self.sub = Output(self.raw)

    def span(self, span: Span | None) -> Span | None:
        if span is None or span[1] <= span[0] or not self.indexes:
            return None
        a = self.sub.line_index(span[0])
        b = self.sub.line_index(span[1] - 1)
        return self.out.span(self.indexes[a], self.indexes[min(b, len(self.indexes) - 1)] + 1)

    def stripped(self, span: Span | None) -> str | None:
        """The span's lines without the prefixes: what the digest shows as evidence."""
        if span is None or span[1] <= span[0]:
            return None
        return self.raw[span[0]:span[1]].decode("utf-8", "replace").rstrip("\n")


@dataclass
class _Findings:
    failures: list[Failure] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    build_errors: list[BuildError] = field(default_factory=list)
    counts: list[Counts] = field(default_factory=list)
    summaries: dict[int, str] = field(default_factory=dict)  # step number -> its tool's verdict lines
    tools: dict[int, str] = field(default_factory=dict)  # step number -> the profile that parsed it


def _tool_findings(out: Output, k: int, step: _Step, found: _Findings, qualify: bool) -> bool:
    """Parse a failed step's own output with its tool's profile; False if no profile knows it."""
    body = step.body()
    if not body:
        return False
    m = _Mapper(out, body)
    picked = _tool_facts(m.raw, step.exit_code())
    if picked is None:
        return False
    profile, facts = picked
    for f in facts.failures:
        ident = f"{step.job} > {f.id}" if qualify and f.id else f.id
        found.failures.append(f.model_copy(update={"id": ident, "span": m.span(f.span),
                                                   "detail": f.detail or m.stripped(f.span)}))
    for d in facts.diagnostics:
        found.diagnostics.append(d.model_copy(update={"span": m.span(d.span),
                                                      "detail": d.detail or _multiline(m.stripped(d.span))}))
    for be in facts.build_errors:
        found.build_errors.append(be.model_copy(update={"span": m.span(be.span),
                                                        "detail": be.detail or m.stripped(be.span)}))
    found.counts.append(facts.counts)
    found.tools[k] = profile.name
    if facts.summary:
        found.summaries[k] = m.stripped(facts.summary) or ""
    return True


def _tool_facts(raw: bytes, exit_code: int | None) -> tuple[Profile, Facts] | None:
    """The runner profile that parses a step's output, and its Facts: git.runner_facts, the one
    rule for output embedded in another tool's (a pre-commit hook's, a CI step's).  git's module,
    not the registry: the registry imports this module."""
    from reflex.digest.profiles.git import runner_facts

    return runner_facts(raw, exit_code)


def _multiline(text: str | None) -> str | None:
    # A one-line finding says everything on its census line: no evidence block for it.
    return text if text and "\n" in text else None


def _failed_step_error(out: Output, step: _Step, parsed_by: str | None, summary: str | None) -> BuildError:
    errors = [ln.text[len(_ERROR):] for ln in step.errors]
    body = step.body()
    first_error = step.errors[0].index
    before = [ln.text for ln in body if ln.index < first_error and ln.text.strip()]
    context = before[-(RUNNER_CONTEXT if parsed_by else CONTEXT_LINES):]
    if summary:
        context = [s for s in summary.split("\n") if s.strip()]
    detail = "\n".join(context + [_ERROR + e for e in errors])
    message = "; ".join(one_line(e) for e in errors)
    if parsed_by:
        message += f" (its output parsed as {parsed_by})"
    elif before:
        # No profile knows the step's tool: its last words are what says why it failed.
        message = f"{one_line(before[-1])} ({message})"
    return BuildError(where=_step_title(step), message=message, label="FAILED STEP",
                      span=out.span(step.lines[0].index, step.lines[-1].index + 1), detail=detail)


def _sum_counts(all_counts: list[Counts], failed_steps: int, passed_steps: int) -> Counts:
    fixed: dict[str, int] = {}
    for c in all_counts:
        for key, n in c.model_dump(exclude={"other"}).items():
            if n is not None:
                fixed[key] = fixed.get(key, 0) + n
    other: dict[str, int] = {}
    for c in all_counts:
        for key, n in c.other.items():
            other[key] = other.get(key, 0) + n
    if failed_steps:
        other["failed step" if failed_steps == 1 else "failed steps"] = failed_steps
    if passed_steps:
        other["passed step" if passed_steps == 1 else "passed steps"] = passed_steps
    return Counts(**fixed, other=other)


def _job_items(out: Output, steps: list[_Step]) -> list[Item]:
    items: list[Item] = []
    jobs: dict[str, list[_Step]] = {}
    for s in steps:
        jobs.setdefault(s.job, []).append(s)
    for job, members in jobs.items():
        failed = [s for s in members if s.failed]
        n = len(members)
        what = f"{n} step{'' if n == 1 else 's'} in this log"
        if failed:
            names = ", ".join(f"{s.name}" + (f" (exit {s.exit_code()})" if s.exit_code() is not None else "")
                              for s in failed)
            what += f", failed: {names}"
        else:
            what += ", none failed"
        span = out.span(members[0].lines[0].index, members[-1].lines[-1].index + 1)
        items.append(Item(group="jobs", noun="jobs", text=f"{job or 'job'}: {what}",
                          severity="error" if failed else "info", span=span))
    for s in steps:
        for ln in s.lines:
            if ln.text.startswith(_WARNING):
                items.append(Item(group="warnings", noun="warnings", severity="warning",
                                  text=f"{_step_title(s)}: {ln.text[len(_WARNING):]}", span=out.span(ln.index, ln.index + 1)))
    return items


def parse(out: Output) -> runner.Parsed | None:
    got = _lines(out)
    if got is None:
        return None
    lines, fmt = got
    steps = [s for s in _steps(lines) if s.lines]
    if not steps:
        return None
    found = _Findings()
    step_errors: list[BuildError] = []
    # A test that fails in two jobs of a matrix is two failures: each id then names its job.
    qualify = len({s.job for s in steps if s.failed}) > 1
    for k, step in enumerate(steps):
        if not step.failed:
            continue
        parsed = _tool_findings(out, k, step, found, qualify)
        step_errors.append(_failed_step_error(out, step, found.tools.get(k) if parsed else None,
                                              found.summaries.get(k)))
    failed = sum(1 for s in steps if s.failed)
    counts = _sum_counts(found.counts, failed, len(steps) - failed)
    return runner.Parsed(format=fmt, counts=counts, failures=found.failures, diagnostics=found.diagnostics,
                         build_errors=step_errors + found.build_errors, items=_job_items(out, steps))


def _detect(out: Output) -> bool:
    return _lines(Output.of(b"".join(out.raw.splitlines(keepends=True)[:DETECT_SAMPLE]))) is not None


PROFILE = runner.bind("cilog", 1, parse, detect=(_detect,))
