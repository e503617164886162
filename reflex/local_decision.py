"""What the shim answers when the daemon cannot: the safety plane only.

The evidence plane (rewrites, digests, reflexes) needs the daemon and simply
stands aside; a secret read or an out-of-root delete is denied exactly as the
daemon would deny it, and a recursive read is sent through `ctx run --raw` (or a
Grep given secret-excluding globs) exactly as the daemon would send it, because
both build their answer here, through reflex.safety and reflex.claude_answers.
stdlib-only.
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
    verdict = safety_verdict(obj)
    answer = safety_answer(obj, verdict)
    if answer is None:
        return b"", b"", "none"
    tag = "deny" if verdict.rule != "secret-redact" else "redact"
    return claude_answers.dumps(answer).encode(), b"", tag


def safety_denial(obj, environ=None):
    """The safety plane's denial for a PreToolUse payload, or None."""
    from . import safety
    v = safety_verdict(obj, environ)
    return v if isinstance(v, safety.Denial) else None


def safety_verdict(obj, environ=None):
    """The safety plane's verdict for a PreToolUse payload (shared with the daemon):
    a safety.Denial, a safety.Redact, or None."""
    from . import safety
    policy, cwd = _policy(obj, environ)
    if policy is None:
        return None
    return safety.assess_tool(obj.get("tool_name"), obj.get("tool_input"), cwd, policy)


def _policy(obj, environ):
    from . import paths, project, safety
    env = os.environ if environ is None else environ
    cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else os.getcwd()
    if not isinstance(obj.get("tool_name"), str) or not isinstance(obj.get("tool_input"), dict):
        return None, cwd
    cfg = _config()
    # With the http transport, `ctx install` wrote the token into these settings files.
    tokens = tuple(cfg.get("installed_settings") or ()) if cfg.get("http_port") else ()
    return safety.SafetyPolicy(project_root=project.project_root(cwd, env),
                               home=env.get("HOME") or os.path.expanduser("~"),
                               allow=allow_list(), ctx_home=paths.resolve().home, token_files=tokens), cwd


def safety_answer(obj, verdict, environ=None):
    """The hook answer for a safety verdict (None: no answer), built the same in the shim and
    the daemon.

    A Redact of a Bash command rewrites it to `<ctx> run --raw -- <command>`. Its permission
    never widens the user's: a matching deny rule means no rewrite (Claude Code's deny
    applies), an ask rule means "ask", an allow rule "allow"; with no rule, "allow" only when
    every command in it only reads (which Claude Code itself lets run), else none is given and
    Claude Code asks as it would. `rewrite_permission` in ctx's config overrides, as for
    ctx's other rewrites. A Redact of a Grep call keeps Claude Code's own permission flow.
    """
    from . import safety
    if verdict is None:
        return None
    if isinstance(verdict, safety.Denial):
        return claude_answers.deny(verdict.reason)
    if verdict.tool_input is not None:
        return claude_answers.update(verdict.tool_input, None, verdict.reason)
    tool_input = obj.get("tool_input") or {}
    command = tool_input.get("command")
    if not isinstance(command, str):
        return None
    env = os.environ if environ is None else environ
    cfg = _config()
    from . import permissions, project
    cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else os.getcwd()
    root = project.project_root(cwd, env)
    files = permissions.settings_files(root, env.get("HOME") or os.path.expanduser("~"),
                                       cfg.get("installed_settings") or ())
    rule = permissions.verdict(command, permissions.load_rules(files), obj.get("permission_mode"))
    if rule == "deny":
        return None
    permission = rule or ("allow" if verdict.read_only else None)
    mode = cfg.get("rewrite_permission") or "auto"
    if mode != "auto":
        permission = None if mode == "omit" else mode
    import shlex
    from . import config
    launcher = cfg.get("launcher") or config.default_launcher()
    new = "%s run --raw -- %s" % (shlex.quote(launcher), shlex.quote(command))
    return claude_answers.rewrite(tool_input, new, permission, verdict.reason)


_config_cache = {}


def _config():
    """ctx's config (cached by mtime); {} without a file, so the shim imports no json for it."""
    from . import paths
    path = paths.resolve().config
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return {}
    hit = _config_cache.get(path)
    if hit is None or hit[0] != stamp:
        from . import config
        hit = _config_cache[path] = (stamp, config.load(path))
    return hit[1]


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
