"""The session fold: a session's events -> its reflex state, and the reflexes that state drives.

    from reflex.arc.fold import SessionReflex, fold, step
    sr = SessionReflex(policy, session_id)       # what the daemon keeps per session
    firings = sr.apply(event)                    # detector firings caused by this event
    sr.density_for(core_hash, family)            # ("dense", "densified: re-run detected") ...
    sr.stand_down(core_hash)                     # stop rewriting this signature
    sr.escalate_teaching(core_hash)              # the one-time escalated teaching, or None
    state = fold(events, policy)                 # the same state, from scratch

The state is a pure function of the event prefix: the daemon applies events as they come and,
after a restart, rebuilds the same state by folding the ledger; `ctx replay` runs the same
fold over a recorded transcript.  Nothing here reads a clock, the filesystem or (except
SessionReflex's default for the CTX_REFLEXES switch) the environment.

Reflexes latch per core signature for the rest of the session:

    starvation fired            -> that signature's next digests are dense
    affordance fired            -> inline (evidence instead of hints)
    starvation after densified  -> raw-capped (the circuit breaker)
    friction (evidence plane)   -> the teaching is escalated once (at the signature's next
                                   command), then ctx stands down for the signature
Denials of the safety plane are never part of this: they are decided before and outside it.
With reflexes off (CTX_REFLEXES=off or the policy), detectors still fire and latches are
still recorded, but every query answers as if nothing had latched.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from reflex.arc.detectors import REGISTRY, Firing, Obs
from reflex.arc.detectors.rerun import live_reason, mutation, rerun_view
from reflex.arc.detectors.track import Issue, OpenHints, Track, all_reads, named_targets, own_lossiness
from reflex.arc.events import CENSORING, Event, abs_path, ctx_inner, ctx_retrieval, file_writes
from reflex.arc.intents import Expect, opened_by
from reflex.arc.policy import LADDER, Policy, default_policy
from reflex.signature import signature

__all__ = ["SessionReflex", "ReflexState", "Firing", "fold", "step", "reflexes_enabled", "REASONS"]

REASONS = {
    "dense": "densified: re-run detected",
    "inline": "inline: hints not followed",
    "raw-capped": "raw-capped: starved after densify",
}
_SIG_CACHE = 4096
_PENDING_MAX = 512

_TEACH = {
    "route-around": ("ctx: `{core}` is rewritten to `ctx run` so its full output is stored and digested; "
                     "running it through {routes} goes around that and loses the stored output. "
                     "To see more than a digest shows, run the `ctx get` hint it prints, or `ctx run -- CMD` "
                     "with a narrower selection. ctx stops rewriting this command for the rest of the session."),
    "verbatim-retry": ("ctx: `{core}` was denied ({rule}) and retrying it unchanged is denied the same way. "
                       "Take the remediation in the denial instead. ctx stands down for this command for the rest "
                       "of the session."),
}


def reflexes_enabled(policy: Policy, environ=None) -> bool:
    env = os.environ if environ is None else environ
    if str(env.get("CTX_REFLEXES", "")).strip().lower() in ("off", "0", "false", "no"):
        return False
    return policy.reflexes.enabled


@dataclass(slots=True)
class Latch:
    core: str = ""
    dense: int | None = None     # seq of the firing that latched it
    inline: int | None = None
    raw: int | None = None
    teach: str | None = None     # None | "due" | "taught"
    teach_kind: str | None = None
    teach_detail: str = ""
    stand_down: bool = False

    def to_json(self) -> dict:
        return {"dense": self.dense, "inline": self.inline, "raw": self.raw, "teach": self.teach,
                "teach_kind": self.teach_kind, "stand_down": self.stand_down}


class ReflexState:
    """Everything the fold knows about one session.  to_json() is canonical: equal prefixes
    give byte-identical text."""

    def __init__(self, session_id: str = "", enabled: bool = True, policy_epoch: str = "default"):
        self.session_id = session_id
        self.enabled = enabled
        self.policy_epoch = policy_epoch
        self.model: str | None = None
        self.tier: str | None = None
        self.seq = -1
        self.events = 0
        self.errors = 0
        self.last_error: str | None = None
        self.track = Track()
        self.detectors: dict = {}
        self.latches: dict[str, Latch] = {}
        self.intents: dict[str, dict] = {}
        self.tally: dict[str, dict[str, int]] = {}
        self.fired: dict[str, int] = {}
        self._sigs: dict = {}
        # (tool_use_id, class, why) of the last command judged as a re-issue, for replay's
        # listing; not part of the state (it is derived from the last event alone).
        self.last_rerun: tuple | None = None

    def as_dict(self) -> dict:
        return {"session_id": self.session_id, "enabled": self.enabled, "policy_epoch": self.policy_epoch,
                "model": self.model, "tier": self.tier, "seq": self.seq, "events": self.events,
                "errors": self.errors, "last_error": self.last_error, "track": self.track.to_json(),
                "detectors": _plain(self.detectors), "latches": _plain(self.latches),
                "intents": _plain(self.intents), "tally": _plain(self.tally), "fired": _plain(self.fired)}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _plain(x):
    if hasattr(x, "to_json"):
        return x.to_json()
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (set, frozenset)):
        return sorted(_plain(v) for v in x)
    return x


# -- the fold --------------------------------------------------------------------------------

def _sig(state: ReflexState, command: str, cwd: str | None):
    key = (command, cwd)
    hit = state._sigs.get(key)
    if hit is None:
        if len(state._sigs) >= _SIG_CACHE:
            state._sigs.clear()
        hit = state._sigs[key] = (signature(command, cwd), None)
    return hit[0]


_READINGS: dict = {}     # (command, cwd) -> reading: a pure function of the signature, shared


def _reading_of(command: str, cwd: str | None, sig):
    key = (command, cwd)
    hit = _READINGS.get(key)
    if hit is None:
        if len(_READINGS) >= _SIG_CACHE:
            _READINGS.clear()
        mut = mutation(sig)
        hit = _READINGS[key] = (rerun_view(sig, cwd), mut, None if mut else live_reason(sig))
    return hit


def _reading(state: ReflexState, command: str, cwd: str | None, sig):
    """(RerunView, mutation, live reason) of a command: a pure function of its signature,
    kept with it (sessions share the answers, as they share signatures)."""
    key = (command, cwd)
    hit = state._sigs.get(key)
    if hit is not None and hit[1] is not None:
        return hit[1]
    reading = _reading_of(command, cwd, sig)
    if len(state._sigs) >= _SIG_CACHE:
        state._sigs.clear()
    state._sigs[key] = (sig, reading)
    return reading


def _new_issue(state: ReflexState, ev: Event, sig, text: str, decision, background: bool) -> Issue:
    tr = state.track
    rv, mut, live = _reading(state, text, ev.cwd, sig)
    issue = Issue(ev.seq, ev.tool_use_id, sig.core_hash, sig.core, sig.family, _raw(text), rv.view,
                  own_lossiness(sig) or rv.lossy, tr.changes, tr.epoch, ev.worktree_hash, decision, background,
                  tuple(sig.wrapper_route))
    # A subagent's calls share the session (and its hook events) but not its context: what the
    # main agent saw says nothing about what a subagent asks again, and vice versa.
    issue.rkey = rv.key if not ev.agent_id else "%s\0agent:%s" % (rv.key, ev.agent_id)
    issue.read_path, issue.window = rv.read_path, rv.window
    issue.mutation = mut[0] if mut else None
    issue.live = live
    return issue


def _raw(text: str | None) -> str:
    return " ".join((text or "").split())


def _digest_lossy(ev: Event, own: str | None) -> str | None:
    if ev.truncated:
        return "a truncated digest"
    if ev.omitted:
        return "%d omitted item(s)" % ev.omitted
    if ev.hints:
        return "detail behind %d hint(s)" % len(ev.hints)
    if ev.omitted is None and ev.truncated is None and ev.density not in ("raw", "raw-capped"):
        return "a digest"
    return own


def _run_detectors(state: ReflexState, obs: Obs, policy: Policy) -> list[Firing]:
    out: list[Firing] = []
    for detect in REGISTRY.values():
        out.extend(detect(state, obs, policy))
    return out


def _open(state: ReflexState, intents) -> None:
    for it in intents:
        state.intents["%s|%s" % (it.expect.value, it.core_hash)] = it.to_json()


def _close(state: ReflexState, expect: Expect, core_hash: str | None, outcome: str) -> None:
    if state.intents.pop("%s|%s" % (expect.value, core_hash), None) is None:
        return
    t = state.tally.setdefault(expect.value, {})
    t[outcome] = t.get(outcome, 0) + 1


_VIOLATES = {"starvation": Expect.NO_RERUN, "affordance": Expect.HINT_BEFORE_RERUN}
_CONFIRMS = {"span resolved": Expect.HINT_BEFORE_RERUN, "hint followed": Expect.HINT_BEFORE_RERUN,
             "hint followed: read of a named file": Expect.HINT_BEFORE_RERUN,
             "narrower re-run": Expect.NO_RERUN, "narrower re-run of a named failing test": Expect.NO_RERUN,
             "failure count falling": Expect.NO_RERUN, "remediation taken": Expect.NO_VERBATIM_RETRY}


def _react(state: ReflexState, firings: list[Firing]) -> None:
    """Latch reflexes and close intents for this event's firings."""
    for f in firings:
        state.fired[f.detector] = state.fired.get(f.detector, 0) + 1
        if f.detector == "landing":
            exp = _CONFIRMS.get(f.reason)
            if exp is not None:
                _close(state, exp, f.core_hash, "confirmed")
            continue
        if f.core_hash is None:
            continue
        if f.detector in _VIOLATES:
            _close(state, _VIOLATES[f.detector], f.core_hash, "violated")
        elif f.detector == "friction":
            kind = f.signal.get("kind")
            _close(state, Expect.NO_VERBATIM_RETRY if kind == "verbatim-retry" else Expect.NO_ROUTE_AROUND,
                   f.core_hash, "violated")
        latch = state.latches.get(f.core_hash)
        if latch is None:
            latch = state.latches[f.core_hash] = Latch(core=f.core or "")
        if f.detector == "starvation":
            if f.signal.get("breaker"):
                latch.raw = latch.raw if latch.raw is not None else f.seq
            elif latch.dense is None:
                latch.dense = f.seq
            other = f.signal.get("prior_core_hash")
            if other and not f.signal.get("breaker"):
                # The same producer spelled the other way (`npm test` / `npm test -- --run`)
                # gets the denser digest too: the agent may well go back to it.
                o = state.latches.get(other)
                if o is None:
                    o = state.latches[other] = Latch(core=f.signal.get("prior_raw") or "")
                if o.dense is None:
                    o.dense = f.seq
        elif f.detector == "affordance":
            if latch.inline is None:
                latch.inline = f.seq
        elif f.detector == "friction" and not f.signal.get("safety") and latch.teach is None:
            latch.teach = "due"
            latch.teach_kind = f.signal.get("kind")
            latch.teach_detail = ", ".join(f.signal.get("routes") or ()) or str(f.signal.get("rule") or "")


