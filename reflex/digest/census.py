"""The census: every build error, failing test id and diagnostic location, at three sizes.

Level 0 (dense): one line per failure with its location and first message
line, and a hint to its detail block; one line per diagnostic.
Level 1 (normal): the same, but parametrized cases of one test that fail at
the same place with the same exception share one entry, written
`FAIL file::test[p1] [p2] [p3] (line N) <message>` — every id is still there:
the first in full, the others by their bracket — with one hint.
Level 2 (inline, or when level 1 does not fit): shorter messages, one hint
for all failure details; diagnostics grouped by code with their locations.
Level 3 (lean, raw-capped, requested views, or when level 2 does not fit):
ids only; diagnostic codes with counts, and a note that their locations were
left out, with a hint to them.  Every level names every entry; the packer
cuts a level only when even it does not fit, and then says what it cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reflex.digest.facts import Diagnostic, Facts, Failure, Item, Span
from reflex.digest.layout import Group, counted
from reflex.digest.neutralize import clean_line
from reflex.digest.profiles.base import one_line
from reflex.digest.redact import redact_line

from reflex.digest.source import HintRef, Source

S_BUILD, S_FAIL, S_DIAG, S_DIAG_EVIDENCE, S_NOTES, S_HIGHLIGHT, S_RAW = 1, 2, 3, 4, 5, 6, 7

_BUILD_LABEL = {"pytest": "COLLECTION ERROR", "jest": "SUITE ERROR", "vitest": "SUITE ERROR"}
_LOCATIONS_PER_LINE = 20
GROUP_CHUNK = 25  # parametrized cases per census line
_CODES_PER_LINE = 12


def show(text: str, limit: int | None = None) -> str:
    """Program-derived text (ids, messages, paths) as shown: one line, redacted, neutralized."""
    s = clean_line(redact_line(" ".join(str(text).split())))
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


def union(spans: list[Span | None]) -> Span | None:
    real = [s for s in spans if s and s[1] > s[0]]
    if not real:
        return None
    return (min(s[0] for s in real), max(s[1] for s in real))


def tiers(facts: Facts, src: "Source", levels: tuple[int, ...]) -> list[Callable[[], list[Group]]]:
    """One builder per level, each built at most once (a big census is only built if needed)."""
    from functools import lru_cache

    return [lru_cache(maxsize=1)(lambda level=level: _tier(facts, src, level)) for level in levels]


def _tier(facts: Facts, src: "Source", level: int) -> list[Group]:
    groups: list[Group] = []
    # Level 4 exists for items only (many small groups counted per kind); the rest stop at 3.
    base = min(level, 3)
    groups += _build_errors(facts, src, base)
    groups += _failures(facts, src, base)
    groups += _diagnostics(facts, src, base)
    groups += _notes(facts, src)
    groups += items_census(facts, src, level)
    return groups


def _build_errors(facts: Facts, src: "Source", level: int) -> list[Group]:
    label = _BUILD_LABEL.get(facts.profile, "BUILD ERROR")
    out = []
    for i, be in enumerate(facts.build_errors):
        where = f" {show_path(src, be.where)}" if be.where else ""
        limit = {0: 200, 1: 160, 2: 120, 3: 80}[level]
        lines = [f"{be.label or label}{where}: {show(be.message, limit)}"]
        hints = []
        if be.span and level < 3 and _multiline(src, be.span):
            h = src.hint(be.span)
            hints.append(h)
            lines.append("  " + h.command)
        out.append(Group((S_BUILD, i), lines, hints, category="build errors", span=be.span))
    return out


def _multiline(src: "Source", span: Span) -> bool:
    """Whether a span says more than its census line: up to 3 lines (`E   msg` + `file:line: msg`)
    it is already quoted there, and a hint to it would cost more than it gives."""
    return src.raw.count(b"\n", span[0], span[1] - 1) >= 3


def _location(f: Failure, src: "Source") -> str:
    if f.line is None:
        return ""
    id_file = f.id.split("::", 1)[0] if f.id else None
    if f.file and f.file != id_file:
        return f" ({show_path(src, f.file)}:{f.line})"
    return f" (line {f.line})"


def failure_label(f: Failure, src: "Source") -> str:
    if f.id:
        ident = f.id[len(src.cwd) :] if src.cwd and f.id.startswith(src.cwd) else f.id
        name = show(ident, 300)
    else:
        name = show_path(src, f.file) + (f":{f.line}" if f.line else "")
    return f"{'ERROR' if f.kind == 'error' else 'FAIL'} {name}"


# PHPUnit names a data provider's row `Class::test with data set "name"` / `with data set #0`
# (testdox: `Class > Test with data set …`).
_DATA_SET = " with data set "
_SHAPE_NUM = re.compile(r"\d+(?:\.\d+)?")
_SHAPE_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _param_base(f: Failure) -> str | None:
    """The test a parametrized case belongs to, else None: `file::test` for pytest's
    `file::test[params]` (and JUnit's `test(int)[1]`), `Class::test` for PHPUnit's
    `Class::test with data set "row"`."""
    if not f.id:
        return None
    if f.id.endswith("]") and "[" in f.id:
        return f.id[: f.id.index("[")]
    if _DATA_SET in f.id:
        return f.id[: f.id.index(_DATA_SET)]
    return None


def _param_of(f: Failure) -> str:
    """How a later case of a group is named: `[params]`, or PHPUnit's row (`"250 cents"`, `#0`)."""
    ident = f.id or ""
    base = _param_base(f) or ""
    rest = ident[len(base):]
    return rest[len(_DATA_SET):] if rest.startswith(_DATA_SET) else rest


def _message_kind(message: str) -> str:
    """What makes two failures "the same error" for grouping: the exception type of
    `Type: detail`, else the message with its numbers and quoted values blanked (PHPUnit's
    `Failed asserting that 0 is identical to 900.` per data set)."""
    head, sep, _ = message.partition(":")
    if sep and head and " " not in head.strip():
        return head
    return _SHAPE_QUOTED.sub("''", _SHAPE_NUM.sub("#", message))


def _grouped(facts: Facts, level: int) -> list[list[Failure]]:
    """Failures in order; at levels >= 1, parametrized cases of one test with the same
    location and exception type (level 3: of one test) share an entry."""
    groups: list[list[Failure]] = []
    index: dict[tuple, int] = {}
    for f in facts.failures:
        base = _param_base(f) if level >= 1 else None
        if base is None:
            groups.append([f])
            continue
        exc = _message_kind(f.message) if f.message else ""
        key = (f.kind, base) if level == 3 else (f.kind, base, f.file, f.line, exc)
        if key in index and len(groups[index[key]]) < GROUP_CHUNK:
            groups[index[key]].append(f)
        else:  # a full group starts a new line, so the packer can still cut between lines
            index[key] = len(groups)
            groups.append([f])
    return groups


def _names(members: list[Failure], src: "Source") -> str:
    """`FAIL file::test[p1] [p2] [p3]` / `FAIL Class::test with data set "a" "b" #0`: later
    parametrized cases by their parameters only."""
    head = failure_label(members[0], src)
    # (grouped: each has an id and a parametrized base)
    rest = [show(_param_of(m), 200) for m in members[1:]]
    return " ".join([head] + rest)


def _failures(facts: Facts, src: "Source", level: int) -> list[Group]:
    out = []
    index = {id(f): k for k, f in enumerate(facts.failures)}
    seen_messages: set[str] = set()
    for members in _grouped(facts, level):
        i = index[id(members[0])]  # position by the first member: evidence (S_FAIL, k, 1) follows it
        f = members[0]
        names = _names(members, src)
        hints: list = []
        message = ""
        if f.message and level <= 2:
            if level >= 1 and f.message in seen_messages:
                # The same error again (one bug, many tests): name its type, not its text.
                message = " " + show(f.message.split(":", 1)[0], 60) + " (same message as above)"
            else:
                # Paths under the command's directory read relative, as in locations.
                text = f.message.replace(src.cwd, "") if src.cwd else f.message
                message = " " + show(text, {0: 160, 1: 90, 2: 80}[level])
            seen_messages.add(f.message)
        if level <= 1:
            lines = [f"{names}{_location(f, src)}{message}"]
            if f.span and _multiline(src, f.span):
                h = src.hint(f.span, f.id)
                hints.append(h)
                lines.append("  " + h.command)
        elif level == 2:
            lines = [f"{names}{_location(f, src)}{message}"]
        else:
            lines = [names]
        out.append(Group((S_FAIL, i, 0), lines, hints, category="failures", count=len(members),
                         span=union([m.span for m in members])))
    if facts.failures and (level >= 2 or not any(g.hints for g in out)):
        span = union([f.span for f in facts.failures])
        if span:
            h = src.hint(span)
            out.append(Group((S_FAIL, 10**8), ["  failure details: " + h.command], [h]))
    return out


def _diag_key(d: Diagnostic) -> str:
    return d.code or d.severity


def show_path(src: "Source", path: str | None) -> str:
    """A path as shown: relative to the command's directory when it lies under it."""
    if not path:
        return "?"
    if src.cwd and path.startswith(src.cwd):
        path = path[len(src.cwd) :]
    return show(path, 160)


def _loc(src: "Source", d: Diagnostic, with_file: bool = True) -> str:
    parts = [show_path(src, d.file)] if with_file else []
    if d.line is not None:
        parts.append(str(d.line))
        if d.col is not None:
            parts.append(str(d.col))
    return ":".join(parts)


def _by_file(facts: Facts, src: "Source", limit: int = 140) -> list[Group]:
    """Format A: a file line, then `  line:col code message` for each of its diagnostics."""
    out: list[Group] = []
    files: dict[str | None, int] = {}
    for d in facts.diagnostics:
        files.setdefault(d.file, len(files))
    headed: set[int] = set()
    for i, d in enumerate(facts.diagnostics):
        fi = files[d.file]
        if fi not in headed:
            headed.add(fi)
            out.append(Group((S_DIAG, fi, -1), [show_path(src, d.file)]))
        sev = "" if d.severity == "error" else f"{d.severity}: "
        code = f" {show(d.code, 60)}" if d.code else ""
        out.append(Group((S_DIAG, fi, i), [f"  {_loc(src, d, with_file=False) or '?'}{code} {sev}{show(d.message, limit)}"],
                         category="diagnostics", span=d.span))
    return out


def _by_code(facts: Facts, src: "Source") -> list[Group]:
    """Format B: `CODE ×n: first message`, then that code's locations, file by file."""
    out: list[Group] = []
    by_key: dict[tuple[str, str], list[Diagnostic]] = {}
    for d in facts.diagnostics:
        # Without a code, only findings of one message shape share a heading: javac's "cannot find
        # symbol" and "incompatible types" under one "error ×3: cannot find symbol" would mislead.
        by_key.setdefault((_diag_key(d), "" if d.code else _message_kind(d.message)), []).append(d)
    idx = 0
    for (key, _shape), group in by_key.items():
        sev = "" if group[0].severity == "error" else f" ({group[0].severity})"
        out.append(Group((S_DIAG, idx), [f"{show(key, 60)}{sev} ×{len(group)}: {show(group[0].message, 100)}"]))
        idx += 1
        for c in range(0, len(group), _LOCATIONS_PER_LINE):
            chunk = group[c : c + _LOCATIONS_PER_LINE]
            out.append(Group((S_DIAG, idx), ["  " + _locations(src, chunk)], category="diagnostics",
                             count=len(chunk), span=union([d.span for d in chunk])))
            idx += 1
    return out


def _diagnostics(facts: Facts, src: "Source", level: int) -> list[Group]:
    diags = facts.diagnostics
    if not diags:
        return []
    if level == 0:
        return _by_file(facts, src)
    if level == 1:
        a, b = _by_file(facts, src, limit=48), _by_code(facts, src)
        # Many findings of few codes (a linter's usual shape) read better, and cost less, by code.
        return b if sum(g.tokens for g in b) < 0.75 * sum(g.tokens for g in a) else a
    if level == 2:
        return _by_code(facts, src)
    out: list[Group] = []
    by_key: dict[str, list[Diagnostic]] = {}
    for d in diags:
        by_key.setdefault(_diag_key(d), []).append(d)
    items = [f"{show(k, 60)} ×{len(v)}" for k, v in by_key.items()]
    keys = list(by_key.values())
    for c in range(0, len(items), _CODES_PER_LINE):
        chunk = keys[c : c + _CODES_PER_LINE]
        out.append(Group((S_DIAG, c), ["codes: " + ", ".join(items[c : c + _CODES_PER_LINE])],
                         category="diagnostic codes", count=len(chunk),
                         span=union([d.span for g in chunk for d in g])))
    span = union([d.span for d in diags])
    if span:
        h = src.hint(span)
        out.append(Group((S_DIAG, 10**8), [f"[ctx] locations of {len(diags)} diagnostics not listed: {h.command}"],
                         [h], truncates=True))
    return out


def _locations(src: "Source", diags: list[Diagnostic]) -> str:
    parts: list[str] = []
    last_file = None
    for d in diags:
        if d.file != last_file:
            parts.append(_loc(src, d))
            last_file = d.file
        else:
            parts.append(_loc(src, d, with_file=False))
    return " ".join(parts)


def _notes(facts: Facts, src: "Source") -> list[Group]:
    out = [Group((S_NOTES, 0, i), [f"note: {show(n, 200)}"]) for i, n in enumerate(facts.notes)]
    if facts.recognized and not facts.counts.reported() and facts.summary:
        a, b = src.line_range(facts.summary)
        lines = [s for s in src.lines(a, min(b, a + 4)) if s.strip()]
        if lines:
            out.append(Group((S_NOTES, 0, len(out)), ["summary: " + one_line(lines[0], 300)] + lines[1:]))
    return out


# -- items: the census of tools that are not test runners (git, searches, listings, CI logs) ----------

# Where items sit: after the notes (a branch line, a summary), before any detail; bodies after them all.
S_ITEMS, S_ITEM_BODIES = 1, 2
_ITEM_CHARS = {0: 240, 1: 160, 2: 100}
_PACKED_CHARS = 60      # at level 2, a group whose entries are all this short lists several per line
_ITEMS_PER_LINE = 10


_GROUPS_ONE_LINE = 8  # at level 3, more groups than this are counted on one line per noun
_GROUP_NAMES = 12      # group names a collapsed line still shows


def _collapsed_groups(grouped: dict[str, list[tuple[int, Item]]], src: "Source") -> list[Group]:
    """Level 3 for many small groups (a tree's directories, a search over many files): per noun, one
    line with the count, how many groups, the first groups' names and one address over them all."""
    by_noun: dict[str, list[tuple[str, list[tuple[int, Item]]]]] = {}
    for name, members in grouped.items():
        by_noun.setdefault(members[0][1].noun, []).append((name, members))
    out: list[Group] = []
    for k, (noun, groups) in enumerate(by_noun.items()):
        n = sum(len(m) for _, m in groups)
        span = union([it.span for _, m in groups for _, it in m])
        names = ", ".join(show(name, 40) for name, _ in groups[:_GROUP_NAMES])
        more = f", … {len(groups) - _GROUP_NAMES} more" if len(groups) > _GROUP_NAMES else ""
        where = f": {src.hint(span).command}" if span else ""
        out.append(Group((S_NOTES, S_ITEMS, k, 0), [f"{counted(n, noun)} under {len(groups)} headings ({names}{more}){where}"],
                         [src.hint(span)] if span else [], category=noun, count=n, span=span))
    return out


def item_groups(facts: Facts) -> dict[str, list[tuple[int, Item]]]:
    """Items by their group, groups in first-seen order (index into facts.items kept)."""
    groups: dict[str, list[tuple[int, Item]]] = {}
    for i, it in enumerate(facts.items):
        groups.setdefault(it.group, []).append((i, it))
    return groups


def _item_line(src: "Source", it: Item, limit: int) -> tuple[str, list[HintRef]]:
    """One entry as shown; a clipped one ends with the address of its whole first line."""
    text = show(it.text)
    sev = "" if it.severity == "info" else f"{it.severity}: "
    if len(text) <= limit or it.span is None:
        return sev + show(it.text, limit), []
    first = src.out.line_index(it.span[0])
    h = src.hint(src.out.span(first, first + 1))
    # The address ends the line: a hint is read to the end of its line (reflex.address.parse_hint).
    return f"{sev}{text[: limit - 1]}… whole line: {h.command}", [h]


def items_census(facts: Facts, src: "Source", level: int) -> list[Group]:
    """Every item named, by group: level 0/1 one entry a line (clipped at 240/160 characters, with
    the address of the whole line); level 2 short entries packed several to a line, longer ones
    clipped at 100; level 3 each entry by its reference only (a match's `L12`, a commit's hash, a
    path), packed; level 4 (the last resort) the count per kind over all groups, with one address.
    Errors and warnings are listed one a line, clipped, at every level: they are what the agent
    most needs verbatim."""
    out: list[Group] = []
    grouped = item_groups(facts)
    if level >= 4 and len(grouped) > _GROUPS_ONE_LINE:
        quiet = {name: [(i, it) for i, it in members if it.severity == "info"] for name, members in grouped.items()}
        out += _collapsed_groups({k: v for k, v in quiet.items() if v}, src)
        loud = [(i, it) for members in grouped.values() for i, it in members if it.severity != "info"]
        for k, (_, it) in enumerate(loud):
            line, hints = _item_line(src, it, 80)
            out.append(Group((S_NOTES, S_ITEMS, 10**6, k), ["  " + line], hints, category=it.noun, span=it.span))
        return out
    for gi, (name, members) in enumerate(grouped.items()):
        noun = members[0][1].noun
        n = len(members)
        texts = [show(it.text) for _, it in members]
        one_line = _one_line_group(name, members, texts, level)
        if one_line is not None:
            # A small group on its heading's line: a deep tree is mostly directories of a few
            # files, and a line per heading would cost more than the names it heads.
            out.append(Group((S_NOTES, S_ITEMS, gi, 0), [one_line], category=noun, count=n,
                             span=union([it.span for _, it in members])))
            continue
        out.append(Group((S_NOTES, S_ITEMS, gi, -1), [f"{show(name, 160)} ({n}):"]))
        if level >= 3:
            plain = [(k, it) for k, (_, it) in enumerate(members) if it.severity == "info"]
            for c in range(0, len(plain), _REFS_PER_LINE):
                chunk = plain[c: c + _REFS_PER_LINE]
                refs = " ".join(show(_ref(it), 40) for _, it in chunk)
                out.append(Group((S_NOTES, S_ITEMS, gi, chunk[0][0]), ["  " + refs], category=noun, count=len(chunk),
                                 span=union([it.span for _, it in chunk])))
            for k, (_, it) in enumerate(members):
                if it.severity != "info":
                    line, hints = _item_line(src, it, 80)
                    out.append(Group((S_NOTES, S_ITEMS, gi, k), ["  " + line], hints, category=noun, span=it.span))
            continue
        if level == 2 and all(len(t) <= _PACKED_CHARS and ", " not in t and it.severity == "info"
                              for t, (_, it) in zip(texts, members)):
            for c in range(0, n, _ITEMS_PER_LINE):
                chunk = members[c: c + _ITEMS_PER_LINE]
                out.append(Group((S_NOTES, S_ITEMS, gi, c), ["  " + ", ".join(texts[c: c + len(chunk)])],
                                 category=noun, count=len(chunk), span=union([it.span for _, it in chunk])))
            continue
        for k, (_, it) in enumerate(members):
            line, hints = _item_line(src, it, _ITEM_CHARS[level])
            out.append(Group((S_NOTES, S_ITEMS, gi, k), ["  " + line], hints, category=noun, span=it.span))
    if level >= 3:
        # Named by reference only: one address gives back the entries themselves.
        span = union([it.span for it in facts.items if it.severity == "info"])
        if span:
            h = src.hint(span)
            out.append(Group((S_NOTES, S_ITEMS, 10**7, 0), [f"  the entries themselves: {h.command}"], [h]))
    return out


_REFS_PER_LINE = 20


def _one_line_group(name: str, members: list[tuple[int, Item]], texts: list[str], level: int) -> str | None:
    """At levels 2 and 3, a group whose entries all fit one packed line, as `heading (3): a, b, c`
    (level 3: `heading (3): a b c`, entries by reference); else None.  The count stays: a reader
    checks the names against it without counting them.  Only plain entries: an error or
    a warning keeps a line of its own."""
    if level not in (2, 3) or any(it.severity != "info" for _, it in members):
        return None
    if level == 2:
        if len(members) > _ITEMS_PER_LINE or any(len(t) > _PACKED_CHARS or ", " in t for t in texts):
            return None
        return f"{show(name, 160)} ({len(members)}): " + ", ".join(texts)
    if len(members) > _REFS_PER_LINE:
        return None
    return f"{show(name, 160)} ({len(members)}): " + " ".join(show(_ref(it), 40) for _, it in members)


def _ref(it: Item) -> str:
    """How level 3 names an entry: its own reference, else the first word of its text (a path, a
    commit's hash, `L12` of `L12: text`)."""
    if it.ref:
        return it.ref
    words = it.text.split(None, 1)
    return words[0].rstrip(":") if words else "?"


def omission_note(src: "Source") -> Callable[[str, int, Span | None], Group]:
    def make(category: str, n: int, span: Span | None) -> Group:
        where = src.hint(span).command if span else f"ctx get {src.handle}"
        hints = [src.hint(span)] if span else []
        return Group((0, 0), [f"[ctx] {n} more {category} not listed: {where}"], hints, truncates=True)

    return make
