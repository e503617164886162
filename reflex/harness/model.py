"""One shell event and one decision, whatever the harness; what each harness can do with it.

Every harness that ctx supports reports the same few moments of a shell call, under its own
names and shapes: before the command runs (ctx may deny it or rewrite it), after it ran (ctx
sees its output, and some harnesses let ctx replace what the model gets), and the start and
end of a session.  A codec per harness (codex.py, gemini.py, copilot.py) decodes its payload
into a ShellEvent and encodes a Decision into its answer.

Policy runs once.  The daemon's decision path reads Claude-Code-shaped payloads (it was built
on that protocol, and the ledger, fold and replay speak its event names), so `to_claude`
translates a ShellEvent into that shape and `from_claude` turns the path's answer back into a
Decision.  Before encoding, `degrade` fits the Decision to the harness's Capabilities: a rewrite
the harness cannot take becomes a denial that names the command to run instead, and where it
cannot deny either, context only; an output replacement becomes context where the post hook
cannot replace output.

stdlib-only (the shim's fallback path imports it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

PRE_SHELL = "pre-shell"
PRE_FILE = "pre-file"  # a file tool (read, write, edit) before it runs: for the safety plane
POST_SHELL = "post-shell"
POST_SHELL_FAILED = "post-shell-failed"
SESSION_START = "session-start"
SESSION_END = "session-end"
OTHER = "other"
KINDS = (PRE_SHELL, PRE_FILE, POST_SHELL, POST_SHELL_FAILED, SESSION_START, SESSION_END, OTHER)

# The Claude Code event each kind is recorded under (the ledger's and the fold's vocabulary).
CLAUDE_EVENT = {PRE_SHELL: "PreToolUse", PRE_FILE: "PreToolUse", POST_SHELL: "PostToolUse", POST_SHELL_FAILED: "PostToolUseFailure",
                SESSION_START: "SessionStart", SESSION_END: "SessionEnd"}


@dataclass(frozen=True)
class Capabilities:
    """What a harness's hooks let ctx do, as verified against the real CLI (see docs/harnesses.md)."""

    harness: str
    shell_tool: str                 # the harness's name for its shell tool
    can_rewrite: bool               # a pre hook can change the command that runs
    rewrite_needs_allow: bool       # ...only when the same answer allows the call (skipping approval)
    can_deny: bool                  # a pre hook can stop the call, with a reason the model sees
    post_sees_output: bool          # the post hook gets the command's output
    post_sees_exit_code: bool       # ...and its exit status
    post_replaces_output: bool      # the post hook can replace what the model receives
    adds_context: bool              # an answer can add text to the model's context
    stdout_is_json: bool            # stdout must be one JSON object or nothing (else an error / noise)
    block_exit_code: int | None     # the exit status that blocks the call with stderr as reason
    fail_open: bool                 # a hook that crashes or times out lets the call through
    timeout_unit: str               # "s" or "ms" in the harness's hook config
    has_call_id: bool               # payloads carry an id pairing pre and post
    session_end: bool               # the harness reports the end of a session
    post_replaces_failed_output: bool = True  # ...also after a failed command (Qwen: only after a success)


@dataclass(frozen=True)
class ShellEvent:
    """One hook call, normalized.  `command` is the command as the payload shows it (the post
    hook shows the command that ran, i.e. a rewrite's result).  For PRE_FILE, `tool_name` and
    `tool_input` are already Claude Code's (Read/Write/Edit with file_path ...), which the
    safety plane reads."""

    harness: str
    kind: str
    native_event: str
    session_id: str | None = None
    call_id: str | None = None
    cwd: str | None = None
    command: str | None = None
    tool_name: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    exit_code: int | None = None
    transcript_path: str | None = None
    permission_mode: str | None = None
    model: str | None = None
    source: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Decision:
    """What ctx wants done with one hook call.

    action: "none" (let it be), "deny", "rewrite" (run `command` instead), "replace_output"
    (the model gets `output` instead of the command's output).  `context` is text for the
    model alongside any action.  `allow` says the rewrite may skip the harness's approval
    (ctx's permission mirror found the harness would run the original unasked)."""

    action: str = "none"
    reason: str = ""
    command: str | None = None
    allow: bool = False
    context: str | None = None
    output: str | None = None


NOTHING = Decision()


