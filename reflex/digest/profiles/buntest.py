"""bun test: bun's built-in test runner, in its default console reporter, --dots and --only-failures.

Each test file's results follow its header line (`test/cart.test.js:`); a
result is `(pass) Cart > total > adds [0.1ms]` (`(fail)`, `(skip)`, `(todo)`),
or with colour `✓`, `✗`, `»`, `✎`.  A failure's detail (code frame, `error:`
line, Expected/Received, `at` lines) is printed *before* its `(fail)` line.
The id is `<file> > <describe…> > <test>`, the file bun printed and the name
`-t` matches; bun names a failing beforeAll/afterAll hook `(unnamed)`.

`# Unhandled error between tests` is an error outside any test: a file that
did not parse or whose import did not resolve (bun counts it as one failure
and one error).  It is an ERROR named by its file.  Counts are bun's own
` 11 pass` / ` 9 fail` / ` 1 error` / ` 17 expect() calls` lines and
`Ran 22 tests across 4 files.`; `Bailed out after N failures` is a note.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_VERSION = re.compile(r"^bun test v(?P<v>\d[\w.\-]*)")
_FILE = re.compile(r"^(?P<file>[^\s|#()].*\.(?:[cm]?[jt]sx?)):$")
_RESULT = re.compile(r"^(?:\((?P<st>pass|fail|skip|todo)\)|(?P<mark>[✓✗»✎])) (?P<name>.+?)(?: \[[0-9.]+m?s\])?$")
_MARKS = {"✓": "pass", "✗": "fail", "»": "skip", "✎": "todo"}
_UNHANDLED = re.compile(r"^# Unhandled errors? between tests$")
_DASHES = re.compile(r"^-{10,}$")
_COUNT = re.compile(r"^\s*(?P<n>\d+) (?P<w>[a-z][a-z() ]*?)\s*$")
_RAN = re.compile(r"^Ran (?P<tests>\d+) tests? across (?P<files>\d+) files?\.")
_BAILED = re.compile(r"^Bailed out after (?P<n>\d+) failures?")
_ERROR = re.compile(r"^(?:error|[A-Z]\w*(?:Error|Exception)): (?P<msg>.*)$")
_AT = re.compile(r"^\s+at (?:.*\()?(?P<file>[^\s()]+?):(?P<line>\d+):(?P<col>\d+)\)?$")
_MATCHER = re.compile(r"^expect\(received\)(?:\.not)?\.(?P<m>\w+)\(.*\)$")
_FRAME = re.compile(r"^\s*\d+ \|")
_WORDS = {"pass": "passed", "fail": "failed", "skip": "skipped", "todo": "todo", "error": "errors",
          "errors": "errors"}


def _message(body: list[str]) -> str:
    """The error line, plus Expected/Received when bun printed them."""
    for k, s in enumerate(body):
        m = _ERROR.match(s)
        if not m:
            continue
        extra = [x.strip() for x in body[k + 1:k + 6] if x.startswith(("Expected:", "Received:", "- ", "+ "))]
        head = s if not s.startswith("error: ") else m["msg"]
        matcher = _MATCHER.match(head)
        if extra and matcher:  # `expect(received).toBe(expected)`: the values say it
            head = matcher["m"] + ":"
        return one_line(" ".join([head, *extra[:4]]))
    return one_line(next((s for s in body if s.strip() and not _FRAME.match(s) and s.strip() != "^"), ""))


def _location(body: list[str], file: str | None) -> tuple[str | None, int | None]:
    first = None
    for s in body:
        m = _AT.match(s)
        if not m:
            continue
        if file and (m["file"] == file or m["file"].endswith("/" + file)):
            return None, int(m["line"])  # the id names the file: the line is what it adds
        first = first or (m["file"], int(m["line"]))
    return (file, None) if first is None else first


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format="text")
    header = False
    for s in lines[:5]:
        m = _VERSION.match(s)
        if m:
            parsed.tool_version, header = m["v"], True
    if any(s.startswith("Ran ") and _RAN.match(s) for s in lines[-40:]):
        header = True
    if not header:
        return None
    file: str | None = None
    start = 0  # where the current detail block began: after the previous result or header
    ran = None
    i = 0
    while i < len(lines):
        s = lines[i]
        mf = _FILE.match(s)
        if mf:
            file, start = mf["file"], i + 1
            i += 1
            continue
        if _UNHANDLED.match(s):
            j = i + 1
            if j < len(lines) and _DASHES.match(lines[j]):
                j += 1
            end = runner.block_end(lines, j, lambda x: bool(_DASHES.match(x)))
            body = lines[j:end]
            where, line = _location(body, file)
            parsed.failures.append(Failure(id=file, kind="error", file=where, line=line,
                                           message=_message(body) or "unhandled error between tests",
                                           span=out.span(i, min(end + 1, len(lines)))))
            i = end + 1
            start = i
            continue
        mr = _RESULT.match(s)
        if mr:
            st = mr["st"] or _MARKS[mr["mark"]]
            if st == "fail":
                a = start
                while a < i and not lines[a].strip():
                    a += 1
                body = lines[a:i]
                name = mr["name"]
                ident = f"{file} > {name}" if file else name
                where, line = _location(body, file)
                msg = _message(body)
                if name.endswith("(unnamed)"):
                    msg = one_line("hook failed: " + msg)
                parsed.failures.append(Failure(id=ident, file=where, line=line, message=msg,
                                               span=out.span(a, i + 1)))
            start = i + 1
            i += 1
            continue
        if s.strip() and set(s.strip()) <= set("."):
            start = i + 1  # the dots reporter's progress line
        mran = _RAN.match(s)
        if mran:
            ran = (int(mran["tests"]), int(mran["files"]))
            k = i - 1
            pairs: list[tuple[str, int]] = []
            while k >= 0 and (mc := _COUNT.match(lines[k])):
                pairs.append((mc["w"], int(mc["n"])))
                k -= 1
            pairs.reverse()
            counts = runner.counts_from(pairs, _WORDS)
            counts.total = ran[0]
            counts.other["files"] = ran[1]
            parsed.counts = counts
            parsed.summary = out.span(k + 1, i + 1)
        mb = _BAILED.match(s)
        if mb:
            parsed.notes.append(s.strip() + " (later tests and files did not run)")
        i += 1
    if ran is None:
        parsed.notes.append("no `Ran N tests across M files` line: the run did not finish")
        if not parsed.failures:
            return None
    return parsed


PROFILE = runner.bind("buntest", 1, parse, detect=(runner.head(5, _VERSION),))
