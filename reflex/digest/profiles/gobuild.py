"""go build and go vet: `# package` headers, `file:line:col: msg` lines, and `go vet -json`.

go build: each `# pkg` header opens the compiler errors of a package that
did not build; the package is a build error (`BUILD FAILED pkg`), each
`file.go:line:col: msg` a diagnostic (the compiler names no codes).  go vet
(text): the same shape, one finding per line, no analyzer named; a package
that does not type-check is vet's own `vet: file:line:col: msg` line, and the
package a build error.  go vet -json: one JSON object per package, findings by
analyzer (the analyzer is the code); vet exits 0 there, so they are warnings.
Go prints no counts.  `too many errors` is kept as a note: the compiler stopped
listing.
"""

from __future__ import annotations

import json
import re

from reflex.digest.facts import BuildError, Diagnostic
from reflex.digest.profiles import gotest, runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_PKG = gotest._BUILD_HEADER  # `# example.com/textkit/stats`: go test prints the same header
_DIAG = re.compile(r"^(?P<vet>vet: )?(?P<file>[^\s:#][^:]*\.go):(?P<line>\d+):(?P<col>\d+): (?P<msg>.+)$")
_NOTE = re.compile(r"^(?:too many errors|note: .+)$")
_POSN = re.compile(r"^(?P<file>.+\.go):(?P<line>\d+):(?P<col>\d+)$")


def _parse(out: Output, build: bool) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)
    diags: list[Diagnostic] = []
    build_errors: list[BuildError] = []
    notes: list[str] = []
    pkg: str | None = None
    pkg_at = 0
    failed: set[str] = set()
    json_mode = False
    i = 0
    while i < n:
        s = lines[i]
        mp = _PKG.match(s)
        if mp:
            pkg, pkg_at = mp["pkg"], i
            i += 1
            continue
        if s.startswith("{") and pkg is not None:  # go vet -json: this package's object, up to its closing brace
            j = i + 1 if s.strip() == "{}" else runner.block_end(lines, i, lambda x: x == "}") + 1
            try:
                report = json.loads("\n".join(lines[i:j]))
            except ValueError:
                i += 1
                continue
            json_mode = True
            for by_analyzer in report.values():
                for analyzer, findings in by_analyzer.items():
                    for f in findings:
                        mpos = _POSN.match(str(f.get("posn", "")))
                        diags.append(Diagnostic(
                            file=mpos["file"] if mpos else None, line=int(mpos["line"]) if mpos else None,
                            col=int(mpos["col"]) if mpos else None, code=analyzer, severity="warning",
                            message=one_line(str(f.get("message", ""))), span=out.span(i, j)))
            i = j
            continue
        md = _DIAG.match(s)
        if md:
            diags.append(Diagnostic(file=md["file"], line=int(md["line"]), col=int(md["col"]), code=None,
                                    severity="error", message=one_line(md["msg"]), span=out.span(i, i + 1)))
            if (build or md["vet"]) and pkg is not None and pkg not in failed:
                failed.add(pkg)
                label = "BUILD FAILED" if build else "TYPE CHECK FAILED"
                build_errors.append(BuildError(where=pkg, label=label, message=one_line(md["msg"]),
                                               span=out.span(pkg_at, i + 1)))
            i += 1
            continue
        if _NOTE.match(s):
            notes.append(one_line(s))
        i += 1
    if not diags and not json_mode:
        return None
    return runner.Parsed(format="json" if json_mode else None, diagnostics=diags, build_errors=build_errors,
                         notes=notes)


def parse_build(out: Output) -> runner.Parsed | None:
    return _parse(out, build=True)


def parse_vet(out: Output) -> runner.Parsed | None:
    return _parse(out, build=False)


_DETECT = (runner.head(50, _PKG),)
PROFILE = runner.bind("gobuild", 1, parse_build, detect=_DETECT)
VET_PROFILE = runner.bind("govet", 1, parse_vet, detect=_DETECT)
