"""deno test: deno's built-in test runner, in its pretty (default), dot and tap reporters.

The pretty and dot reporters end with an ` ERRORS ` section (one block per
failure, headed `<name> => ./file:line:col`, then `error: …`) and a
` FAILURES ` list of the same headers; the id is the test's name (what
`--filter` matches), a failing step `test ... step` is named `test > step`.
A test that failed only because a step failed is not in that list, and is not
named.  The summary is `FAILED | 6 passed (2 steps) | 7 failed (1 step) | 1
ignored (98ms)`; steps are counted apart, as deno prints them.

TAP (`--reporter=tap`) gives `not ok N - name` with a one-line JSON block
(`message`, `at.file`, `at.line`); steps are `# Subtest: test` with indented
results; the top-level plan `1..14` is its only count.  A module that does not type-check, resolve or parse stops deno
before any test (`TS2307 [ERROR]: …` / `error: Module not found …` and its
`at file:///…` line): a build error named by that file.
"""

from __future__ import annotations

import json
import re

from reflex.digest.facts import BuildError, Counts, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output, strip_ansi

_CHECK = re.compile(r"^Check (?:file://)?\S+$")
_RUNNING = re.compile(r"^running \d+ tests? from (?P<file>\S+)$")
_SECTION = re.compile(r"^ (?P<s>ERRORS|FAILURES) $")
_HEADER = re.compile(r"^(?P<name>\S.*?) => (?P<file>\S+?):(?P<line>\d+):(?P<col>\d+)$")
_SUMMARY = re.compile(r"^(?P<verdict>ok|FAILED) \| (?P<body>.*?)(?: \([0-9.]+m?s\))?$")
_PART = re.compile(r"^(?P<n>\d+) (?P<w>passed|failed|ignored|filtered out|measured)(?: \((?P<steps>\d+) steps?\))?$")
_ERROR = re.compile(r"^error: (?P<msg>.*)$")
_TS = re.compile(r"^(?P<code>TS\d+) \[ERROR\]: (?P<msg>.*)$")
_AT_FILE = re.compile(r"^\s+at (?P<file>file://\S+?):(?P<line>\d+):(?P<col>\d+)$")
_TAP_HEAD = re.compile(r"^TAP version \d+$")
_TAP_PLAN = re.compile(r"^1\.\.(?P<n>\d+)$")
_TAP_FILE = re.compile(r"^# (?P<file>\./\S+)$")
_TAP_SUB = re.compile(r"^(?P<ind>\s*)# Subtest: (?P<name>.+)$")
_TAP_RESULT = re.compile(r"^(?P<ind>\s*)(?P<st>not ok|ok) \d+ - (?P<name>.*?)(?P<dir> # (?:SKIP|TODO)\b.*)?$")
_STEP_ONLY = re.compile(r"^\d+ test steps? failed\.?$")
_WORDS = {"passed": "passed", "failed": "failed", "ignored": "skipped", "filtered out": "deselected"}


def _file(path: str) -> str:
    path = runner.relative(path)
    return path[2:] if path.startswith("./") else path


def _message(body: list[str]) -> str:
    for k, s in enumerate(body):
        m = _ERROR.match(s)
        if m:
            extra = [x.strip() for x in body[k + 1:k + 6] if x.strip().startswith(("[Actual]", "[Expected]"))]
            return one_line(" ".join([m["msg"], *extra]))
    return one_line(body[0]) if body else ""


def _build_errors(out: Output, parsed: runner.Parsed) -> None:
    """A module deno could not check, resolve or parse: it stopped before any test."""
    lines = out.lines
    for i, s in enumerate(lines):
        if _RUNNING.match(s) or _TAP_HEAD.match(s) or _SECTION.match(s):
            return
        mt, me = _TS.match(s), _ERROR.match(s)
        if not (mt or me) or (me and me["msg"] in ("Type checking failed.", "Test failed")):
            continue
        # its `at file:///…` line follows, after a code frame (`  |` lines) for a parse error
        k = next((k for k in range(i + 1, min(i + 8, len(lines))) if _AT_FILE.match(lines[k])), None)
        at = _AT_FILE.match(lines[k]) if k is not None else None
        inline = re.search(r"(file://\S+?):(\d+):(\d+)", s)
        where = _file(at["file"]) if at else (_file(inline.group(1)) if inline else None)
        msg = f"{mt['code']} {mt['msg']}" if mt else (me["msg"] if me else s)  # (one of them matched)
        parsed.build_errors.append(BuildError(where=where, message=one_line(msg),
                                              span=out.span(i, (k if k is not None else i) + 1)))


