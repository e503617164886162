"""What each density adds after the census, and the plan that combines them.

- lean: census ids only; for unrecognised output, error lines and a short tail.
- normal: census with a hint per failure; unrecognised output gets its
  error/warning lines (folded), head and tail.
- dense: normal plus the key lines of every failure's detail block (the
  assertion, the raising line, expected/got), budget shared equally.
- inline: the detail blocks themselves, shared equally; a block that does
  not fit ends with a hint to the rest of it.
- raw-capped: the raw output's head and tail, verbatim (cleaned), with a
  hint for the middle it left out.
- requested view (any density): lean census plus the slice the agent asked
  for, so a `| tail -20` can never cut away the census or the handle.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reflex.digest import census
from reflex.digest.census import (S_BUILD, S_DIAG_EVIDENCE, S_FAIL, S_HIGHLIGHT, S_ITEM_BODIES, S_NOTES, S_RAW, show,
                                  show_path, union)
from reflex.digest.facts import Facts, Span
from reflex.digest.layout import Elastic, Group, Plan, fit_head, fit_tail
from reflex.digest.neutralize import clean_line
from reflex.digest.profiles.generic import fold
from reflex.digest.redact import redact_line
from reflex.digest.source import HintRef, Source

_KEY = re.compile(
    r"^(?:E\s|>\s)|Error|Exception|assert|panic|expected|Expected|[Rr]eceived|\bgot\b|\bwant\b|left|right"
    r"|\.\w{1,5}:\d+|\bat \S+:\d+"
)
KEY_LINES = 8
EVIDENCE_INDENT = "    "
_WINDOW = 4000  # lines considered for a head or tail excerpt of a huge output
_NOTE_RESERVE = 40  # tokens kept for a "… more lines: ctx get …" line


def build_plan(facts: Facts, src: "Source", *, density: str, requested_view: str | None) -> Plan:
    note = census.omission_note(src)
    # Items (git, searches, listings…) have one more census level: counts per kind, the last resort.
    last = (3, 4) if facts.items else (3,)
    if requested_view is not None:
        return Plan(census.tiers(facts, src, last), 0.0, [Elastic(1.0, _view(src, requested_view))], note)
    generic = not facts.recognized
    bodies: list[Group | Elastic] = [Elastic(1.0, _item_bodies(facts, src))] if any(it.body for it in facts.items) else []
    detail: list[Group | Elastic]
    if density == "lean":
        detail = _generic_detail(facts, src, 0.5, 0.2) if generic else []
        return Plan(census.tiers(facts, src, last), 0.0, detail, note)
    if density == "normal":
        detail = _generic_detail(facts, src, 0.4, 0.3) if generic else bodies
        return Plan(census.tiers(facts, src, (1, 2) + last), 0.0, detail, note)
    if density == "dense":
        detail = [Elastic(1.0, _evidence(facts, src, inline=False)), *bodies]
        if generic:
            detail += _generic_detail(facts, src, 0.4, 0.3)
        return Plan(census.tiers(facts, src, (0, 1, 2) + last), 0.5, detail, note)
    if density == "inline":
        detail = [Elastic(1.0, _evidence(facts, src, inline=True)), *bodies]
        if generic:
            detail += _generic_detail(facts, src, 0.4, 0.3)
        return Plan(census.tiers(facts, src, (2,) + last), 0.6, detail, note)
    # raw-capped
    return Plan(census.tiers(facts, src, last), 0.7, [Elastic(1.0, _excerpt(src, 0.3, folded=False))], note)


def _program_lines(text: str) -> list[str]:
    return [clean_line(redact_line(s)) for s in text.split("\n")]


# -- evidence (dense, inline) -------------------------------------------------------


# (order, span, decoded detail, test id, (label, line) of a diagnostic's evidence block)
_Item = tuple[tuple[int, ...], Span | None, str | None, str | None, tuple[str, int | None] | None]
# A display item: (first line, last line, text, hint to the lines it stands for)
_Shown = tuple[int, int, str, HintRef | None]
# A plan's builder: the groups that fit in this many tokens.
Builder = Callable[[int], list[Group]]


def _items(facts: Facts, src: "Source") -> list[_Item]:
    """(order, span, decoded detail, test id, label) for everything that has detail to show.

    Failure evidence sits right under its census line; diagnostic evidence gets its own
    section, each block labelled with its location (the census may list them by code).
    """
    items: list[_Item] = []
    for i, be in enumerate(facts.build_errors):
        items.append(((S_BUILD, i, 1), be.span, be.detail, None, None))
    for i, f in enumerate(facts.failures):
        items.append(((S_FAIL, i, 1), f.span, f.detail, f.id, None))
    for i, d in enumerate(facts.diagnostics):
        if d.detail or d.span:
            loc = ":".join([show_path(src, d.file)] + [str(x) for x in (d.line, d.col) if x is not None])
            label = f"{loc} {show(d.code, 60)}:" if d.code else f"{loc}:"
            items.append(((S_DIAG_EVIDENCE, i), d.span, d.detail, None, (label, d.line)))
    return items


MIN_EVIDENCE = 80  # below this a block is mostly its own "… more lines" hint


def _evidence(facts: Facts, src: "Source", inline: bool) -> Builder:
    """Evidence blocks shared equally; when the budget cannot give each one MIN_EVIDENCE
    tokens, the first ones get that much and one line says where the rest are."""

    def build(alloc: int) -> list[Group]:
        # A one-line diagnostic span adds nothing its census line lacks.
        items = [it for it in _items(facts, src) if it[4] is None or it[2] or (it[1] and _nlines(src, it[1]) > 1)]
        if not items:
            return []
        per = alloc // len(items)
        reserve = 0
        if per < MIN_EVIDENCE:
            per, reserve = MIN_EVIDENCE, _NOTE_RESERVE
        groups: list[Group] = []
        spent = 0
        shown = 0
        for order, span, detail, test_id, label in items:
            room = min(per, alloc - reserve - spent)
            if room < min(MIN_EVIDENCE, per):
                break
            g = _evidence_group(src, order, span, detail, test_id, room, inline, label)
            shown += 1
            if g is not None and g.tokens <= alloc - reserve - spent:
                groups.append(g)
                spent += g.tokens
        rest = items[shown:]
        if rest:
            span = union([it[1] for it in rest])
            hint = src.hint(span) if span else None
            note = f"[ctx] evidence for {len(rest)} more not shown" + (f": {hint.command}" if hint else "")
            g = Group((S_DIAG_EVIDENCE, 10**9), [note], [hint] if hint else [], truncates=inline)
            if spent + g.tokens <= alloc:
                groups.append(g)
        return groups

    return build


_RANK = (re.compile(r"^E\s"), re.compile(r"^>\s"))


def _key_lines(numbered: list[tuple[int, str]], limit: int) -> list[tuple[int, str]]:
    """Up to `limit` key lines in their original order, the error lines (`E   …`) and the
    failing source line (`>   …`) chosen first."""
    keyed = [(k, s) for k, s in numbered if _KEY.search(s)]
    if not keyed:
        return numbered[:limit]

    def rank(item: tuple[int, str]) -> int:
        return next((r for r, p in enumerate(_RANK) if p.match(item[1])), len(_RANK))

    chosen = sorted(sorted(keyed, key=rank)[:limit])
    return chosen


def _nlines(src: "Source", span: Span) -> int:
    a, b = src.line_range(span)
    return b - a


DIAG_KEY_LINES = 4
_TITLE = re.compile(r"^[_=]{2,} .+ [_=]{2,}$")
_CARET = re.compile(r"(?:^|[|│]|\s)\s*[\^~]{2,}|\s\^(?:\s|$)")
_HELP = re.compile(r"^\s*(?:=\s*)?(?:help|hint|note|suggestion):", re.IGNORECASE)
_DIAG_NOISE = re.compile(r"^\s*(?:-->|\|\s*$|[\w./-]+[:(]\d+)")


def _evidence_group(src: "Source", order: tuple[int, ...], span: Span | None, detail: str | None, test_id: str | None,
                    alloc: int, inline: bool, label: tuple[str, int | None] | None = None) -> Group | None:
    if detail is not None:
        body = _program_lines(detail)
        first_line = 0
    elif span is not None:
        a, b = src.line_range(span)
        body = src.lines(a, b)
        first_line = a
    else:
        return None
    # Rules and block titles (`____ test_x ____`) repeat what the census line already says.
    numbered = [(k, s) for k, s in enumerate(body) if s.strip() and not set(s.strip()) <= set("_=-")
                and not _TITLE.match(s)]
    label_text = ""
    if label is not None:
        label_text, diag_line = label
        # A diagnostic block: its first line is the census line; keep the code frame and help.
        numbered = [(k, s) for k, s in numbered[1:] if not _DIAG_NOISE.match(s)]
        if not inline:
            # Dense: the flagged source line, its caret line, and the tool's help — not the context.
            own = re.compile(r"^\s*%d(?:\s*[|│]|\s+\S)" % (diag_line or -1))
            numbered = [(k, s) for k, s in numbered
                        if own.match(s) or _CARET.search(s) or _HELP.match(s)][:DIAG_KEY_LINES]
            if not numbered:
                return None
    elif not inline:
        numbered = _key_lines(numbered, KEY_LINES)
    lines = [EVIDENCE_INDENT + s for _, s in numbered]
    if not lines:
        return None
    if label is not None:
        lines.insert(0, "  " + label_text)
        numbered.insert(0, numbered[0])
    if fit_head(lines, alloc) == len(lines):
        return Group(order, lines)
    if not inline:
        # Dense: key lines under a census line that carries its own hint; cut, never re-hinted.
        keep = fit_head(lines, alloc)
        return Group(order, lines[: max(keep, 1)]) if keep or label else None
    whole_hint = src.hint(span, test_id) if span is not None else None
    if label is None:
        # Inline, the whole block does not fit: its key lines say more than its first lines.
        for k in range(KEY_LINES, 0, -1):
            keyed = _key_lines(numbered, k)
            if not keyed or len(keyed) >= len(numbered):
                break
            key_lines = [EVIDENCE_INDENT + s for _, s in keyed]
            if fit_head(key_lines, max(alloc - _NOTE_RESERVE, 0)) == len(key_lines):
                tail = f"{EVIDENCE_INDENT}… key lines only ({len(lines) - len(keyed)} not shown)" + (
                    f": {whole_hint.command}" if whole_hint else "")
                return Group(order, key_lines + [tail], [whole_hint] if whole_hint else [], truncates=True)
    keep = fit_head(lines, max(alloc - _NOTE_RESERVE, 0))
    if keep == 0:
        return None
    hints = []
    tail = f"{EVIDENCE_INDENT}… {len(lines) - keep} more lines"
    if detail is None and span is not None:
        # The hint covers the rest of the block, from the first line not shown.
        k_next = numbered[keep][0]
        a, b = src.line_range(span)
        rest = src.out.span(first_line + k_next, b)
        if rest[1] > rest[0]:
            h = src.hint(rest)
            hints.append(h)
            tail += f": {h.command}"
    elif whole_hint is not None:
        hints.append(whole_hint)
        tail += f": {whole_hint.command}"
    return Group(order, lines[:keep] + [tail], hints, truncates=True)


# -- item bodies (a diff's hunks, a failing CI step's log) -------------------------------------------

_BODY_NAMES = 8  # entries named in the note on bodies not shown
_BODIES_NOTE_RESERVE = 120  # tokens kept for that note: eight names and an address
_CUT_NOTE_RESERVE = 50  # tokens kept for the "… more lines of X: ctx get …" line of a cut body


def _item_bodies(facts: Facts, src: "Source") -> Builder:
    """Bodies of the items that have one, in census order, after the whole census: each whole when
    it fits, else its head and an address to the rest; the bodies no budget was left for are named
    in one note with one address over their bytes, so a cut says which entries are behind it."""

    def build(alloc: int) -> list[Group]:
        groups: list[Group] = []
        spent = 0
        left: list[tuple[str, Span]] = []
        for i, it in enumerate(facts.items):
            if not it.body or it.span is None:
                continue
            a, b = src.line_range(it.span)
            if b - a <= 1:
                continue
            body_span = src.out.span(a + 1, b)
            whole = [f"== {show(it.text, 120)}"] + src.lines(a + 1, b)
            room = alloc - spent - _BODIES_NOTE_RESERVE  # what is left once the final note is provided for
            g: Group | None = None
            if room > 0 and fit_head(whole, room) == len(whole):
                g = Group((S_NOTES, S_ITEM_BODIES, i), whole)
            elif room - _CUT_NOTE_RESERVE >= MIN_EVIDENCE:
                k = fit_head(whole, room - _CUT_NOTE_RESERVE)
                if k >= 2:
                    h = src.hint(src.out.span(a + k, b))
                    note = f"[ctx] {b - a - k} more lines of {show(it.text, 60)}: {h.command}"
                    g = Group((S_NOTES, S_ITEM_BODIES, i), whole[:k] + [note], [h], truncates=True)
            if g is None or spent + g.tokens > alloc - _BODIES_NOTE_RESERVE:
                left.append((it.text, body_span))
                continue
            groups.append(g)
            spent += g.tokens
        while left:
            span = union([sp for _, sp in left])
            names = ", ".join(show(t, 48) for t, _ in left[:_BODY_NAMES])
            more = f" and {len(left) - _BODY_NAMES} more" if len(left) > _BODY_NAMES else ""
            hint = src.hint(span) if span else None
            line = f"[ctx] not shown: the bodies of {names}{more}" + (f": {hint.command}" if hint else "")
            note_group = Group((S_NOTES, S_ITEM_BODIES, 10**9), [line], [hint] if hint else [], truncates=True)
            if spent + note_group.tokens <= alloc or not groups:
                groups.append(note_group)
                break
            # The note must be there: give up the last body shown for it (and name it too).
            dropped = groups.pop()
            spent -= dropped.tokens
            k = dropped.order[2]
            it = facts.items[k]
            a, b = src.line_range(it.span) if it.span else (0, 0)
            left.insert(0, (it.text, src.out.span(a + 1, b)))
        return groups

    return build


# -- unrecognised output: highlights, head and tail ------------------------------------------------


def _generic_detail(facts: Facts, src: "Source", highlight_share: float, head_ratio: float) -> list:
    return [Elastic(highlight_share, _highlights(facts, src)), Elastic(1.0, _excerpt(src, head_ratio, folded=True))]


def _highlights(facts: Facts, src: "Source") -> Builder:
    def build(alloc: int) -> list[Group]:
        groups: list[Group] = []
        spent = 0
        shown = 0
        hs = facts.highlights
        for i, h in enumerate(hs):
            times = f" ×{h.count}" if h.count > 1 else ""
            g = Group((S_HIGHLIGHT, i), [f"L{h.line}{times} {h.severity}: {show(h.text, 240)}"])
            if spent + g.tokens > alloc - (_NOTE_RESERVE if i < len(hs) - 1 else 0):
                break
            groups.append(g)
            spent += g.tokens
            shown += 1
        if shown < len(hs):
            rest = hs[shown:]
            span = union([h.span for h in rest])
            hint = src.hint(span) if span else None
            line = f"[ctx] {len(rest)} more error/warning lines not listed" + (f": {hint.command}" if hint else "")
            g = Group((S_HIGHLIGHT, 10**9), [line], [hint] if hint else [], truncates=True)
            if spent + g.tokens <= alloc:
                groups.append(g)
        return groups

    return build


def _display(src: "Source", first: int, last: int, folded: bool) -> list[_Shown]:
    """(first line, last line, text) display items for lines[first:last], folding repeated templates.

    A run of 3+ lines with one template shows its first line and a note with the run's
    length and, from 10 lines up, a hint to the lines it stands for."""
    if not folded:
        return [(i, i + 1, src.line(i), None) for i in range(first, last)]
    items: list[_Shown] = []
    for i, n, _ in fold(src.out.lines, first, last):
        if n >= 3:
            items.append((i, i + 1, src.line(i), None))
            hint = src.hint(src.out.span(i + 1, i + n)) if n >= 10 else None
            where = hint.command if hint else f"L{i + 2}-{i + n}"
            items.append((i + 1, i + n, f"  (×{n - 1} similar lines: {where})", hint))
        else:
            items.extend((k, k + 1, src.line(k), None) for k in range(i, i + n))
    return items


def _excerpt(src: "Source", head_ratio: float, folded: bool) -> Builder:
    def build(alloc: int) -> list[Group]:
        n = len(src.out)
        if n == 0:
            return []
        if n <= 2 * _WINDOW:
            whole = _display(src, 0, n, folded)
            texts = [it[2] for it in whole]
            if fit_head(texts, alloc) == len(texts):
                return [Group((S_RAW, 0), texts, [it[3] for it in whole if it[3]])]
        head_items = _display(src, 0, min(n, _WINDOW), folded)
        tail_items = _display(src, max(0, n - _WINDOW), n, folded)
        body = max(alloc - _NOTE_RESERVE - 8, 0)
        head_budget = int(body * head_ratio)
        k_head = fit_head([it[2] for it in head_items], head_budget)
        k_tail = fit_tail([it[2] for it in tail_items], body - head_budget)
        head = head_items[:k_head]
        tail = tail_items[len(tail_items) - k_tail :] if k_tail else []
        h_end = head[-1][1] if head else 0
        t_start = tail[0][0] if tail else n
        if tail and t_start < h_end:  # windows overlapped: drop the duplicate lines from the tail
            tail = [it for it in tail if it[0] >= h_end]
            t_start = tail[0][0] if tail else n
        groups = []
        if head:
            groups.append(Group((S_RAW, 0), [it[2] for it in head], [it[3] for it in head if it[3]]))
        if t_start > h_end:
            span = src.out.span(h_end, t_start)
            h = src.hint(span)
            groups.append(Group((S_RAW, 1), [f"[ctx] lines {h_end + 1}-{t_start} not shown: {h.command}"], [h],
                                truncates=True))
        if tail:
            groups.append(Group((S_RAW, 2), [it[2] for it in tail], [it[3] for it in tail if it[3]]))
        return groups

    return build


# -- requested view ---------------------------------------------------------------------------


def _view(src: "Source", view: str) -> Builder:
    def build(alloc: int) -> list[Group]:
        raw_lines = view.rstrip("\n").split("\n")
        n = len(raw_lines)
        intro = "[ctx] requested view:"
        if n <= _WINDOW:
            lines = [clean_line(redact_line(s)) for s in raw_lines]
            if fit_head([intro] + lines, alloc) == n + 1:
                return [Group((S_RAW, 0), [intro] + lines)]
        # Only the lines that can be shown are cleaned and counted: a view can be
        # a million lines (`yes | cat`), and a line costs at least one token.
        body = max(alloc - _NOTE_RESERVE - 12, 0)
        head_pool = [clean_line(redact_line(s)) for s in raw_lines[:_WINDOW]]
        k_head = fit_head(head_pool, body * 3 // 10)
        tail_from = max(k_head, n - _WINDOW)
        tail_pool = [clean_line(redact_line(s)) for s in raw_lines[tail_from:]]
        k_tail = fit_tail(tail_pool, body - body * 3 // 10)
        cut = n - k_head - k_tail
        whole = src.hint((0, len(src.raw))) if src.raw else None
        note = f"[ctx] {cut} lines of the view not shown" + (f"; full output: {whole.command}" if whole else "")
        return [Group((S_RAW, 0), [intro] + head_pool[:k_head] + [note] + tail_pool[len(tail_pool) - k_tail :],
                      [whole] if whole else [], truncates=True)]

    return build
