"""Minitest: numbered Failure/Error blocks, the `N runs, …` summary, -v result lines.

A block is `  1) Failure:` (or `Error:`), then `Class#test_name [file:line]:`
(errors: `Class#test_name:` and the exception, its location in the
backtrace), then the message.  The id is `Class#test_name`, which `-n` (or
`--name`) re-runs.  Counts are the summary's own: `8 runs, 5 assertions,
4 failures, 2 errors, 1 skips`.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_BLOCK = re.compile(r"^\s+\d+\) (?P<kind>Failure|Error):$")
_TITLE = re.compile(r"^(?P<id>[\w:]+#\S+?)(?: \[(?P<file>[^\]:]+):(?P<line>\d+)\])?:$")
_SUMMARY = re.compile(r"^(?P<body>\d+ runs, \d+ assertions, \d+ failures, \d+ errors, \d+ skips)$")
_PAIR = re.compile(r"(\d+) (runs|assertions|failures|errors|skips)")
_FRAME = re.compile(r"^\s+(?P<file>[^\s:]+\.rb):(?P<line>\d+):in ")
_WORDS = {"runs": "total", "failures": "failed", "errors": "errors", "skips": "skipped"}
_RUN_OPTIONS = re.compile(r"^Run options: ")


def _ends(s: str) -> bool:
    return bool(_BLOCK.match(s) or _SUMMARY.match(s))


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed()
    summary = False
    i = 0
    while i < len(lines):
        s = lines[i]
        mb = _BLOCK.match(s)
        if mb and i + 1 < len(lines) and (mt := _TITLE.match(lines[i + 1])):
            end = runner.block_end(lines, i, _ends)
            body = [x.strip() for x in lines[i + 2:end] if x.strip()]
            f = Failure(id=mt["id"], kind="error" if mb["kind"] == "Error" else "failed", span=out.span(i, end))
            if mt["file"]:
                f.file, f.line = mt["file"], int(mt["line"])
            else:  # an error: the test's own frame in the backtrace, else the first one
                frames = [m for m in map(_FRAME.match, lines[i + 2:end]) if m]
                own = [m for m in frames if not m["file"].startswith("/")] or frames
                if own:
                    f.file, f.line = own[-1]["file"], int(own[-1]["line"])
            expected = [x for x in body[:4] if x.startswith(("Expected", "Actual"))]
            f.message = one_line(" ".join(expected) if expected else (body[0] if body else ""))
            parsed.failures.append(f)
            i = max(end, i + 1)
            continue
        ms = _SUMMARY.match(s)
        if ms:
            parsed.counts = runner.counts_from(((w, int(n)) for n, w in _PAIR.findall(s)), _WORDS)
            parsed.summary = out.span(i, i + 1)
            summary = True
        i += 1
    if not summary and not parsed.failures:
        return None
    if not summary:
        parsed.notes.append("no summary line: the run did not finish")
    return parsed


PROFILE = runner.bind("minitest", 1, parse, detect=(_SUMMARY, _RUN_OPTIONS))
