"""Friction loop: a deny retried verbatim, or a rewrite routed around.

    deny -> verbatim retry   the same command line (whitespace-collapsed raw) issued again after
                             ctx denied it, as a new call (another tool_use_id: the same id is
                             the denied call delivered twice); fires at occurrence
                             `retry_fire_at` (2: the first retry), once per denied line
    rewrite -> route-around  a signature ctx rewrote is issued again through a wrapper the
                             rewritten one did not use (`bash -c`, `env`, an absolute path,
                             `python -m X`, `command`/`exec`), or written into a script that is
                             then run; once per signature

Denials of the safety plane (reflex.safety.plane rules, or an unknown rule) are recorded with
signal safety=true and drive no reflex: safety never stands down.  Other friction makes the
fold escalate the teaching once, then stand down for that signature.  Nothing before a
censoring boundary is compared with anything after it.
"""

from __future__ import annotations

from dataclasses import dataclass

from reflex.safety.plane import RULES as SAFETY_RULES

from reflex.arc.detectors.firing import Firing, Obs

NAME = "friction"


@dataclass(slots=True)
class Denied:
    rule: str | None
    seq: int
    epoch: int
    core_hash: str
    core: str
    count: int = 1
    fired: bool = False
    tool_use_id: str | None = None      # the denied call's; the same id again is that call, not a retry

    def to_json(self) -> dict:
        return {"rule": self.rule, "seq": self.seq, "epoch": self.epoch, "core_hash": self.core_hash,
                "count": self.count, "fired": self.fired}


@dataclass(slots=True)
class Rewritten:
    routes: frozenset
    seq: int
    epoch: int
    core: str
    fired: bool = False

    def to_json(self) -> dict:
        return {"routes": sorted(self.routes), "seq": self.seq, "epoch": self.epoch, "fired": self.fired}


def is_safety_rule(rule: str | None) -> bool:
    return rule is None or rule in SAFETY_RULES or not rule.startswith("evidence:")


def _state(state) -> dict:
    mine = state.detectors.get(NAME)
    if mine is None:
        mine = state.detectors[NAME] = {"denied": {}, "rewritten": {}}
    return mine


def detect(state, obs: Obs, policy) -> list[Firing]:
    ev = obs.event
    if ev.kind != "command" or obs.issue is None or obs.retrieval is not None:
        return []
    issue = obs.issue
    mine = _state(state)
    out: list[Firing] = []
    # deny -> verbatim retry
    d = mine["denied"].get(issue.raw)
    if d is not None and d.epoch != issue.epoch:
        del mine["denied"][issue.raw]
        d = None
    if d is not None and ev.tool_use_id is not None and ev.tool_use_id == d.tool_use_id:
        # The denied call itself, delivered again: ctx is hooked twice (user and project
        # settings both name it) and the harness sends every event to each hook.  No retry.
        return out
    if d is not None:
        d.count += 1
        if d.count >= policy.friction.retry_fire_at and not d.fired:
            d.fired = True
            safety = is_safety_rule(d.rule)
            out.append(Firing(NAME, ev.tool_use_id, issue.core_hash, "deny then verbatim retry",
                              {"kind": "verbatim-retry", "rule": d.rule, "safety": safety, "denied_seq": d.seq,
                               "occurrence": d.count, "raw": issue.raw}, ev.seq, issue.core))
    elif ev.decision == "deny":
        mine["denied"][issue.raw] = Denied(ev.decision_detail, ev.seq, issue.epoch, issue.core_hash, issue.core,
                                           tool_use_id=ev.tool_use_id)
    # rewrite -> route-around
    allowed = policy.friction.routes
    routes = frozenset(r for r in issue.routes if r in allowed)
    if routes:
        targets = []
        rw = mine["rewritten"].get(issue.core_hash)
        if rw is not None and routes - rw.routes:
            targets.append((issue.core_hash, rw, sorted(routes - rw.routes)))
        if "script" in routes:
            for core_hash, other in mine["rewritten"].items():
                if core_hash != issue.core_hash and other.core and other.core in obs.event.command:
                    targets.append((core_hash, other, ["script"]))
        for core_hash, rw, new in targets:
            if rw.fired or rw.epoch != issue.epoch:
                continue
            rw.fired = True
            out.append(Firing(NAME, ev.tool_use_id, core_hash, "rewrite then route-around (%s)" % ", ".join(new),
                              {"kind": "route-around", "routes": new, "rewritten_seq": rw.seq, "safety": False,
                               "raw": issue.raw}, ev.seq, rw.core))
    if ev.decision == "rewrite":
        rw = mine["rewritten"].get(issue.core_hash)
        if rw is None or rw.epoch != issue.epoch:
            mine["rewritten"][issue.core_hash] = Rewritten(frozenset(issue.routes), ev.seq, issue.epoch, issue.core)
        else:
            rw.routes = rw.routes | frozenset(issue.routes)
    return out
