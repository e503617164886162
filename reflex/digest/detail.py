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
from typing import TYPE_CHECKING

from reflex.digest import census
from reflex.digest.census import S_BUILD, S_DIAG, S_FAIL, S_HIGHLIGHT, S_RAW, show, union
from reflex.digest.facts import Facts, Span
from reflex.digest.layout import Elastic, Group, Plan, fit_head, fit_tail
from reflex.digest.neutralize import clean_line
from reflex.digest.profiles.generic import fold
from reflex.digest.redact import redact_line

if TYPE_CHECKING:
    from reflex.digest.render import Source

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
    if requested_view is not None:
        return Plan(census.tiers(facts, src, (3,)), 0.0, [Elastic(1.0, _view(src, requested_view))], note)
    generic = not facts.recognized
    if density == "lean":
        detail = _generic_detail(facts, src, 0.5, 0.2) if generic else []
        return Plan(census.tiers(facts, src, (3,)), 0.0, detail, note)
    if density == "normal":
        detail = _generic_detail(facts, src, 0.4, 0.3) if generic else []
        return Plan(census.tiers(facts, src, (1, 2, 3)), 0.0, detail, note)
    if density == "dense":
        detail = [Elastic(1.0, _evidence(facts, src, inline=False))]
        if generic:
            detail += _generic_detail(facts, src, 0.4, 0.3)
        return Plan(census.tiers(facts, src, (0, 1, 2, 3)), 0.5, detail, note)
    if density == "inline":
        detail = [Elastic(1.0, _evidence(facts, src, inline=True))]
        if generic:
            detail += _generic_detail(facts, src, 0.4, 0.3)
        return Plan(census.tiers(facts, src, (2, 3)), 0.6, detail, note)
    # raw-capped
    return Plan(census.tiers(facts, src, (3,)), 0.7, [Elastic(1.0, _excerpt(src, 0.3, folded=False))], note)


def _program_lines(text: str) -> list[str]:
    return [clean_line(redact_line(s)) for s in text.split("\n")]


# -- evidence (dense, inline) -------------------------------------------------------


def _items(facts: Facts) -> list[tuple[tuple, Span | None, str | None, str | None]]:
    """(order, span, decoded detail, test id) for everything that has detail to show."""
    items = []
    for i, be in enumerate(facts.build_errors):
        items.append(((S_BUILD, i, 1), be.span, be.detail, None))
    for i, f in enumerate(facts.failures):
        items.append(((S_FAIL, i, 1), f.span, f.detail, f.id))
    for i, d in enumerate(facts.diagnostics):
        if d.detail or d.span:
            items.append(((S_DIAG, i, 1), d.span, d.detail, None))
    return items


