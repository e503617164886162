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
and a plugin cannot answer "allow": a rewrite never skips OpenCode's own decision, but it can
change it (`"bash": {"*": "ask", "pytest*": "allow"}` allows `pytest -q`, not `ctx run -- 'pytest
-q'`, and `opencode run` rejects what asks).  So the plugin also sends the permission config
OpenCode loaded (`client.config.get()`: `permission`, and each agent's), and ctx rewrites only
where the mirror below says OpenCode allows both the original and the rewritten command
(`rewrite_verdict`); anywhere else the call passes untouched and the after-hook digests it.

The mirror, as OpenCode 1.18.33 decides (read from its source, not copied): the config becomes a
list of rules (permission, pattern, action) in config order after the agent's defaults (bash:
`*` allow); the LAST rule whose permission and pattern both match wins, none matching means ask.
A pattern matches the whole text, `*` any run of characters, `?` one, a trailing ` *` also
matches nothing.  The bash tool asks once per command node of the parsed line (the text of the
command with its redirections; `cd`-like commands are not asked but their directory is): every
one must be allowed.  The mirror splits a line only where it can do so exactly like that parse
(plain words, quotes, `|`, `||`, `&&`, `;`): anything else is "not provably allowed".
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


# -- the permission mirror -------------------------------------------------------------------
ALLOW, ASK, DENY = "allow", "ask", "deny"
# The build agent's own rule for bash, before the user's config (OpenCode runs bash unasked by default).
DEFAULT_RULES = (("*", "*", ALLOW),)
# Commands OpenCode does not ask about (it checks their directory instead), and those whose path
# arguments it checks against the project directory (external_directory).
_DIR_ONLY = {"cd", "chdir", "popd", "pushd", "push-location", "set-location"}
_PATH_CHECKED = _DIR_ONLY | {"rm", "cp", "mv", "mkdir", "touch", "chmod", "chown", "cat", "get-content",
                             "set-content", "add-content", "copy-item", "move-item", "remove-item", "new-item",
                             "rename-item"}


def wildcard(text: str, pattern: str) -> bool:
    """OpenCode's permission pattern match (whole text; `*` any characters, `?` one; a trailing
    ` *` also matches the bare command; backslashes read as slashes)."""
    import re
    text, pattern = text.replace("\\", "/"), pattern.replace("\\", "/")
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    if rx.endswith("\\ .*"):
        rx = rx[:-4] + "( .*)?"
    return re.fullmatch(rx, text, re.S) is not None


def rules_of(permission: Any) -> list[tuple[str, str, str]]:
    """A config's `permission` value as OpenCode's ordered rule list (unknown shapes: none)."""
    if isinstance(permission, str):
        return [("*", "*", permission)]
    rules: list[tuple[str, str, str]] = []
    if not isinstance(permission, dict):
        return rules
    for name, value in permission.items():
        if isinstance(value, str):
            rules.append((str(name), "*", value))
        elif isinstance(value, dict):
            rules.extend((str(name), str(pat), act) for pat, act in value.items() if isinstance(act, str))
    return rules


def evaluate(text: str, rules: list[tuple[str, str, str]] | tuple[tuple[str, str, str], ...]) -> str:
    """The action OpenCode takes for a bash pattern: the last matching rule's, else ask."""
    for name, pattern, action in reversed(rules):
        if wildcard("bash", name) and wildcard(text, pattern):
            return action
    return ASK


def command_parts(command: str) -> list[str] | None:
    """The texts OpenCode asks about for `command`, or None where ctx cannot split it exactly as
    OpenCode's parser does (substitutions, subshells, groups, heredocs, backgrounding, newlines,
    escapes, unbalanced quotes)."""
    parts, cur, quote, i = [], "", "", 0
    while i < len(command):
        c = command[i]
        if quote:
            if c == quote:
                quote = ""
            elif quote == '"' and (c in "`\\" or command.startswith("$(", i)):
                return None
            cur += c
            i += 1
            continue
        if c in "'\"":
            quote = c
            cur += c
            i += 1
            continue
        op = next((o for o in ("||", "&&", "|&", "|", ";") if command.startswith(o, i)), None)
        if op is not None:
            parts.append(cur)
            cur = ""
            i += len(op)
            continue
        if c == "$" and command.startswith("$(", i) or c in "`(){}\n\\" or c == "<" or (
                c == "&" and not cur.endswith(">")) or (c == ">" and command.startswith(">(", i)):
            return None
        cur += c
        i += 1
    if quote:
        return None
    parts = [p.strip() for p in parts + [cur]]
    return parts if all(parts) else None


def _words(part: str) -> list[str]:
    import shlex
    words = shlex.split(part)
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        words = words[1:]  # an env assignment is part of the text, not the command's name
    return words


def _inside_project(arg: str) -> bool:
    return not (arg.startswith(("/", "~", "$")) or ".." in arg.split("/"))


def bash_action(command: str, rules: list[tuple[str, str, str]]) -> tuple[str, str]:
    """(allow | ask | deny | unknown, why) for `command` under `rules`, as OpenCode would decide."""
    parts = command_parts(command)
    if parts is None:
        return "unknown", "the command cannot be split as OpenCode splits it"
    asked = []
    for part in parts:
        try:
            words = _words(part)
        except ValueError:
            return "unknown", "unbalanced quoting"
        if words and words[0] in _PATH_CHECKED and not all(_inside_project(w) for w in words[1:]
                                                            if not w.startswith("-")):
            return "unknown", "%s outside the project: OpenCode's external_directory rule decides" % words[0]
        if words and words[0] in _DIR_ONLY:
            continue
        asked.append(part)
    worst = ALLOW
    for part in asked:
        action = evaluate(part, rules)
        if action == DENY:
            return DENY, "a deny rule matches %r" % part[:80]
        if action != ALLOW:
            worst = ASK
    return (worst, "every part is allowed") if worst == ALLOW else (ASK, "a part is not allowed: OpenCode asks")


def rulesets(evidence: Any) -> list[list[tuple[str, str, str]]] | None:
    """Every ruleset the call may be judged under: the config's, and the config's followed by
    each agent's own (the plugin does not know which agent runs).  None: no evidence."""
    if not isinstance(evidence, dict) or "permission" not in evidence:
        return None
    base = list(DEFAULT_RULES) + rules_of(evidence.get("permission"))
    agents = evidence.get("agents") if isinstance(evidence.get("agents"), dict) else {}
    return [base] + [base + rules_of(p) for p in agents.values() if p]


def rewrite_verdict(command: str, rewritten: str, evidence: Any) -> tuple[str, str]:
    """Is rewriting `command` into `rewritten` permission-neutral?  allow only when OpenCode
    allows both, under every ruleset it may use; otherwise the original is left to OpenCode."""
    sets = rulesets(evidence)
    if sets is None:
        return "unknown", "OpenCode's permission config not received (old plugin or config unreadable)"
    for rules in sets:
        action, why = bash_action(command, rules)
        if action != ALLOW:
            return action, "opencode: %s" % why
        if evaluate(rewritten, rules) != ALLOW:
            return ASK, "opencode: the rewritten command would not be allowed as the original is"
    return ALLOW, "opencode allows the command and its rewrite"


def permission_evidence(obj: dict[str, Any]) -> Any:
    """What the plugin sent about OpenCode's permission config (None: nothing)."""
    return obj.get("permission_config")
