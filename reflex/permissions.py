"""Reading the user's own Bash permission rules, so a rewrite never widens them.

A PreToolUse "allow" skips Claude Code's permission prompt.  Answering "allow"
for a rewritten command is only honest when the user's rules would have allowed
the ORIGINAL command; when they would have asked, we ask; when a deny rule
matches, we do not rewrite at all and let Claude Code's own deny apply.  Order:
deny > ask > allow > (no rule).

Rules come from the settings files Claude Code merges: ~/.claude/settings.json,
<project>/.claude/settings.json, <project>/.claude/settings.local.json, plus any
file `ctx install --settings FILE` wrote to (recorded in ctx's config), since a
`--settings` file passed on Claude Code's command line is invisible to hooks.
Rule syntax: `Bash` or `Bash(*)` (everything), `Bash(npm test)` (exact),
`Bash(pytest:*)` / `Bash(pytest *)` (prefix), other globs via fnmatch.
"""

import fnmatch
import json
import os

ALLOW, ASK, DENY, NONE = "allow", "ask", "deny", None


def settings_files(project_root, home, extra=()):
    files = [os.path.join(home, ".claude", "settings.json")]
    if project_root:
        files += [os.path.join(project_root, ".claude", "settings.json"),
                  os.path.join(project_root, ".claude", "settings.local.json")]
    files += list(extra)
    return files


def load_rules(files):
    """{'allow': [...], 'ask': [...], 'deny': [...]} of Bash rule bodies."""
    rules = {"allow": [], "ask": [], "deny": []}
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        perms = data.get("permissions") if isinstance(data, dict) else None
        if not isinstance(perms, dict):
            continue
        for kind in rules:
            for rule in perms.get(kind) or ():
                body = _bash_body(rule)
                if body is not None:
                    rules[kind].append(body)
    return rules


def _bash_body(rule):
    if not isinstance(rule, str):
        return None
    rule = rule.strip()
    if rule == "Bash":
        return "*"
    if rule.startswith("Bash(") and rule.endswith(")"):
        return rule[5:-1].strip() or "*"
    return None


def _matches(body, command):
    command = " ".join(command.split())
    if body in ("*", ":*"):
        return True
    if body.endswith(":*"):
        prefix = body[:-2].strip()
        return command == prefix or command.startswith(prefix + " ")
    if any(ch in body for ch in "*?["):
        return fnmatch.fnmatchcase(command, body)
    return command == " ".join(body.split())


def verdict(command, rules, permission_mode=None):
    """What the user's rules say about `command`: allow, ask, deny or None."""
    for kind in ("deny", "ask", "allow"):
        if any(_matches(b, command) for b in rules[kind]):
            return kind
    if permission_mode in ("bypassPermissions",):
        return ALLOW
    return NONE
