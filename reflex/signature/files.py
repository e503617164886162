"""File readers, searches, writers and output slicers.

- file-read: cat/head/tail/sed -n/less/more/bat/nl on files, with the line
  range the command names (`sed -n 10,40p f` reads 10-40, `head -n 50 f`
  reads 1-50, `tail -n +80 f` reads 80-, `tail -20 f` reads last:20).  The
  range is identity: paging through a file is a sequence of different
  reads, not a re-run.  `head -50` is canonicalized to `head -n 50`.
- search: grep/rg/ag/ack/find/fd; scope is the searched paths, so a grep
  narrowed to one file is narrower than the same grep over its directory.
- writers: tee, sed -i, mv, cp, rm, touch, mkdir, ln, curl -o, formatters.
- slicers: a stdout filter at the end of a pipeline (head, tail, grep, sed,
  awk, cut, wc, sort, uniq, less, …) is presentation; `slicer()` turns it
  into the Decoration that says what the agent was looking for.
"""

from __future__ import annotations

import re

from reflex.signature.flags import Spec, walk
from reflex.signature.model import Decoration, FileRef, ScopeItem
from reflex.signature.syntax import Word, lit
from reflex.signature.view import View

READERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "batcat", "nl", "sed", "view"})
SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "fdfind"})
SLICERS = frozenset({"head", "tail", "grep", "egrep", "fgrep", "rg", "sed", "awk", "gawk", "cut", "wc",
                     "sort", "uniq", "less", "more", "cat", "column", "nl", "tr", "jq", "fold", "fmt", "tac"})

_NUM = re.compile(r"\d+")
_SED_RANGE = re.compile(r"\s*(\d+|\$)\s*(?:,\s*(\d+|\$|\+\d+)\s*)?p\s*")


def _count_opt(args: list[Word], default: str) -> tuple[str, list[Word], bool, list[Word]]:
    """head/tail: -> (count as written, file operands, bytes?, other flags) from
    -n N, -nN, -N, +N, --lines=N, -c N (bytes)."""
    count, byte, files, flags = default, False, [], []
    i = 0
    while i < len(args):
        w = args[i]
        a = w.value
        if a in ("-n", "--lines", "-c", "--bytes") and i + 1 < len(args):
            count, byte = args[i + 1].value, a in ("-c", "--bytes")
            i += 2
            continue
        if a == "--":
            files.extend(args[i + 1:])
            break
        if a.startswith(("--lines=", "--bytes=")):
            count, byte = a.split("=", 1)[1], a.startswith("--bytes")
        elif a.startswith("-n") and len(a) > 2:
            count = a[2:]
        elif a.startswith("-c") and len(a) > 2:
            count, byte = a[2:], True
        elif len(a) > 1 and a[0] in "-+" and a[1:].isdigit():
            count = a if a[0] == "+" else a[1:]
        elif a.startswith("-") and a != "-":
            flags.append(w)   # -f, -q, -v …
        else:
            files.append(w)
        i += 1
    return count, files, byte, flags


def _head_range(count: str, byte: bool) -> str:
    pre = "bytes:" if byte else ""
    if count.isdigit():
        return f"{pre}1-{count}"
    return f"{pre}head:{count}"


def _tail_range(count: str, byte: bool) -> str:
    pre = "bytes:" if byte else ""
    if count.startswith("+") and count[1:].isdigit():
        return f"{pre}{count[1:]}-"
    if count.isdigit():
        return f"{pre}last:{count}"
    return f"{pre}tail:{count}"


