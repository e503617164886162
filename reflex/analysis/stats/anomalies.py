"""Behavioral anomalies: the transcript audit that catches the next wrong axis.

The detectors watch the hypothesis classes ctx already knows (starvation, ignored hints,
friction).  These checks look for loops of any kind, in the same ledger, so a new failure
mode shows up as an anomaly with coordinates (tool_use_ids) before anyone builds a mechanism
for it.  Each is a pure function of the session timeline:

    repeated_signatures         a core signature issued REPEAT_MIN (3) or more times
    zero_landing_interventions  an intervention class that hit one signature at least twice
                                (uncensored) and never landed
    thrash                      consecutive calls alternating between two variants,
                                A B A B, THRASH_MIN (4) calls or more
    starvation_streaks          STREAK_MIN (2) or more re-issues in a row of one signature,
                                each after a lossy view (a digest that left something out,
                                the harness's cut, or the agent's own head/tail/grep/-q) with
                                the worktree unchanged

Re-issue classes (``reissue_class``), shared with the scorecard's rounds:

    progress   the worktree changed since the previous issue of the signature
    retry      the previous issue was denied
    polling    the command sleeps/watches, or reads a file again (paging)
    requery    nothing changed: the same question again (an extra round)
"""

from __future__ import annotations

from reflex.analysis.stats.timeline import Call, Timeline, signature_of

REPEAT_MIN = 3
THRASH_MIN = 4
STREAK_MIN = 2
MAX_IDS = 50
POLLING_WORDS = frozenset({"sleep", "watch"})


def _norm(cmd: str) -> str:
    return " ".join((cmd or "").split())


def _id(c: Call) -> str:
    return c.tool_use_id or "seq:%d" % c.seq


def issues_by_core(tl: Timeline) -> dict:
    """core_hash -> [Call] for every call that is a command issue (not a retrieval, not background)."""
    out: dict = {}
    for c in tl.calls:
        if c.core_hash and not c.is_retrieval and not c.background:
            out.setdefault(c.core_hash, []).append(c)
    return out


def reissue_class(tl: Timeline, prior: Call, c: Call) -> str:
    if prior.epoch != c.epoch:
        return "censored"
    if tl.changed(prior, c):
        return "progress"
    if prior.decision == "deny":
        return "retry"
    head = c.command.split(None, 1)[:1]
    if c.family == "file-read" or (head and head[0] in POLLING_WORDS):
        return "polling"
    return "requery"


def view_lossy(c: Call) -> str | None:
    """Why the view a call gave the agent was lossy, or None."""
    if c.run is not None and c.run.lossy:
        if c.run.truncated:
            return "a truncated digest"
        if c.run.omitted:
            return "a digest that omitted %d item(s)" % c.run.omitted
        if c.run.hints:
            return "a digest with %d hint(s)" % len(c.run.hints)
        return "a digest"
    if c.harness_cut:
        return "output truncated by the harness"
    from reflex.arc.detectors.track import own_lossiness
    return own_lossiness(signature_of(c.command, c.cwd))


def repeated_signatures(tl: Timeline, by_core: dict) -> list[dict]:
    out = []
    for core, calls in by_core.items():
        if len(calls) < REPEAT_MIN:
            continue
        req = sum(1 for a, b in zip(calls, calls[1:]) if reissue_class(tl, a, b) == "requery")
        out.append({"core_hash": core, "family": calls[0].family, "command": calls[0].command,
                    "issues": len(calls), "requeries": req, "tool_use_ids": [_id(c) for c in calls][:MAX_IDS]})
    out.sort(key=lambda d: (-d["issues"], d["core_hash"]))
    return out


def zero_landing_interventions(detail: dict) -> list[dict]:
    """detail: class -> [(Call, landed: bool|None)] with None for censored."""
    out = []
    for cls in sorted(detail):
        groups: dict = {}
        for c, landed in detail[cls]:
            groups.setdefault(c.core_hash or "-", []).append((c, landed))
        for core in sorted(groups):
            items = [(c, landed) for c, landed in groups[core] if landed is not None]
            if len(items) >= 2 and not any(landed for _c, landed in items):
                out.append({"class": cls, "core_hash": core, "command": items[0][0].command, "count": len(items),
                            "tool_use_ids": [_id(c) for c, _ in items][:MAX_IDS]})
    return out


def thrash(tl: Timeline) -> list[dict]:
    calls = [c for c in tl.calls if not c.is_retrieval]
    cmds = [_norm(c.command) for c in calls]
    out = []
    i = 0
    n = len(cmds)
    while i + THRASH_MIN <= n:
        if cmds[i] == cmds[i + 1] or calls[i].epoch != calls[i + 1].epoch:
            i += 1
            continue
        j = i + 2
        while j < n and cmds[j] == cmds[j - 2] and cmds[j] != cmds[j - 1] and calls[j].epoch == calls[i].epoch:
            j += 1
        if j - i >= THRASH_MIN:
            seg = calls[i:j]
            changes = sum(1 for s in tl.changes_at if seg[0].seq < s < seg[-1].seq)
            out.append({"variants": [cmds[i], cmds[i + 1]], "length": j - i, "changes_within": changes,
                        "tool_use_ids": [_id(c) for c in seg][:MAX_IDS]})
            i = j - 1
        else:
            i += 1
    return out


def starvation_streaks(tl: Timeline, by_core: dict) -> list[dict]:
    out = []
    for core in sorted(by_core):
        calls = by_core[core]
        streak: list = []
        why = None
        for a, b in zip(calls, calls[1:]):
            lossy = view_lossy(a) if reissue_class(tl, a, b) == "requery" else None
            if lossy:
                if not streak:
                    streak = [a]
                    why = lossy
                streak.append(b)
                continue
            if len(streak) - 1 >= STREAK_MIN:
                out.append(_streak(core, streak, why))
            streak = []
        if len(streak) - 1 >= STREAK_MIN:
            out.append(_streak(core, streak, why))
    out.sort(key=lambda d: (-d["length"], d["core_hash"]))
    return out


def _streak(core, calls, why) -> dict:
    return {"core_hash": core, "family": calls[0].family, "command": calls[0].command, "length": len(calls) - 1,
            "first_view": why, "commands": [c.command for c in calls][:MAX_IDS],
            "tool_use_ids": [_id(c) for c in calls][:MAX_IDS]}


def anomalies(tl: Timeline, by_core: dict, intervention_detail: dict) -> dict:
    return {"repeated_signatures": repeated_signatures(tl, by_core),
            "zero_landing_interventions": zero_landing_interventions(intervention_detail),
            "thrash": thrash(tl),
            "starvation_streaks": starvation_streaks(tl, by_core),
            "thresholds": {"repeat_min": REPEAT_MIN, "thrash_min": THRASH_MIN, "streak_min": STREAK_MIN}}