def _censor(state: ReflexState) -> None:
    tr = state.track
    tr.epoch += 1
    tr.background = 0
    tr.bg_paths.clear()
    tr.bg_tasks.clear()
    for key in sorted(state.intents):
        exp, _, core = key.partition("|")
        _close(state, Expect(exp), core if core != "None" else None, "censored")


def _command(state: ReflexState, ev: Event, policy: Policy) -> list[Firing]:
    tr = state.track
    retrieval = ctx_retrieval(ev.command)
    text = ctx_inner(ev.command) or ev.command or ""
    sig = _sig(state, text, ev.cwd)
    if not sig.core:
        return []
    core_hash = sig.core_hash
    background = bool(ev.background or sig.core.endswith("&")
                      or any(w.split(None, 1)[0] == "nohup" for w in sig.wrappers if w))
    issue = _new_issue(state, ev, sig, text, ev.decision, background)
    issue.raw = _raw(ev.command)
    latch = state.latches.get(core_hash)
    if latch is not None and latch.teach == "due" and state.enabled and retrieval is None:
        # The daemon asked escalate_teaching() while deciding this very command and delivered
        # the teaching with it; from here on it stands down for the signature.
        latch.teach = "taught"
        latch.stand_down = True
    obs = Obs(ev, sig, issue, None if retrieval else tr.rviews.get(issue.rkey), retrieval=retrieval,
              reads=all_reads(sig))
    firings = _run_detectors(state, obs, policy)
    state.last_rerun = (ev.tool_use_id, obs.rerun, obs.rerun_why) if obs.rerun else None
    if obs.rerun == "progress":
        _close(state, Expect.NO_RERUN, core_hash, "confirmed")
    _react(state, firings)
    if retrieval is not None:
        return firings
    tr.issues[core_hash] = tr.issues.get(core_hash, 0) + 1
    tr.sigs[core_hash] = sig
    _open(state, opened_by(ev, core_hash))
    if ev.decision == "deny":
        return firings        # a denied call never runs: no view, no write
    if len(tr.pending) >= _PENDING_MAX:
        oldest = min(tr.pending, key=lambda k: tr.pending[k].seq)
        del tr.pending[oldest]
    tr.pending[ev.tool_use_id or "#%d" % ev.seq] = issue
    writes = tuple(abs_path(p, ev.cwd) for p in file_writes(sig))
    if background:
        tr.background += 1
        tr.bg_paths.update(writes)
        tr.outputs.update(writes)
        if ev.tool_use_id:
            tr.bg_tasks[ev.tool_use_id] = set(writes)
    else:
        if writes:
            tr.note_change(writes)
            tr.outputs.update(writes)
        if issue.mutation and _local_mutation(state, text, ev.cwd, sig):
            tr.note_change()
    return firings


