"""The Claude Code hook answers ctx can give, built in one place.

Both the daemon and the shim (when the daemon is down) answer through these
functions, so a safety denial is byte-identical whoever produced it.  Shapes
follow the PreToolUse contract: a rewrite returns the FULL original tool_input
with only `command` replaced (Claude Code replaces the whole object, and
dropping `timeout`/`run_in_background` silently changes the call).

stdlib-only.
"""

import json


def dumps(answer):
    text = json.dumps(answer, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate from the payload (a rewrite returns its whole tool_input) has no
        # UTF-8 form; JSON's \uXXXX escape carries it to Claude Code unchanged.
        text = json.dumps(answer, separators=(",", ":"), ensure_ascii=True, sort_keys=True)
    return text


def deny(reason):
    return {"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }}


def rewrite(tool_input, command, decision, reason):
    updated = dict(tool_input)
    updated["command"] = command
    out = {"hookEventName": "PreToolUse", "updatedInput": updated,
           "permissionDecisionReason": reason}
    if decision:
        out["permissionDecision"] = decision
    return {"hookSpecificOutput": out}


def update(tool_input, decision, reason):
    """A PreToolUse answer replacing the whole tool input (non-Bash tools: Grep's glob)."""
    out = {"hookEventName": "PreToolUse", "updatedInput": dict(tool_input),
           "permissionDecisionReason": reason}
    if decision:
        out["permissionDecision"] = decision
    return {"hookSpecificOutput": out}


def context(event, text):
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def replace_bash_output(text):
    """PostToolUse: the model sees `text` instead of the Bash output (Claude Code >= 2.1.121).

    The value must have Bash's output shape; a bare string is silently ignored by the harness."""
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {
        "stdout": text, "stderr": "", "interrupted": False, "isImage": False}}}
