"""Ledger rows -> Events: how the daemon rebuilds a session's fold after a restart, and what
`ctx replay --format events` reads.

Input is a ledger database (opened read-only) or a `ctx ledger export` JSONL file; a JSONL of
Events themselves (Event.to_json per line) is accepted too.  Rows map as follows:

    hook PreToolUse Bash                          -> command (decision, decision_detail, background)
    hook PreToolUse Edit/Write/MultiEdit/Notebook -> edit (unless denied: a denied edit never ran)
    hook PreToolUse Task/Agent                    -> edit (a subagent may change anything)
    hook PreToolUse Read/Grep/Glob                -> read
    hook PostToolUse / PostToolUseFailure (Bash)  -> result (exit code; interrupted: never ran;
                                                     truncated: the harness cut what the model saw,
                                                     see harness_cut)
    hook PostToolUse AskUserQuestion, UserPromptSubmit -> prompt
    hook SessionStart                             -> session_start (source "compact": compaction)
    hook SessionEnd                               -> session_end;  PreCompact/PostCompact -> compaction
    run                                           -> run (handle, density, hints, failed ids, ...)
    retrieval                                     -> retrieval
    malformed                                     -> nothing

Rows keep their ledger order (global insertion order) within each session.

    from reflex.arc.ledger_events import rebuild
    sr = rebuild(ledger_path, session_id, policy)    # the daemon after a restart
"""

from __future__ import annotations

import json
import os

from reflex.arc.events import EDIT_TOOLS, KINDS, Event, handle_of

SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
READ_TOOLS = frozenset({"Read", "Grep", "Glob", "NotebookRead", "LS"})
LEDGER_KINDS = frozenset({"hook", "run", "retrieval", "malformed"})
SQLITE_MAGIC = b"SQLite format 3\x00"


def _data(row: dict) -> dict:
    d = row.get("data")
    if isinstance(d, str):
        try:
            d = json.loads(d)
        except ValueError:
            d = {}
    return d if isinstance(d, dict) else {}


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _strs(v) -> tuple[str, ...]:
    if not isinstance(v, (list, tuple)):
        return ()
    return tuple(str(x) for x in v if isinstance(x, (str, int)))


# What Claude Code shows the model of a Bash call's output, by the size the hook reports
# (characters; the ledger keeps UTF-8 bytes, a close upper bound).  Measured on real
# transcripts (docs/starvation.md): a failed call's text over 10,000 characters is cut to its
# first and last 5,000 (`... [N characters truncated] ...`, 1.0.x to 2.1.x); a successful
# one over 30,000 is cut after 30,000 (`... [N lines truncated] ...`, 1.0.x) or moved to a
# file with a ~2 KB preview (`<persisted-output>`, 2.x; the hook's tool_response then names
# persistedOutputPath).  BASH_MAX_OUTPUT_LENGTH moves the 30,000; it is not visible here.
HARNESS_LIMITS = {"claude": {"failed": 10_000, "ok": 30_000}}


def harness_cut(harness: str, exit_code, size, persisted=None) -> bool:
    """Did the harness show the model less than the command printed?"""
    if persisted:
        return True
    limits = HARNESS_LIMITS.get(harness or "claude")
    if limits is None or not isinstance(size, int):
        return False
    return size > limits["failed" if exit_code not in (0, None) else "ok"]


