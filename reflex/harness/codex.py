"""OpenAI Codex CLI (npm @openai/codex, verified on 0.171.0): payloads and answers.

Codex copied Claude Code's hook protocol for its shell tool (`Bash`): PreToolUse, PostToolUse and
SessionStart carry `session_id, cwd, hook_event_name, permission_mode, tool_name, tool_input,
tool_use_id`, and the answers have Claude's shapes.  The differences that matter to ctx:

- a rewrite (`updatedInput`) is applied only together with `permissionDecision: "allow"`, which
  also skips Codex's own approval; so ctx rewrites only when its permission mirror found Codex
  would run the original unasked (`permission_mode: bypassPermissions`), and otherwise degrades;
- the post hook gets the output as a bare string (`tool_response`), without the exit status, and
  cannot replace it (`updatedToolOutput` is ignored); `additionalContext` reaches the model;
- there is no session-end event (`Stop` ends a turn, not the session);
- Codex runs a hook only once the user trusted it (hash checked) or with
  `--dangerously-bypass-hook-trust`; broken JSON on stdout counts as a hook failure.

The shell subprocess gets CODEX_SESSION_ID (= session_id) and CODEX_TOOL_CALL_ID.
stdlib-only.
"""

from __future__ import annotations

from typing import Any

from reflex.harness.claude_shaped import encode_claude_shaped
from reflex.harness.model import (OTHER, POST_SHELL, PRE_SHELL, SESSION_END, SESSION_START, Capabilities, Decision,
                                  ShellEvent, as_str)

NAME = "codex"
CAPS = Capabilities(harness=NAME, shell_tool="Bash", can_rewrite=True, rewrite_needs_allow=True, can_deny=True,
                    post_sees_output=True, post_sees_exit_code=False, post_replaces_output=False,
                    adds_context=True, stdout_is_json=True, block_exit_code=2, fail_open=True,
                    timeout_unit="s", has_call_id=True, session_end=False)
SESSION_ENV = "CODEX_SESSION_ID"
_KINDS = {"PreToolUse": PRE_SHELL, "PostToolUse": POST_SHELL, "SessionStart": SESSION_START,
          "SessionEnd": SESSION_END}


def decode(obj: dict[str, Any], event_hint: str = "") -> ShellEvent:
    native = as_str(obj.get("hook_event_name")) or event_hint or ""
    kind = _KINDS.get(native, OTHER)
    tool = as_str(obj.get("tool_name"))
    if kind in (PRE_SHELL, POST_SHELL) and tool != CAPS.shell_tool:
        kind = OTHER
    tool_input = obj.get("tool_input") if isinstance(obj.get("tool_input"), dict) else {}
    response = obj.get("tool_response")
    return ShellEvent(harness=NAME, kind=kind, native_event=native, session_id=as_str(obj.get("session_id")),
                      call_id=as_str(obj.get("tool_use_id")), cwd=as_str(obj.get("cwd")),
                      command=as_str(tool_input.get("command")), tool_name=tool,
                      tool_input={k: v for k, v in tool_input.items() if k != "command"},
                      output=response if isinstance(response, str) else None,
                      transcript_path=as_str(obj.get("transcript_path")),
                      permission_mode=as_str(obj.get("permission_mode")), model=as_str(obj.get("model")),
                      source=as_str(obj.get("source")))


def encode(decision: Decision, event: ShellEvent) -> bytes:
    """An already degraded Decision -> Codex's answer on stdout (b"": nothing to say).  Codex
    applies a rewrite only together with "allow" (see the module docstring)."""
    return encode_claude_shaped(decision, event, allow_with_rewrite=True)
