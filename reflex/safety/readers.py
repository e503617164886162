"""Readers whose first operand is not a file: patterns, programs, filters, revisions.

grep/rg/ag take a pattern first (unless -e/-f) and read the rest; `-q` prints nothing and
is allowed; `--include`/`-g` filters that select secrets are reads. sed and awk take a
script/program first (sed `r FILE` / `w FILE` and awk string literals are checked), jq a
filter. git reads content only in some subcommands (show, diff, log -p, blame, cat-file,
grep, archive ...), where `REV:PATH` names a file. openssl separates key *use* (-key,
-cert) from reads (-in) and writes (-out). Stdlib only.
"""

from __future__ import annotations

import re

from reflex.safety.argv import _DQ_LITERALS, chdir, code_scan, glob_filter, opts, stdin_code
from reflex.safety.words import Arg

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from reflex.safety.argv import Stdin, Walker
    from reflex.safety.model import Ctx, Finding


_SED_FILE_CMD = re.compile(r"(?:^|[;\n{}0-9$/])\s*([rRwW])\s+([^\n;}]+)")


_GREP = ("efABCmdDX", frozenset({"--regexp", "--file", "--after-context", "--before-context",
                                  "--context", "--max-count", "--directories", "--devices", "--label",
                                  "--include", "--exclude", "--exclude-dir", "--exclude-from",
                                  "--binary-files", "--group-separator"}))


_RG = ("efABCmMgtTjEr", frozenset({"--regexp", "--file", "--glob", "--iglob", "--type", "--type-not",
                                    "--type-add", "--type-clear", "--max-count", "--max-depth",
                                    "--max-columns", "--max-filesize", "--threads", "--encoding",
                                    "--replace", "--sort", "--sortr", "--context", "--after-context",
                                    "--before-context", "--colors", "--context-separator",
                                    "--field-context-separator", "--field-match-separator",
                                    "--path-separator", "--pre", "--pre-glob", "--ignore-file",
                                    "--dfa-size-limit", "--regex-size-limit", "--engine",
                                    "--hostname-bin", "--hyperlink-format", "--generate"}))


_AG = ("ABCGgmp", frozenset({"--after", "--before", "--context", "--file-search-regex", "--ignore",
                             "--max-count", "--path-to-ignore", "--depth", "--pager"}))


# Searchers that recurse into a directory operand (or the cwd) without being asked to.
_RECURSIVE_SEARCHERS = frozenset({"rg", "ag", "ack", "pt", "sift", "rgrep"})
# Flags after which a searcher prints file names or counts, not lines.
_NAMES_ONLY = frozenset({"-l", "-L", "-c", "--files-with-matches", "--files-without-match", "--count",
                         "--count-matches", "--files"})


def h_grep(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int,
           git: bool = False) -> Finding | None:
    short_val, long_val = _RG if name == "rg" else _AG if name in ("ag", "ack", "pt", "sift") else _GREP
    pattern_given = quiet = listing = transforms = False
    recursive = name in _RECURSIVE_SEARCHERS or git
    operands, filters = [], []
    for flag, val, a in opts(args, short_val, long_val):
        if flag is None:
            operands.append(a)
        elif flag in ("-e", "--regexp"):
            pattern_given = True
        elif flag in ("-f", "--file"):
            pattern_given = True
            f = scan.read(val, name, ctx) if val else None
            if f:
                return f
        elif flag in ("-q", "--quiet", "--silent"):
            quiet = True
        elif flag in _NAMES_ONLY or (name == "ag" and flag == "-g"):
            listing = True
        elif flag in ("-r", "-R", "--recursive", "--dereference-recursive") and name != "rg":
            recursive = True
        elif flag in ("-d", "--directories") and val is not None and val.static == "recurse":
            recursive = True
        elif flag in ("-o", "--only-matching", "--replace", "--max-columns-preview", "--vimgrep") or \
                (name == "rg" and flag == "-r"):
            transforms = True       # prints pieces of lines: a value cut in two escapes redaction
        elif flag in ("--include", "--glob", "--iglob") or (name == "rg" and flag == "-g"):
            if val is not None:
                filters.append(val)
    if quiet or listing:
        return None
    if not pattern_given and operands:
        operands = operands[1:]
    for val in filters:
        f = glob_filter(scan, val, name, ctx)
        if f:
            return f
    if recursive:
        if not operands and not (stdin.prev or stdin.text()) or git:
            operands = operands or [Arg.of(".")]
        for a in operands:
            f = scan.tree(a, "git grep" if git else name, ctx, transforms)
            if f:
                return f
        return None
    for a in operands:
        f = scan.read(a, name, ctx, split=False, dirs=True)
        if f:
            return f
    return None


