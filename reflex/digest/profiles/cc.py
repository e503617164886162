"""cc: gcc and clang diagnostics, and the link step, as make, cmake --build and ninja print them.

One diagnostic per `file:line[:col]: error|warning|fatal error: message [-Wflag]`
(gcc and clang share the form; the flag in brackets is the code).  The
context lines before it (`In file included from …`, `file: In function ‘f’:`)
and the code frame, notes and `compilation terminated.` after it are its
span; notes are not counted.  One diagnostic that several files report (a
header's, once per file that includes it) is listed once; errors are listed
before warnings.

The link step: GNU ld's `undefined reference to …` / `multiple definition of …`
with the source file and line when the objects carry debug info (`file.c:(.text+0x1f)`
without); other ld errors (`cannot find -lm`) and compiler-driver errors
(`cc: error: x.c: No such file or directory`) are build errors.  The build
tool's own failure lines name the target that failed: make's
`make: *** [Makefile:12: build/x.o] Error 1` (the innermost of a recursive
make's chain) and ninja's `FAILED: obj`; `ninja: build stopped …`, make's
`Target 'all' not remade because of errors.` and `collect2: error: ld returned 1
exit status` are kept as notes.  gcc prints no counts; clang's per-file
`N warnings and M errors generated.` are summed and stated as printed.

Output with none of these (make running a script, a test runner) is not
this profile's: the caller sniffs the test profiles first, and generic
takes the rest.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Diagnostic
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)? "
                   r"(?P<sev>error|warning|fatal error|note|remark): (?P<msg>.*)$")
_FLAG = re.compile(r"\s+\[(?P<flag>-W[^\]\s]*|-f[^\]\s]*|-Werror[^\]\s]*)\]$")
_CONTEXT = re.compile(r"^(?:In file included from .+[:,]|\s+from .+[:,]|[^\s:][^:]*: (?:In |At top level:|At global scope:"
                      r"|In instantiation of|In member function|In function|In static|In constructor|In destructor"
                      r"|In lambda|In substitution).*)$")
_LD = re.compile(r"^(?:\S*/)?(?:ld|ld\.\w+|lld|ld64\.lld)(?:-\d+)?: (?P<rest>.+)$")
_LD_SYMBOL = re.compile(r"^(?P<loc>.+?): (?P<msg>(?:undefined reference to|multiple definition of) .+)$")
# After `/usr/bin/ld: x.o: in function `main':` GNU ld names the reference without its prefix.
_LD_BARE = re.compile(r"^(?P<rest>[^\s:][^:]*:(?:\d+|\([^)]*\)): (?:undefined reference to|multiple definition of) .+)$")
_LD_IN_FUNCTION = re.compile(r": in function [`'‘].+[`'’]:$")
_DRIVER = re.compile(r"^(?:\S*/)?(?P<prog>cc|gcc|g\+\+|c\+\+|cpp|clang|clang\+\+|cc1|cc1plus|collect2|lto-wrapper)"
                     r"(?:-\d+(?:\.\d+)*)?: (?P<sev>fatal error|error|warning|note): (?P<msg>.+)$")
_MAKE_FAIL = re.compile(r"^(?P<prog>\S*make)(?:\[(?P<depth>\d+)\])?: \*\*\* \[(?:(?P<mk>[^\]]+?):(?P<mkline>\d+): )?"
                        r"(?P<target>[^\]]+)\] (?P<what>.+)$")
_MAKE_NO_RULE = re.compile(r"^(?P<prog>\S*make)(?:\[\d+\])?: \*\*\* No rule to make target [`'‘](?P<target>[^'’]+)['’]"
                           r"(?P<rest>.*)$")
_MAKE_NOTE = re.compile(r"^\S*make(?:\[\d+\])?: (?:Target .+ not remade because of errors\.|\*\*\* Waiting for unfinished jobs)")
_NINJA_FAILED = re.compile(r"^FAILED: (?P<target>.+?)\s*$")
_NINJA_STOP = re.compile(r"^ninja: (?:build stopped: .*|error: .*)$")
_PROGRESS = re.compile(r"^(?:\[\s*\d+/\d+\] |\[\s*\d+%\] |-- |Scanning dependencies|Consolidate compiler)")
_GENERATED = re.compile(r"^(?:(?P<w>\d+) warnings? and (?P<e1>\d+) errors?|(?P<w2>\d+) warnings?|(?P<e2>\d+) errors?) generated\.$")
_ECHO = re.compile(r"^(?:\S*/)?(?:cc|gcc|g\+\+|c\+\+|clang|clang\+\+|ar|ranlib|mkdir|rm|cmake|ld)(?:-\d+)? ")
_MAKE_DIR = re.compile(r"^\S*make(?:\[\d+\])?: (?:Entering|Leaving) directory ")
_TERMINATED = re.compile(r"^compilation terminated\.$")


def _boundary(s: str) -> bool:
    """A line that ends the code frame of the diagnostic before it."""
    return bool(_DIAG.match(s) or _CONTEXT.match(s) or _LD.match(s) or _LD_BARE.match(s) or _DRIVER.match(s) or _MAKE_FAIL.match(s)
                or _MAKE_NO_RULE.match(s) or _MAKE_NOTE.match(s) or _NINJA_FAILED.match(s) or _NINJA_STOP.match(s)
                or _PROGRESS.match(s) or _GENERATED.match(s) or _ECHO.match(s) or _MAKE_DIR.match(s))


def _code(msg: str) -> tuple[str, str | None]:
    m = _FLAG.search(msg)
    if not m:
        return msg, None
    flag = m["flag"]
    if flag.startswith("-Werror,"):  # clang: [-Werror,-Wunused-variable]
        flag = flag.split(",", 1)[1]
    return msg[: m.start()], flag


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)
    diags: list[Diagnostic] = []
    seen: set[tuple] = set()
    build_errors: list[BuildError] = []
    notes: list[str] = []
    make_fails: list[tuple[int, int, BuildError]] = []  # (index, depth, error)
    generated = {"warnings generated": 0, "errors generated": 0}
    clang_counts = False
    located = False
    context_start: int | None = None
    i = 0
    while i < n:
        s = lines[i]
        if _CONTEXT.match(s):
            if context_start is None:
                context_start = i
            i += 1
            continue
        m = _DIAG.match(s)
        if m and m["sev"] not in ("note", "remark"):
            start = i if context_start is None else context_start
            context_start = None
            j = i + 1
            # The code frame, then the notes that explain this diagnostic (and their frames).
            while j < n:
                mj = _DIAG.match(lines[j])
                if mj and mj["sev"] in ("note", "remark"):
                    j += 1
                    continue
                if _TERMINATED.match(lines[j]):
                    j += 1
                    continue
                if _boundary(lines[j]):
                    break
                j += 1
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            msg, code = _code(m["msg"])
            sev = "error" if m["sev"] == "fatal error" else m["sev"]
            key = (m["file"], m["line"], m["col"], code, msg, sev)
            located = True
            if key not in seen:
                seen.add(key)
                diags.append(Diagnostic(file=m["file"], line=int(m["line"]), col=int(m["col"]) if m["col"] else None,
                                        code=code, severity=sev, message=one_line(msg), span=out.span(start, j)))
            i = j
            continue
        context_start = None
        ml = _LD.match(s) or _LD_BARE.match(s)
        if ml:
            rest = ml["rest"]
            sym = _LD_SYMBOL.match(rest)
            if sym:
                located = True
                loc = sym["loc"]
                # `/abs/src/main.c:23`, `build/b.o:/abs/src/b.c:3`, or `main.c:(.text+0x1f)` (no debug info)
                mloc = re.match(r"^(?:.+?\.o(?:bj)?:)?(?P<file>[^:()]+?):(?P<line>\d+)$", loc) or \
                    re.match(r"^(?:.+?\.o(?:bj)?:)?(?P<file>[^:()]+?):\(", loc)
                file = mloc["file"] if mloc else loc
                line = int(mloc["line"]) if mloc and mloc.groupdict().get("line") else None
                key = (file, line, None, None, sym["msg"], "error")
                if key not in seen:
                    seen.add(key)
                    a = i - 1 if i and _LD.match(lines[i - 1]) and _LD_IN_FUNCTION.search(lines[i - 1]) else i
                    diags.append(Diagnostic(file=file, line=line, code=None, severity="error",
                                            message=one_line(sym["msg"]), span=out.span(a, i + 1)))
            elif not _LD_IN_FUNCTION.search(rest):
                located = True
                build_errors.append(BuildError(where=None, label="LINK ERROR", message=one_line(rest),
                                               span=out.span(i, i + 1)))
            i += 1
            continue
        md = _DRIVER.match(s)
        if md:
            if md["prog"] == "collect2" or "linker command failed" in md["msg"]:
                notes.append(one_line(s))
            elif md["sev"] in ("error", "fatal error"):
                located = True
                build_errors.append(BuildError(where=None, label="COMPILER ERROR", message=one_line(s),
                                               span=out.span(i, i + 1)))
            i += 1
            continue
        mf = _MAKE_FAIL.match(s)
        if mf:
            be = BuildError(where=mf["target"].strip(), label="FAILED", message=one_line(f"{mf['prog']}: {mf['what']}"),
                            span=out.span(i, i + 1))
            make_fails.append((i, int(mf["depth"] or 0), be))
            i += 1
            continue
        mr = _MAKE_NO_RULE.match(s)
        if mr:
            build_errors.append(BuildError(where=mr["target"], label="NO RULE", message=one_line(s), span=out.span(i, i + 1)))
            i += 1
            continue
        mn = _NINJA_FAILED.match(s)
        if mn:
            j = runner.block_end(lines, i, _boundary)
            build_errors.append(BuildError(where=mn["target"], label="FAILED", message="ninja", span=out.span(i, j)))
            i += 1
            continue
        if _NINJA_STOP.match(s) or _MAKE_NOTE.match(s):
            if "Waiting for unfinished jobs" not in s:
                notes.append(one_line(s))
            i += 1
            continue
        mg = _GENERATED.match(s)
        if mg:
            clang_counts = True
            generated["warnings generated"] += int(mg["w"] or mg["w2"] or 0)
            generated["errors generated"] += int(mg["e1"] or mg["e2"] or 0)
        i += 1
    if not located:
        return None
    # A recursive make prints its failure once per level (gmake[2], gmake[1], gmake): the innermost
    # names the target whose recipe failed; the levels after it only repeat that it did.
    previous = -1
    for _i, depth, be in make_fails:
        if previous < 0 or depth >= previous:
            build_errors.append(be)
        previous = depth
    # Errors first (they stop the build; a warning does not), each kind in the order printed.
    diags.sort(key=lambda d: d.severity != "error")
    counts = Counts()
    if clang_counts:
        counts = Counts(other={k: v for k, v in generated.items() if v})
    return runner.Parsed(format=None, counts=counts, diagnostics=diags, build_errors=build_errors, notes=notes)


PROFILE = runner.bind("cc", 1, parse, detect=(runner.anywhere(re.compile(
    r"^[^\s:][^:]*?:\d+:(?:\d+:)? (?:error|warning|fatal error): "), re.compile(r"ld(?:\.\w+)?: .*undefined reference to "),
    _LD_BARE),))
