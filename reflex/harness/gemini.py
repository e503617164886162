"""Google Gemini CLI (npm @google/gemini-cli, verified on 0.61.0): payloads and answers.

Events: BeforeTool / AfterTool (shell tool `run_shell_command`), SessionStart, SessionEnd; every
payload has `session_id, cwd, hook_event_name, timestamp, transcript_path`, none has a call id
(pre and post are paired by session and command).  Answers:

- deny: `{"decision": "deny", "reason": ...}` (the model gets the reason);
- rewrite: `hookSpecificOutput.tool_input` replaces the tool's arguments (no allow involved; the
  model is told "[System] Tool input parameters were modified by a hook before execution.");
- AfterTool sees the output as `tool_response.llmContent`, wrapped in `<untrusted_context>` with
  `Output: ...`, `Exit Code: N` (absent on success) and `Process Group PGID: N` lines; a deny
  there replaces the result: the model gets `{"error": <reason>}`; `additionalContext` is added;
- timeouts are milliseconds; stdout that is not JSON becomes a system message, so ctx prints one
  JSON object or nothing; exit 2 blocks with stderr.

The shell subprocess gets no session variable (hooks get GEMINI_SESSION_ID); the daemon links a
rewritten command's `ctx run` to its session itself.
stdlib-only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reflex.harness.model import (OTHER, POST_SHELL, POST_SHELL_FAILED, PRE_SHELL, SESSION_END,
                                  SESSION_START, Capabilities, Decision, ShellEvent, as_str, shell_or_file_event)

NAME = "gemini"
CAPS = Capabilities(harness=NAME, shell_tool="run_shell_command", can_rewrite=True, rewrite_needs_allow=False,
                    can_deny=True, post_sees_output=True, post_sees_exit_code=True, post_replaces_output=True,
                    adds_context=True, stdout_is_json=True, block_exit_code=2, fail_open=True,
                    timeout_unit="ms", has_call_id=False, session_end=True)
SESSION_ENV = None
_KINDS = {"BeforeTool": PRE_SHELL, "AfterTool": POST_SHELL, "SessionStart": SESSION_START,
          "SessionEnd": SESSION_END}
# Gemini's file tools, for the safety plane (`cat .env` and `read_file .env` are the same read).
FILE_TOOLS = {"read_file": ("Read", {"file_path": "file_path"}),
              "write_file": ("Write", {"file_path": "file_path", "content": "content"}),
              "replace": ("Edit", {"file_path": "file_path", "old_string": "old_string", "new_string": "new_string"}),
              # Reads every file its paths/globs name or hold (the safety plane's ReadMany).
              "read_many_files": ("ReadMany", {"paths": "paths", "include": "include"})}
PRE_MATCHER = "run_shell_command|" + "|".join(FILE_TOOLS)
_WRAP = re.compile(r"^\s*<untrusted_context>\n?(.*?)\n?</untrusted_context>\s*$", re.S)
_TRAILER = re.compile(r"^(Exit Code|Signal|Error|Background PIDs|Process Group PGID): ?(.*)$")


def parse_output(llm_content: str) -> tuple[str, int | None]:
    """Gemini's shell result text -> (the command's output, exit code: 0 when none is reported)."""
    m = _WRAP.match(llm_content)
    text = m.group(1) if m else llm_content
    lines = text.split("\n")
    exit_code = 0
    while lines:
        t = _TRAILER.match(lines[-1])
        if not t:
            break
        if t.group(1) == "Exit Code":
            try:
                exit_code = int(t.group(2).strip())
            except ValueError:
                exit_code = None
        elif t.group(1) == "Signal":
            exit_code = exit_code or None
        lines.pop()
    body = "\n".join(lines)
    if body.startswith("Output: "):
        body = body[len("Output: "):]
    if body == "(empty)":
        body = ""
    return body, exit_code


def decode(obj: dict[str, Any], event_hint: str = "") -> ShellEvent:
    native = as_str(obj.get("hook_event_name")) or event_hint or ""
    kind = _KINDS.get(native, OTHER)
    tool = as_str(obj.get("tool_name"))
    tool_input = obj.get("tool_input") if isinstance(obj.get("tool_input"), dict) else {}
    other = shell_or_file_event(kind, tool, tool_input, CAPS, FILE_TOOLS, harness=NAME, native_event=native,
                                session_id=as_str(obj.get("session_id")), cwd=as_str(obj.get("cwd")),
                                transcript_path=as_str(obj.get("transcript_path")))
    if other is not None:
        return other
    if kind == POST_SHELL and tool != CAPS.shell_tool:
        kind = OTHER
    rest = {k: v for k, v in tool_input.items() if k != "command"}
    if rest.get("is_background"):
        rest["run_in_background"] = True  # the decision path's name for it
    output, exit_code = None, None
    response = obj.get("tool_response")
    if kind == POST_SHELL and isinstance(response, dict):
        llm = response.get("llmContent")
        if isinstance(llm, str):
            output, exit_code = parse_output(llm)
        elif isinstance(response.get("returnDisplay"), str):
            output, exit_code = response["returnDisplay"], None
        if exit_code not in (0, None):
            kind = POST_SHELL_FAILED
    cwd = as_str(obj.get("cwd"))
    dir_path = as_str(tool_input.get("dir_path"))
    if dir_path and cwd:
        import os
        cwd = os.path.join(cwd, dir_path)
    return ShellEvent(harness=NAME, kind=kind, native_event=native, session_id=as_str(obj.get("session_id")),
                      cwd=cwd, command=as_str(tool_input.get("command")), tool_name=tool, tool_input=rest,
                      output=output, exit_code=exit_code, transcript_path=as_str(obj.get("transcript_path")),
                      source=as_str(obj.get("source")), reason=as_str(obj.get("reason")))


def encode(decision: Decision, event: ShellEvent) -> bytes:
    out: dict[str, Any] = {}
    hso: dict[str, Any] = {}
    if decision.action == "deny":
        out.update(decision="deny", reason=decision.reason or "denied by ctx")
    elif decision.action == "rewrite":
        updated = {k: v for k, v in event.tool_input.items() if k != "run_in_background"}
        updated["command"] = decision.command
        hso["tool_input"] = updated
    elif decision.action == "replace_output":
        # AfterTool's deny replaces the tool result with the reason (the model gets {"error": reason}).
        out.update(decision="deny", reason=decision.output or "")
    if decision.context:
        hso["additionalContext"] = decision.context
    if hso:
        hso["hookEventName"] = event.native_event
        out["hookSpecificOutput"] = hso
    if not out:
        return b""
    return json.dumps(out, ensure_ascii=True, separators=(",", ":")).encode()
