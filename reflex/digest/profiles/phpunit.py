"""PHPUnit: the numbered error/failure lists, --testdox, fatal load errors, the Tests: summary.

Default output lists `There were N errors:` / `There were N failures:`, each
entry `1) Class::method with data set "name" (args…)`, its message and the
file:line frames; the id is `Class::method` plus the data set's name (what
`--filter` matches; the argument values are dropped).  --testdox prints
`Class` headers and ` ✘ Prettified name` lines; those ids are the prettified
names PHPUnit printed.  A test file that does not even parse stops PHPUnit
with `PHP Fatal error:  Uncaught ParseError: … in FILE:LINE`: a build error
for FILE.  Counts come from `Tests: 9, Assertions: 5, Errors: 2, …` or
`OK (9 tests, 12 assertions)`.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_BANNER = re.compile(r"^PHPUnit (?P<v>\d+\.\d+\S*) by Sebastian Bergmann")
_LIST = re.compile(r"^There (?:was|were) \d+ (?P<what>errors?|failures?|warnings?|risky tests?|skipped tests?|"
                   r"incomplete tests?):$")
_ENTRY = re.compile(r"^\d+\) (?P<id>[\w\\]+::\w+(?: with data set (?:\"[^\"]*\"|#\d+))?)(?: \(.*\))?$")
_FRAME = re.compile(r"^(?P<file>/\S+\.php|\S+\.php):(?P<line>\d+)$")
_SUMMARY = re.compile(r"^(?:Tests: \d+, Assertions: \d+.*\.|OK \(\d+ tests?, \d+ assertions?\))$")
_PAIR = re.compile(r"(\w+(?: \w+)?): (\d+)|(\d+) (tests?|assertions?)")
_FATAL = re.compile(r"^PHP Fatal error:\s+Uncaught (?P<exc>\w+(?:\\\w+)*): (?P<msg>.+?) in (?P<file>\S+?):(?P<line>\d+)$")
_DOX_CLASS = re.compile(r"^(?P<name>[A-Z][\w\\ ]*)$")
_DOX_FAIL = re.compile(r"^ ✘ (?P<name>.+)$")
_DOX_BODY = re.compile(r"^   │ ?(?P<text>.*)$")
_WORDS = {"tests": "total", "test": "total", "failures": "failed", "errors": "errors", "skipped": "skipped",
          "warnings": "warnings", "incomplete": "todo"}


def _ends(s: str) -> bool:
    return bool(_ENTRY.match(s) or _LIST.match(s) or _SUMMARY.match(s) or s == "--"
                or s.startswith(("FAILURES!", "ERRORS!", "WARNINGS!")))


def _counts(s: str) -> Counts:
    pairs = []
    for word, n, n2, word2 in _PAIR.findall(s):
        pairs.append(((word or word2).lower(), int(n or n2)))
    return runner.counts_from(pairs, _WORDS)


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed()
    listing = None
    summary = banner = False
    dox_class = None
    i = 0
    while i < len(lines):
        s = lines[i]
        mb = _BANNER.match(s)
        if mb:
            banner = True
            parsed.tool_version = mb["v"]
            i += 1
            continue
        ml = _LIST.match(s)
        if ml:
            listing = ml["what"]
            i += 1
            continue
        me = _ENTRY.match(s) if listing in ("error", "errors", "failure", "failures") else None
        if me:
            end = runner.block_end(lines, i, _ends)
            body = [x.strip() for x in lines[i + 1:end] if x.strip()]
            frames = [m for m in map(_FRAME.match, body) if m]
            f = Failure(id=me["id"], kind="error" if (listing or "").startswith("error") else "failed",
                        message=one_line(body[0] if body else ""), span=out.span(i, end))
            if frames:
                f.file, f.line = frames[-1]["file"], int(frames[-1]["line"])
            parsed.failures.append(f)
            i = max(end, i + 1)
            continue
        mf = _FATAL.match(s)
        if mf:
            end = runner.block_end(lines, i, lambda x: bool(_SUMMARY.match(x)))
            parsed.build_errors.append(BuildError(where=mf["file"], message=one_line(f"{mf['exc']}: {mf['msg']} "
                                                                                     f"(line {mf['line']})"),
                                                  span=out.span(i, end)))
            i = max(end, i + 1)
            continue
        mc = _DOX_CLASS.match(s) if banner and listing is None else None
        if mc and not s.startswith(("Time:", "OK", "Tests:")):
            dox_class = mc["name"].strip()
            i += 1
            continue
        md = _DOX_FAIL.match(s) if dox_class else None
        if md:
            parsed.format = "testdox"
            end = runner.block_end(lines, i, lambda x: not _DOX_BODY.match(x))
            body = [m["text"].strip() for m in map(_DOX_BODY.match, lines[i + 1:end]) if m and m["text"].strip()]
            frames = [m for m in map(_FRAME.match, body) if m]
            f = Failure(id=f"{dox_class} > {md['name'].strip()}", message=one_line(body[0] if body else ""),
                        span=out.span(i, end))
            if frames:
                f.file, f.line = frames[-1]["file"], int(frames[-1]["line"])
            parsed.failures.append(f)
            i = max(end, i + 1)
            continue
        if _SUMMARY.match(s):
            parsed.counts = _counts(s)
            parsed.summary = out.span(i, i + 1)
            summary = True
        i += 1
    if not (summary or banner or parsed.build_errors):
        return None
    if parsed.format == "testdox":  # the same failures again, as numbered lists, after the tree
        seen: dict[str, Failure] = {}
        dox = [f for f in parsed.failures if " > " in (f.id or "")]
        numbered = [f for f in parsed.failures if " > " not in (f.id or "")]
        for f in numbered:
            seen.setdefault(f.id or "", f)
        parsed.failures = numbered if numbered else dox
    if not summary and not parsed.build_errors:
        parsed.notes.append("no summary line: the run did not finish")
    return parsed


PROFILE = runner.bind("phpunit", 1, parse, detect=(_BANNER, _SUMMARY))
