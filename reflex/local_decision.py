"""What the shim answers when the daemon cannot: the safety plane only.

The evidence plane (rewrites, digests, reflexes) needs the daemon and simply
stands aside; a secret read or an out-of-root delete is denied exactly as the
daemon would deny it, because both go through reflex.safety and
reflex.claude_answers.  stdlib-only.
"""

import os

from . import claude_answers, payload


def decide(harness, data, truncated):
    """-> (stdout bytes, stderr bytes, local decision tag)."""
    try:
        obj = payload.decode(data, truncated)
    except payload.Malformed as e:
        return b"", ("ctx hook: ignored malformed payload: %s\n" % e).encode(), "malformed"
    if harness != "claude" or obj.get("hook_event_name") != "PreToolUse":
        return b"", b"", "none"
    denial = safety_denial(obj)
    if denial is None:
        return b"", b"", "none"
    return claude_answers.dumps(claude_answers.deny(denial.reason)).encode(), b"", "deny"


def safety_denial(obj, environ=None):
    """The safety plane's verdict for a PreToolUse payload (shared with the daemon)."""
    from . import project, safety
    env = os.environ if environ is None else environ
    cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else os.getcwd()
    tool = obj.get("tool_name")
    tool_input = obj.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return None
    policy = safety.SafetyPolicy(project_root=project.project_root(cwd, env),
                                 home=env.get("HOME") or os.path.expanduser("~"),
                                 allow=_allow_list(env))
    return safety.check_tool(tool, tool_input, cwd, policy)


def _allow_list(env):
    raw = env.get("CTX_SAFETY_ALLOW", "")
    return tuple(p for p in raw.split(os.pathsep) if p)
