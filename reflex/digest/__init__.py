"""The digest engine: raw output in, a census-first digest under an exact token budget out.

    build_digest(raw, family=..., exit_code=..., command=..., handle=...) -> Digest

Profiles (profiles/) parse raw bytes into Facts (facts.py); render.py lays
Facts out at a density under a budget (budget.py), quoting program output
only through neutralize.py and redact.py.  This package imports lazily:
`reflex.digest.redact` and `reflex.digest.neutralize` are stdlib-only and are
used on the `ctx get` fast path, which must not pay for pydantic or tiktoken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future

    from reflex.digest.facts import Facts
    from reflex.digest.render import Digest
    from reflex.digest.source import Kept

__all__ = [
    "build_digest",
    "test_spans",
    "extract_facts",
    "family_of_command",
    "render",
    "Digest",
    "HintRef",
    "Facts",
    "DENSITIES",
    "DEFAULT_BUDGET",
    "DEFAULT_BUDGETS",
    "MIN_BUDGET",
    "PASSTHROUGH_TOKENS",
]


def family_of_command(command: str, cwd: str | None = None) -> str:
    """The family the hook and `ctx run` would digest this command's output as ("other" if none)."""
    from reflex.signature import signature

    return signature(command, cwd).family or "other"


def extract_facts(raw: bytes, *, family: str, exit_code: int | None, command: str) -> "Facts":
    """Facts for `raw` from the profile its family (or, for npm scripts, its content) selects."""
    from reflex.digest.profiles import extract

    return extract(raw, family=family, exit_code=exit_code, command=command)


def test_spans(facts: "Facts") -> dict[str, tuple[int, int]]:
    """Failing test id -> byte span of its detail block: what `ctx get r:<h>#<test id>` returns.

    Store this (or the Facts) with the run; the b3 a hint carries is blake3(raw[span])[:8].
    """
    return {f.id: f.span for f in facts.failures if f.id and f.span}


def build_digest(
    raw: bytes,
    *,
    family: str,
    exit_code: int | None,
    command: str,
    handle: str,
    density: str = "normal",
    budget: int | None = None,
    reason: str | None = None,
    requested_view: str | None = None,
    cwd: str | None = None,
    raw_tokens: int | None = None,
    kept: "Kept | None" = None,
    counted_bytes: int | None = None,
) -> "Digest":
    """The digest of one output.  Same raw, density, budget, reason and cwd -> identical bytes.

    `cwd` (the directory the command ran in) only shortens absolute paths in what is shown.
    `raw_tokens`: the raw output's exact o200k count when already known (tokens.StreamCounter
    fed while the command ran); otherwise it is counted on a worker thread while parsing.
    `kept`: the reflex.shim.capture.Kept of a capture that elided the middle of a huge output
    (`raw` is what was kept); the header says what was kept.  `counted_bytes`: `raw_tokens`
    covers only that many leading bytes of `raw` (the header says so).
    """
    from reflex.digest import layout
    from reflex.digest.render import render

    pending: int | Future[int] | None = raw_tokens
    if pending is None and len(raw) >= layout.ASYNC_COUNT_BYTES:
        pending = layout.count_raw_async(raw)
    facts = extract_facts(raw, family=family, exit_code=exit_code, command=command)
    return render(facts, raw, density=density, budget=budget, handle=handle, reason=reason,
                  requested_view=requested_view, cwd=cwd, raw_tokens=pending, kept=kept,
                  counted_bytes=counted_bytes)


def __getattr__(name: str) -> Any:
    if name in ("render", "Digest", "HintRef"):
        from reflex.digest import render as _render

        return getattr(_render, name)
    if name == "Facts":
        from reflex.digest.facts import Facts

        return Facts
    if name in ("DENSITIES", "DEFAULT_BUDGET", "DEFAULT_BUDGETS", "MIN_BUDGET", "PASSTHROUGH_TOKENS"):
        from reflex.digest import budget

        return getattr(budget, name)
    raise AttributeError(name)
