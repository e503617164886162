"""One presentation layer: Facts + raw bytes -> a Digest under an exact token budget.

Layout of every digest:

    [ctx] <profile> <version> | <density>[ (<why>)] | exit <n> | <counts> | <raw>→<delivered> tokens | r:<handle>[ | truncated]
    <census: every build error, failing id and diagnostic location the budget allows>
    [ctx] <n> more <things> not listed: ctx get r:<h>:L<a>-<b> b3=<hex>   (only when the census did not fit)
    <detail for the density: hints, key lines, inlined evidence, raw head/tail>

Small outputs (budget.PASSTHROUGH_TOKENS) are shown whole, cleaned, with the same header
as their last line instead of their first.

Census before detail: the census is packed first and only what is left of
the budget goes to detail.  When even the census does not fit, the digest
says how many entries of each kind were left out and where to get them
(a hint over their bytes), and `truncated` is set.  The delivered count in
the header is the exact token count of the whole text, header included (a
small fixed-point search, since the number is part of what it counts).

Quoted program output always goes through neutralize.clean_line and
redact: it cannot forge a header or hint, and known secrets never reach
the agent.  Rendering is deterministic: same raw, facts, density, budget and
reason -> identical bytes.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field


from reflex import tokens
from reflex.address import HANDLE_RE
from reflex.digest import layout
from reflex.digest.detail import build_plan
from reflex.digest.budget import DENSITIES, MIN_BUDGET, PASSTHROUGH_TOKENS, REASON_CHARS, default_budget
from reflex.digest.facts import Facts
from reflex.digest.neutralize import clean_line
from reflex.digest.source import HintRef, Source


@dataclass
class Digest:
    text: str
    tokens: int
    raw_tokens: int
    truncated: bool
    profile: str
    density: str
    budget: int
    handle: str
    hints: list[HintRef]
    facts: Facts
    passthrough: bool = False
    omitted: dict[str, int] = field(default_factory=dict)
    reason: str | None = None

    def as_dict(self) -> dict:
        return {
            "text": self.text,
            "tokens": self.tokens,
            "raw_tokens": self.raw_tokens,
            "truncated": self.truncated,
            "profile": self.profile,
            "density": self.density,
            "budget": self.budget,
            "handle": self.handle,
            "passthrough": self.passthrough,
            "omitted": self.omitted,
            "reason": self.reason,
            "hints": [{"address": h.address, "b3": h.b3, "span": list(h.span), "command": h.command} for h in self.hints],
            "facts": self.facts.model_dump(mode="json"),
        }


def render(
    facts: Facts,
    raw: bytes,
    *,
    density: str,
    budget: int | None,
    handle: str,
    reason: str | None = None,
    requested_view: str | None = None,
    cwd: str | None = None,
    raw_tokens: "int | Future[int] | None" = None,
    kept: "layout.Kept | None" = None,
    counted_bytes: int | None = None,
) -> Digest:
    """`raw_tokens`: the raw output's o200k count if the caller already has it (counted while
    the output streamed in), or a Future of it; otherwise it is counted here.

    `kept` (a reflex.shim.capture.Kept, only when the capture elided part of a huge output):
    `raw` is what was kept; the header then says so and that raw tokens were counted
    on it, and the output is never passed through as if it were whole.  `counted_bytes`: the
    raw count covers only that many leading bytes of `raw`; the header says so, and the
    output is not passed through on the strength of a partial count."""
    if density not in DENSITIES:
        raise ValueError(f"unknown density {density!r}; one of {', '.join(DENSITIES)}")
    if budget is None:
        budget = default_budget(density)
    if budget < MIN_BUDGET:
        raise ValueError(f"budget {budget} is below the minimum of {MIN_BUDGET} tokens")
    if not HANDLE_RE.fullmatch(handle):
        raise ValueError(f"bad handle {handle!r}: expected r:<12 lowercase hex>")
    if reason is not None:
        reason = " ".join(reason.split())[:REASON_CHARS] or None
        reason = clean_line(reason) if reason else None

    src = Source(raw, handle, cwd)
    src.kept = kept
    src.counted = counted_bytes
    whole = kept is None and counted_bytes is None
    if raw_tokens is None:
        raw_tokens = layout.count_raw(raw)
    elif not isinstance(raw_tokens, int):
        raw_tokens = raw_tokens.result()

    if requested_view is None and raw_tokens <= PASSTHROUGH_TOKENS and whole:
        passthrough = _passthrough(facts, src, density, budget, reason, raw_tokens, "small output")
        if passthrough is not None:
            if not _census_is_content(facts):
                return passthrough
            # A linter's census lines are its whole content: the shorter of the two says the same.
            plan = build_plan(facts, src, density=density, requested_view=None)
            digest = _pack(facts, src, plan, density, budget, reason, raw_tokens)
            return digest if digest.tokens < passthrough.tokens and not digest.truncated else passthrough
    if requested_view is None and density == "raw-capped" and raw_tokens < budget and whole:
        # The circuit breaker shows raw output; when all of it fits, that is the whole digest.
        passthrough = _passthrough(facts, src, density, budget, reason, raw_tokens, "raw-capped: complete")
        if passthrough is not None:
            return passthrough

    plan = build_plan(facts, src, density=density, requested_view=requested_view)
    digest = _pack(facts, src, plan, density, budget, reason, raw_tokens)

    if requested_view is None and raw_tokens <= digest.tokens <= budget and whole:
        passthrough = _passthrough(facts, src, density, budget, reason, raw_tokens, "digest not smaller")
        if passthrough is not None and passthrough.tokens <= digest.tokens:
            return passthrough
    return digest


def _census_is_content(facts: Facts) -> bool:
    """Diagnostics only (a type checker or linter): each census line is one whole finding."""
    return facts.recognized and bool(facts.diagnostics) and not facts.failures and not facts.build_errors


def _passthrough(facts: Facts, src: Source, density: str, budget: int, reason: str | None, raw_tokens: int,
                 why: str) -> Digest | None:
    body = "\n".join(src.lines(0, len(src.out)))
    if reason is None:
        # Passed through unchanged (only cleaned and redacted): the agent sees everything, so a
        # handle footer would only cost tokens; the run is still stored and recorded.
        # Ends as the output did: `printf abc` stays without a final newline, empty stays empty.
        text = body + "\n" if src.raw.endswith(b"\n") else body
        n = tokens.count(text)
        if n > budget:
            return None
        return Digest(text, n, raw_tokens, False, facts.profile, density, budget, src.handle, [], facts,
                      passthrough=True, reason=None)
    mode = "passthrough"  # an adaptation is in force: the footer declares it
    text, n = layout.with_header(
        lambda delivered: layout.header(facts, mode, reason, raw_tokens, delivered, src.handle, False, footer=True,
                                        kept=src.kept, counted=src.counted),
        body,
        header_last=True,
    )
    if n > budget:
        return None
    return Digest(text, n, raw_tokens, False, facts.profile, density, budget, src.handle, [], facts,
                  passthrough=True, reason=reason)


def _pack(facts: Facts, src: Source, plan: "layout.Plan", density: str, budget: int, reason: str | None,
          raw_tokens: int) -> Digest:
    mode = density
    # Upper bound of the header: the largest numbers it can show, and the truncated flag.
    probe = layout.header(facts, mode, reason, raw_tokens, budget, src.handle, True, kept=src.kept,
                          counted=src.counted)
    body_budget = budget - tokens.count(probe) - 1
    slack = 0
    for _attempt in range(6):
        chosen, omitted = layout.pack(plan, src, body_budget - slack)
        truncated = bool(omitted) or any(g.truncates for g in chosen)
        body = "\n".join(line for g in chosen for line in g.lines)
        def make_header(delivered: int, truncated: bool = truncated) -> str:
            return layout.header(facts, mode, reason, raw_tokens, delivered, src.handle, truncated, kept=src.kept,
                                 counted=src.counted)

        text, n = layout.with_header(make_header, body)
        if n <= budget:
            hints = [h for g in chosen for h in g.hints]
            return Digest(text, n, raw_tokens, truncated, facts.profile, density, budget, src.handle, hints,
                          facts, omitted=omitted, reason=reason)
        slack += (n - budget) + 4 * (_attempt + 1)
    # The estimate kept missing (pathological tokenization): header and census counts only.
    head = layout.header(facts, mode, reason, raw_tokens, budget, src.handle, True, kept=src.kept,
                         counted=src.counted)
    text = tokens.truncate_to(head, budget)
    n = tokens.count(text)
    return Digest(text, n, raw_tokens, True, facts.profile, density, budget, src.handle, [], facts,
                  omitted={"everything": 1}, reason=reason)