def h_sed(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    scripts: list[Arg | None] = []
    operands = []
    inplace = False
    for flag, val, a in opts(args, "efl", frozenset({"--expression", "--file", "--line-length"})):
        if flag is None:
            operands.append(a)
        elif flag in ("-e", "--expression"):
            if val is not None:
                scripts.append(val)
        elif flag in ("-f", "--file"):
            scripts.append(None)
            f = scan.read(val, name, ctx) if val else None
            if not f and val is not None and val.static in ("-", "/dev/stdin"):
                text = stdin.text()         # `printf 'r .env' | sed -f - x`
                if text is not None:
                    scripts[-1] = Arg.of(text)
                elif stdin.from_program():
                    f = scan.tree_root(None, name, name, ctx)
            if f:
                return f
        elif flag in ("-i", "--in-place"):
            inplace = True
    if not scripts and operands:
        scripts.append(operands[0])
        operands = operands[1:]
    for sc in scripts:
        text = sc.static if sc is not None else None
        for m in _SED_FILE_CMD.finditer((text or "")[:100000]):
            target = m.group(2).strip()
            if m.group(1) in "rR":
                f = scan.read_path(target, name, ctx)
            else:
                f = scan.write(Arg.of(target), name, ctx)
            if f:
                return f
    for a in operands:
        f = scan.read(a, name, ctx, split=False)
        if not f and inplace:
            f = scan.write(a, name, ctx)
        if f:
            return f
    return None


def h_awk(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    progs, operands, assigns, prog_files = [], [], [], []
    prog_file = False
    for flag, val, a in opts(args, "fvFeilE", frozenset({"--file", "--assign", "--field-separator",
                                                         "--source", "--include", "--load", "--exec"})):
        if flag is None:
            operands.append(a)
        elif flag in ("-f", "-E", "--file", "--exec"):
            prog_file = True
            prog_files.append(val.static if val else None)
            f = scan.read(val, name, ctx) if val else None
            if f:
                return f
        elif flag in ("-e", "--source"):
            if val is not None:
                progs.append(val.static)
        elif flag in ("-v", "--assign") and val is not None:
            assigns.append(val)
    if not progs and not prog_file and operands:
        progs.append(operands[0].static)
        operands = operands[1:]
    for p in progs:
        f = code_scan(scan, p, name, ctx, _DQ_LITERALS)
        if f:
            return f
    if prog_file and any(p in ("-", "/dev/stdin") for p in prog_files):
        f = stdin_code(scan, name, stdin, ctx, _DQ_LITERALS)   # `printf 'BEGIN{...}' | awk -f -`
        if f:
            return f
    for a in operands:
        if a.static is not None and "=" in a.static and a.static.split("=", 1)[0].isidentifier():
            assigns.append(a)
            continue
        f = scan.read(a, name, ctx, split=False)
        if f:
            return f
    for a in assigns:
        # `awk -v f=.env 'BEGIN { while ((getline l < f) > 0) print l }'`, `awk '...' f=.env`:
        # a variable's value may be the name the program opens (getline < f, ARGV).
        f = _assigned_path(scan, a, name, ctx)
        if f:
            return f
    return None


def _assigned_path(scan: Walker, a: Arg, verb: str, ctx: Ctx) -> Finding | None:
    for v in a.variants:
        pieces = list(v)
        if not pieces or pieces[0][0] != "lit" or "=" not in pieces[0][1]:
            continue
        var, _, head = pieces[0][1].partition("=")
        if not var.isidentifier():
            continue
        f = scan.read(Arg([((("lit", head),) if head else ()) + tuple(pieces[1:])], dyn=a.dyn), verb, ctx,
                      split=False)
        if f:
            return f
    return None


def h_jq(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    i, n = 0, len(args)
    filter_given = False
    operands = []
    while i < n:
        s = args[i].static
        if s in ("--arg", "--argjson"):
            i += 3
            continue
        if s in ("--slurpfile", "--rawfile"):
            f = scan.read(args[i + 2], name, ctx) if i + 2 < n else None
            if f:
                return f
            i += 3
            continue
        if s in ("-f", "--from-file"):
            filter_given = True
            f = scan.read(args[i + 1], name, ctx) if i + 1 < n else None
            if f:
                return f
            i += 2
            continue
        if s in ("--indent", "-L"):
            i += 2
            continue
        if s in ("--args", "--jsonargs"):
            break
        if s is not None and s.startswith("-") and len(s) > 1:
            i += 1
            continue
        operands.append(args[i])
        i += 1
    if not filter_given and operands:
        operands = operands[1:]
    for a in operands:
        f = scan.read(a, name, ctx, split=False)
        if f:
            return f
    return None


_GIT_READERS = frozenset({"show", "diff", "blame", "annotate", "cat-file", "grep", "archive",
                          "format-patch", "difftool", "range-diff", "whatchanged"})


_GIT_VALUE = frozenset({"-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                        "--config-env", "--super-prefix"})


def h_git(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    i, n = 0, len(args)
    while i < n:
        s = args[i].static
        if s == "-C":
            ctx = chdir(scan, ctx, args[i + 1] if i + 1 < n else None)
            i += 2
        elif s in _GIT_VALUE:
            i += 2
        elif s is not None and s.startswith("-"):
            i += 1
        else:
            break
    if i >= n:
        return None
    sub = args[i].static
    rest = args[i + 1:]
    statics = [a.static or "" for a in rest]
    reads = sub in _GIT_READERS
    if sub == "log":
        reads = any(s in ("-p", "--patch", "-u", "--full-diff") or s.startswith(("-U", "--word-diff"))
                    for s in statics)
    if sub == "stash":
        reads = "show" in statics and any(s in ("-p", "--patch") for s in statics)
    if sub == "clone":
        operands = [a for a in rest if not (a.static or "x").startswith("-")]
        return scan.write(operands[1], "git clone", ctx) if len(operands) > 1 else None
    if sub == "config":
        # `git config -f FILE --list` prints FILE's lines: a read of FILE.
        for flag, val, a in opts(rest, "f", frozenset({"--file", "--blob"})):
            if flag in ("-f", "--file") and val is not None:
                f = scan.read(val, "git config", ctx, split=False)
                if f:
                    return f
            elif flag == "--blob" and val is not None:
                f = scan.read(val, "git config", ctx)
                if f:
                    return f
        return None
    if not reads:
        return None
    if sub == "grep":
        # Tracked files (or any with --no-index/--untracked): a search of the whole tree.
        paths = []
        for j, a in enumerate(rest):
            if a.static == "--":
                paths = rest[j + 1:]
                rest = rest[:j]
                break
        f = h_grep(scan, "grep", rest + paths, ctx, stdin, hops, git=True)
        return f
    rule = "secret-copy" if sub in ("archive", "format-patch") else "secret-read"
    for a in rest:
        s = a.static
        if s is not None and s.startswith("-"):
            continue
        f = scan.read(a, "git " + (sub or ""), ctx, rule)
        if f:
            return f
    return None


_OPENSSL_KEY = frozenset({"-key", "-signkey", "-cert", "-CAfile", "-CApath", "-inkey", "-certfile",
                          "-CAkey", "-CA", "-pass", "-passin", "-passout", "-verifyCAfile", "-chainCAfile"})


def h_openssl(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    i, n = 0, len(args)
    while i < n:
        s = args[i].static
        if s in _OPENSSL_KEY:
            i += 2
            continue
        if s in ("-out", "-keyout") and i + 1 < n:
            f = scan.write(args[i + 1], name, ctx)
            i += 2
        else:
            f = scan.read(args[i], name, ctx)
            i += 1
        if f:
            return f
    return None
