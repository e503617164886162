"""Directory listings: `ls -l` / `ls -la` (and -R, several operands), plain `ls`, and `tree`, as Items.

Every name is one Item.  `ls -l`: under "dirs", "files", "links" (and "other":
devices, pipes, sockets) with a count per kind; a file's size in a compact form
(`12K`), a link with its target; `.` and `..` are not entries (what `-A`
prints).  The `total N` line is kept as a note.  Several sections (`ls -R`,
several operands: a `dir:` line opens each) group their names by section, kind
marked as `ls -F` does (`name/`, `name -> target`).  Plain `ls` (one name a line,
or columns with -C/-x): names by section; with -F/-p their kind suffix sorts
them as in the long form.  `tree`: names grouped by their directory's path, a
directory that has entries written `name/`; the counts are tree's own last line
(`N directories, M files`).  Error lines (`ls: cannot access …`) are error items.
Output that is neither (the command says nothing and the lines are not a long
listing or a tree) goes to generic.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from reflex.digest.facts import Counts, Facts, Item
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import simple_commands
from reflex.digest.text import Output

VERSION = 1
TEXT_CHARS = 1000  # a name longer than this is cut here already (the census clips it far shorter)
_MIN_SHARE = 0.9

_LONG = re.compile(r"^(?:\s*[\d.,]+[KMGTPE]?\s+){0,2}(?P<mode>[-dlcbpsD?][-rwxsStTl?]{9})[.+@]?\s+\d+\s+(?P<rest>.*)$")
_WHEN = (r"[^\W\d_]{3}\.?\s+\d{1,2}\s+(?:\d{4}|\d{1,2}:\d{2})"  # Dec  3 13:22 / Dec  3  2024
         r"|\d{1,2}\.?\s+[^\W\d_]{3,4}\.?\s+(?:\d{4}|\d{1,2}:\d{2})"  # 3 Dec 13:22 (some locales)
         r"|\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?: [+-]\d{4})?)?"  # --time-style=iso/full-iso
         r"|\d\d-\d\d\s+\d\d:\d\d")
_SIZE_NAME = re.compile(r"(?:^|\s)(?P<size>\d[\d.,]*[KMGTPEkB]?|\d+,\s*\d+)\s+(?:" + _WHEN + r")\s(?P<name>.*)$")
_TOTAL = re.compile(r"^total (?P<n>\d[\d.,]*[KMGTPE]?)$")
_SECTION = re.compile(r"^(?P<dir>.+):$")
_ERROR = re.compile(r"^(?:ls|tree|dir|vdir): (?P<msg>.+)$")
_TREE_ENTRY = re.compile(r"^(?P<indent>(?:[│|][\xa0 ]{2} |[\xa0 ]{4})*)[├└|`][─-]{2}[\xa0 ](?P<rest>.*)$")
_TREE_INFO = re.compile(r"^\[[^\]]*\]\s+")  # tree -s/-h/-p/-u/-D: `[4.0K]  name`
_TREE_REPORT = re.compile(r"^(?P<d>\d+) director(?:y|ies)(?:, (?P<f>\d+) files?)?$")
_KINDS = {"d": "dirs", "l": "links", "-": "files"}
_COLUMNS = re.compile(r"\t+ *| {2,}")


@dataclass(frozen=True)
class Hints:
    tool: str | None = None  # "ls" or "tree"
    classify: bool = False  # -F / -p / --classify: names carry a kind suffix


def hints_of(command: str) -> Hints:
    for seg in simple_commands(command):
        name = os.path.basename(seg[0])
        if name in ("ls", "dir", "vdir"):
            short = "".join(a[1:] for a in seg[1:] if a.startswith("-") and not a.startswith("--"))
            long_ = [a for a in seg[1:] if a.startswith("--")]
            classify = "F" in short or "p" in short or any(a.startswith(("--classify", "--indicator-style", "--file-type"))
                                                           for a in long_)
            return Hints(tool="ls", classify=classify)
        if name == "tree":
            return Hints(tool="tree")
    return Hints()


def compact_size(size: str) -> str:
    """`12345` -> `12K` (ls -h's units, one digit under ten); a size ls already wrote short is kept."""
    if not size.isdigit():
        return size
    n = float(size)
    for unit in ("", "K", "M", "G", "T", "P"):
        if n < 1024 or unit == "P":
            if not unit:
                return str(int(n))
            return f"{n:.1f}{unit}" if n < 10 else f"{n:.0f}{unit}"
        n /= 1024
    return size


def _clip(s: str) -> str:
    return s if len(s) <= TEXT_CHARS else s[:TEXT_CHARS]


def _error(out: Output, i: int, s: str) -> Item | None:
    m = _ERROR.match(s[:4096])
    if m is None:
        return None
    return Item(group="errors", noun="errors", text=_clip(s), severity="error", span=out.span(i, i + 1))


def _sections(out: Output) -> list[tuple[str | None, int, int]]:
    """(heading or None, first line, end) of each `dir:` section; one unnamed section if none."""
    lines = out.lines
    heads = [i for i, s in enumerate(lines)
             if _SECTION.match(s) and (i == 0 or not lines[i - 1].strip()) and not _LONG.match(s)]
    if not heads:
        return [(None, 0, len(lines))]
    out_: list[tuple[str | None, int, int]] = []
    if any(s.strip() for s in lines[:heads[0]]):  # files named on the command line come first, unheaded
        out_.append((None, 0, heads[0]))
    for k, h in enumerate(heads):
        end = heads[k + 1] if k + 1 < len(heads) else len(lines)
        m = _SECTION.match(lines[h])
        out_.append((m["dir"] if m else None, h + 1, end))
    return out_


def _classified(name: str) -> tuple[str, str]:
    """(kind, name as shown) from an `ls -F` name: `dir/`, `link@`, `fifo|`, `sock=`, `exe*`."""
    if name.endswith("/"):
        return "dirs", name
    if name.endswith("@"):
        return "links", name
    if name.endswith(("|", "=")):
        return "other", name
    return "files", name


def _parse_ls(out: Output, hints: Hints) -> runner.Parsed | None:
    lines = out.lines
    content = [i for i, s in enumerate(lines) if s.strip() and not _TOTAL.match(s) and not _error(out, i, s)]
    sections = _sections(out)
    heads = {h - 1 for name, h, _ in sections if name is not None}
    content = [i for i in content if i not in heads]
    longs = sum(1 for i in content if _LONG.match(lines[i]))
    long_form = bool(content) and longs >= _MIN_SHARE * len(content)
    if not long_form and hints.tool != "ls":
        return None
    several = len(sections) > 1
    items: list[Item] = []
    errors: list[Item] = []
    notes: list[str] = []
    by_kind = long_form or hints.classify
    kinds: dict[str, int] = {"dirs": 0, "files": 0} if by_kind else {}
    listed = 0
    for name, first, end in sections:
        for i in range(first, end):
            s = lines[i]
            if not s.strip():
                continue
            err = _error(out, i, s)
            if err is not None:
                errors.append(err)
                continue
            mt = _TOTAL.match(s)
            if mt:
                if not several:
                    notes.append(f"total {mt['n']}")
                continue
            span = out.span(i, i + 1)
            entries: list[tuple[str, str]] = []  # (kind, text)
            if long_form:
                ml = _LONG.match(s)
                mr = _SIZE_NAME.search(ml["rest"]) if ml else None
                if ml is None or mr is None:
                    entries.append(("unread", s))
                else:
                    entry = mr["name"]
                    if entry in (".", ".."):
                        continue
                    kind = _KINDS.get(ml["mode"][0], "other")
                    if kind == "dirs" and not entry.endswith("/"):
                        entry += "/"
                    elif kind == "files":
                        entry += " " + compact_size(mr["size"])
                    entries.append((kind, entry))
            else:
                # ls -C / -x pad columns with tabs and spaces; one space stays inside a name
                for col in [c for c in _COLUMNS.split(s.strip()) if c]:
                    if col in (".", "..", "./", "../"):
                        continue
                    entries.append(_classified(col) if hints.classify else ("names", col))
            for kind, text in entries:
                if kind == "unread":
                    items.append(Item(group="unread lines", noun="lines", text=_clip(text), span=span))
                    continue
                listed += 1
                if by_kind:
                    kinds[kind] = kinds.get(kind, 0) + 1
                if several:
                    group, noun = name or "(arguments)", "entries"  # unheaded: the files named on the command line
                elif by_kind:
                    group, noun = kind, kind
                else:
                    group, noun = name if name is not None else "names", "names"
                items.append(Item(group=group, noun=noun, text=_clip(text), span=span))
    if not items and not errors:
        return None
    counts = Counts(other={k: n for k, n in kinds.items()} if by_kind else {"names": listed})
    if by_kind and not several:  # kinds in a fixed order: dirs, files, links, other
        order = {"dirs": 0, "files": 1, "links": 2, "other": 3}
        items.sort(key=lambda it: order.get(it.group, 4))
    return runner.Parsed(counts=counts, items=items + errors, notes=notes,
                         format="long" if long_form else "names")


def _parse_tree(out: Output) -> runner.Parsed | None:
    lines = out.lines
    items: list[Item] = []
    errors: list[Item] = []
    report: tuple[int, int | None] | None = None
    root: str | None = None
    stack: list[str] = []
    last_at: dict[int, int] = {}  # depth -> index in items of the last entry at that depth
    entries = 0
    for i, s in enumerate(lines):
        if not s.strip():
            continue
        mr = _TREE_REPORT.match(s)
        if mr:
            report = (int(mr["d"]), int(mr["f"]) if mr["f"] is not None else None)
            continue
        err = _error(out, i, s)
        if err is not None:
            errors.append(err)
            continue
        me = _TREE_ENTRY.match(s[:4096])
        if me is None:
            if s.startswith("[") and root is None:
                continue  # `[error opening dir]` under a root tree could not read
            root, stack, last_at = _TREE_INFO.sub("", s), [], {}
            continue
        if root is None:
            return None
        depth = len(me["indent"]) // 4 + 1
        name = _TREE_INFO.sub("", me["rest"])
        parent_index = last_at.get(depth - 1)
        if depth > 1 and parent_index is not None and not items[parent_index].text.endswith("/"):
            items[parent_index].text += "/"  # it has entries: a directory
        del stack[depth - 1:]
        parent = "/".join([root.rstrip("/")] + [p.rstrip("/") for p in stack]) + "/"
        stack.append(name.split(" -> ", 1)[0])
        last_at = {d: k for d, k in last_at.items() if d < depth}
        last_at[depth] = len(items)
        items.append(Item(group=parent, noun="entries", text=_clip(name), span=out.span(i, i + 1)))
        entries += 1
    if root is None or (not items and report is None):
        return None
    other: dict[str, int] = {}
    if report is not None:
        other["directories"] = report[0]
        if report[1] is not None:
            other["files"] = report[1]
    else:
        other["entries"] = entries
    order: dict[str, int] = {}
    for it in items:
        order.setdefault(it.group, len(order))
    items.sort(key=lambda it: order[it.group])
    return runner.Parsed(counts=Counts(other=other), items=items + errors, format="tree")


def _is_tree(out: Output) -> bool:
    tail = [s for s in out.lines[-3:] if s.strip()]
    return bool(tail) and bool(_TREE_REPORT.match(tail[-1])) and any(_TREE_ENTRY.match(s) for s in out.lines[:50])


def parse_with(out: Output, hints: Hints) -> runner.Parsed | None:
    if not out.lines:
        return None
    if hints.tool == "tree" or (hints.tool is None and _is_tree(out)):
        return _parse_tree(out)
    return _parse_ls(out, hints)


@dataclass(frozen=True)
class ListingProfile:
    """runner.bind's frame with the command line read first (`ls -F` marks kinds, `tree` draws a tree)."""

    name: str = "listing"
    version: int = VERSION

    def detect(self, out: Output) -> bool:
        return _is_tree(out)

    def extract(self, raw: bytes, exit_code: int | None, command: str) -> Facts:
        hints = hints_of(command)
        bound = runner.bind(self.name, self.version, lambda out: parse_with(out, hints), detect=())
        return bound.extract(raw, exit_code, command)


PROFILE = ListingProfile()
