"""Starvation: the same core signature re-issued after a lossy view, the worktree unchanged.

A digest hypothesizes "the agent will use this instead of re-running".  When the agent runs the
same core command again and nothing changed in between (equal worktree hashes when both are
known, else no edit, file-writing command or user turn since), the view it got did not serve
it.  Every re-issue of a core signature is classified:

    censored    a censoring boundary (compaction, session start/end) since the last view
    progress    the worktree changed since the last view: a re-run after an edit
    paging      a file read again (another window of it, or the same): reading, not re-running
    polling     a background task is running and this reads its output, or the line sleeps
    starvation  the last view was lossy and this asks for a different view (a new slicer or
                detail flag), or re-runs a digest that left something out as-is
    repeat      the same view of a complete output again: a retry or a state check
    reshape     a different view of a complete output: the agent narrowed what it had seen

Lossy views: a ctx digest that omitted or truncated, output the harness truncated, or the
agent's own presentation (head/tail/grep/..., -q, --tb=line, stderr to /dev/null).  So a
transcript recorded without ctx shows starvation when the agent starved itself by its slicer
(`mix test 2>&1 | tail -5` then `| grep -E "(tests|failures)"`) or by the harness's cut.

Starvation fires at occurrence `fire_at` of a streak (2: the first starved re-issue) and once
per streak; progress or censoring ends a streak.  After `breaker_after` starved re-issues of a
densified digest, a second firing (signal breaker=true) trips the circuit breaker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .firing import Firing, Obs
from .track import Issue, Track

NAME = "starvation"
DENSIFIED = frozenset({"dense", "inline"})


@dataclass(slots=True)
class Streak:
    starved: int = 0
    fired: bool = False
    post_densify: int = 0
    broken: bool = False

    def reset(self):
        self.starved = 0
        self.fired = False
        self.post_densify = 0

    def to_json(self) -> dict:
        return {"starved": self.starved, "fired": self.fired, "post_densify": self.post_densify,
                "broken": self.broken}


def _is_polling(issue: Issue, reads: tuple, sig, track: Track, policy, same_view: bool) -> str | None:
    words = policy.polling.sleep_words
    for seg in sig.segments or (sig,):
        head = seg.core.split(None, 1)[:1]
        if head and head[0] in words:
            return "the command waits (%s) and looks again" % head[0]
    for r in reads:
        path = re.sub(r":[^/]*$", "", r)
        if path in track.bg_paths:
            return "reads %s, written by a background task" % path
        for pat in policy.polling.output_patterns:
            if re.search(pat, path):
                return "reads %s, a task output" % path
    if same_view and track.background:
        return "same view while a background task runs"
    return None


def classify(track: Track, obs: Obs, policy) -> tuple[str | None, str | None]:
    """-> (class, why) of a command event; (None, None) when it is no re-issue."""
    issue: Issue = obs.issue
    prior: Issue | None = obs.prior
    if prior is None or issue.background:
        return None, None
    if prior.epoch != issue.epoch:
        return "censored", "a censoring boundary since the last view"
    if track.changed(prior, issue.changes, issue.wt):
        return "progress", "the worktree changed since the last view"
    if issue.family == "file-read":
        return "paging", "a file read again"
    same_view = issue.key == prior.key
    poll = _is_polling(issue, obs.reads, obs.sig, track, policy, same_view)
    if poll:
        return "polling", poll
    if same_view:
        if prior.instrumented and prior.lossy and policy.starvation.verbatim_after_digest:
            return "starvation", "the same digest again after it left out " + prior.lossy
        return "repeat", "the same view of a complete output"
    if prior.lossy:
        return "starvation", "a new view after one that left out " + prior.lossy
    return "reshape", "a different view of a complete output"


def detect(state, obs: Obs, policy) -> list[Firing]:
    ev = obs.event
    if ev.kind != "command" or obs.issue is None or obs.retrieval is not None:
        return []
    cls, why = classify(state.track, obs, policy)
    obs.rerun, obs.rerun_why = cls, why
    if cls is None:
        return []
    issue: Issue = obs.issue
    prior: Issue = obs.prior
    streaks = state.detectors.setdefault(NAME, {})
    st = streaks.get(issue.core_hash)
    if st is None:
        st = streaks[issue.core_hash] = Streak()
    if cls in ("progress", "censored"):
        st.reset()
        return []
    if cls != "starvation":
        return []
    st.starved += 1
    signal = {"prior_seq": prior.seq, "prior_view": prior.lossy, "prior_raw": prior.raw,
              "raw": issue.raw, "occurrence": st.starved + 1, "instrumented": prior.instrumented,
              "worktree": "equal hash" if (prior.wt and issue.wt) else "no change event"}
    out = []
    if not st.fired and st.starved + 1 >= policy.starvation.fire_at:
        st.fired = True
        out.append(Firing(NAME, ev.tool_use_id, issue.core_hash, "re-run with the worktree unchanged: " + why,
                          signal, ev.seq, issue.core))
    if prior.instrumented and prior.density in DENSIFIED:
        st.post_densify += 1
        if st.post_densify >= policy.starvation.breaker_after and not st.broken:
            st.broken = True
            out.append(Firing(NAME, ev.tool_use_id, issue.core_hash,
                              "circuit breaker: starved after the %s digest" % prior.density,
                              dict(signal, breaker=True, post_densify=st.post_densify), ev.seq, issue.core))
    return out
