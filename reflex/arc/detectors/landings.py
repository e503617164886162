"""Landings, the positive class: an intervention did what it hypothesized.

    span resolved          `ctx get` answered `know` for a span/test address of a run's handle
    hint followed          `ctx get/search` on a run's handle (any answer), or a read of a file
                           the digest named
    narrower re-run        a strict subset of a signature that ran before (is_narrower), "of a
                           named failing test" when its scope names a test the digest listed
    remediation taken      after a deny, the next command is neither denied nor a verbatim retry
    failure count falling  a signature's failing count dropped between two runs (8 -> 5)

A landing also marks the outstanding hints of that signature followed, which the affordance
detector reads: reflexes are earned off by landings, not only switched on by failures.
"""

from __future__ import annotations

from dataclasses import dataclass

from reflex.arc.events import handle_of
from reflex.signature import is_narrower

from reflex.arc.detectors.firing import Firing, Obs
from reflex.arc.detectors.track import path_matches

NAME = "landing"


@dataclass(slots=True)
class DenyWatch:
    raw: str
    core_hash: str
    core: str
    rule: str | None
    seq: int
    epoch: int
    left: int

    def to_json(self) -> dict:
        return {"raw": self.raw, "core_hash": self.core_hash, "rule": self.rule, "seq": self.seq,
                "epoch": self.epoch, "left": self.left}


def names_test(sig, tests: tuple[str, ...]) -> str | None:
    """The named failing test a command's scope selects, if any (shared with evidence outcomes)."""
    for s in sig.scope:
        v = s.value
        while v.startswith("./"):
            v = v[2:]
        for t in tests:
            if v == t or t.startswith(v + "::") or t.startswith(v + "[") or t.endswith("/" + v):
                return t
            if s.kind in ("keyword", "name") and v and v in t:
                return t
    return None


def _landing(ev, core_hash, core, reason, signal) -> Firing:
    return Firing(NAME, ev.tool_use_id, core_hash, reason, signal, ev.seq, core)


def _reads_named(state, ev, reads, out):
    track = state.track
    for core_hash, h in track.hints.items():
        if h.resolved or h.epoch != track.epoch or not h.files:
            continue
        hit = next((r for r in reads for f in h.files if path_matches(r, f)), None)
        if hit is not None:
            h.resolved = "read"
            view = track.views.get(core_hash)
            out.append(_landing(ev, core_hash, view.core if view else None, "hint followed: read of a named file",
                                {"path": hit, "handle": h.handle}))


def detect(state, obs: Obs, policy) -> list[Firing]:
    ev = obs.event
    track = state.track
    mine = state.detectors.setdefault(NAME, {"denies": []})
    out: list[Firing] = []
    if ev.kind == "retrieval":
        handle = ev.handle or handle_of(ev.address)
        core_hash = track.handles.get(handle) if handle else None
        if core_hash is None:
            return out
        h = track.hints.get(core_hash)
        view = track.views.get(core_hash)
        addressed = bool(ev.address) and (":L" in ev.address or "#" in ev.address)
        reason = "span resolved" if ev.result == "know" and addressed else "hint followed"
        if h is not None and h.handle == handle and h.epoch == track.epoch and not h.resolved:
            h.resolved = "retrieval"
        out.append(_landing(ev, core_hash, view.core if view else None, reason,
                            {"handle": handle, "address": ev.address, "pattern": ev.pattern, "result": ev.result}))
        return out
    if ev.kind == "read":
        _reads_named(state, ev, ev.paths, out)
        return out
    if ev.kind == "run" and obs.view is not None:
        view = obs.view
        prev = track.failed.get(view.core_hash)
        if (policy.landings.failure_count_falling and prev is not None and ev.failed_count is not None
                and ev.failed_count < prev):
            out.append(_landing(ev, view.core_hash, view.core, "failure count falling",
                                {"from": prev, "to": ev.failed_count, "handle": ev.handle}))
        return out
    if ev.kind != "command" or obs.issue is None or obs.retrieval is not None:
        return out
    issue, sig = obs.issue, obs.sig
    # narrower re-run of a signature that ran before
    if sig.family not in ("other", "file-read", "search", "git") and sig.scope:
        for core_hash, view in track.views.items():
            if view.family != sig.family or core_hash == issue.core_hash or view.epoch != issue.epoch:
                continue
            psig = track.sigs.get(core_hash)
            if psig is None or not is_narrower(sig, psig):
                continue
            h = track.hints.get(core_hash)
            tests = h.tests if h is not None else ()
            named = names_test(sig, tests)
            if named and h is not None and not h.resolved and h.epoch == track.epoch:
                h.resolved = "narrower run"
            out.append(_landing(ev, core_hash, view.core,
                                "narrower re-run of a named failing test" if named else "narrower re-run",
                                {"narrower": issue.raw, "of_seq": view.seq, "test": named}))
    if obs.reads:
        _reads_named(state, ev, obs.reads, out)
    # remediation after a deny
    kept = []
    for d in mine["denies"]:
        if d.epoch != issue.epoch:
            continue
        if issue.raw != d.raw and ev.decision != "deny":
            out.append(_landing(ev, d.core_hash, d.core, "remediation taken",
                                {"rule": d.rule, "denied_seq": d.seq, "denied": d.raw, "next": issue.raw}))
            continue
        d.left -= 1
        if d.left > 0:
            kept.append(d)
    if ev.decision == "deny":
        kept.append(DenyWatch(issue.raw, issue.core_hash, issue.core, ev.decision_detail, ev.seq, issue.epoch,
                              policy.landings.remediation_window))
    mine["denies"] = kept
    return out
