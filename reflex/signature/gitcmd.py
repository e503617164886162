"""git: family "git", the subcommand in `subcommand`, `-C DIR` folded into cwd.

Presentation: `--no-pager`/`-P`/`--paginate` and `--color[=…]`/`--no-color`.
Writes: `checkout -- paths`, `restore paths`, `rm paths`, `mv a b`.
Scope: paths after `--` (`git diff -- a.py`, `git log -- src/`).
"""

from __future__ import annotations

from reflex.signature.model import Decoration, FileRef, ScopeItem
from reflex.signature.syntax import Word
from reflex.signature.view import View

_GLOBAL_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                            "--super-prefix", "--config-env"})
_GLOBAL_DISPLAY = {"--no-pager": ("pager", "no"), "-P": ("pager", "no"), "-p": ("pager", "yes"),
                   "--paginate": ("pager", "yes")}


def git(v: View, args: list[Word]) -> None:
    v.family = "git"
    head = ["git"]
    i = 0
    while i < len(args) and args[i].value.startswith("-"):
        a = args[i].value
        name, eq, val = a.partition("=")
        if name in _GLOBAL_DISPLAY:
            v.decorations.append(Decoration(*_GLOBAL_DISPLAY[name]))
            i += 1
            continue
        if name == "-C" and i + 1 < len(args):
            nxt = args[i + 1].value
            v.chdir = nxt if v.chdir is None or nxt.startswith("/") else v.chdir.rstrip("/") + "/" + nxt
            i += 2
            continue
        if name in _GLOBAL_VALUED and not eq and i + 1 < len(args):
            head += [args[i].text, args[i + 1].text]
            i += 2
            continue
        head.append(args[i].text)
        i += 1
    if i >= len(args):
        v.words = head
        return
    sub = args[i].value
    v.subcommand = sub
    rest = args[i + 1:]
    kept: list[str] = []
    unscoped: list[str] = []
    paths: list[Word] = []
    after_dd = False
    for a in rest:
        x = a.value
        if not after_dd and (x == "--no-color" or x == "--color" or x.startswith("--color=")):
            v.decorations.append(Decoration("color", x.partition("=")[2] if "=" in x else
                                            ("no" if x == "--no-color" else "")))
            continue
        kept.append(a.text)
        if after_dd:
            paths.append(a)
            continue
        unscoped.append(a.text)
        if x == "--":
            after_dd = True
    v.words = head + [args[i].text] + kept
    v.unscoped = head + [args[i].text] + unscoped
    v.scope.extend(ScopeItem("path", p.value) for p in paths)
    operands = [a for a in rest if not a.value.startswith("-")]
    if sub == "checkout" and after_dd:
        v.writes.extend(FileRef(p.value) for p in paths)
    elif sub == "restore":
        skip = {i + 1 for i, a in enumerate(rest) if a.value in ("-s", "--source")}
        v.writes.extend(FileRef(a.value) for j, a in enumerate(rest)
                        if j not in skip and not a.value.startswith("-"))
    elif sub == "rm":
        v.writes.extend(FileRef(a.value) for a in operands)
    elif sub == "mv" and len(operands) >= 2:
        v.writes.extend(FileRef(a.value) for a in operands)