def _sed_scripts(args: list[Word]) -> tuple[list[str], list[Word], bool, bool]:
    """-> (scripts, files, quiet -n, in-place -i)."""
    scripts, files, quiet, inplace = [], [], False, False
    i = 0
    while i < len(args):
        a = args[i].value
        if a in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1].value)
            i += 2
            continue
        if a in ("-f", "--file") and i + 1 < len(args):
            i += 2
            continue
        if a.startswith("--in-place"):
            inplace = True
        elif a.startswith("-") and len(a) > 1 and not a.startswith("--"):
            if "n" in a[1:]:
                quiet = True
            if "i" in a[1:]:
                inplace = True
                # BSD sed: -i '' takes the backup suffix as the next word
                if a == "-i" and i + 1 < len(args) and args[i + 1].value == "":
                    i += 1
            if "E" in a or "r" in a or "s" in a or "z" in a:
                pass
        elif a in ("--quiet", "--silent"):
            quiet = True
        elif a.startswith("--"):
            pass
        elif not scripts and not any(x.value in ("-e", "--expression") for x in args):
            scripts.append(a)
        else:
            files.append(args[i])
        i += 1
    return scripts, files, quiet, inplace


def sed_ranges(scripts: list[str]) -> list[str]:
    """`10,40p` -> 10-40, `10p` -> 10-10, `80,$p` -> 80-; "" when a script is
    not a plain line range (a pattern address reads the whole file)."""
    out = []
    for s in scripts:
        for part in s.split(";"):
            if not part.strip():
                continue
            m = _SED_RANGE.fullmatch(part)
            if not m:
                return [""]
            a, b = m.group(1), m.group(2)
            a = "1" if a == "$" else a
            if b is None:
                out.append(f"{a}-{a}")
            elif b == "$":
                out.append(f"{a}-")
            elif b.startswith("+"):
                out.append(f"{a}-{int(a) + int(b[1:])}" if a.isdigit() else f"{a}-")
            else:
                out.append(f"{a}-{b}")
    return out or [""]


def reader(v: View, name: str, args: list[Word]) -> bool:
    """Fill v for a file reader; False if it reads no file (stdin, heredoc)."""
    if name in ("head", "tail"):
        count, files, byte, flags = _count_opt(args, "10")
        if not files:
            return False
        rng = _head_range(count, byte) if name == "head" else _tail_range(count, byte)
        canon = [name]
        if count != "10" or byte:
            canon += ["-c" if byte else "-n", lit(count).text]
        dangling = [a.text for a in flags if a.value in ("-n", "-c", "--lines", "--bytes")]
        canon += [a.text for a in flags if a.value not in ("-n", "-c", "--lines", "--bytes")]
        if any(f.value[:1] in ("-", "+") and f.value != "-" for f in files):
            canon.append("--")
        v.words = canon + [f.text for f in files] + dangling
        v.reads.extend(FileRef(f.value, rng) for f in files)
        v.unscoped = list(v.words)
        v.family = "file-read"
        return True
    if name == "sed":
        scripts, files, quiet, inplace = _sed_scripts(args)
        if not files:
            return False
        v.words = [name] + [a.text for a in args]
        if inplace:
            v.writes.extend(FileRef(f.value) for f in files)
            v.reads.extend(FileRef(f.value) for f in files)
            return True
        ranges = sed_ranges(scripts) if quiet else [""]
        v.reads.extend(FileRef(f.value, r) for f in files for r in ranges)
        v.family = "file-read" if quiet else "other"
        return True
    files = [a for a in args if not a.value.startswith("-") or a.value == "-"]
    if name == "bat" or name == "batcat":
        rng = ""
        for i, a in enumerate(args):
            if a.value in ("-r", "--line-range") and i + 1 < len(args):
                rng = args[i + 1].value.replace(":", "-")
                files = [f for f in files if f is not args[i + 1]]
            elif a.value.startswith("--line-range="):
                rng = a.value.split("=", 1)[1].replace(":", "-")
        if not files:
            return False
        v.words = [name] + [a.text for a in args]
        v.reads.extend(FileRef(f.value, rng) for f in files)
        v.family = "file-read"
        return True
    files = [f for f in files if f.value != "-"]
    if not files:
        return False
    v.words = [name] + [a.text for a in args]
    v.reads.extend(FileRef(f.value) for f in files)
    v.family = "file-read"
    return True


