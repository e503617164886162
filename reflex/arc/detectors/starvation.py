"""Starvation: the same producer asked again after a lossy view, with nothing it reads changed.

A digest hypothesizes "the agent will use this instead of re-running".  When the agent asks
the same producer again (the same core, see rerun.py and docs/starvation.md) and nothing that
producer reads changed in between (equal worktree hashes when both are known, else no edit,
file-writing or state-changing command or user turn since; for a file, nothing wrote that
file), the view it got did not serve it.  Every re-issue is classified:

    censored    a censoring boundary (compaction, session start/end) since the last view
    progress    what the producer reads changed since the last view: a re-run after an edit
    retry       a command that changes state (git checkout, an install, a POST), run again, or
                any command whose last run the harness stopped (timed out): it never finished
    paging      a file read again: another window of it, the same one, or any view of a file
                that is not a finished log (reading source is reading, not re-running)
    polling     a background task still writes what it reads, the line sleeps, or its output
                follows state that changes by itself (CI status, processes, a local server)
    starvation  the last view was lossy and this asks for a different one (a new slicer or
                filter, a detail flag, no slicer at all), or re-runs a digest that left
                something out as-is; for a finished log, any new slice but the next page
    repeat      the same view of a complete output again: a retry or a state check
    reshape     a different view of a complete output: the agent narrowed what it had seen

Lossy views are what the model actually received: a ctx digest that omitted or truncated,
output the harness cut (its marker in the transcript; live, the harness's limits applied to
the output's size, see views.py), or the agent's own presentation (head/tail/grep/..., a
print-only python filter, -q, --tb=line, git log -5, stderr to /dev/null; a grep that matched
nothing or kept only a summary line is such a slicer).  So a transcript recorded without ctx
shows starvation when the agent starved itself by its slicer (`mix test 2>&1 | tail -5` then
`| grep -E "(tests|failures)"`) or by the harness's cut.

Starvation fires at occurrence `fire_at` of a streak (2: the first starved re-issue) and once
per streak; progress or censoring ends a streak.  After `breaker_after` starved re-issues of a
densified digest, a second firing (signal breaker=true) trips the circuit breaker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reflex.arc.detectors.firing import Firing, Obs
from reflex.arc.detectors.track import Issue, Track

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
    running = bool(track.bg_tasks) or track.background > 0
    for r in reads:
        path = re.sub(r":[^/]*$", "", r)
        if path in track.bg_paths or (issue.read_path and issue.read_path in track.bg_paths):
            return "reads %s, written by a background task" % path
        if running:
            for pat in policy.polling.output_patterns:
                if re.search(pat, path):
                    return "reads %s, a task output, while a background task runs" % path
    if issue.live:
        return issue.live
    if same_view and running:
        return "same view while a background task runs"
    return None


def _is_log(path: str, track: Track, policy) -> bool:
    return path in track.outputs or any(re.search(p, path) for p in policy.polling.output_patterns)


def _next_page(before, now) -> bool:
    """Is window `now` the page after `before` (reading on), not a wider or other cut?"""
    if before is None or now is None or before[0] == "last" or now[0] == "last":
        return False
    b_end = before[1]
    return b_end is not None and now[0] >= b_end


def _classify_read(track: Track, obs: Obs, policy, issue: Issue, prior: Issue) -> tuple[str, str]:
    path = issue.read_path
    if track.file_changed(path, prior):
        return "progress", "%s was written since the last view" % path
    poll = _is_polling(issue, obs.reads, obs.sig, track, policy, issue.key == prior.key)
    if poll:
        return "polling", poll
    if not _is_log(path, track, policy):
        return "paging", "a file read again"
    if issue.key == prior.key:
        return "paging", "the same view of %s again" % path
    if issue.window is not None and _next_page(prior.window, issue.window):
        return "paging", "the next window of %s" % path
    if prior.lossy:
        return "starvation", "a new view of the finished log %s after one that left out %s" % (path, prior.lossy)
    return "reshape", "a different view of the complete log %s" % path


def classify(track: Track, obs: Obs, policy) -> tuple[str | None, str | None]:
    """-> (class, why) of a command event; (None, None) when it is no re-issue."""
    issue: Issue = obs.issue
    prior: Issue | None = obs.prior
    if prior is None or issue.background:
        return None, None
    if prior.epoch != issue.epoch:
        return "censored", "a censoring boundary since the last view"
    if issue.read_path:
        return _classify_read(track, obs, policy, issue, prior)
    if track.changed(prior, issue.changes, issue.wt):
        return "progress", "the worktree changed since the last view"
    if prior.timed_out:
        return "retry", "the last run was stopped before it finished"
    if issue.mutation:
        return "retry", "a command that changes state, again (%s)" % issue.mutation
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
    # One streak per producer: `npm test | grep X` then `npm test -- --run` is one loop.
    skey = issue.rkey or issue.core_hash
    st = streaks.get(skey)
    if st is None:
        st = streaks[skey] = Streak()
    if cls in ("progress", "censored"):
        st.reset()
        return []
    if cls != "starvation":
        return []
    st.starved += 1
    signal = {"prior_seq": prior.seq, "prior_view": prior.lossy, "prior_raw": prior.raw,
              "raw": issue.raw, "occurrence": st.starved + 1, "instrumented": prior.instrumented,
              "worktree": ("file unwritten" if issue.read_path else
                           "equal hash" if (prior.wt and issue.wt) else "no change event")}
    if prior.core_hash != issue.core_hash:
        signal["prior_core_hash"] = prior.core_hash
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
