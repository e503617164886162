"""webpack (webpack-cli): `ERROR in <module> <loc>` blocks and the `compiled with N errors` line.

A block is `ERROR in ./src/api.js 6:39` (or `WARNING in …`; the location is missing for some
errors, and `2:0-42` is a range: its start is kept), the message on the next line, then a code
frame and `@ ./src/main.js 4:0-40` (who imports the module).  The module path is relative to
the project as webpack prints it (`./` dropped).  Counts come from `webpack 5.112.2 compiled with
3 errors and 1 warning in 348 ms`.  With --bail the build stops at its first error and webpack-cli
prints that error as an exception (`[webpack-cli] ModuleNotFoundError: …`), without a location:
it is a build error, named with webpack's message.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Diagnostic
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_BLOCK = re.compile(r"^(?P<sev>ERROR|WARNING) in (?P<module>\S+)(?: (?P<line>\d+):(?P<col>\d+)(?:-\d+(?::\d+)?)?)?$")
_COMPILED = re.compile(r"^webpack (?P<version>\d[\w.-]*) compiled(?: successfully| with (?P<a>\d+) (?P<aw>errors?|warnings?)"
                       r"(?: and (?P<b>\d+) (?P<bw>warnings?))?) in [\d.]+ m?s$")
_THROWN = re.compile(r"^\[webpack-cli\] (?P<msg>\w*Error: .+)$")


def _block_end(s: str) -> bool:
    return bool(_BLOCK.match(s) or _COMPILED.match(s))


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format=None)
    for i, s in enumerate(lines):
        mb = _BLOCK.match(s)
        if mb:
            end = runner.block_end(lines, i, _block_end)
            message = next((x for x in lines[i + 1:end] if x.strip()), "")
            parsed.diagnostics.append(Diagnostic(
                file=mb["module"].removeprefix("./"), line=int(mb["line"]) if mb["line"] else None,
                col=int(mb["col"]) if mb["col"] else None, code=None,
                severity="error" if mb["sev"] == "ERROR" else "warning", message=one_line(message),
                span=out.span(i, end)))
            continue
        mc = _COMPILED.match(s)
        if mc:
            errors = warnings = None
            for n, word in ((mc["a"], mc["aw"]), (mc["b"], mc["bw"])):
                if n and word.startswith("error"):
                    errors = int(n)
                elif n:
                    warnings = int(n)
            parsed.counts = Counts(errors=errors, warnings=warnings)
            parsed.tool_version = mc["version"]
            parsed.summary = out.span(i, i + 1)
            continue
        mt = _THROWN.match(s)
        if mt:
            end = runner.block_end(lines, i, lambda x: not x.startswith((" ", "\t")))
            parsed.build_errors.append(BuildError(where="webpack", label="BUILD STOPPED", message=one_line(mt["msg"]),
                                                  span=out.span(i, end)))
    if not (parsed.diagnostics or parsed.build_errors or parsed.summary):
        return None
    return parsed


PROFILE = runner.bind("webpack", 1, parse, detect=(_COMPILED, _THROWN))