def _local_mutation(state: ReflexState, command: str, cwd: str | None, sig) -> bool:
    mut = _reading(state, command, cwd, sig)[1]
    return bool(mut and mut[1])


def _result(state: ReflexState, ev: Event, policy: Policy) -> list[Firing]:
    tr = state.track
    key = ev.tool_use_id
    issue = tr.pending.pop(key, None) if key else None
    if issue is None and ev.command:
        raw = _raw(ev.command)
        key = next((k for k, v in sorted(tr.pending.items(), key=lambda kv: -kv[1].seq) if v.raw == raw), None)
        issue = tr.pending.pop(key, None) if key else None
    if issue is None:
        return []
    if issue.done:                      # completed by its run event already
        if ev.exit_code is not None:
            issue.exit_code = ev.exit_code
        return []
    if issue.background:
        # Detached: the agent saw no output of it; what the harness says it writes to (its
        # task output file) is written until the task ends.
        if ev.ran is not False and ev.paths and issue.tool_use_id:
            paths = tuple(abs_path(p, ev.cwd) for p in ev.paths)
            tr.bg_paths.update(paths)
            tr.outputs.update(paths)
            tr.bg_tasks.setdefault(issue.tool_use_id, set()).update(paths)
        return []
    if ev.ran is False:
        return []                       # never ran: no view
    issue.done, issue.ran, issue.exit_code, issue.done_seq = True, True, ev.exit_code, ev.seq
    issue.lossy = "output truncated by the harness" if ev.truncated else issue.own_lossy
    issue.timed_out = ev.reason == "timed out"
    tr.views[issue.core_hash] = issue
    tr.rviews[issue.rkey] = issue
    return []                           # a result opens a view; no detector judges a result alone


