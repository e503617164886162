"""Densities, default budgets and thresholds, with the reasons for each number.

Budgets are ceilings in o200k tokens; a density decides what a digest
contains, the budget only caps it.  Reference points (measured here):

- without ctx the agent gets the harness's own cut: Claude Code keeps 30,000
  characters of Bash output (head + tail), ≈7,500 tokens of log text; a 28 KB
  pytest run reached the model as ≈2,900 tokens.
- RTK prints ≈150–400 tokens for a failing pytest run (no node ids).

normal (DEFAULT_BUDGET = 1,500): the census of a typical failing run (one
line + one hint per failure, ≈35 tokens each) is 100–400 tokens, so the
ceiling rarely binds; it does bind at ≈40 failures, which is where listing
more ids stops helping and the omission note + hint take over.  It is half of
what a mid-size raw pytest run costs, so a normal digest never costs more
than the output it replaces by more than its header.

lean (600): ids and counts only, for readers that follow hints.
dense (4,000): the census plus key evidence lines per failure, about the
  size of the raw run it replaces; chosen after a re-run shows starvation.
inline (6,000): evidence inlined instead of hints, when hints go unfollowed.
raw-capped (7,500): the circuit breaker; never more than the harness itself
  would have shown (30,000 characters ≈ 7,500 tokens).

MIN_BUDGET (128): the header (≤ 90 tokens with a long profile version, all
counts and a reason) plus one omission note must always fit; below it a
digest could not carry its own handle, so render refuses (ValueError).

PASSTHROUGH_TOKENS (200): below this, the raw output is shown as is (cleaned
and redacted) plus one footer line.  A digest's fixed cost is its header
(≈40–60 tokens) plus ≈35 tokens per failure; under 200 tokens it would save
at most a few dozen tokens while replacing exact evidence with a hint that
costs a tool call (≥100 tokens of call overhead) to follow.  Two refinements:
a digest that would not be smaller than raw + footer is replaced by the
passthrough at any size; and a small output whose facts are diagnostics only
(mypy, tsc, eslint, ruff: each census line is a whole finding) gets whichever
of digest and passthrough is shorter.
"""

from __future__ import annotations

DENSITIES: tuple[str, ...] = ("lean", "normal", "dense", "inline", "raw-capped")

DEFAULT_BUDGETS: dict[str, int] = {
    "lean": 600,
    "normal": 1500,
    "dense": 4000,
    "inline": 6000,
    "raw-capped": 7500,
}
DEFAULT_BUDGET = DEFAULT_BUDGETS["normal"]
MIN_BUDGET = 128
PASSTHROUGH_TOKENS = 200

REASON_CHARS = 80  # a caller's reason is clipped so the header stays bounded


def default_budget(density: str) -> int:
    return DEFAULT_BUDGETS[density]


# The size a normal digest aims at, as a share of a raw output above SHARE_FROM_TOKENS (issue 13's
# target, checked over the corpus by tests/digest/test_digest_corpus.py and evals/bench_digest.py).
# A listing is the exception: its census is the names themselves (issue 29: every entry named), and a
# tree's names packed per directory cost about half of `tree`'s box-drawing output (tree_deep: 266
# entries under 77 directories, 2,336 raw tokens, every name in 1,373); 35% would leave counts only.
SHARE_FROM_TOKENS = 2000
SHARE_TARGET = 0.35
SHARE_TARGETS: dict[str, float] = {"listing": 0.6}


def share_target(family: str) -> float:
    return SHARE_TARGETS.get(family, SHARE_TARGET)