def events_from_row(row: dict) -> list[Event]:
    """The Events one ledger row stands for (usually one, sometimes none)."""
    kind = row.get("kind")
    data = _data(row)
    base = {"seq": _int(row.get("seq")) or 0, "session_id": str(row.get("session_id") or ""),
            "tool_use_id": row.get("tool_use_id"), "cwd": row.get("cwd")}
    if kind == "run":
        return [Event("run", command=row.get("command"), exit_code=_int(row.get("exit_code")),
                      handle=data.get("handle"), density=data.get("density") or row.get("density"),
                      reason=data.get("reason"), hints=_strs(data.get("hints")),
                      failed_ids=_strs(data.get("failed_ids")), failed_count=_int(data.get("failed_count")),
                      omitted=_int(data.get("omitted")),
                      truncated=data.get("truncated") if isinstance(data.get("truncated"), bool) else None,
                      locations=_strs(data.get("locations")),
                      worktree_hash=data.get("worktree_hash") or row.get("worktree_hash"), **base)]
    if kind == "retrieval":
        address = data.get("address")
        return [Event("retrieval", command=row.get("command"), address=address, pattern=data.get("pattern"),
                      handle=data.get("handle") or handle_of(address), result=data.get("result"),
                      miss_reason=data.get("reason"), **base)]
    if kind != "hook":
        return []
    hook, tool = row.get("hook_event"), row.get("tool_name")
    tool_input = data.get("tool_input") if isinstance(data.get("tool_input"), dict) else {}
    if hook == "PreToolUse":
        decision = row.get("decision") if row.get("decision") in ("pass", "rewrite", "deny") else None
        if tool == "Bash":
            if not isinstance(row.get("command"), str):
                return []
            return [Event("command", tool_name=tool, command=row["command"], decision=decision,
                          decision_detail=row.get("decision_detail"),
                          background=bool(tool_input.get("run_in_background")),
                          worktree_hash=data.get("worktree_hash"),
                          agent_id=data.get("agent_id") if isinstance(data.get("agent_id"), str) else None,
                          **base)]
        if decision == "deny":
            return []
        if tool in EDIT_TOOLS or tool in SUBAGENT_TOOLS:
            path = tool_input.get("file_path") or tool_input.get("notebook_path")
            return [Event("edit", tool_name=tool, paths=(path,) if isinstance(path, str) and path else (), **base)]
        if tool in READ_TOOLS:
            path = tool_input.get("file_path") or tool_input.get("path")
            return [Event("read", tool_name=tool, paths=(path,) if isinstance(path, str) and path else (), **base)]
        return []
    if hook in ("PostToolUse", "PostToolUseFailure"):
        if tool == "AskUserQuestion":
            return [Event("prompt", tool_name=tool, **base)]
        if tool != "Bash":
            return []
        interrupted = bool(data.get("interrupted") or data.get("is_interrupt"))
        exit_code = _int(row.get("exit_code"))
        if hook == "PostToolUseFailure" and exit_code is None:
            exit_code = 1
        err = data.get("error") if isinstance(data.get("error"), str) else ""
        return [Event("result", tool_name=tool, command=row.get("command"), exit_code=_int(row.get("exit_code")),
                      ran=not interrupted,
                      truncated=harness_cut(row.get("harness") or "claude", exit_code, _int(row.get("output_bytes")),
                                            data.get("persisted_output")),
                      reason="timed out" if "Command timed out after " in err else None, **base)]
    if hook == "SessionStart":
        if data.get("source") == "compact":
            return [Event("compaction", **base)]
        return [Event("session_start", model=data.get("model"), **base)]
    if hook == "SessionEnd":
        return [Event("session_end", **base)]
    if hook in ("PreCompact", "PostCompact"):
        return [Event("compaction", **base)] if hook == "PreCompact" else []
    if hook == "UserPromptSubmit":
        return [Event("prompt", **base)]
    return []


def group(events) -> dict[str, list[Event]]:
    out: dict[str, list[Event]] = {}
    for e in events:
        out.setdefault(e.session_id, []).append(e)
    return out


def events_from_rows(rows) -> dict[str, list[Event]]:
    """Rows (ledger order) -> {session_id: events}."""
    return group(e for row in rows for e in events_from_row(row))


def _jsonl_rows(path):
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                yield obj


def session_events(ledger_path, session_id: str) -> list[Event]:
    """One session's events from a ledger database (opened read-only), in ledger order."""
    from reflex.ledger.export import iter_events
    return [e for row in iter_events(os.fspath(ledger_path), session_id) for e in events_from_row(row)]


def rebuild(ledger_path, session_id: str, policy=None, *, reflexes: bool | None = None):
    """The SessionReflex a daemon had for `session_id`, re-folded from its ledger: what it
    keeps in memory after a restart (same prefix, same state)."""
    from reflex.arc.fold import SessionReflex
    return SessionReflex(policy, session_id, reflexes=reflexes).extend(session_events(ledger_path, session_id))


def session_harnesses(path) -> dict[str, str]:
    """{session_id: harness} of a ledger database or export (its rows say which harness sent
    each hook); empty for an Events JSONL, which does not say."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head == SQLITE_MAGIC:
        from reflex.ledger.export import iter_events
        rows = iter_events(path)
    else:
        rows = (obj for obj in _jsonl_rows(path) if "uid" in obj or "hook_event" in obj)
    out: dict[str, str] = {}
    for row in rows:
        sid, harness = row.get("session_id"), row.get("harness")
        if isinstance(sid, str) and isinstance(harness, str) and harness:
            out.setdefault(sid, harness)
    return out


def read_events(path) -> dict[str, list[Event]]:
    """{session_id: events} from a ledger database, a ledger export or an Events JSONL."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head == SQLITE_MAGIC:
        from reflex.ledger.export import iter_events
        return events_from_rows(iter_events(path))
    events: list[Event] = []
    for obj in _jsonl_rows(path):
        kind = obj.get("kind")
        if "uid" in obj or "hook_event" in obj or kind in ("hook", "malformed"):
            events.extend(events_from_row(obj))
        elif kind in KINDS:
            try:
                events.append(Event.from_json(obj))
            except (TypeError, ValueError):
                continue
    return group(events)
