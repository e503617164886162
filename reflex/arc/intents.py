"""Intent declarations: what each intervention expects the agent to do next.

Every intervention ctx makes is a hypothesis about the agent's next action.  The hypothesis
is declared as an enum, recorded with the intervention (``declare`` gives the JSON to put in
the event's data), and checked by the detectors: a violation is a failure firing
(starvation, affordance, friction), a confirmation is a landing.

    intervention               expects (the next action is NOT ...)              checked by
    digest with omissions      a re-run of the same signature, worktree unchanged starvation
    hints emitted              a re-run before any hint is followed              affordance
    deny with remediation      the same command retried verbatim                 friction
    rewrite                    the same command routed around ctx                friction

An intent opened in one censoring window (see reflex.arc.events.CENSORING) is never judged in the
next one: the agent may have lost the context that the intervention gave it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Intervention(str, Enum):
    DIGEST = "digest"
    HINTS = "hints"
    DENY = "deny"
    REWRITE = "rewrite"


class Expect(str, Enum):
    NO_RERUN = "no-rerun-unchanged"
    HINT_BEFORE_RERUN = "hint-followed-before-rerun"
    NO_VERBATIM_RETRY = "no-verbatim-retry"
    NO_ROUTE_AROUND = "no-route-around"


EXPECTS: dict[Intervention, Expect] = {
    Intervention.DIGEST: Expect.NO_RERUN,
    Intervention.HINTS: Expect.HINT_BEFORE_RERUN,
    Intervention.DENY: Expect.NO_VERBATIM_RETRY,
    Intervention.REWRITE: Expect.NO_ROUTE_AROUND,
}

# Which detector judges which expectation (the firing's detector name).
JUDGED_BY: dict[Expect, str] = {
    Expect.NO_RERUN: "starvation",
    Expect.HINT_BEFORE_RERUN: "affordance",
    Expect.NO_VERBATIM_RETRY: "friction",
    Expect.NO_ROUTE_AROUND: "friction",
}


@dataclass(frozen=True, slots=True)
class Intent:
    intervention: Intervention
    expect: Expect
    core_hash: str | None
    seq: int
    handle: str | None = None

    def to_json(self) -> dict:
        return {"intervention": self.intervention.value, "expect": self.expect.value,
                "core_hash": self.core_hash, "seq": self.seq, "handle": self.handle}


def declare(intervention: Intervention | str) -> dict:
    """The record to store with an intervention: {"intervention": ..., "expect": ...}."""
    iv = Intervention(intervention)
    return {"intervention": iv.value, "expect": EXPECTS[iv].value}


def opened_by(event, core_hash: str | None, lossy: bool = True) -> tuple[Intent, ...]:
    """The intents an event opens: a rewrite or deny decision, a digest that left something
    out (``lossy``), hints emitted with a run."""
    out = []
    if event.kind == "command":
        if event.decision == "rewrite":
            out.append(Intervention.REWRITE)
        elif event.decision == "deny":
            out.append(Intervention.DENY)
    elif event.kind == "run":
        if lossy:
            out.append(Intervention.DIGEST)
        if event.hints:
            out.append(Intervention.HINTS)
    return tuple(Intent(iv, EXPECTS[iv], core_hash, event.seq, event.handle if event.kind == "run" else None)
                 for iv in out)
