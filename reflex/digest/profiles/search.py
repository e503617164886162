"""Searches: grep / egrep / fgrep, rg, git grep, find and fd, as census Items.

Every match is one Item, grouped under the file it is in (first-seen order):
`L123: text` (or the bare text when the search printed no line numbers); its
span is the match line and the context lines printed after it (`-A/-B/-C`:
`file-12-text` lines), so the census's clip address is the whole match line and
the context is the item's body.  Context printed before a file's first match
and the `--` separators belong to no item (the census addresses items by their
first line, which must be the match).  Shapes read:

- `path:line:text` (grep -rn, rg -n, git grep -n), `path:text` (grep -r,
  rg's default when piped), `line:text` and bare lines (one file searched);
  `path\\0…` (-Z / --null) splits on the NUL, so no path is ever guessed;
- rg's heading form (a path line, then `123:text` lines, a blank between files);
- file lists (`-l`, `-L`, `--files-with-matches`, `rg --files`, find, fd):
  one Item per path, grouped by directory;
- counts (`-c`): `path:N` per file; files with no match are listed apart.

Binary-file notices (`grep: x: binary file matches`, `Binary file x matches`,
rg's `x: binary file matches (found "\\0" byte …)`) are items of their file;
the tool's error lines (no such file, permission denied) are error items.
The command line says which shape to expect (line numbers or not, a file list,
counts); without one the shape is read from the lines.  Output that does not
read as one shape (a search piped into `wc`, `find -ls`) goes to generic.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from reflex.digest.facts import Counts, Facts, Item
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import simple_commands
from reflex.digest.profiles.generic import handover
from reflex.digest.text import Output

VERSION = 1
# Beyond this many characters an item's text is cut here already (the census clips far shorter and
# points at the whole line): a 2 MB minified line must not be copied, redacted and measured whole.
TEXT_CHARS = 2000
# Only this much of a line is looked at for its `path:line:` prefix (a huge line costs no regex time).
_PREFIX_CHARS = 4096
# A shape is the output's when it reads at least this share of its content lines.
_MIN_SHARE = 0.9

_TOOLS = frozenset({"grep", "egrep", "fgrep", "rg", "find", "fd", "fdfind", "ag", "ack"})
# Short options whose value follows in the same word (`-A3`) or the next, per tool.
_GREP_VALUED = frozenset("ABCefmdD")
_RG_VALUED = frozenset("ABCefmgtTjMrE")

_SEPARATOR = "--"
_LINE_AT = re.compile(r"(?=([:-])(\d+)\1)")  # every `:N:` / `-N-` where a path could end
_LINE_ONLY = re.compile(r"^(\d+)([:-])")
_COUNT_LINE = re.compile(r"^(?P<path>.*):(?P<n>\d+)$")
_PATHISH = re.compile(r"^[^\s:][^:]*$")
_BINARY = (
    re.compile(r"^(?:grep|egrep|fgrep): (?P<path>.+): binary file matches$"),  # GNU grep >= 3.5
    re.compile(r"^Binary file (?P<path>.+) matches$"),  # older grep, git grep
    re.compile(r"^(?P<path>.+): binary file matches \(found .*\)$"),  # rg
)
_ERROR = (
    re.compile(r"^(?P<tool>grep|egrep|fgrep|rg|find|fd|ag|ack|fatal): (?P<msg>.+)$"),
    re.compile(r"^(?P<msg>.+: (?:No such file or directory|Permission denied|Is a directory|Not a directory)"
               r"(?: \(os error \d+\))?)$"),  # rg 13 names no tool
)


@dataclass(frozen=True)
class Hints:
    """What the command line says about the output's shape; None = it does not say."""

    tool: str | None = None
    numbered: bool | None = None  # line numbers printed
    with_path: bool | None = None  # a path ahead of each line
    paths_only: bool = False  # a file list: -l, -L, --files, find, fd
    counts: bool = False  # -c / --count / --count-matches
    count_matches: bool = False  # rg --count-matches: the counts are of matches, not of lines
    heading: bool = False  # rg --heading
    null: bool = False  # -Z / --null / -0: the path ends with a NUL
    context: bool = False  # -A / -B / -C: context lines and `--` separators
    operand: str | None = None  # the one path searched, when only one was named


