"""GitHub Copilot CLI (npm @github/copilot, verified on 1.0.102): payloads and answers.

Events are camelCase and their payloads do not name themselves: preToolUse `{sessionId,
timestamp, cwd, toolName, toolArgs}`, postToolUse adds `toolResult {resultType,
textResultForLlm}`, sessionStart `{..., source, initialPrompt}`, sessionEnd `{..., reason}`.
ctx installs each event with its name as an argument (`ctx hook copilot preToolUse`) and falls
back to the payload's shape.  The shell tool is `bash`; `toolArgs` may arrive as a JSON string.
No call id: pre and post are paired by session and command.  Answers:

- deny: `{"permissionDecision": "deny", "permissionDecisionReason": ...}`;
- rewrite: `{"permissionDecision": "allow", "modifiedArgs": {...}}`;
- postToolUse: `{"modifiedResult": {"resultType": "success", "textResultForLlm": ...}}` replaces
  what the model receives.  A failing command is still a "success" result; its status is the
  trailing `<shellId: N completed with exit code N>` line.
- no answer adds context; `timeoutSec` is seconds; a failing hook is skipped (fail open).

The shell subprocess gets COPILOT_AGENT_SESSION_ID (= sessionId).
stdlib-only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reflex.harness.model import (OTHER, POST_SHELL, POST_SHELL_FAILED, PRE_SHELL, SESSION_END,
                                  SESSION_START, Capabilities, Decision, ShellEvent, as_str, shell_or_file_event,
                                  split_status_line)

NAME = "copilot"
CAPS = Capabilities(harness=NAME, shell_tool="bash", can_rewrite=True, rewrite_needs_allow=False,
                    can_deny=True, post_sees_output=True, post_sees_exit_code=True, post_replaces_output=True,
                    adds_context=False, stdout_is_json=True, block_exit_code=None, fail_open=True,
                    timeout_unit="s", has_call_id=False, session_end=True)
SESSION_ENV = "COPILOT_AGENT_SESSION_ID"
_KINDS = {"preToolUse": PRE_SHELL, "postToolUse": POST_SHELL, "sessionStart": SESSION_START,
          "sessionEnd": SESSION_END}
# Copilot's file tools, for the safety plane (its preToolUse fires for every tool).
FILE_TOOLS = {"view": ("Read", {"path": "file_path"}),
              "create": ("Write", {"path": "file_path", "file_text": "content"}),
              "edit": ("Edit", {"path": "file_path", "old_str": "old_string", "new_str": "new_string"})}
_STATUS = re.compile(r"\n?<shellId: [^>]*? completed with exit code (-?\d+)>\s*$")


def parse_output(text: str) -> tuple[str, int | None]:
    return split_status_line(text, _STATUS)


def _infer(obj: dict[str, Any]) -> str:
    if "toolResult" in obj:
        return "postToolUse"
    if "toolName" in obj:
        return "preToolUse"
    if "source" in obj or "initialPrompt" in obj:
        return "sessionStart"
    if "reason" in obj:
        return "sessionEnd"
    return ""


def decode(obj: dict[str, Any], event_hint: str = "") -> ShellEvent:
    native = event_hint if event_hint in _KINDS else _infer(obj)
    kind = _KINDS.get(native, OTHER)
    tool = as_str(obj.get("toolName"))
    args = obj.get("toolArgs")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            args = None
    args = args if isinstance(args, dict) else {}
    other = shell_or_file_event(kind, tool, args, CAPS, FILE_TOOLS, harness=NAME, native_event=native,
                                session_id=as_str(obj.get("sessionId")), cwd=as_str(obj.get("cwd")))
    if other is not None:
        return other
    if kind == POST_SHELL and tool != CAPS.shell_tool:
        kind = OTHER
    output, exit_code = None, None
    result = obj.get("toolResult")
    if kind == POST_SHELL and isinstance(result, dict) and isinstance(result.get("textResultForLlm"), str):
        output, exit_code = parse_output(result["textResultForLlm"])
        if result.get("resultType") not in (None, "success") and exit_code is None:
            exit_code = 1
        if exit_code not in (0, None):
            kind = POST_SHELL_FAILED
    return ShellEvent(harness=NAME, kind=kind, native_event=native, session_id=as_str(obj.get("sessionId")),
                      cwd=as_str(obj.get("cwd")), command=as_str(args.get("command")), tool_name=tool,
                      tool_input={k: v for k, v in args.items() if k != "command"}, output=output,
                      exit_code=exit_code, source=as_str(obj.get("source")), reason=as_str(obj.get("reason")))


def encode(decision: Decision, event: ShellEvent) -> bytes:
    out: dict[str, Any] = {}
    if decision.action == "deny":
        out.update(permissionDecision="deny", permissionDecisionReason=decision.reason or "denied by ctx")
    elif decision.action == "rewrite":
        updated = dict(event.tool_input)
        updated["command"] = decision.command
        out.update(permissionDecision="allow", modifiedArgs=updated)
    elif decision.action == "replace_output":
        out["modifiedResult"] = {"resultType": "success", "textResultForLlm": decision.output or ""}
    if not out:
        return b""
    return json.dumps(out, ensure_ascii=True, separators=(",", ":")).encode()
