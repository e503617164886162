"""Qwen Code (npm @qwen-code/qwen-code, verified on 0.24.4): payloads and answers.

Qwen's hooks take Claude Code's field names (PreToolUse, PostToolUse, PostToolUseFailure,
SessionStart, SessionEnd with `session_id, transcript_path, cwd, permission_mode, tool_name,
tool_input, tool_use_id`) and Gemini's tools (shell tool `run_shell_command`).  What matters:

- no rewrite from PreToolUse: `updatedInput` is ignored in every shape (firePreToolUseHook
  returns only proceed/block/context).  A PermissionRequest answer can rewrite, but only for a
  call that asks for approval, and never in `-p` mode, so ctx does not rely on it;
- deny: `permissionDecision: "deny"` + reason; exit 2 blocks;
- the post hook sees the output (`tool_response.llmContent`: `Command:`, `Directory:`, `Output:`
  and `Error:`/`Exit Code:`/`Signal:`/`Process Group PGID:` lines), and `continue: false` +
  `stopReason` REPLACES the tool result the model gets (the turn goes on);
  `additionalContext` is appended to it;
- timeouts are milliseconds.

- a failed command fires PostToolUseFailure (`error` holds the same text), which reads only
  `additionalContext`: a failure's output cannot be replaced.

So ctx has two second-best moves on Qwen, chosen as for every harness by whether Qwen runs the
command unasked (reflex.harness.handler):
- YOLO mode (the payload's `permission_mode`): the rewrite becomes a deny whose reason names the
  command to run instead (`ctx run -- ...`); one more turn, and the digest comes from `ctx run`
  whether the command fails or not;
- otherwise the command runs as Qwen decides, and after a success the model gets the digest
  instead of the output (`continue: false` + stopReason); a failure's output stays as it is.  Hooks get QWEN_CODE_SESSION_ID; ctx reads the payload's.
stdlib-only.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from reflex.harness import gemini
from reflex.harness.claude_shaped import CLAUDE_SHAPED_KINDS, decode_claude_shaped, encode_claude_shaped
from reflex.harness.model import (POST_SHELL, POST_SHELL_FAILED, Capabilities, Decision, ShellEvent, as_str)

NAME = "qwen"
CAPS = Capabilities(harness=NAME, shell_tool="run_shell_command", can_rewrite=False, rewrite_needs_allow=False,
                    can_deny=True, post_sees_output=True, post_sees_exit_code=True, post_replaces_output=True,
                    adds_context=True, stdout_is_json=True, block_exit_code=2, fail_open=True,
                    timeout_unit="ms", has_call_id=True, session_end=True, post_replaces_failed_output=False)
SESSION_ENV = None
_KINDS = dict(CLAUDE_SHAPED_KINDS, PostToolUseFailure=POST_SHELL_FAILED)
# Gemini's read_file and write_file; Qwen's `edit` takes Claude's argument names.
FILE_TOOLS = dict(gemini.FILE_TOOLS, edit=("Edit", {"file_path": "file_path", "old_string": "old_string",
                                             "new_string": "new_string"}))
PRE_MATCHER = "run_shell_command|" + "|".join(FILE_TOOLS)
_HEADERS = ("Command: ", "Directory: ")


def parse_output(llm_content: str) -> tuple[str, int | None]:
    """Qwen's shell result text -> (the command's output, exit code)."""
    lines = llm_content.split("\n")
    while lines and lines[0].startswith(_HEADERS):
        lines.pop(0)
    body, exit_code = gemini.parse_output("\n".join(lines))
    return ("" if body == "(empty)" else body), exit_code


def decode(obj: dict[str, Any], event_hint: str = "") -> ShellEvent:
    event, response = decode_claude_shaped(obj, event_hint, NAME, CAPS, FILE_TOOLS, _KINDS)
    if event.kind == POST_SHELL and isinstance(response, dict):
        llm = response.get("llmContent")
        if isinstance(llm, str):
            output, exit_code = parse_output(llm)
        else:
            output, exit_code = as_str(response.get("returnDisplay")), None
        event = replace(event, output=output, exit_code=exit_code,
                        kind=POST_SHELL_FAILED if exit_code not in (0, None) else POST_SHELL)
    elif event.kind == POST_SHELL_FAILED:
        error = obj.get("error")
        output, exit_code = parse_output(error) if isinstance(error, str) else (None, None)
        event = replace(event, output=output, exit_code=exit_code if exit_code not in (0, None) else 1)
    return event


def encode(decision: Decision, event: ShellEvent) -> bytes:
    if decision.action == "replace_output":
        # The one answer that replaces a Qwen tool result: the model gets stopReason instead.
        return json.dumps({"continue": False, "stopReason": decision.output or ""}, ensure_ascii=True,
                          separators=(",", ":")).encode()
    return encode_claude_shaped(decision, event, allow_with_rewrite=False)