def _evidence(facts: Facts, src: "Source", inline: bool):
    def build(alloc: int) -> list[Group]:
        items = _items(facts)
        if not facts.failures and not facts.build_errors:
            # Diagnostics: a one-line span adds nothing the census line lacks.
            items = [it for it in items if it[2] or (it[1] and _nlines(src, it[1]) > 1)]
        if not items:
            return []
        per = max(alloc // len(items), 48)
        groups = []
        spent = 0
        for order, span, detail, test_id in items:
            if spent + 24 > alloc:
                break
            g = _evidence_group(src, order, span, detail, test_id, min(per, alloc - spent), inline)
            if g is not None and g.tokens <= alloc - spent:
                groups.append(g)
                spent += g.tokens
        return groups

    return build


def _nlines(src: "Source", span: Span) -> int:
    a, b = src.line_range(span)
    return b - a


def _evidence_group(src, order, span, detail, test_id, alloc, inline) -> Group | None:
    if detail is not None:
        body = _program_lines(detail)
        first_line = 0
    elif span is not None:
        a, b = src.line_range(span)
        body = src.lines(a, b)
        first_line = a
    else:
        return None
    numbered = [(k, s) for k, s in enumerate(body) if s.strip() and not set(s.strip()) <= set("_=-")]
    if not inline:
        keyed = [(k, s) for k, s in numbered if _KEY.search(s)] or numbered
        numbered = keyed[:KEY_LINES]
    lines = [EVIDENCE_INDENT + s for _, s in numbered]
    if not lines:
        return None
    keep = fit_head(lines, alloc)
    if keep == len(lines):
        return Group(order, lines)
    keep = fit_head(lines, max(alloc - _NOTE_RESERVE, 0))
    if keep == 0:
        return None
    hints = []
    if detail is None and span is not None:
        # The hint covers the rest of the block, from the first line not shown.
        k_next = numbered[keep][0]
        a, b = src.line_range(span)
        rest = src.out.span(first_line + k_next, b)
        if rest[1] > rest[0]:
            h = src.hint(rest)
            hints.append(h)
            tail = f"{EVIDENCE_INDENT}… {len(lines) - keep} more lines: {h.command}"
        else:
            tail = f"{EVIDENCE_INDENT}… {len(lines) - keep} more lines"
    elif span is not None:
        h = src.hint(span, test_id)
        hints.append(h)
        tail = f"{EVIDENCE_INDENT}… {len(lines) - keep} more lines: {h.command}"
    else:
        tail = f"{EVIDENCE_INDENT}… {len(lines) - keep} more lines"
    return Group(order, lines[:keep] + [tail], hints, truncates=inline)


# -- unrecognised output: highlights, head and tail ------------------------------------------------


def _generic_detail(facts: Facts, src: "Source", highlight_share: float, head_ratio: float) -> list:
    return [Elastic(highlight_share, _highlights(facts, src)), Elastic(1.0, _excerpt(src, head_ratio, folded=True))]


def _highlights(facts: Facts, src: "Source"):
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


def _display(src: "Source", first: int, last: int, folded: bool) -> list[tuple[int, int, str]]:
    """(first line, last line, text) display items for lines[first:last], folding repeated templates."""
    if not folded:
        return [(i, i + 1, src.line(i)) for i in range(first, last)]
    items = []
    for i, n, _ in fold(src.out.lines, first, last):
        if n >= 3:
            items.append((i, i + 1, src.line(i)))
            items.append((i + 1, i + n, f"  (×{n - 1} similar lines, L{i + 2}-{i + n})"))
        else:
            items.extend((k, k + 1, src.line(k)) for k in range(i, i + n))
    return items


def _excerpt(src: "Source", head_ratio: float, folded: bool):
    def build(alloc: int) -> list[Group]:
        n = len(src.out)
        if n == 0:
            return []
        if n <= 2 * _WINDOW:
            whole = _display(src, 0, n, folded)
            texts = [t for _, _, t in whole]
            if fit_head(texts, alloc) == len(texts):
                return [Group((S_RAW, 0), texts)]
        head_items = _display(src, 0, min(n, _WINDOW), folded)
        tail_items = _display(src, max(0, n - _WINDOW), n, folded)
        body = max(alloc - _NOTE_RESERVE - 8, 0)
        head_budget = int(body * head_ratio)
        k_head = fit_head([t for _, _, t in head_items], head_budget)
        k_tail = fit_tail([t for _, _, t in tail_items], body - head_budget)
        head = head_items[:k_head]
        tail = tail_items[len(tail_items) - k_tail :] if k_tail else []
        h_end = head[-1][1] if head else 0
        t_start = tail[0][0] if tail else n
        if tail and t_start < h_end:  # windows overlapped: drop the duplicate lines from the tail
            tail = [it for it in tail if it[0] >= h_end]
            t_start = tail[0][0] if tail else n
        groups = []
        if head:
            groups.append(Group((S_RAW, 0), [t for _, _, t in head]))
        if t_start > h_end:
            span = src.out.span(h_end, t_start)
            h = src.hint(span)
            groups.append(Group((S_RAW, 1), [f"[ctx] lines {h_end + 1}-{t_start} not shown: {h.command}"], [h],
                                truncates=True))
        if tail:
            groups.append(Group((S_RAW, 2), [t for _, _, t in tail]))
        return groups

    return build


# -- requested view ---------------------------------------------------------------------------


def _view(src: "Source", view: str):
    def build(alloc: int) -> list[Group]:
        lines = _program_lines(view.rstrip("\n"))
        intro = "[ctx] requested view:"
        if fit_head([intro] + lines, alloc) == len(lines) + 1:
            return [Group((S_RAW, 0), [intro] + lines)]
        body = max(alloc - _NOTE_RESERVE - 12, 0)
        k_head = fit_head(lines, body * 3 // 10)
        k_tail = fit_tail(lines[k_head:], body - body * 3 // 10)
        cut = len(lines) - k_head - k_tail
        whole = src.hint((0, len(src.raw))) if src.raw else None
        note = f"[ctx] {cut} lines of the view not shown" + (f"; full output: {whole.command}" if whole else "")
        return [Group((S_RAW, 0), [intro] + lines[:k_head] + [note] + lines[len(lines) - k_tail :],
                      [whole] if whole else [], truncates=True)]

    return build
