"""cargo test: per-target results, panics, and rustc diagnostics when the build fails.

Ids are the names libtest prints (`tests::formats_forties`, `years`,
`src/lib.rs - from_roman (line 78)` for doctests).  Failing ids come from the
`failures:` lists each target prints after its stdout blocks, falling back to
`test <name> ... FAILED` / `<name> --- FAILED` (-q) lines; counts are the sum
of every target's `test result:` line.  A failed build yields one diagnostic
per rustc `error[CODE]: msg` / `warning: msg` with its `--> file:line:col`,
and a build error per `could not compile <crate> (<target>)`.
"""

from __future__ import annotations

import re

from reflex.digest import ids as ids_mod
from reflex.digest.facts import BuildError, Counts, Diagnostic, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_RESULT = re.compile(
    r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out"
)
_TEST = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<st>ok|FAILED|ignored|bench)")
_QUIET_FAIL = re.compile(r"^(?P<name>\S.*?) --- FAILED$")
_BLOCK = re.compile(r"^---- (?P<name>.+?) (?:stdout|stderr) ----$")
_PANIC = re.compile(r"panicked at (?P<file>[^:\s]+):(?P<line>\d+):(?P<col>\d+):?$")
_RUNNING = re.compile(r"^\s+(?:Running|Doc-tests) (?P<target>.+)$")
_DIAG = re.compile(r"^(?P<sev>error|warning)(?:\[(?P<code>[^\]]+)\])?: (?P<msg>.+)$")
_ARROW = re.compile(r"^\s*--> (?P<file>[^:\s]+):(?P<line>\d+):(?P<col>\d+)$")
_COULD_NOT = re.compile(r"^error: could not compile `(?P<crate>[^`]+)`(?: \((?P<target>[^)]+)\))?(?P<rest>.*)$")
_RUNNING_TESTS = re.compile(r"^running \d+ tests?$")


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)
    totals = [0, 0, 0, 0, 0]
    saw_result = False
    listed: list[str] = []
    line_fail: dict[str, int] = {}
    blocks: dict[str, tuple[int, int]] = {}
    diags: list[Diagnostic] = []
    seen_diags: set[tuple] = set()
    build_errors: list[BuildError] = []
    notes: list[str] = []
    recognized = False
    in_list = False
    block_name: str | None = None
    block_start = 0

    def end_block(at: int) -> None:
        nonlocal block_name
        if block_name is not None:
            blocks.setdefault(block_name, (block_start, at))
            block_name = None

    i = 0
    while i < n:
        s = lines[i]
        if _RUNNING_TESTS.match(s):
            recognized = True
            in_list = False
        m = _RESULT.match(s)
        if m:
            recognized = saw_result = True
            end_block(i)
            in_list = False
            for k in range(5):
                totals[k] += int(m.group(k + 1))
            i += 1
            continue
        mb = _BLOCK.match(s)
        if mb:
            end_block(i)
            block_name, block_start = mb["name"], i
            in_list = False
            i += 1
            continue
        if s == "failures:":
            recognized = True
            # The second `failures:` of a target is the id list (indented names).
            if i + 1 < n and lines[i + 1].startswith("    ") and not _BLOCK.match(lines[i + 1]):
                end_block(i)
                in_list = True
            i += 1
            continue
        if in_list:
            if s.startswith("    ") and s.strip():
                listed.append(s.strip())
                i += 1
                continue
            in_list = False
        mt = _TEST.match(s) or _QUIET_FAIL.match(s)
        if mt:
            recognized = True
            if mt.groupdict().get("st", "FAILED") == "FAILED":
                line_fail.setdefault(mt["name"], i)
            i += 1
            continue
        mc = _COULD_NOT.match(s)
        if mc:
            recognized = True
            where = mc["crate"] + (f" ({mc['target']})" if mc["target"] else "")
            build_errors.append(BuildError(where=where, message=one_line(s[len("error: "):]), span=out.span(i, i + 1)))
            i += 1
            continue
        md = _DIAG.match(s)
        if md and block_name is None:
            j = i + 1
            while j < n and not _ends_diagnostic(lines[j]):
                j += 1
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            arrow = next((_ARROW.match(lines[k]) for k in range(i + 1, min(j, i + 4)) if _ARROW.match(lines[k])), None)
            if arrow:
                recognized = True
                key = (arrow["file"], arrow["line"], arrow["col"], md["code"], md["msg"])
                if key not in seen_diags:
                    seen_diags.add(key)
                    diags.append(Diagnostic(file=arrow["file"], line=int(arrow["line"]), col=int(arrow["col"]),
                                            code=md["code"], severity=md["sev"], message=one_line(md["msg"]),
                                            span=out.span(i, j)))
                i = j
                continue
            if s.startswith("error: test failed") or s.startswith("error: doctest failed"):
                notes.append(s[len("error: "):])
        i += 1
    end_block(n)
    if not recognized:
        return None

    # Only names shaped like Rust test paths (ids.py): a printed `test ignore all … ... FAILED` is not one.
    listed = [name for name in listed if ids_mod.cargo_test(name)]
    line_fail = {name: i for name, i in line_fail.items() if ids_mod.cargo_test(name)}
    ids = list(dict.fromkeys(listed)) or list(line_fail)
    failures = []
    for name in ids:
        a, b = blocks.get(name, (line_fail.get(name, 0), line_fail.get(name, 0) + 1))
        f = Failure(id=name, span=out.span(a, b))
        _panic_message(lines, a, b, f)
        failures.append(f)
    counts = Counts(passed=totals[0], failed=totals[1], skipped=totals[2]) if saw_result else Counts()
    # libtest has one output format for a human reader: none is named.
    return runner.Parsed(format=None, counts=counts, failures=failures, diagnostics=diags,
                         build_errors=build_errors, notes=notes)


def _ends_diagnostic(s: str) -> bool:
    return bool(
        _DIAG.match(s) or _COULD_NOT.match(s) or _RUNNING.match(s) or _RESULT.match(s)
        or s.startswith("Some errors have") or s.startswith("For more information")
        or s.startswith("   Compiling ") or s.startswith("    Finished ")
    )


def _panic_message(lines: list[str], a: int, b: int, f: Failure) -> None:
    for k in range(a, min(b, len(lines))):
        m = _PANIC.search(lines[k])
        if m:
            f.file, f.line = m["file"], int(m["line"])
            rest = []
            for s in lines[k + 1 : min(b, k + 4)]:
                if not s.strip() or s.startswith("note:") or s.startswith("stack backtrace"):
                    break
                rest.append(s.strip())
            f.message = one_line(" ".join(rest))
            return
    body = [s.strip() for s in lines[a + 1 : b] if s.strip()]
    f.message = one_line(body[0]) if body else ""


# Compiler output can run long before the first test line: any line may tell.
PROFILE = runner.bind("cargotest", 1, parse, detect=(runner.anywhere(_RESULT, _RUNNING_TESTS, _COULD_NOT),))