def hints_of(command: str) -> Hints:
    """The shape the last search in `command` prints (`cd x && grep -rn …`, `rg … | head`)."""
    for seg in simple_commands(command):
        name = os.path.basename(seg[0])
        if name == "git" and "grep" in seg[1:3]:
            return _grep_hints("git-grep", seg[seg.index("grep") + 1:])
        if name in _TOOLS:
            if name in ("find", "fd", "fdfind"):
                return Hints(tool=name, paths_only=True)
            return _grep_hints(name, seg[1:])
    return Hints()


def _grep_hints(tool: str, args: list[str]) -> Hints:
    flags: set[str] = set()
    positionals: list[str] = []
    valued = _RG_VALUED if tool in ("rg", "ag") else _GREP_VALUED
    pattern_given = False
    skip = False
    for k, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a == "--":
            positionals.extend(args[k + 1:])
            break
        if a.startswith("--"):
            name = a.split("=", 1)[0]
            flags.add(name)
            if name in ("--regexp", "--file"):
                pattern_given = True
            if "=" not in a and name in ("--regexp", "--file", "--after-context", "--before-context", "--context",
                                         "--max-count", "--glob", "--type", "--include", "--exclude",
                                         "--exclude-dir", "--max-depth", "--replace", "--sort", "--type-not"):
                skip = True
            continue
        if a.startswith("-") and len(a) > 1:
            for j, c in enumerate(a[1:]):
                flags.add("-" + c)
                if c in valued:
                    if c in "ef":
                        pattern_given = True
                    skip = j == len(a) - 2  # the value is the next word
                    break
            continue
        positionals.append(a)
    operands = positionals if pattern_given else positionals[1:]
    paths_only = bool(flags & {"-l", "-L", "--files-with-matches", "--files-without-match", "--files"})
    counts = bool(flags & {"-c", "--count", "--count-matches"})
    null = bool(flags & ({"-Z", "--null"} if tool != "rg" else {"-0", "--null"}))
    if tool in ("ag", "ack"):
        numbered: bool | None = None
    elif flags & {"-N", "--no-line-number"}:
        numbered = False
    elif flags & {"-n", "--line-number", "--vimgrep"}:
        numbered = True
    else:
        numbered = False
    with_path: bool | None = None
    if flags & {"-h", "--no-filename"} and tool != "rg":
        with_path = False
    elif flags & {"-H", "--with-filename"}:
        with_path = True
    elif tool in ("grep", "egrep", "fgrep"):
        recursive = bool(flags & {"-r", "-R", "--recursive", "--dereference-recursive"})
        with_path = recursive or len(operands) > 1
        if not recursive and not operands:
            with_path = False  # stdin
    elif tool == "rg" and flags & {"-I", "--no-filename"}:
        with_path = False
    elif tool == "git-grep":
        with_path = True
    context = any(f in flags for f in ("-A", "-B", "-C", "--after-context", "--before-context", "--context"))
    return Hints(tool=tool, numbered=numbered, with_path=with_path, paths_only=paths_only, counts=counts,
                 heading=bool(flags & {"--heading"}) and not bool(flags & {"--no-heading"}), null=null,
                 context=context, count_matches="--count-matches" in flags, operand=operands[0] if len(operands) == 1 else None)


# ---------------------------------------------------------------- reading the lines


@dataclass
class _Match:
    path: str | None
    line: int | None
    text: str
    first: int  # line index of the match line
    last: int  # index after it and the context lines that follow it


# One line as a shape reads it: (path, line number, text, is a context line), or None: not this shape.
_Line = tuple[str | None, int | None, str, bool]


