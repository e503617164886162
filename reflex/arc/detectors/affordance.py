"""Affordance failure: hints emitted for a run, none followed before the signature ran again.

Hints hypothesize "the agent will resolve this address before re-running".  At each re-issue
of a signature whose last run emitted at least `min_hints` hints, the hints are judged once:

    followed   a landing resolved them (ctx get/search on the handle, a narrower run of a named
               test, a read of a named file): the count of ignored runs starts over
    ignored    the re-issue came with the worktree unchanged and nothing resolved them
    not judged the re-issue is progress (the digest sufficed for a change), censored, paging
               or polling: never negative evidence

Fires when `fire_after_ignored` consecutive runs had their hints ignored, once per streak (a
followed hint or progress ends the streak).  The reflex it drives inlines the evidence the
hints pointed to instead of paying for hints nobody follows.
"""

from __future__ import annotations

from dataclasses import dataclass

from reflex.arc.detectors.firing import Firing, Obs

NAME = "affordance"
JUDGED = frozenset({"starvation", "repeat", "reshape"})


@dataclass(slots=True)
class Ignored:
    ignored: int = 0
    fired: bool = False
    judged_seq: int = -1

    def to_json(self) -> dict:
        return {"ignored": self.ignored, "fired": self.fired, "judged_seq": self.judged_seq}


def detect(state, obs: Obs, policy) -> list[Firing]:
    ev = obs.event
    if ev.kind != "command" or obs.issue is None or obs.rerun is None:
        return []
    issue = obs.issue
    track = state.track
    h = track.hints.get(issue.core_hash)
    mine = state.detectors.setdefault(NAME, {})
    st = mine.get(issue.core_hash)
    if st is None:
        st = mine[issue.core_hash] = Ignored()
    if obs.rerun in ("progress", "censored"):
        st.ignored, st.fired = 0, False
        return []
    if h is None or h.count < policy.affordance.min_hints or h.seq == st.judged_seq or obs.rerun not in JUDGED:
        return []
    st.judged_seq = h.seq
    if h.epoch != track.epoch:
        return []
    if h.resolved:
        st.ignored, st.fired = 0, False
        return []
    st.ignored += 1
    if st.ignored < policy.affordance.fire_after_ignored or st.fired:
        return []
    st.fired = True
    return [Firing(NAME, ev.tool_use_id, issue.core_hash,
                   "hints not followed before the re-run (%d run%s)" % (st.ignored, "s" if st.ignored > 1 else ""),
                   {"handle": h.handle, "hints": h.count, "ignored_runs": st.ignored, "run_seq": h.seq,
                    "raw": issue.raw}, ev.seq, issue.core)]
