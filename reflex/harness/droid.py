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

import re
from typing import Any

from reflex.harness.claude_shaped import decode_claude_shaped, encode_claude_shaped
from reflex.harness.model import (POST_SHELL, POST_SHELL_FAILED, Capabilities, Decision, ShellEvent,
                                  split_status_line)

NAME = "droid"
CAPS = Capabilities(harness=NAME, shell_tool="Execute", can_rewrite=True, rewrite_needs_allow=False,
                    can_deny=True, post_sees_output=True, post_sees_exit_code=True, post_replaces_output=False,
                    adds_context=True, stdout_is_json=True, block_exit_code=2, fail_open=True,
                    timeout_unit="s", has_call_id=False, session_end=True)
SESSION_ENV = None
# Droid's file tools, for the safety plane (`cat .env` and `Read .env` are the same read).
FILE_TOOLS = {"Read": ("Read", {"file_path": "file_path"}),
              "Create": ("Write", {"file_path": "file_path", "content": "content"}),
              "Edit": ("Edit", {"file_path": "file_path", "old_str": "old_string", "new_str": "new_string",
                                "old_string": "old_string", "new_string": "new_string"})}
PRE_MATCHER = "Execute|" + "|".join(FILE_TOOLS)
_STATUS = re.compile(r"\s*\[Process exited with code (-?\d+)\]\s*$")


def parse_output(text: str) -> tuple[str, int | None]:
    """Droid's Execute result -> (the command's output, exit code; None when not reported)."""
    return split_status_line(text, _STATUS)


def decode(obj: dict[str, Any], event_hint: str = "") -> ShellEvent:
    event, response = decode_claude_shaped(obj, event_hint, NAME, CAPS, FILE_TOOLS)
    if event.kind == POST_SHELL and isinstance(response, str):
        output, exit_code = parse_output(response)
        from dataclasses import replace
        event = replace(event, output=output, exit_code=exit_code,
                        kind=POST_SHELL_FAILED if exit_code not in (0, None) else POST_SHELL)
    return event


def encode(decision: Decision, event: ShellEvent) -> bytes:
    # "allow" only where ctx's mirror found Droid runs the command unasked: otherwise the
    # rewritten command meets Droid's own approval like the original would.
    return encode_claude_shaped(decision, event, allow_with_rewrite=decision.allow)