def _clip(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS]


def _notice(out: Output, i: int, s: str) -> Item | None:
    """A binary-file notice (an item of its file) or one of the tool's error lines."""
    head = s[:_PREFIX_CHARS]
    for p in _BINARY:
        m = p.match(head)
        if m:
            return Item(group=m["path"], noun="matches", text="binary file matches", span=out.span(i, i + 1))
    for p in _ERROR:
        m = p.match(head)
        if m:
            warning = m["msg"].startswith("warning:")
            return Item(group="errors", noun="errors", text=_clip(s), severity="warning" if warning else "error",
                        span=out.span(i, i + 1))
    return None


def _numbered_with_path(s: str, current: str | None, known: set[str]) -> _Line | None:
    """`path:N:text` / `path-N-text` (context).  Of the places the path could end (`a-1-b.txt-3-x`),
    the one naming the current file or a file already seen, else the first `:N:` one."""
    if "\0" in s[:_PREFIX_CHARS]:
        path, _, rest = s.partition("\0")
        m = _LINE_ONLY.match(rest)
        return (path, int(m[1]), rest[m.end():], m[2] == "-") if m else None
    cands = [(m.start(), m[1], m[2]) for m in _LINE_AT.finditer(s[:_PREFIX_CHARS]) if m.start() > 0]
    if not cands:
        return None
    pick = next((c for c in cands if s[:c[0]] == current), None)
    pick = pick or next((c for c in cands if s[:c[0]] in known), None)
    pick = pick or next((c for c in cands if c[1] == ":"), None) or cands[0]
    at, sep, digits = pick
    return s[:at], int(digits), s[at + len(digits) + 2:], sep == "-"


def _path_only(s: str, current: str | None, known: set[str], hinted: bool) -> _Line | None:
    """`path:text` / `path-text` (context: only after a path already seen, the split is ambiguous)."""
    if "\0" in s[:_PREFIX_CHARS]:
        path, _, rest = s.partition("\0")
        return path, None, rest, False  # -Z prints no `:`/`-` after the NUL: context is not told apart
    for p in (current, *known):
        if p is not None and s.startswith(p) and s[len(p):len(p) + 1] == "-":
            return p, None, s[len(p) + 1:], True
    path, sep, rest = s[:_PREFIX_CHARS].partition(":")
    if not sep or not path:
        return None
    if not hinted and not (_PATHISH.match(path) and ("/" in path or "." in path)):
        return None
    return path, None, s[len(path) + 1:], False


def _numbered(s: str) -> _Line | None:
    m = _LINE_ONLY.match(s[:_PREFIX_CHARS])
    return (None, int(m[1]), s[m.end():], m[2] == "-") if m else None


def _read(out: Output, numbered: bool, with_path: bool, hints: Hints) -> tuple[list[_Match], list[Item], list[int]] | None:
    """Matches, notices and the indices of unread lines, if this shape reads the output."""
    matches: list[_Match] = []
    notices: list[Item] = []
    unread: list[int] = []
    known: set[str] = set()
    current: str | None = None
    content = 0
    for i, s in enumerate(out.lines):
        if not s.strip():
            continue
        if s == _SEPARATOR and (hints.context or not hints.tool):
            continue  # between context groups: no item's bytes
        notice = _notice(out, i, s)
        if notice is not None:
            notices.append(notice)
            continue
        content += 1
        read: _Line | None
        if with_path and numbered:
            read = _numbered_with_path(s, current, known)
        elif with_path:
            read = _path_only(s, current, known, hints.with_path is True)
        elif numbered:
            read = _numbered(s)
        else:
            read = (None, None, s, False)
        if read is None:
            unread.append(i)
            continue
        path, n, text, is_context = read
        if is_context:
            # (a context line names no file for sure — `a-1-b.txt-2-x` — so it never sets one)
            if matches and matches[-1].path == path:
                matches[-1].last = i + 1
            continue
        current = path
        if path is not None:
            known.add(path)
        matches.append(_Match(path, n, text, i, i + 1))
    if not matches or len(unread) > (1 - _MIN_SHARE) * content:
        return None
    return matches, notices, unread


