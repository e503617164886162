"""cargo build / check / clippy: rustc and clippy diagnostics, in cargo's human and short formats.

Human format: `error[E0308]: msg` / `warning: msg` with its `--> file:line:col`
(the patterns of the cargo test profile, whose compile-error reading this is).
The code is rustc's error code, else the lint the block names: its
`#[warn(lint)]` / `#[deny(lint)]` note or `#[allow(lint)]` help (printed at a
lint's first occurrence), else clippy's `…/index.html#lint` link (printed every
time).  Short format (`--message-format short`): `file:line:col: error[E0308]: msg`.
A diagnostic cargo reports for several targets is listed once; errors before
warnings.  `could not compile `crate` (lib)` is a build error; cargo's own
count lines (`… generated 3 warnings (1 duplicate)`, `… due to 4 previous
errors; 2 warnings emitted`) are kept as notes, verbatim: their figures count
per target and duplicates, so no total is made of them.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Diagnostic
from reflex.digest.profiles import cargotest, runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_DIAG = cargotest._DIAG
_ARROW = cargotest._ARROW
_COULD_NOT = cargotest._COULD_NOT
_SHORT = re.compile(r"^(?P<file>[^\s:][^:]*\.rs):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning)"
                    r"(?:\[(?P<code>[^\]]+)\])?: (?P<msg>.+)$")
_GENERATED = re.compile(r"^warning: `[^`]+` \([^)]+\) generated \d+ warnings?")
_LINT_ATTR = re.compile(r"#\[(?:warn|deny|allow|expect|forbid)\((?P<lint>[\w:]+)\)\]")
_CLIPPY_URL = re.compile(r"rust-clippy/[^ ]*index\.html#(?P<lint>\w+)")
_STEP = re.compile(r"^\s+(?:Compiling|Checking|Finished|Fresh|Building|Blocking|Documenting|Updating|Locking) ")


def _ends(s: str) -> bool:
    return bool(_DIAG.match(s) or _COULD_NOT.match(s) or _SHORT.match(s) or _STEP.match(s)
                or s.startswith("Some errors have") or s.startswith("For more information"))


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)
    diags: list[Diagnostic] = []
    seen: set[tuple] = set()
    build_errors: list[BuildError] = []
    notes: list[str] = []
    short = False

    def add(file: str, line: str, col: str, code: str | None, sev: str, msg: str, a: int, b: int) -> None:
        key = (file, line, col, code, msg, sev)
        if key not in seen:
            seen.add(key)
            diags.append(Diagnostic(file=file, line=int(line), col=int(col), code=code, severity=sev,
                                    message=one_line(msg), span=out.span(a, b)))

    i = 0
    while i < n:
        s = lines[i]
        mc = _COULD_NOT.match(s)
        if mc:
            where = mc["crate"] + (f" ({mc['target']})" if mc["target"] else "")
            build_errors.append(BuildError(where=where, message=one_line(s[len("error: "):]), span=out.span(i, i + 1)))
            i += 1
            continue
        if _GENERATED.match(s):
            notes.append(one_line(s[len("warning: "):]))
            i += 1
            continue
        ms = _SHORT.match(s)
        if ms:
            short = True
            add(ms["file"], ms["line"], ms["col"], ms["code"], ms["sev"], ms["msg"], i, i + 1)
            i += 1
            continue
        md = _DIAG.match(s)
        if md:
            j = i + 1
            while j < n and not _ends(lines[j]):
                j += 1
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            arrow = next((_ARROW.match(lines[k]) for k in range(i + 1, min(j, i + 4)) if _ARROW.match(lines[k])), None)
            if arrow:
                code = md["code"]
                if code is None:
                    block = "\n".join(lines[i + 1:j])
                    lint = _LINT_ATTR.search(block)
                    url = _CLIPPY_URL.search(block)
                    code = lint["lint"] if lint else (f"clippy::{url['lint']}" if url else None)
                add(arrow["file"], arrow["line"], arrow["col"], code, md["sev"], md["msg"], i, j)
                i = j
                continue
        i += 1
    if not diags and not build_errors:
        return None
    diags.sort(key=lambda d: d.severity != "error")
    return runner.Parsed(format="short" if short else None, diagnostics=diags, build_errors=build_errors,
                         notes=notes)


PROFILE = runner.bind("cargobuild", 1, parse, detect=(runner.anywhere(_COULD_NOT, _GENERATED),))