def _run(state: ReflexState, ev: Event, policy: Policy) -> list[Firing]:
    tr = state.track
    text = ctx_inner(ev.command) or ev.command or ""
    sig = _sig(state, text, ev.cwd)
    core_hash = sig.core_hash
    issue = tr.pending_of_core(core_hash)
    if issue is None:
        issue = _new_issue(state, ev, sig, text, None, False)
        tr.sigs.setdefault(core_hash, sig)
    issue.done, issue.ran, issue.instrumented, issue.done_seq = True, True, True, ev.seq
    issue.density, issue.handle = ev.density, ev.handle
    issue.exit_code, issue.failed_count = ev.exit_code, ev.failed_count
    issue.lossy = _digest_lossy(ev, issue.own_lossy)
    if ev.worktree_hash:
        issue.wt = ev.worktree_hash
    firings = _run_detectors(state, Obs(ev, sig, view=issue), policy)
    _react(state, firings)
    tr.views[core_hash] = issue
    tr.rviews[issue.rkey] = issue
    if ev.failed_count is not None:
        tr.failed[core_hash] = ev.failed_count
    if ev.handle:
        tr.handles[ev.handle] = core_hash
    if ev.hints:
        tests, files = named_targets(ev)
        tr.hints[core_hash] = OpenHints(ev.handle, len(ev.hints), tests, files, ev.seq, tr.epoch)
    else:
        tr.hints.pop(core_hash, None)
    _open(state, opened_by(ev, core_hash, lossy=issue.lossy is not None))
    return firings