def _read_heading(out: Output, numbered: bool) -> tuple[list[_Match], list[Item], list[int]] | None:
    """rg --heading: a path line, its `N:text` lines (`N-text` context, `--`), a blank before the next."""
    matches: list[_Match] = []
    notices: list[Item] = []
    path: str | None = None
    files = 0
    for i, s in enumerate(out.lines):
        if not s.strip():
            path = None
            continue
        if path is None:
            notice = _notice(out, i, s)
            if notice is not None:
                notices.append(notice)
                continue
            if numbered and _LINE_ONLY.match(s):
                return None  # a match line where a path should be: not this shape
            path, files = s, files + 1
            continue
        if s == _SEPARATOR:
            continue
        read = _numbered(s) if numbered else (None, None, s, False)
        if read is None:
            return None
        _, n, text, is_context = read
        if is_context:
            if matches and matches[-1].path == path:
                matches[-1].last = i + 1
            continue
        matches.append(_Match(path, n, text, i, i + 1))
    if not matches or files > len(matches):
        return None
    return matches, notices, []


def _looks_like_heading(out: Output) -> bool:
    """Heading form without the flag on the command line: every block opens with a line that is not
    `N:…` and goes on with `N:…` / `N-…` / `--` lines only."""
    opened = False
    blocks = 0
    for s in out.lines:
        if not s.strip():
            opened = False
            continue
        if not opened:
            if _LINE_ONLY.match(s):
                return False
            opened, blocks = True, blocks + 1
            continue
        if s != _SEPARATOR and not _LINE_ONLY.match(s[:_PREFIX_CHARS]):
            return False
    return blocks > 0 and len(out.lines) > 2 * blocks


def _match_items(out: Output, matches: list[_Match], group: str) -> list[Item]:
    items = []
    for m in matches:
        text = _clip(m.text.lstrip())  # indentation says nothing on a one-line entry
        items.append(Item(group=m.path if m.path is not None else group, noun="matches",
                          text=f"L{m.line}: {text}" if m.line is not None else text,
                          ref=f"L{m.line}" if m.line is not None else None,
                          span=out.span(m.first, m.last), body=m.last > m.first + 1))
    return items


def _grouped(items: list[Item]) -> list[Item]:
    """Items of one group together, groups in first-seen order (find visits a directory's entries
    around its subdirectories')."""
    order: dict[str, int] = {}
    for it in items:
        order.setdefault(it.group, len(order))
    return sorted(items, key=lambda it: order[it.group])


def _parse_matches(out: Output, hints: Hints) -> runner.Parsed | None:
    group = hints.operand or "matches"
    read = None
    if hints.heading or (hints.with_path is not False and not hints.null and _looks_like_heading(out)):
        read = _read_heading(out, hints.numbered is not False)
        fmt = "heading"
    if read is None:
        shapes = [(n, p) for p in ([hints.with_path] if hints.with_path is not None else [True, False])
                  for n in ([hints.numbered] if hints.numbered is not None else [True, False])]
        if hints.null:
            shapes = [(n, True) for n in ([hints.numbered] if hints.numbered is not None else [True, False])]
        for numbered, with_path in shapes:
            if not with_path and not numbered and hints.context:
                continue  # bare lines with context: matches and context cannot be told apart
            read = _read(out, numbered, with_path, hints)
            if read is not None:
                fmt = ("path:line:text" if with_path else "line:text") if numbered else ("path:text" if with_path else "lines")
                break
    if read is None:
        return None
    matches, notices, unread = read
    items = _match_items(out, matches, group)
    # Notices of a file that also has matches sit with them; the rest keep their place.
    items = _grouped(items + [n for n in notices if n.group != "errors"])
    items += [Item(group="unread lines", noun="lines", text=_clip(out.lines[i]), span=out.span(i, i + 1))
              for i in unread]
    items += [n for n in notices if n.group == "errors"]
    files = {m.path for m in matches if m.path is not None}
    other = {"matches": len(matches)}
    if files:
        other["files"] = len(files)
    binary = sum(1 for n in notices if n.text == "binary file matches")
    if binary:
        other["binary files"] = binary
    return runner.Parsed(counts=Counts(other=other), items=items, format=fmt)


