"""Explicit slicers: apply the agent's `| head/tail/grep` to the raw output ourselves.  STDLIB-ONLY.

When the agent writes `pytest … | tail -20`, ctx runs `pytest …` (storing the
raw output whole) and must still hand back what was asked for — the last 20
lines — plus the census header, so the slicer can never cut the census or
the handle away.  `apply(raw, "tail -20")` computes that view from the raw
bytes.  Supported, alone or chained with `|`:

    head [-n] N | head -N          tail [-n] N | tail -N | tail -n +N
    grep [-i] [-v] [-E|-F] [-c] [-n] [-e] PATTERN   (also egrep, fgrep, rg with the same flags)

Anything else (sed, awk, cut, sort, `grep -A3`, …) returns None: the caller
then runs the agent's pipeline as written rather than guess at its meaning.
A grep pattern is translated from POSIX ERE to Python regex only in the
common case (ERE and Python agree on `| ( ) + ? { } [ ] . * ^ $`); BRE
escapes (`\\|`, `\\(`) are converted.
"""

from __future__ import annotations

import re
import shlex

_GREPS = ("grep", "egrep", "fgrep", "rg")


def apply(raw: bytes, pipeline: str) -> str | None:
    """The text the agent's slicer pipeline would print for `raw`, or None if unsupported."""
    try:
        stages = _split(pipeline)
    except ValueError:
        return None
    if not stages:
        return None
    lines = raw.decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for argv in stages:
        result = _stage(argv, lines)
        if result is None:
            return None
        lines = result
    return "".join(s + "\n" for s in lines)


def _split(pipeline: str) -> list[list[str]]:
    lexer = shlex.shlex(pipeline, posix=True, punctuation_chars="|")
    lexer.whitespace_split = True
    stages: list[list[str]] = [[]]
    for tok in lexer:
        if tok == "|":
            stages.append([])
        elif set(tok) <= {"|", "&", ";", "<", ">"}:
            raise ValueError("not a plain pipeline")
        else:
            stages[-1].append(tok)
    if any(not s for s in stages):
        raise ValueError("empty stage")
    return stages


def _count_arg(args: list[str]) -> tuple[int, bool] | None:
    """(N, from_start) for head/tail arguments; from_start is tail's `+N` form."""
    if not args:
        return 10, False
    if len(args) == 1 and re.fullmatch(r"-\d+", args[0]):
        return int(args[0][1:]), False
    if len(args) == 2 and args[0] in ("-n", "--lines"):
        val = args[1]
    elif len(args) == 1 and args[0].startswith("-n") and len(args[0]) > 2:
        val = args[0][2:]
    elif len(args) == 1 and args[0].startswith("--lines="):
        val = args[0].split("=", 1)[1]
    else:
        return None
    if re.fullmatch(r"\+\d+", val):
        return int(val[1:]), True
    if re.fullmatch(r"-?\d+", val):
        return abs(int(val)), False
    return None


def _stage(argv: list[str], lines: list[str]) -> list[str] | None:
    cmd, args = argv[0], argv[1:]
    if cmd == "head":
        spec = _count_arg(args)
        if spec is None or spec[1]:
            return None
        return lines[: spec[0]]
    if cmd == "tail":
        spec = _count_arg(args)
        if spec is None:
            return None
        n, from_start = spec
        if from_start:
            return lines[max(n - 1, 0) :]
        return lines[len(lines) - n :] if n else []
    if cmd in _GREPS:
        return _grep(cmd, args, lines)
    return None


def _grep(cmd: str, args: list[str], lines: list[str]) -> list[str] | None:
    ignore = invert = count = number = False
    fixed = cmd == "fgrep"
    extended = cmd in ("egrep", "rg")
    patterns: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-e" and i + 1 < len(args):
            patterns.append(args[i + 1])
            i += 2
            continue
        if a.startswith("-") and len(a) > 1 and not patterns:
            for flag in a[1:]:
                if flag == "i":
                    ignore = True
                elif flag == "v":
                    invert = True
                elif flag == "c":
                    count = True
                elif flag == "n":
                    number = True
                elif flag == "E":
                    extended = True
                elif flag == "F":
                    fixed = True
                else:
                    return None  # context flags (-A/-B/-C), -o, -l …: not ours to imitate
            i += 1
            continue
        if patterns and cmd != "rg":
            return None  # a file argument: grep would not read our stdin
        patterns.append(a)
        i += 1
    if not patterns:
        return None
    try:
        regexes = [re.compile(_to_python(p, fixed, extended), re.IGNORECASE if ignore else 0) for p in patterns]
    except re.error:
        return None
    out = []
    for k, s in enumerate(lines, 1):
        hit = any(r.search(s) for r in regexes)
        if hit != invert:
            out.append(f"{k}:{s}" if number else s)
    return [str(len(out))] if count else out


def _to_python(pattern: str, fixed: bool, extended: bool) -> str:
    if fixed:
        return re.escape(pattern)
    if extended:
        return pattern
    # BRE: \| \( \) \{ \} \+ \? are operators, bare ones are literals.
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "|(){}+?":
            out.append(pattern[i + 1])
            i += 2
            continue
        out.append("\\" + c if c in "|(){}+?" else c)
        i += 1
    return "".join(out)
