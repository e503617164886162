"""OpenCode (npm opencode-ai, verified on 1.18.33): what ctx's plugin sends and what it applies.

OpenCode has no command hooks: plugins are JavaScript modules loaded in its own process
(`tool.execute.before(input, output)` may change `output.args` or throw to stop the call;
`tool.execute.after(input, output)` may change `output.output`, the text the model gets).
ctx ships a small plugin (reflex/data/opencode/ctx-plugin.js) that runs `ctx hook opencode` per
call, as every other harness does: the shim is the stdlib-only fast path, it holds the safety
plane when the daemon is down, and the plugin needs no socket protocol or policy of its own.
The plugin turns every failure of ctx (missing, crashed, slow past its timeout) into "let the
call be": a throw from a plugin blocks the tool, so OpenCode is a fail-closed host.

What the plugin sends on stdin (one JSON object):
  {"hook_event_name": "tool.execute.before" | "tool.execute.after" | "session.created",
   "session_id", "call_id", "tool", "args", "cwd", "output" (after), "exit" (after)}
What it reads back (nothing = let it be): {"deny": reason} (it throws with the reason, which the
model sees as the tool's error), {"args": {...}} (rewrite), {"output": text} (the model gets it
instead of the command's output).

OpenCode checks its bash permission inside the tool, on the arguments that run (a rewrite's),
and a plugin cannot answer "allow": a rewrite never skips OpenCode's own decision.
stdlib-only.
"""

from __future__ import annotations

import json
from typing import Any

from reflex.harness.model import (OTHER, POST_SHELL, POST_SHELL_FAILED, PRE_SHELL, SESSION_START,
                                  Capabilities, Decision, ShellEvent, as_int, as_str, shell_or_file_event)

NAME = "opencode"
CAPS = Capabilities(harness=NAME, shell_tool="bash", can_rewrite=True, rewrite_needs_allow=False,
                    can_deny=True, post_sees_output=True, post_sees_exit_code=True, post_replaces_output=True,
                    adds_context=False, stdout_is_json=True, block_exit_code=None, fail_open=False,
                    timeout_unit="ms", has_call_id=True, session_end=False)
SESSION_ENV = None
PLUGIN_RESOURCE = "data/opencode/ctx-plugin.js"
_KINDS = {"tool.execute.before": PRE_SHELL, "tool.execute.after": POST_SHELL, "session.created": SESSION_START}
FILE_TOOLS = {"read": ("Read", {"filePath": "file_path"}),
              "write": ("Write", {"filePath": "file_path", "content": "content"}),
              "edit": ("Edit", {"filePath": "file_path", "oldString": "old_string", "newString": "new_string"})}


def decode(obj: dict[str, Any], event_hint: str = "") -> ShellEvent:
    native = as_str(obj.get("hook_event_name")) or event_hint or ""
    kind = _KINDS.get(native, OTHER)
    tool = as_str(obj.get("tool"))
    args = obj.get("args") if isinstance(obj.get("args"), dict) else {}
    common = dict(harness=NAME, native_event=native, session_id=as_str(obj.get("session_id")),
                  call_id=as_str(obj.get("call_id")), cwd=as_str(obj.get("cwd")))
    other = shell_or_file_event(kind, tool, args, CAPS, FILE_TOOLS, **common)
    if other is not None:
        return other
    if kind == POST_SHELL and tool != CAPS.shell_tool:
        kind = OTHER
    output = as_str(obj.get("output")) if kind == POST_SHELL else None
    exit_code = as_int(obj.get("exit")) if kind == POST_SHELL else None
    if kind == POST_SHELL and exit_code not in (0, None):
        kind = POST_SHELL_FAILED
    workdir = as_str(args.get("workdir"))
    if workdir and common["cwd"]:
        import os
        common["cwd"] = os.path.join(common["cwd"], workdir)
    return ShellEvent(kind=kind, command=as_str(args.get("command")), tool_name=tool,
                      tool_input={k: v for k, v in args.items() if k != "command"}, output=output,
                      exit_code=exit_code, **common)


def encode(decision: Decision, event: ShellEvent) -> bytes:
    out: dict[str, Any] = {}
    if decision.action == "deny":
        out["deny"] = decision.reason or "denied by ctx"
    elif decision.action == "rewrite":
        out["args"] = dict(event.tool_input, command=decision.command)
    elif decision.action == "replace_output":
        out["output"] = decision.output or ""
    if not out:
        return b""
    return json.dumps(out, ensure_ascii=True, separators=(",", ":")).encode()