def to_claude(event: ShellEvent) -> dict[str, Any] | None:
    """The Claude-Code-shaped payload the shared decision path reads (None: nothing to decide)."""
    name = CLAUDE_EVENT.get(event.kind)
    if name is None:
        return None
    obj: dict[str, Any] = {"session_id": event.session_id or "", "hook_event_name": name}
    for key in ("cwd", "transcript_path", "permission_mode", "model", "source", "reason"):
        value = getattr(event, key)
        if value is not None:
            obj[key] = value
    if event.kind in (PRE_SHELL, POST_SHELL, POST_SHELL_FAILED):
        tool_input = dict(event.tool_input)
        if event.command is not None:
            tool_input["command"] = event.command
        obj.update(tool_name="Bash", tool_input=tool_input)
        if event.call_id:
            obj["tool_use_id"] = event.call_id
    elif event.kind == PRE_FILE:
        obj.update(tool_name=event.tool_name, tool_input=dict(event.tool_input))
        if event.call_id:
            obj["tool_use_id"] = event.call_id
    if event.kind == POST_SHELL:
        obj["tool_response"] = {"stdout": event.output or "", "stderr": "", "interrupted": False}
    elif event.kind == POST_SHELL_FAILED:
        obj["error"] = "Exit code %d\n%s" % (event.exit_code if event.exit_code is not None else 1,
                                             event.output or "")
    return obj


def from_claude(answer: dict[str, Any] | None) -> Decision:
    """A Claude Code hook answer (claude_answers' shapes) -> Decision."""
    if not isinstance(answer, dict):
        return NOTHING
    out = answer.get("hookSpecificOutput")
    if not isinstance(out, dict):
        return NOTHING
    context = out.get("additionalContext") if isinstance(out.get("additionalContext"), str) else None
    reason = out.get("permissionDecisionReason") if isinstance(out.get("permissionDecisionReason"), str) else ""
    if out.get("permissionDecision") == "deny":
        return Decision("deny", reason=reason, context=context)
    updated = out.get("updatedInput")
    if isinstance(updated, dict) and isinstance(updated.get("command"), str):
        return Decision("rewrite", reason=reason, command=updated["command"],
                        allow=out.get("permissionDecision") == "allow", context=context)
    replaced = out.get("updatedToolOutput")
    if isinstance(replaced, dict) and isinstance(replaced.get("stdout"), str):
        return Decision("replace_output", output=replaced["stdout"], context=context)
    if context:
        return Decision("none", context=context)
    return NOTHING


def degrade(decision: Decision, caps: Capabilities) -> Decision:
    """Fit a decision to what the harness can do: rewrite -> deny with the command to run
    instead -> context only; replace output -> context; context dropped where it cannot go."""
    d = decision
    if d.action == "rewrite" and (not caps.can_rewrite or (caps.rewrite_needs_allow and not d.allow)):
        suggestion = "%s Run it as: %s" % (d.reason or "ctx:", d.command)
        d = Decision("deny", reason=suggestion, context=d.context) if caps.can_deny else \
            Decision("none", context=_join(d.context, suggestion))
    if d.action == "deny" and not caps.can_deny:
        d = Decision("none", context=_join(d.context, d.reason))
    if d.action == "replace_output" and not caps.post_replaces_output:
        d = Decision("none", context=_join(d.context, d.output))
    if d.context and not caps.adds_context:
        d = replace(d, context=None)
    return d


def _join(a: str | None, b: str | None) -> str | None:
    parts = [p for p in (a, b) if p]
    return "\n".join(parts) if parts else None


def file_tool(tool: str | None, args: dict[str, Any], table: dict[str, tuple[str, dict[str, str]]]
              ) -> tuple[str, dict[str, Any]] | None:
    """A harness's file tool -> (Claude Code's tool name, its input), by `table`:
    {harness tool: (Claude tool, {harness arg: Claude arg})}; None for other tools."""
    hit = table.get(tool or "")
    if hit is None:
        return None
    name, names = hit
    return name, {names[k]: v for k, v in args.items() if k in names}


def shell_or_file_event(kind: str, tool: str | None, args: dict[str, Any], caps: Capabilities,
                        table: dict[str, tuple[str, dict[str, str]]], **common: Any) -> ShellEvent | None:
    """A pre hook on a tool other than the harness's shell: PRE_FILE (as Claude Code's file tool,
    for the safety plane) when `table` maps it, else OTHER.  None: the shell tool, or not a pre
    hook, which the codec decodes itself."""
    if kind != PRE_SHELL or tool == caps.shell_tool:
        return None
    mapped = file_tool(tool, args, table)
    if mapped is None:
        return ShellEvent(kind=OTHER, tool_name=tool, **common)
    return ShellEvent(kind=PRE_FILE, tool_name=mapped[0], tool_input=mapped[1], **common)


def split_status_line(text: str, status: Any) -> tuple[str, int | None]:
    """A shell result that ends in a status line (`status`, a compiled pattern whose group 1 is
    the exit code) -> (the output before it, the exit code; None when there is no such line)."""
    m = status.search(text)
    if not m:
        return text, None
    return text[:m.start()], int(m.group(1))


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