def _parse_paths(out: Output, hints: Hints) -> runner.Parsed | None:
    """A file list (find, fd, grep -l, rg --files): one item per path, grouped by its directory."""
    noun = "paths" if hints.tool in ("find", "fd", "fdfind") else "files"
    items: list[Item] = []
    errors: list[Item] = []
    paths = 0
    for i, s in enumerate(out.lines):
        notice = _notice(out, i, s)
        if notice is not None:
            errors.append(notice)
            continue
        span = out.span(i, i + 1)
        for p in s.split("\0") if hints.null or "\0" in s else [s]:
            if not p:
                continue
            head, tail = os.path.split(p.rstrip("/")) if p not in ("/", ".") else ("", p)
            if not tail:
                head, tail = "", p
            items.append(Item(group=(head or ".") + ("" if head.endswith("/") else "/"), noun=noun,
                              text=_clip(tail + ("/" if p.endswith("/") and p != "/" else "")), span=span))
            paths += 1
    if not items and not errors:
        return None
    return runner.Parsed(counts=Counts(other={noun: paths}), items=_grouped(items) + errors,
                         format="null" if hints.null else "list")


def _parse_counts(out: Output, hints: Hints) -> runner.Parsed | None:
    """`-c`: `path:N` per file searched (`N` alone for one file); files with no match listed apart."""
    items: list[Item] = []
    errors: list[Item] = []
    total = files = 0
    for i, s in enumerate(out.lines):
        if not s.strip():
            continue
        notice = _notice(out, i, s)
        if notice is not None:
            errors.append(notice)
            continue
        span = out.span(i, i + 1)
        if s.isdigit():
            path, n = hints.operand or "(input)", int(s)
        else:
            m = _COUNT_LINE.match(s.replace("\0", ":", 1))
            if not m:
                return None
            path, n = m["path"], int(m["n"])
        total += n
        files += n > 0
        items.append(Item(group="counts" if n else "no match", noun="files",
                          text=f"{path}: {n}" if n else path, span=span))
    if not items:
        return None
    word = "matches" if hints.count_matches else "matching lines"  # -c counts lines, rg --count-matches matches
    items = [it for it in items if it.group == "counts"] + [it for it in items if it.group != "counts"]
    return runner.Parsed(counts=Counts(other={word: total, "files": files}), items=items + errors,
                         format="counts")


def parse_with(out: Output, hints: Hints) -> runner.Parsed | None:
    if not out.lines:
        return None
    if hints.paths_only:
        return _parse_paths(out, hints)
    if hints.counts:
        return _parse_counts(out, hints)
    return _parse_matches(out, hints)


@dataclass(frozen=True)
class SearchProfile:
    """The frame of runner.bind, with the command line read first: the same bytes are matches,
    a file list or counts depending on the flags that produced them."""

    name: str = "search"
    version: int = VERSION

    def detect(self, out: Output) -> bool:
        return False  # search output is never sniffed: it is whatever the files contain

    def extract(self, raw: bytes, exit_code: int | None, command: str) -> Facts:
        hints = hints_of(command)
        if hints.tool is None:
            # No search in the command line: nothing says these lines are matches (a `make` error,
            # a script's output), so they are not claimed as any.
            return handover(raw, exit_code, command, self.name)
        bound = runner.bind(self.name, self.version, lambda out: parse_with(out, hints), detect=())
        return bound.extract(raw, exit_code, command)


PROFILE = SearchProfile()
