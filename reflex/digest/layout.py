"""Packing a digest: the header, groups of lines, and the census-first packer.

A digest body is a list of Groups (a few lines that belong together: one
failure and its hint, one chunk of diagnostic locations, one evidence block),
each with a position in the text (`order`) independent of its priority.  The
packer takes the census in order until the budget is reached, then detail in
priority order, then sorts what it took by position.  Census entries that do
not fit are counted per category and replaced by one note per category with
a hint over their bytes.

Token counts during packing are per group (a group's lines plus its newline);
o200k pre-tokenization splits at line breaks, so the sum tracks the exact
count closely, and render() verifies the exact count of the final text and
repacks with a smaller budget if it ever differs.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from reflex import tokens
from reflex.digest.facts import Counts, Facts, Span

from reflex.digest.source import HintRef, Kept, Source

# Outputs above this are tokenized in two halves on two threads (tiktoken
# releases the GIL): the raw count is the largest single cost of a 5 MB digest.
_PARALLEL_BYTES = 1_000_000
ASYNC_COUNT_BYTES = 200_000  # above this, build_digest counts raw tokens alongside parsing
_pool: ThreadPoolExecutor | None = None


def _pool_get() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ctx-count")
    return _pool


def count_raw(raw: bytes) -> int:
    """Exact o200k count of the raw output as the agent would have received it."""
    text = raw.decode("utf-8", errors="replace")
    if len(raw) < _PARALLEL_BYTES or (os.cpu_count() or 1) < 2:
        return tokens.count(text)
    cut = tokens.safe_cut_after(text, len(text) // 2)
    if cut <= 0:
        return tokens.count(text)
    left = _pool_get().submit(tokens.count, text[:cut])
    right = tokens.count(text[cut:])
    return left.result() + right


def count_raw_async(raw: bytes) -> Future[int]:
    """count_raw on a worker thread: tiktoken releases the GIL, so parsing runs alongside."""
    return _pool_get().submit(_count_in_parts, raw)


def _count_in_parts(raw: bytes) -> int:
    # Runs on a pool thread: split work is submitted inline here to avoid waiting on our own pool.
    text = raw.decode("utf-8", errors="replace")
    return tokens.count(text)


# -- header -------------------------------------------------------------------

_COUNT_WORDS = (
    ("failed", "failed", "failed"),
    ("errors", "error", "errors"),
    ("passed", "passed", "passed"),
    ("skipped", "skipped", "skipped"),
    ("xfailed", "xfailed", "xfailed"),
    ("xpassed", "xpassed", "xpassed"),
    ("deselected", "deselected", "deselected"),
    ("todo", "todo", "todo"),
    ("warnings", "warning", "warnings"),
    ("total", "total", "total"),
)


_FIXED = frozenset(k for k, _, _ in _COUNT_WORDS) | {"files"}


def total_is_implied(counts: Counts) -> bool:
    """Whether the runner's total is the sum of the outcomes it printed (warnings aside): it then
    says nothing the other counts do not, and the header leaves it out."""
    reported = counts.reported()
    rest = [v for k, v in reported.items() if k not in ("total", "deselected", "files") and k not in counts.other]
    return "total" in reported and bool(rest) and reported["total"] in (sum(rest), sum(rest) - reported.get("warnings", 0))


def counts_text(facts: Facts) -> str:
    reported = facts.counts.reported()
    if total_is_implied(facts.counts):
        del reported["total"]
    parts = []
    for key, one, many in _COUNT_WORDS:
        if key in reported:
            n = reported[key]
            parts.append(f"{n} {one if n == 1 else many}")
    others = [f"{n} {key}" for key, n in facts.counts.other.items() if key not in _FIXED]
    if "files" in reported:
        # "3 failed in 2 files", "236 matches in 44 files": the files belong to the count before them.
        n = reported["files"]
        where = f"in {n} file{'' if n == 1 else 's'}"
        if parts:
            parts.append(f"{parts.pop()} {where}")
        elif others:
            others.insert(0, f"{others.pop(0)} {where}")
        else:
            parts.append(where)
    parts += others
    if parts:
        return ", ".join(parts)
    if facts.diagnostics:
        n = len(facts.diagnostics)
        return f"{n} diagnostic{'' if n == 1 else 's'} parsed"
    if facts.items:
        nouns: dict[str, int] = {}
        for it in facts.items:
            nouns[it.noun] = nouns.get(it.noun, 0) + 1
        return ", ".join(counted(n, noun) for noun, n in nouns.items())
    if not facts.recognized:
        return f"{facts.total_lines} lines"
    return "counts not reported"


def counted(n: int, noun: str) -> str:
    """`1 match`, `2 matches`, `1 entry`, `3 paths`: nouns are given in the plural."""
    if n != 1:
        return f"{n} {noun}"
    if noun.endswith("ies"):
        return f"1 {noun[:-3]}y"
    if noun.endswith(("ches", "shes", "sses", "xes")):
        return f"1 {noun[:-2]}"
    return f"1 {noun[:-1]}" if noun.endswith("s") else f"1 {noun}"


def scope_text(kept: Kept | None, counted: int | None) -> str:
    """What the header's numbers cover when not the whole output: what an elided capture
    kept, and the bytes the raw token count covers."""
    parts = []
    if kept is not None:
        parts.append(f"output {_size(kept.total)}: kept first {_size(kept.head)} + last {_size(kept.tail)}, "
                     f"{_size(kept.elided)} elided")
    if counted is not None:
        parts.append(f"raw tokens counted on the first {_size(counted)}")
    return "; ".join(parts)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def header(facts: Facts, mode: str, reason: str | None, raw_tokens: int, delivered: int, handle: str,
           truncated: bool, footer: bool = False, kept: Kept | None = None, counted: int | None = None) -> str:
    from reflex.digest.neutralize import clean_line

    if facts.recognized:
        label = facts.profile
        if facts.tool_version:
            label += " " + clean_line(facts.tool_version)[:24]
        if facts.format == "json":
            label += " (json)"
    elif facts.handed_over_from:
        label = f"generic ({facts.handed_over_from} output not recognised)"
    else:
        label = "generic"
    why = f"{mode} ({reason})" if reason else mode
    exit_text = f"exit {facts.exit_code}" if facts.exit_code is not None else "exit unknown"
    if footer:  # under the output itself, which already shows its counts
        scope = scope_text(kept, counted)
        return " | ".join(["[ctx] " + label, why, exit_text] + ([scope] if scope else []) + [handle])
    parts = ["[ctx] " + label, why, exit_text, counts_text(facts), f"{raw_tokens}→{delivered} tokens", handle]
    scope = scope_text(kept, counted)
    if scope:
        parts.insert(4, scope)
    if truncated:
        parts.append("truncated")
    return " | ".join(parts)


def with_header(make: Callable[[int], str], body: str, header_last: bool = False) -> tuple[str, int]:
    """Join header and body so that the header's delivered count is the text's exact count."""

    def join(delivered: int) -> str:
        head = make(delivered)
        if not body:
            return head
        return body + "\n" + head if header_last else head + "\n" + body

    guess = tokens.count(join(0))
    for delivered in (guess, guess + 1, guess + 2, guess + 3, guess - 1):
        text = join(delivered)
        n = tokens.count(text)
        if n == delivered:
            return text, n
    # No fixed point (a digit-group boundary): report the smallest count that is
    # still >= the true one, so the header never understates what it costs.
    for delivered in range(guess, guess + 8):
        text = join(delivered)
        n = tokens.count(text)
        if n <= delivered:
            return text, n
    text = join(guess)
    return text, tokens.count(text)


# -- groups and the packer ------------------------------------------------------


@dataclass
class Group:
    order: tuple
    lines: list[str]
    hints: list["HintRef"] = field(default_factory=list)
    category: str | None = None  # census category this entry belongs to
    count: int = 1  # census entries this group stands for
    span: Span | None = None  # bytes those entries come from (for the omission hint)
    truncates: bool = False  # the group itself announces left-out material
    _tokens: int | None = None

    @property
    def tokens(self) -> int:
        if self._tokens is None:
            self._tokens = tokens.count("\n".join(self.lines)) + 1
        return self._tokens


@dataclass
class Elastic:
    """Detail sized at packing time: `build(alloc)` returns groups totalling <= alloc tokens."""

    share: float  # at most this fraction of the body budget
    build: Callable[[int], list[Group]]


@dataclass
class Plan:
    tiers: list[Callable[[], list[Group]]]  # census alternatives, most detailed first (built on demand, cached)
    reserve: float  # fraction of the body budget the preferred tier leaves to detail
    detail: list[Group | Elastic]  # in priority order
    omission_note: Callable[[str, int, Span | None], Group]


def pack(plan: Plan, src: "Source", body_budget: int) -> tuple[list[Group], dict[str, int]]:
    tier = _choose_tier(plan, body_budget)
    chosen: list[Group] = []
    used = 0
    omitted_groups: list[Group] = []
    if _fits(tier, body_budget):
        chosen.extend(tier)
        used = sum(g.tokens for g in tier)
    else:
        categories = {g.category for g in tier if g.category}
        reserve = sum(plan.omission_note(c, 10**6, (0, len(src.raw))).tokens for c in categories)
        limit = body_budget - reserve
        stopped = False
        for g in tier:
            # Past the first entry that does not fit, nothing more is counted: the rest is omitted.
            if not stopped and used + g.tokens <= limit:
                chosen.append(g)
                used += g.tokens
            else:
                stopped = True
                if g.category:
                    omitted_groups.append(g)
    omitted: dict[str, int] = {}
    for cat in _ordered_categories(omitted_groups):
        groups = [g for g in omitted_groups if g.category == cat]
        n = sum(g.count for g in groups)
        spans = [g.span for g in groups if g.span]
        span = (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else None
        note = plan.omission_note(cat, n, span)
        note.order = (groups[0].order[0], 10**9)
        chosen.append(note)
        used += note.tokens
        omitted[cat] = n
    remaining = body_budget - used
    for item in plan.detail:
        if remaining <= 0:
            break
        if isinstance(item, Elastic):
            alloc = min(remaining, int(item.share * body_budget))
            if alloc <= 0:
                continue
            groups = item.build(alloc)
        else:
            groups = [item] if item.tokens <= remaining else []
        for g in groups:
            if g.tokens <= remaining:
                chosen.append(g)
                remaining -= g.tokens
    chosen.sort(key=lambda g: g.order)
    return chosen, omitted


def _fits(groups: list[Group], limit: float) -> bool:
    """Whether the groups' tokens sum to <= limit, counting no further than needed."""
    total = 0
    for g in groups:
        total += g.tokens
        if total > limit:
            return False
    return True


