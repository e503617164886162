"""Factory Droid CLI (npm @factory/cli-linux-x64, verified on 0.225.2): payloads and answers.

Droid copied Claude Code's hook protocol, with its shell tool named `Execute`: PreToolUse,
PostToolUse, SessionStart and SessionEnd carry `session_id, transcript_path, cwd,
permission_mode, hook_event_name, tool_name, tool_input` (no tool-call id).  What matters to ctx:

- rewrite: `hookSpecificOutput.updatedInput` is merged into the arguments, with or without
  `permissionDecision: "allow"` (ctx sends "allow" only when its mirror found Droid runs the
  command unasked anyway, so a rewrite never changes whether a command runs);
- deny: `permissionDecision: "deny"` + reason (the model sees "Error: <reason>"); exit 2 blocks;
- the post hook gets the output as one string ending in `[Process exited with code N]`; no
  answer replaces it (updatedToolOutput and decision:block are ignored); `additionalContext`
  reaches the model as a separate user message;
- timeouts are seconds; the hook's environment has CLAUDE_PROJECT_DIR, the shell none of
  Droid's session (the daemon links a rewritten command's `ctx run` to its session itself).
stdlib-only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reflex.harness.model import (OTHER, POST_SHELL, POST_SHELL_FAILED, PRE_FILE, PRE_SHELL, SESSION_END,
                                  SESSION_START, Capabilities, Decision, ShellEvent, as_str, file_tool)

NAME = "droid"
CAPS = Capabilities(harness=NAME, shell_tool="Execute", can_rewrite=True, rewrite_needs_allow=False,
                    can_deny=True, post_sees_output=True, post_sees_exit_code=True, post_replaces_output=False,
                    adds_context=True, stdout_is_json=True, block_exit_code=2, fail_open=True,
                    timeout_unit="s", has_call_id=False, session_end=True)
SESSION_ENV = None
CLAUDE_SHAPED_KINDS = {"PreToolUse": PRE_SHELL, "PostToolUse": POST_SHELL, "SessionStart": SESSION_START,
                       "SessionEnd": SESSION_END}
# Droid's file tools, for the safety plane (`cat .env` and `Read .env` are the same read).
FILE_TOOLS = {"Read": ("Read", {"file_path": "file_path"}),
              "Create": ("Write", {"file_path": "file_path", "content": "content"}),
              "Edit": ("Edit", {"file_path": "file_path", "old_str": "old_string", "new_str": "new_string",
                                "old_string": "old_string", "new_string": "new_string"})}
PRE_MATCHER = "Execute|" + "|".join(FILE_TOOLS)
_STATUS = re.compile(r"\s*\[Process exited with code (-?\d+)\]\s*$")


def parse_output(text: str) -> tuple[str, int | None]:
    """Droid's Execute result -> (the command's output, exit code; None when not reported)."""
    m = _STATUS.search(text)
    if not m:
        return text, None
    return text[:m.start()], int(m.group(1))


def decode_claude_shaped(obj: dict[str, Any], event_hint: str, name: str, caps: Capabilities,
                         file_tools: dict[str, tuple[str, dict[str, str]]],
                         kinds: dict[str, str] = CLAUDE_SHAPED_KINDS) -> tuple[ShellEvent, Any]:
    """The payload of a harness that copied Claude Code's hook fields (Droid, Qwen) -> (event,
    its raw tool_response for the codec to read the output from)."""
    native = as_str(obj.get("hook_event_name")) or event_hint or ""
    kind = kinds.get(native, OTHER)
    tool = as_str(obj.get("tool_name"))
    tool_input = obj.get("tool_input") if isinstance(obj.get("tool_input"), dict) else {}
    common = dict(harness=name, native_event=native, session_id=as_str(obj.get("session_id")),
                  call_id=as_str(obj.get("tool_use_id")) if caps.has_call_id else None,
                  cwd=as_str(obj.get("cwd")), transcript_path=as_str(obj.get("transcript_path")))
    if kind == PRE_SHELL and tool != caps.shell_tool:
        mapped = file_tool(tool, tool_input, file_tools)
        if mapped is None:
            return ShellEvent(kind=OTHER, tool_name=tool, **common), None
        return ShellEvent(kind=PRE_FILE, tool_name=mapped[0], tool_input=mapped[1], **common), None
    if kind in (POST_SHELL, POST_SHELL_FAILED) and tool != caps.shell_tool:
        kind = OTHER
    event = ShellEvent(kind=kind, command=as_str(tool_input.get("command")), tool_name=tool,
                       tool_input={k: v for k, v in tool_input.items() if k != "command"},
                       permission_mode=as_str(obj.get("permission_mode")), model=as_str(obj.get("model")),
                       source=as_str(obj.get("source")), reason=as_str(obj.get("reason")), **common)
    return event, obj.get("tool_response")


def decode(obj: dict[str, Any], event_hint: str = "") -> ShellEvent:
    event, response = decode_claude_shaped(obj, event_hint, NAME, CAPS, FILE_TOOLS)
    if event.kind == POST_SHELL and isinstance(response, str):
        output, exit_code = parse_output(response)
        from dataclasses import replace
        event = replace(event, output=output, exit_code=exit_code,
                        kind=POST_SHELL_FAILED if exit_code not in (0, None) else POST_SHELL)
    return event


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


def encode(decision: Decision, event: ShellEvent) -> bytes:
    # "allow" only where ctx's mirror found Droid runs the command unasked: otherwise the
    # rewritten command meets Droid's own approval like the original would.
    return encode_claude_shaped(decision, event, allow_with_rewrite=decision.allow)