# ---------------------------------------------------------------- search

GREP = Spec(
    display={"-n": ("line-numbers", ""), "--line-number": ("line-numbers", ""), "-H": ("with-filename", ""),
             "--with-filename": ("with-filename", ""), "--no-heading": ("heading", "no"),
             "--heading": ("heading", ""), "--color": ("color", ""), "--colour": ("color", ""),
             "--no-color": ("color", "no"), "-N": ("line-numbers", "no"), "--no-line-number": ("line-numbers", "no")},
    display_valued={"--color": "color", "--colour": "color"},
    valued=frozenset({"-e", "--regexp", "-f", "--file", "-m", "--max-count", "-A", "--after-context", "-B",
                      "--before-context", "-C", "--context", "--include", "--exclude", "--exclude-dir", "-g",
                      "--glob", "-t", "--type", "-T", "--type-not", "--iglob", "-d", "-D", "--label",
                      "--max-depth", "--type-add", "-j", "--threads", "-M", "--max-columns", "-r",
                      "--replace", "--pre", "--sort", "--sortr", "--encoding", "-E"}),
    bundle="rRilvwcoqsxnHhLIaFUz",
    positional=None,
)


# grep's -r, -E … take no value (in rg, -r is --replace, -E the encoding)
GNU_GREP = Spec(display=GREP.display, display_valued=GREP.display_valued,
                valued=GREP.valued - {"-r", "-E", "-j", "-M", "-g", "-t", "-T"}, bundle=GREP.bundle, positional=None)


def search(v: View, name: str, args: list[Word]) -> None:
    v.family = "search"
    if name in ("find", "fd", "fdfind"):
        v.words = [name] + [a.text for a in args]
        paths: list[str] = []
        if name == "find":
            for a in args:
                if a.value.startswith(("-", "(", "!", ")")) or a.value in ("(", "!"):
                    break
                paths.append(a.value)
        else:
            pos = [a.value for a in args if not a.value.startswith("-")]
            paths = pos[1:]
        v.scope.extend(ScopeItem("path", p) for p in paths)
        v.unscoped = [name] + [a.text for a in args if a.value not in paths]
        return
    p = walk(args, GNU_GREP if name in ("grep", "egrep", "fgrep") else GREP)
    pos = p.positionals + (p.rest or [])
    explicit = any(a.value in ("-e", "--regexp", "-f", "--file") or a.value.startswith("--regexp=")
                   for a in args)
    files_mode = name == "rg" and any(a.value == "--files" for a in args)
    targets = pos if (explicit or files_mode) else pos[1:]
    target_texts = {t.text for t in targets}
    v.words = [name] + p.kept + (["--"] + [a.text for a in p.rest] if p.rest is not None else [])
    v.unscoped = [t for t in v.words if t not in target_texts]
    v.decorations.extend(p.decorations)
    v.scope.extend(ScopeItem("path", t.value) for t in targets)
    v.reads.extend(FileRef(t.value) for t in targets)


# ---------------------------------------------------------------- writers

FORMATTERS = {
    # tool -> (flag that makes it write, or None if it writes by default; flags that stop it writing)
    "black": (None, {"--check", "--diff"}),
    "isort": (None, {"--check", "--check-only", "-c", "--diff"}),
    "autopep8": ("-i", set()), "autoflake": ("-i", set()),
    "prettier": ("--write", set()), "gofmt": ("-w", set()), "goimports": ("-w", set()),
    "rustfmt": (None, {"--check"}), "clang-format": ("-i", set()), "shfmt": ("-w", set()),
    "yapf": ("-i", set()), "biome": ("--write", set()), "dprint": (None, {"check"}),
}


