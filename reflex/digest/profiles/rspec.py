"""RSpec: the Failures section, files that failed to load, and the re-run list.

Every reporter (progress, documentation) ends the same way: numbered blocks
under `Failures:` (`  1) Cart#total takes 10% off`, then `Failure/Error:` and
the expectation or exception), the summary line, and `Failed examples:` with
one pasteable `rspec ./spec/x_spec.rb:27 # <description>` per failure.  The
id is the example's full description (what `--format json` reports and what
`-e` matches); the re-run location from that list becomes its file and line
(or, for a shared line such as a table row, `spec/x_spec.rb[1:2:1]`).
`An error occurred while loading F` is a build error: no example of F ran.
Pending examples are listed under `Pending:` in the same numbered form and
are not failures.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_SECTION = re.compile(r"^(?P<name>Failures|Pending):")
_HEADER = re.compile(r"^\s{2}\d+\) (?P<desc>.+)$")
_LOAD_ERROR = re.compile(r"^An error occurred (?:while loading (?P<file>\S+?)\.?|in (?P<hook>.+?)\.?)$")
_SUMMARY = re.compile(r"^(?P<n>\d+) examples?, (?P<f>\d+) failures?(?P<rest>.*)$")
_RERUN = re.compile(r"^rspec (?P<loc>\S+) # (?P<desc>.+)$")
_FINISHED = re.compile(r"^Finished in [0-9.]+ (?:seconds?|minutes?)")
_EXCEPTION = re.compile(r"^\s*(?P<exc>[A-Z][\w:]*(?:Error|Exception|Failure|Interrupt)):$")
_EXPECT = re.compile(r"^\s*(?:expected|got|Diff|expected:|got:)\b")
_PAIR = re.compile(r"(\d+) (pending|errors? occurred outside of examples)")


def _ends(s: str) -> bool:
    return bool(_HEADER.match(s) or _SECTION.match(s) or _FINISHED.match(s) or _RERUN.match(s)
                or _LOAD_ERROR.match(s) or _SUMMARY.match(s))


def _message(body: list[str]) -> str:
    text = [s.strip() for s in body if s.strip() and not s.strip().startswith("#")]
    for k, s in enumerate(text):
        m = _EXCEPTION.match(s)
        if m and k + 1 < len(text):
            return one_line(f"{m['exc']}: {text[k + 1]}")
    expect = [s for s in text if _EXPECT.match(s)]
    if expect:
        return one_line(" ".join(expect[:2]))
    first = text[0] if text else ""
    return one_line(first.removeprefix("Failure/Error: "))


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed()
    section = None
    summary = False
    by_desc: dict[str, list[Failure]] = {}
    i = 0
    while i < len(lines):
        s = lines[i]
        msec = _SECTION.match(s)
        if msec:
            section = msec["name"]
            i += 1
            continue
        ml = _LOAD_ERROR.match(s)
        if ml:
            end = runner.block_end(lines, i, _ends)
            exc = _message(lines[i + 1:end])
            where = ml["file"] or ml["hook"]
            label = None if ml["file"] else "HOOK ERROR"
            parsed.build_errors.append(BuildError(where=runner.relative(where, ("./",)), label=label,
                                                  message=exc or s, span=out.span(i, end)))
            section = None
            i = max(end, i + 1)
            continue
        mh = _HEADER.match(s) if section == "Failures" else None
        if mh:
            end = runner.block_end(lines, i, _ends)
            f = Failure(id=mh["desc"], message=_message(lines[i + 1:end]), span=out.span(i, end))
            parsed.failures.append(f)
            by_desc.setdefault(mh["desc"], []).append(f)
            i = max(end, i + 1)
            continue
        ms = _SUMMARY.match(s)
        if ms:
            pairs = [("examples", int(ms["n"])), ("failures", int(ms["f"]))]
            pairs += [(w, int(n)) for n, w in _PAIR.findall(ms["rest"])]
            parsed.counts = runner.counts_from(pairs, {"examples": "total", "failures": "failed",
                                                       "pending": "skipped", "error occurred outside of examples":
                                                       "errors", "errors occurred outside of examples": "errors"})
            parsed.summary = out.span(i, i + 1)
            summary = True
            section = None
        mr = _RERUN.match(s)
        if mr:
            for f in by_desc.get(mr["desc"], []):
                if f.file is None:
                    loc = runner.relative(mr["loc"], ("./",))
                    path, _, line = loc.rpartition(":")
                    if path and line.isdigit():
                        f.file, f.line = path, int(line)
                    else:  # an id such as spec/x_spec.rb[1:2:1]: the location to re-run
                        f.file = loc
                        f.message = one_line(f"rspec {loc}: {f.message}")
                    break
        i += 1
    if not summary and not parsed.failures and not parsed.build_errors:
        return None
    if not summary:
        parsed.notes.append("no summary line: the run did not finish")
    return parsed


PROFILE = runner.bind("rspec", 1, parse, detect=(_SUMMARY, _RERUN))
