"""A detector's output (Firing) and what the fold tells detectors about one event (Obs).

A Firing is an outcome: which detector, on which call and signature, why (a short human
reason) and the signal that caused it (a JSON-able dict: the counts, sequence numbers and
views the detector compared).  The daemon records each one as an outcome row; replay prints
them.  Firings are deterministic: the same event prefix gives the same firings.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Firing:
    detector: str                 # starvation | affordance | friction | landing
    tool_use_id: str | None
    core_hash: str | None
    reason: str
    signal: dict = field(default_factory=dict, compare=True, hash=False)
    seq: int = 0
    core: str | None = None       # the core signature text, for people reading the outcome

    def to_json(self) -> dict:
        return {"detector": self.detector, "tool_use_id": self.tool_use_id, "core_hash": self.core_hash,
                "core": self.core, "reason": self.reason, "signal": self.signal, "seq": self.seq}


@dataclass(slots=True)
class Obs:
    """One event as the detectors see it, with what the fold derived from the session so far.

    For a command: its signature, the Issue it opens, the last completed view of the same core
    (`prior`), the re-issue class the starvation detector assigns (`rerun`), and the
    retrieval it is (`ctx get/search`), if any.  For a run/result: the view it completed."""
    event: object
    sig: object = None
    issue: object = None
    prior: object = None
    rerun: str | None = None
    rerun_why: str | None = None
    retrieval: tuple | None = None
    view: object = None
    reads: tuple = ()