def _operands(args: list[Word], valued=frozenset()) -> list[Word]:
    out, i = [], 0
    after_dd = False
    while i < len(args):
        a = args[i]
        if not after_dd and a.value == "--":
            after_dd = True
        elif not after_dd and a.value in valued:
            i += 1
        elif after_dd or not a.value.startswith("-") or a.value == "-":
            out.append(a)
        i += 1
    return out


def writer(v: View, name: str, args: list[Word]) -> bool:
    """Record what a file-mutating command writes (and reads); False if name is not one."""
    if name == "tee":
        v.writes.extend(FileRef(a.value) for a in _operands(args) if a.value != "/dev/null")
        return True
    if name in ("mv", "cp", "ln", "install", "rsync"):
        ops = _operands(args, frozenset({"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-e"}))
        target = next((args[i + 1].value for i, a in enumerate(args[:-1])
                       if a.value in ("-t", "--target-directory")), None)
        srcs = ops if target else ops[:-1]
        dst = target or (ops[-1].value if ops else None)
        if name == "mv":
            v.writes.extend(FileRef(s.value) for s in srcs)
        else:
            v.reads.extend(FileRef(s.value) for s in srcs)
        if dst:
            v.writes.append(FileRef(dst))
        return True
    if name in ("rm", "rmdir", "touch", "mkdir", "truncate", "shred", "unlink"):
        v.writes.extend(FileRef(a.value) for a in _operands(args, frozenset({"-s", "--size", "-m", "--mode",
                                                                              "-d", "-r", "-t"}
                                                                             if name == "touch" or name == "truncate"
                                                                             else {"-m", "--mode"})))
        return True
    if name in ("curl", "wget"):
        flags = ("-o", "--output") if name == "curl" else ("-O", "--output-document")
        for i, a in enumerate(args[:-1]):
            if a.value in flags:
                v.writes.append(FileRef(args[i + 1].value))
        return True
    spec = FORMATTERS.get(name)
    if spec is not None:
        flag, stops = spec
        vals = {a.value for a in args}
        if (flag is None or flag in vals) and not vals & stops:
            paths = [a.value for a in _operands(args) if a.value not in ("check", "fmt", "format")]
            v.writes.extend(FileRef(p) for p in (paths or ["."]))
        return True
    return False


# ---------------------------------------------------------------- slicers

def slicer(name: str, args: list[Word]) -> Decoration:
    """The decoration for a stdout filter at the end of a pipeline."""
    vals = [a.value for a in args]
    if name in ("head", "tail"):
        count, _files, byte, flags = _count_opt(args, "10")
        return Decoration(name, ("bytes:" if byte else "") + count, tuple(f.value for f in flags))
    if name in ("grep", "egrep", "fgrep", "rg"):
        pattern, flags, i = "", [], 0
        while i < len(vals):
            x = vals[i]
            if x in ("-e", "--regexp") and i + 1 < len(vals):
                pattern = vals[i + 1] if not pattern else pattern + "|" + vals[i + 1]
                i += 2
                continue
            if x in ("-A", "-B", "-C", "-m", "--max-count", "--after-context", "--before-context",
                     "--context") and i + 1 < len(vals):
                flags += [x, vals[i + 1]]
                i += 2
                continue
            if x.startswith("-") and len(x) > 1:
                flags.append(x)
            elif not pattern:
                pattern = x
            i += 1
        kind = "grep"
        return Decoration(kind, pattern, tuple(flags))
    if name == "sed":
        scripts, _f, _q, _i = _sed_scripts(args)
        return Decoration("sed", ";".join(scripts), tuple(x for x in vals if x.startswith("-") and x != "-e"))
    if name in ("awk", "gawk"):
        prog = next((x for x in vals if not x.startswith("-")), "")
        return Decoration("awk", prog, tuple(x for x in vals if x.startswith("-")))
    if name in ("less", "more", "cat"):
        return Decoration("pager", name, tuple(vals))
    return Decoration(name, " ".join(vals))
