"""Helpers for the harnesses that copied Claude Code's hook protocol (Codex, Qwen Code, Droid):
payload fields `session_id, transcript_path, cwd, permission_mode, hook_event_name, tool_name,
tool_input[, tool_use_id]` and answers under `hookSpecificOutput`.  Each codec keeps its own
tool names, output format and capabilities.  stdlib-only.
"""

from __future__ import annotations

import json
from typing import Any

from reflex.harness.model import (OTHER, POST_SHELL, POST_SHELL_FAILED, PRE_FILE, PRE_SHELL, SESSION_END,
                                  SESSION_START, Capabilities, Decision, ShellEvent, as_str, shell_or_file_event)

CLAUDE_SHAPED_KINDS = {"PreToolUse": PRE_SHELL, "PostToolUse": POST_SHELL, "SessionStart": SESSION_START,
                       "SessionEnd": SESSION_END}


def decode_claude_shaped(obj: dict[str, Any], event_hint: str, name: str, caps: Capabilities,
                         file_tools: dict[str, tuple[str, dict[str, str]]],
                         kinds: dict[str, str] = CLAUDE_SHAPED_KINDS) -> tuple[ShellEvent, Any]:
    """The payload of a harness that copied Claude Code's hook fields -> (event, its raw
    tool_response for the codec to read the output from)."""
    native = as_str(obj.get("hook_event_name")) or event_hint or ""
    kind = kinds.get(native, OTHER)
    tool = as_str(obj.get("tool_name"))
    tool_input = obj.get("tool_input") if isinstance(obj.get("tool_input"), dict) else {}
    common = dict(harness=name, native_event=native, session_id=as_str(obj.get("session_id")),
                  call_id=as_str(obj.get("tool_use_id")) if caps.has_call_id else None,
                  cwd=as_str(obj.get("cwd")), transcript_path=as_str(obj.get("transcript_path")))
    other = shell_or_file_event(kind, tool, tool_input, caps, file_tools, **common)
    if other is not None:
        return other, None
    if kind in (POST_SHELL, POST_SHELL_FAILED) and tool != caps.shell_tool:
        kind = OTHER
    event = ShellEvent(kind=kind, command=as_str(tool_input.get("command")), tool_name=tool,
                       tool_input={k: v for k, v in tool_input.items() if k != "command"},
                       permission_mode=as_str(obj.get("permission_mode")), model=as_str(obj.get("model")),
                       source=as_str(obj.get("source")), reason=as_str(obj.get("reason")), **common)
    return event, obj.get("tool_response")


def encode_claude_shaped(decision: Decision, event: ShellEvent, *, allow_with_rewrite: bool) -> bytes:
    """Claude Code's answer shapes (hookSpecificOutput), for harnesses that read them."""
    native = "PreToolUse" if event.kind in (PRE_SHELL, PRE_FILE) else "PostToolUse" \
        if event.kind in (POST_SHELL, POST_SHELL_FAILED) else event.native_event
    out: dict[str, Any] = {"hookEventName": native}
    if decision.action == "deny":
        out.update(permissionDecision="deny", permissionDecisionReason=decision.reason or "denied by ctx")
    elif decision.action == "rewrite":
        updated = dict(event.tool_input)
        updated["command"] = decision.command
        out["updatedInput"] = updated
        if allow_with_rewrite:
            out.update(permissionDecision="allow", permissionDecisionReason=decision.reason or "ctx")
    if decision.context:
        out["additionalContext"] = decision.context
    if len(out) == 1:
        return b""
    return json.dumps({"hookSpecificOutput": out}, ensure_ascii=True, separators=(",", ":")).encode()