def _parse_tap(out: Output, parsed: runner.Parsed) -> None:
    lines = out.lines
    parsed.format = "tap"
    names = runner.NamePath()
    file = None
    for i, s in enumerate(lines):
        mp = _TAP_PLAN.match(s)
        if mp:  # the top-level plan: deno's only count in TAP
            parsed.counts = Counts(total=int(mp["n"]))
            parsed.summary = out.span(i, i + 1)
            continue
        mf = _TAP_FILE.match(s)
        if mf:
            file = _file(mf["file"])
            continue
        ms = _TAP_SUB.match(s)
        if ms:
            names.enter(len(ms["ind"]) // 4, ms["name"])
            continue
        mr = _TAP_RESULT.match(s)
        if not mr or mr["st"] != "not ok" or mr["dir"]:
            continue
        depth = len(mr["ind"]) // 4
        info: dict = {}
        end = i + 1
        if i + 2 < len(lines) and lines[i + 1].strip() == "---":
            try:
                info = json.loads(lines[i + 2].strip())
            except ValueError:
                info = {}
            end = i + 4 if i + 3 < len(lines) and lines[i + 3].strip() == "..." else i + 3
        message = strip_ansi(str(info.get("message", "")))
        if _STEP_ONLY.match(message.strip()):
            continue  # named by its failing step
        at = info.get("at") or {}
        body = [x for x in message.split("\n") if x.strip()]
        msg = body[0] if body else ""
        extra = [x.strip() for x in body[1:4] if x.strip().startswith(("[Actual]", "[Expected]"))]
        parsed.failures.append(Failure(id=names.path(depth, mr["name"]), file=_file(at["file"]) if at.get("file") else file,
                                       line=at.get("line"), message=one_line(" ".join([msg, *extra])),
                                       span=out.span(i, end)))


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format="text")
    if any(_TAP_HEAD.match(s) for s in lines[:3]):
        _parse_tap(out, parsed)
        return parsed
    section = None
    blocks: dict[str, tuple[int, int]] = {}
    listed: list[tuple[int, re.Match[str]]] = []
    summary = False
    dots = False
    for i, s in enumerate(lines):
        msec = _SECTION.match(s)
        if msec:
            section = msec["s"]
            continue
        mh = _HEADER.match(s)
        if mh and section == "ERRORS":
            end = runner.block_end(lines, i, lambda x: bool(_HEADER.match(x) or _SECTION.match(x)))
            blocks.setdefault(s, (i, end))
            continue
        if mh and section == "FAILURES":
            listed.append((i, mh))
            continue
        msum = _SUMMARY.match(s)
        if msum:
            pairs: list[tuple[str, int]] = []
            for part in msum["body"].split(" | "):
                mp = _PART.match(part.strip())
                if mp:
                    pairs.append((mp["w"], int(mp["n"])))
                    if mp["steps"]:
                        pairs.append((f"{mp['w']} steps", int(mp["steps"])))
            parsed.counts = runner.counts_from(pairs, _WORDS)
            parsed.summary = out.span(i, i + 1)
            summary = True
            section = None
            continue
        if s.strip() in ("!", ".", ",") or _RUNNING.match(s):
            dots = dots or s.strip() in ("!", ".", ",")
    for i, mh in listed:
        header = lines[i]
        a, b = blocks.get(header, (i, i + 1))
        body = lines[a + 1:b]
        name = mh["name"].replace(" ... ", " > ")
        parsed.failures.append(Failure(id=name, file=_file(mh["file"]), line=int(mh["line"]),
                                       message=_message(body), span=out.span(a, b)))
    if not summary:
        _build_errors(out, parsed)
    if dots:
        parsed.format = "dot"
    if not (summary or parsed.failures or parsed.build_errors):
        return None
    if not summary and not parsed.build_errors:
        parsed.notes.append("no `ok | … passed` summary line: the run did not finish")
    return parsed


PROFILE = runner.bind("denotest", 1, parse, detect=(runner.head(20, _RUNNING), runner.tail(10, _SUMMARY)))