def _choose_tier(plan: Plan, body_budget: int) -> list[Group]:
    preferred = body_budget * (1 - plan.reserve)
    for build in plan.tiers:
        tier = build()
        if _fits(tier, preferred):
            return tier
    for build in plan.tiers:
        tier = build()
        if _fits(tier, body_budget):
            return tier
    return plan.tiers[-1]()


def _ordered_categories(groups: list[Group]) -> list[str]:
    seen: list[str] = []
    for g in groups:
        if g.category and g.category not in seen:
            seen.append(g.category)
    return seen


# -- fitting lines ------------------------------------------------------------------


def fit_head(lines: list[str], budget: int) -> int:
    """How many leading lines fit in `budget` tokens (joined by newlines, plus one)."""
    return _fit(lines, budget, from_end=False)


def fit_tail(lines: list[str], budget: int) -> int:
    """How many trailing lines fit in `budget` tokens."""
    return _fit(lines, budget, from_end=True)


def _fit(lines: list[str], budget: int, from_end: bool) -> int:
    if budget <= 1 or not lines:
        return 0

    def cost(k: int) -> int:
        part = lines[len(lines) - k :] if from_end else lines[:k]
        return tokens.count("\n".join(part)) + 1

    if cost(len(lines)) <= budget:
        return len(lines)
    lo, hi = 0, len(lines)  # cost(lo) fits, cost(hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if cost(mid) <= budget:
            lo = mid
        else:
            hi = mid
    return lo