def step(state: ReflexState, event: Event, policy: Policy) -> list[Firing]:
    """Advance `state` (in place) by one event -> the firings it caused."""
    state.events += 1
    state.last_rerun = None
    if event.seq > state.seq:
        state.seq = event.seq
    kind = event.kind
    if kind == "command":
        return _command(state, event, policy)
    if kind == "result":
        return _result(state, event, policy)
    if kind == "run":
        return _run(state, event, policy)
    tr = state.track
    if kind in CENSORING:
        _censor(state)
        if kind == "session_start" and event.model:
            state.model, state.tier = event.model, policy.tier_of(event.model)
        return []
    if kind == "edit":
        tr.note_change(tuple(abs_path(p, event.cwd) for p in event.paths if p))
        return []
    if kind == "prompt":
        tr.note_change()
        return []
    if kind == "task_end":
        _task_end(tr, event)
        return []
    firings = _run_detectors(state, Obs(event, reads=event.paths), policy)   # retrieval, read
    _react(state, firings)
    return firings


def _task_end(tr: Track, ev: Event) -> None:
    """A background command finished: what it wrote is final, whatever else it did is a change."""
    paths = tr.bg_tasks.pop(ev.tool_use_id, set()) if ev.tool_use_id else set()
    paths |= {abs_path(p, ev.cwd) for p in ev.paths if p}
    if ev.tool_use_id or paths:
        tr.background = max(0, tr.background - 1)
    still = set().union(*tr.bg_tasks.values()) if tr.bg_tasks else set()
    tr.bg_paths.difference_update(paths - still)
    tr.note_change()
    for p in paths:
        tr.path_changed[p] = tr.changes


def _safe_step(state: ReflexState, event: Event, policy: Policy) -> list[Firing]:
    # Fail open: a bug in a detector must not take a hook down; the state counts it.
    try:
        return step(state, event, policy)
    except Exception as e:  # noqa: BLE001
        state.errors += 1
        state.last_error = "%s at seq %s: %s" % (type(e).__name__, event.seq, e)
        return []


def fold(events, policy: Policy | None = None, *, session_id: str = "", reflexes: bool | None = None,
         environ=None) -> ReflexState:
    """The reflex state after `events` (one session's, in order)."""
    return SessionReflex(policy, session_id, reflexes=reflexes, environ=environ).extend(events).state


class SessionReflex:
    """One session's reflex state, advanced incrementally, and the queries the daemon asks."""

    def __init__(self, policy: Policy | None = None, session_id: str = "", *, reflexes: bool | None = None,
                 environ=None):
        self.policy = policy if policy is not None else default_policy()
        enabled = reflexes if reflexes is not None else reflexes_enabled(self.policy, environ)
        self.state = ReflexState(session_id or "", enabled, self.policy.epoch.name)

    def apply(self, event: Event) -> list[Firing]:
        sid = self.state.session_id
        if sid and event.session_id and event.session_id != sid:
            return []
        return _safe_step(self.state, event, self.policy)

    def extend(self, events) -> "SessionReflex":
        for ev in events:
            self.apply(ev)
        return self

    def signature_of(self, command: str, cwd: str | None = None):
        """The signature the fold uses for `command` (cached with the session)."""
        return _sig(self.state, command or "", cwd)

    # -- queries -----------------------------------------------------------------------------
    def density_for(self, core_hash: str | None, family: str | None) -> tuple[str, str | None]:
        start = self.policy.start_density(family, self.state.tier)
        latch = self.state.latches.get(core_hash) if core_hash else None
        if not self.state.enabled or latch is None:
            return start, None
        if latch.raw is not None:
            return "raw-capped", REASONS["raw-capped"]
        base = LADDER.index(start)
        active = [d for d, on in (("dense", latch.dense), ("inline", latch.inline))
                  if on is not None and LADDER.index(d) > base]
        if not active:
            return start, None
        return active[-1], "; ".join(REASONS[d] for d in active)

    def stand_down(self, core_hash: str | None) -> bool:
        latch = self.state.latches.get(core_hash) if core_hash else None
        return bool(self.state.enabled and latch is not None and latch.stand_down)

    def escalate_teaching(self, core_hash: str | None) -> str | None:
        latch = self.state.latches.get(core_hash) if core_hash else None
        if not self.state.enabled or latch is None or latch.teach != "due":
            return None
        template = _TEACH.get(latch.teach_kind or "", _TEACH["route-around"])
        return template.format(core=latch.core, routes=latch.teach_detail or "a wrapper",
                               rule=latch.teach_detail or "denied")

    def to_json(self) -> str:
        return self.state.to_json()
