"""gotestsum: the summary it prints after every format (=== Skipped / === Failed / === Errors / DONE).

Whatever `--format` shows while running (pkgname, testname, dots, standard-
verbose…), gotestsum ends with the same sections: `=== FAIL: <pkg> <Test>
(0.00s)` per failing test (packages relative to the module, as gotestsum
prints them), `=== FAIL: <pkg>  (0.00s)` with no test for a package that
failed on its own (TestMain, init, a crash) — a build error labelled PACKAGE
FAIL — the compiler's `file:line:col: msg` lines under `=== Errors`, and
`DONE 12 tests, 1 skipped, 3 failures, 2 errors in 2.6s`.  Output without
those sections is go test's own text and goes to the go test profile.
"""

from __future__ import annotations

import posixpath
import re

from reflex.digest.facts import BuildError, Diagnostic, Failure
from reflex.digest.profiles import gotest, runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_SECTION = re.compile(r"^=== (?P<name>Skipped|Failed|Errors)$")
_FAIL = re.compile(r"^=== FAIL: (?P<pkg>\S+) (?P<test>\S*) ?\((?P<t>[0-9.]+s)\)$")
_DONE = re.compile(r"^DONE (?P<body>(?:\d+ \w+(?:, )?)+) in [0-9.]+\w*$")
_PAIR = re.compile(r"(\d+) (tests?|skipped|failures?|errors?)")
_COMPILE = re.compile(r"^(?P<file>[^\s:][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$")
_LOG = re.compile(r"^\s+(?P<file>[\w./-]+\.go):(?P<line>\d+): (?P<msg>.*)$")
_WORDS = {"tests": "total", "test": "total", "skipped": "skipped", "failures": "failed", "failure": "failed",
          "errors": "errors", "error": "errors"}


def _message(lines: list[str]) -> tuple[str, str | None, int | None]:
    for s in lines:
        m = _LOG.match(s)
        if m:
            return one_line(m["msg"]), m["file"], int(m["line"])
        t = s.strip()
        if t and not t.startswith(("=== RUN", "--- FAIL", "goroutine ")):
            if t == "got:":
                return one_line(" ".join(x.strip() for x in lines if x.strip() and not x.startswith("===")), 160), None, None
            return one_line(t), None, None
    return "", None, None


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    done = next((i for i in range(len(lines) - 1, -1, -1) if _DONE.match(lines[i])), None)
    if done is None:
        return None
    parsed = runner.Parsed(format="gotestsum")
    section = None
    errors_by_pkg: dict[str, list[int]] = {}
    i = 0
    while i < done:
        s = lines[i]
        ms = _SECTION.match(s)
        if ms:
            section = ms["name"]
            i += 1
            continue
        mf = _FAIL.match(s) if section == "Failed" else None
        if mf:
            end = runner.block_end(lines, i, lambda x: bool(_FAIL.match(x) or _SECTION.match(x) or _DONE.match(x)),
                                   limit=done)
            message, file, line = _message(lines[i + 1:end])
            if not mf["test"]:
                parsed.build_errors.append(BuildError(
                    where=mf["pkg"], label="PACKAGE FAIL", span=out.span(i, end),
                    message=one_line("failed with no failing test (TestMain/init exit or crash)"
                                     + (f": {message}" if message else ""))))
            else:
                parsed.failures.append(Failure(id=f"{mf['pkg']} {mf['test']}", message=message, file=file, line=line,
                                               span=out.span(i, end)))
            i = max(end, i + 1)
            continue
        mc = _COMPILE.match(s) if section == "Errors" else None
        if mc:
            parsed.diagnostics.append(Diagnostic(file=mc["file"], line=int(mc["line"]),
                                                 col=int(mc["col"]) if mc["col"] else None,
                                                 message=one_line(mc["msg"]), span=out.span(i, i + 1)))
            errors_by_pkg.setdefault(posixpath.dirname(mc["file"]) or ".", []).append(len(parsed.diagnostics) - 1)
        i += 1
    for pkg, idx in errors_by_pkg.items():
        own = [parsed.diagnostics[k] for k in idx]
        msg = own[0].message if len({d.message for d in own}) == 1 else f"{len(own)} compile errors, listed below"
        span = (own[0].span[0], own[-1].span[1]) if own[0].span and own[-1].span else None
        parsed.build_errors.append(BuildError(where=pkg, message=msg, span=span))
    parsed.counts = runner.counts_from(((w, int(n)) for n, w in _PAIR.findall(lines[done])), _WORDS)
    parsed.summary = out.span(done, done + 1)
    return parsed


# Without its summary, the output is go test's own text (standard-quiet/-verbose): go test's profile reads it.
PROFILE = runner.bind("gotestsum", 1, parse, detect=(_DONE,), fallback=gotest.PROFILE)
