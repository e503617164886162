"""Replay: what ctx would have decided at each command of a recorded session, and every firing.

    from reflex.analysis.replay import load, replay
    sessions = load("session.jsonl")              # a Claude transcript, a Codex rollout, a Gemini chat,
                                                  # Copilot events.jsonl, a ledger export/db or Events JSONL
    report = replay(sessions)                     # {"commands", "decisions", "firings"}

For each Bash call the decision is computed the way the daemon computes it: the safety plane
(reflex.safety.plane.check_command) first, then the evidence plane (reflex.arc.decide.decide_bash with
launcher "ctx", the user's rules taken as allowing, and the fold's stand-down state).  The
session fold then sees the call: with the decision the ledger recorded, when there is one
(that is what the agent actually responded to), else with the computed one.  Replay is pure:
the safety plane gets the session's first working directory as the project root and the home
directory read off the paths (/Users/NAME, /home/NAME), never the machine's own.
"""

from __future__ import annotations

import dataclasses
import re
import shlex

from reflex.safety import plane as safety
from reflex.arc.decide import decide_bash
from reflex.harness.claude.permissions import Verdict
from reflex.arc.events import Event
from reflex.arc.fold import SessionReflex
from reflex.arc.policy import Policy, default_policy

_HOME = re.compile(r"^(/Users/[^/]+|/home/[^/]+|/root)(?:/|$)")


FORMATS = ("claude", "codex", "gemini", "copilot", "qwen", "droid", "events")


def detect_format(path) -> str:
    """"events" for a ledger database, ledger export or Events JSONL; "codex", "gemini",
    "copilot", "qwen" or "droid" for those harnesses' own session recordings; "claude" for a
    Claude Code transcript."""
    from reflex.arc.ledger_events import SQLITE_MAGIC
    from reflex.harness.recordings import detect
    with open(path, "rb") as f:
        head = f.read(4096)
    if head[:2] == b"\x1f\x8b":
        from reflex.harness.calls import read_recording
        head = read_recording(path)[:4096]
    if head.startswith(SQLITE_MAGIC):
        return "events"
    harness = detect(head)
    if harness is not None:
        return harness
    first = head.split(b"\n", 1)[0]
    if b'"uid"' in first or b'"hook_event"' in first:
        return "events"
    kinds = rb"command|result|run|retrieval|edit|read|prompt|task_end|session_start|session_end|compaction"
    if re.search(rb'"kind"\s*:\s*"(' + kinds + rb')"', first) and b'"sessionId"' not in first:
        return "events"
    return "claude"


def load(path, fmt: str | None = None) -> dict[str, list[Event]]:
    """{session_id: events} from a recorded session file."""
    fmt = fmt or detect_format(path)
    if fmt == "claude":
        from reflex.harness.claude.transcript import read_transcript
        events = read_transcript(path)
        return {events[0].session_id if events else "": events}
    if fmt == "events":
        from reflex.arc.ledger_events import read_events
        return read_events(path)
    from reflex.harness.recordings import READERS
    if fmt in READERS:
        events = READERS[fmt](path)
        return {events[0].session_id if events else "": events}
    raise ValueError("unknown replay format %r (one of %s)" % (fmt, ", ".join(FORMATS)))


def harnesses(path, fmt: str, sessions) -> dict[str, str | None]:
    """{session_id: harness} of loaded sessions: the recording's own harness, Claude Code for a
    transcript, what the ledger's rows say for a ledger (None when they do not say)."""
    if fmt == "events":
        from reflex.arc.ledger_events import session_harnesses
        known = session_harnesses(path)
        return {sid: known.get(sid) for sid in sessions}
    return {sid: fmt for sid in sessions}


def _home_of(paths) -> str:
    for p in paths:
        m = _HOME.match(p or "")
        if m:
            return m.group(1)
    return "/nonexistent-home"


def _safety_policy(events: list[Event]) -> safety.SafetyPolicy:
    cwds = [e.cwd for e in events if e.cwd]
    root = cwds[0] if cwds else None
    return safety.SafetyPolicy(project_root=root, home=_home_of(cwds), tmp_dirs=("/tmp", "/var/tmp"))


_RAN = Verdict("allow", "recorded as run")


