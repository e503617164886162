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
                                 allow=allow_list())
    return safety.check_tool(tool, tool_input, cwd, policy)


_allow_cache = {}


def allow_list():
    """The user's `safety_allow` patterns from ctx's config, read here for both the shim and
    the daemon so their decisions stay identical (cached by the file's mtime)."""
    from . import config, paths
    path = paths.resolve().config
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return ()
    hit = _allow_cache.get(path)
    if hit is None or hit[0] != stamp:
        patterns = config.load(path).get("safety_allow") or ()
        hit = _allow_cache[path] = (stamp, tuple(p for p in patterns if isinstance(p, str) and p))
    return hit[1]
