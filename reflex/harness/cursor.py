"""Cursor (agent and cursor-agent CLI): payloads and answers, from Cursor's documented hook schema.

No Cursor binary runs here, so this codec follows the documentation (cursor.com/docs/agent/hooks)
and is tested against payloads written to it, not against the client.

Events are camelCase, configured in hooks.json (`{"version": 1, "hooks": {event: [{command,
timeout, matcher, failClosed}]}}`).  Every payload has `conversation_id` (the session),
`generation_id`, `model`, `hook_event_name`, `cursor_version`, `workspace_roots`,
`transcript_path`; tool events add `tool_name` (the shell tool is `Shell`), `tool_input`
(`{command}`), `tool_use_id`, `cwd`; postToolUse adds `tool_output` (a string, no exit status)
and `duration_ms`.  The older shell-only events `beforeShellExecution` (`command, cwd`) and
`beforeReadFile` (`file_path`) are read too.  Answers:

- preToolUse: `{"permission": "allow"|"deny"|"ask", "user_message", "agent_message",
  "updated_input"}`: deny with the reason as agent_message; rewrite with `updated_input`;
- postToolUse: `{"additional_context"}`; the output cannot be replaced;
- always one JSON object, `{}` when ctx has nothing to say: with `failClosed: true` (which ctx
  does not set, so its own failure never blocks the agent, but which a user or an admin's policy
  may set on ctx's entries) an empty or broken answer blocks the tool, so the shim prints `{}`
  even when ctx itself fails (reflex.shim.hook);
- timeouts are seconds.
stdlib-only.
"""

from __future__ import annotations

import json
from typing import Any

from reflex.harness.model import (OTHER, POST_SHELL, PRE_FILE, PRE_SHELL, SESSION_END, SESSION_START, Capabilities,
                                  Decision, ShellEvent, as_str, shell_or_file_event)

NAME = "cursor"
CAPS = Capabilities(harness=NAME, shell_tool="Shell", can_rewrite=True, rewrite_needs_allow=False,
                    can_deny=True, post_sees_output=True, post_sees_exit_code=False, post_replaces_output=False,
                    adds_context=True, stdout_is_json=True, block_exit_code=2, fail_open=False,
                    timeout_unit="s", has_call_id=True, session_end=True)
SESSION_ENV = None
NO_OPINION = b"{}"  # what Cursor expects when a hook lets the call be
_KINDS = {"preToolUse": PRE_SHELL, "beforeShellExecution": PRE_SHELL, "beforeReadFile": PRE_FILE,
          "postToolUse": POST_SHELL, "sessionStart": SESSION_START, "sessionEnd": SESSION_END}
FILE_TOOLS = {"Read": ("Read", {"file_path": "file_path", "path": "file_path", "target_file": "file_path"}),
              "Write": ("Write", {"file_path": "file_path", "path": "file_path", "contents": "content",
                                  "content": "content"})}
PRE_MATCHER = "Shell|" + "|".join(FILE_TOOLS)


def decode(obj: dict[str, Any], event_hint: str = "") -> ShellEvent:
    native = as_str(obj.get("hook_event_name")) or event_hint or ""
    kind = _KINDS.get(native, OTHER)
    tool = as_str(obj.get("tool_name"))
    tool_input = obj.get("tool_input") if isinstance(obj.get("tool_input"), dict) else {}
    roots = obj.get("workspace_roots")
    cwd = as_str(obj.get("cwd")) or (as_str(roots[0]) if isinstance(roots, list) and roots else None)
    common = dict(harness=NAME, native_event=native, session_id=as_str(obj.get("conversation_id")),
                  call_id=as_str(obj.get("tool_use_id")), cwd=cwd, transcript_path=as_str(obj.get("transcript_path")),
                  model=as_str(obj.get("model")))
    if native == "beforeShellExecution":
        tool, tool_input = CAPS.shell_tool, {"command": obj.get("command")}
    if native == "beforeReadFile":
        return ShellEvent(kind=PRE_FILE, tool_name="Read", tool_input={"file_path": obj.get("file_path")}, **common)
    other = shell_or_file_event(kind, tool, tool_input, CAPS, FILE_TOOLS, **common)
    if other is not None:
        return other
    if kind == POST_SHELL and tool != CAPS.shell_tool:
        kind = OTHER
    output = obj.get("tool_output")
    return ShellEvent(kind=kind, command=as_str(tool_input.get("command")), tool_name=tool,
                      tool_input={k: v for k, v in tool_input.items() if k != "command"},
                      output=output if isinstance(output, str) else None, reason=as_str(obj.get("reason")), **common)


def encode(decision: Decision, event: ShellEvent) -> bytes:
    out: dict[str, Any] = {}
    if decision.action == "deny":
        reason = decision.reason or "denied by ctx"
        out.update(permission="deny", agent_message=reason, user_message=reason)
    elif decision.action == "rewrite":
        updated = dict(event.tool_input)
        updated["command"] = decision.command
        out["updated_input"] = updated
        if decision.allow:
            out["permission"] = "allow"
    if decision.context:
        out["additional_context"] = decision.context
    if not out:
        return NO_OPINION
    return json.dumps(out, ensure_ascii=True, separators=(",", ":")).encode()