def decide(sr: SessionReflex, ev: Event, spolicy: safety.SafetyPolicy) -> tuple[str, str | None]:
    """(pass | rewrite | deny, the rewritten command or the deny rule) for one Bash call."""
    command = ev.command or ""
    verdict = safety.assess_command(command, ev.cwd, spolicy)
    if isinstance(verdict, safety.Denial):
        return "deny", verdict.rule
    if isinstance(verdict, safety.Redact):
        # A recursive read: the safety plane sends it through ctx run's redaction.
        return "rewrite", "ctx run --raw -- " + shlex.quote(command)
    sig = sr.signature_of(command, ev.cwd)
    # A transcript does not say what the user's permissions were; replay answers "what would ctx
    # have done had the harness run this command unasked" (it did run: it is in the transcript).
    d = decide_bash(command, {"run_in_background": ev.background}, sig, launcher="ctx", permission=_RAN,
                    stand_down=sr.stand_down(sig.core_hash))
    return d.action, d.command


def replay_session(events: list[Event], policy: Policy, *, reflexes: bool | None = None) -> dict:
    sid = events[0].session_id if events else ""
    sr = SessionReflex(policy, sid, reflexes=reflexes)
    spolicy = _safety_policy(events)
    decisions, firings, full = [], [], []
    for ev in events:
        if ev.kind == "command":
            action, detail = decide(sr, ev, spolicy)
            decisions.append({"tool_use_id": ev.tool_use_id, "command": ev.command, "decision": action,
                              "seq": ev.seq, "detail": detail, "rerun": None, "rerun_why": None})
            if ev.decision is None:
                ev = dataclasses.replace(ev, decision=action, decision_detail=detail)
        fired = sr.apply(ev)
        if ev.kind == "command" and sr.state.last_rerun is not None:
            decisions[-1]["rerun"], decisions[-1]["rerun_why"] = sr.state.last_rerun[1:]
        for f in fired:
            full.append(f)
            firings.append({"detector": f.detector, "tool_use_id": f.tool_use_id, "core": f.core,
                            "reason": f.reason})
    return {"session_id": sid, "decisions": decisions, "firings": firings, "full": full,
            "state": sr.state}


def replay(sessions: dict[str, list[Event]], policy: Policy | None = None, *, reflexes: bool | None = None) -> dict:
    """The replay report over every session: {"commands", "decisions", "firings"} (the --json
    shape), plus "sessions" with the per-session detail for a readable listing.  `reflexes`
    None follows the policy and CTX_REFLEXES, like the daemon."""
    policy = policy if policy is not None else default_policy()
    out = {"commands": 0, "decisions": [], "firings": [], "sessions": []}
    for sid in sorted(sessions):
        r = replay_session(sessions[sid], policy, reflexes=reflexes)
        out["commands"] += len(r["decisions"])
        out["decisions"].extend({k: d[k] for k in ("tool_use_id", "command", "decision")} for d in r["decisions"])
        out["firings"].extend(r["firings"])
        out["sessions"].append(r)
    return out


def json_report(report: dict) -> dict:
    return {"commands": report["commands"], "decisions": report["decisions"], "firings": report["firings"]}


def _short(text: str | None, width: int = 96) -> str:
    one = " ".join((text or "").split())
    return one if len(one) <= width else one[: width - 1] + "…"


def render_text(report: dict) -> str:
    lines = []
    for s in report["sessions"]:
        by_seq: dict[int, list] = {}
        for f in s["full"]:
            by_seq.setdefault(f.seq, []).append(f)
        lines.append("session %s: %d command(s), %d firing(s)" % (s["session_id"] or "-", len(s["decisions"]),
                                                                  len(s["full"])))
        shown = set()
        for d in s["decisions"]:
            lines.append("  %5d  %-7s %s" % (d["seq"], d["decision"], _short(d["command"])))
            if d.get("rerun"):
                lines.append("         re-run: %s (%s)" % (d["rerun"], d.get("rerun_why") or ""))
            for f in by_seq.get(d["seq"], ()):
                lines.append("         -> %s: %s" % (f.detector, f.reason))
            shown.add(d["seq"])
        for seq in sorted(k for k in by_seq if k not in shown):
            for f in by_seq[seq]:
                lines.append("  %5d  %-7s -> %s: %s" % (seq, "", f.detector, f.reason))
    counts: dict[str, int] = {}
    for f in report["firings"]:
        counts[f["detector"]] = counts.get(f["detector"], 0) + 1
    summary = ", ".join("%s %d" % kv for kv in sorted(counts.items())) or "none"
    lines.append("%d command(s) · decisions: %s · firings: %s" % (
        report["commands"],
        ", ".join("%s %d" % (k, sum(1 for d in report["decisions"] if d["decision"] == k))
                  for k in ("pass", "rewrite", "deny")),
        summary))
    return "\n".join(lines) + "\n"
