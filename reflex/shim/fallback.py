"""The safety plane's verdict on a hook payload, for the shim and the daemon alike.

The evidence plane (rewrites, digests, reflexes) needs the daemon and simply
stands aside when the shim answers alone; a secret read or an out-of-root
delete is denied exactly as the daemon would deny it, and a recursive read is
sent through `ctx run` (`--raw` unless it is one plain search, which ctx digests; or a
Grep given secret-excluding globs) exactly
as the daemon would send it, because both call `verdict` and `safety_answer`
here on the same bytes with the same environment.

The verdict is a function of the tool call (tool_name, tool_input), its cwd,
and the hook process's environment as captured by `hook_env` (project dir,
HOME, TMPDIR, working directory, config file), which the shim sends along to
the daemon: the daemon was started by another process, elsewhere.
Nothing else in the payload counts: a missing session_id, a cwd that is a
number, a NaN permission_mode, a 50,000-deep array or an undecodable byte in
another field changes what the daemon records, never whether `cat .env` runs.
A payload that cannot be read far enough to see the tool call it describes
(cut by the size cap or the parser's budget inside tool_input) is denied as
unverifiable rather than let through.

stdlib-only.
"""

import os

from reflex.harness.claude import payload

# Longer environment values are dropped (on both sides: they bound the frame header).
ENV_VALUE_MAX = 4096
ENV_FIELDS = (("pdir", "CLAUDE_PROJECT_DIR"), ("home", "HOME"), ("tmpdir", "TMPDIR"))


def hook_env(environ=None, cwd=None, config=None):
    """The hook process's view of what decisions depend on: {pdir, home, tmpdir, pcwd, cfg}
    (cfg: the config file whose safety_allow applies, as this process resolves it)."""
    env = os.environ if environ is None else environ
    out = {}
    if config is None:
        from reflex import paths
        config = paths.resolve(env).config
    out["cfg"] = config
    for key, name in ENV_FIELDS:
        value = env.get(name)
        if value:
            out[key] = value
    if "home" not in out:
        out["home"] = os.path.expanduser("~")
    try:
        out["pcwd"] = cwd if cwd is not None else os.getcwd()
    except OSError:  # the working directory was removed
        pass
    return {k: v for k, v in out.items() if isinstance(v, str) and v and len(v) <= ENV_VALUE_MAX}


def env_from_header(hdr):
    """The hook_env a shim sent in its frame header (keys it did not send stay absent)."""
    return {key: hdr[key] for key in ("pdir", "home", "tmpdir", "pcwd", "cfg")
            if isinstance(hdr.get(key), str) and hdr[key] and len(hdr[key]) <= ENV_VALUE_MAX}


def decide(harness, data, truncated, env=None, event=""):
    """The shim's answer when the daemon cannot give one -> (stdout, stderr, local decision tag)."""
    env = hook_env() if env is None else env
    if harness != "claude":
        # Other harnesses: their payload translated to Claude's shape, judged here (reflex/harness).
        from reflex.harness import codecs, fallback as harness_fallback
        if codecs.get(harness) is not None:
            return harness_fallback.decide(harness, data, truncated, env, event, verdict=verdict,
                                           safety_answer=safety_answer)
    reading = payload.read(data, truncated)
    v = verdict(harness, reading, env)
    answer = safety_answer(reading.obj, v, env) if v is not None else None
    if answer is not None:
        from reflex.harness.claude import answers as claude_answers  # lazily: hook_env is on the shim's fast path, json is not
        return claude_answers.dumps(answer).encode(), b"", "redact" if v.rule == "secret-redact" else "deny"
    if reading.problem is not None:
        return b"", ("ctx hook: ignored malformed payload: %s\n" % reading.problem).encode(), "malformed"
    return b"", b"", "none"


def verdict(harness, reading, env):
    """The safety plane's verdict for a payload (a payload.Reading): a safety.Denial, a
    safety.Redact (a recursive read: run it with secret values redacted), or None.  Never raises."""
    try:
        return _verdict(harness, reading, env)
    except Exception:  # noqa: BLE001 - a broken rule must not take the hook down
        return None


def _verdict(harness, reading, env):
    obj = reading.obj
    if harness != "claude" or obj is None or obj.get("hook_event_name") != "PreToolUse":
        return None
    found = safety_verdict(obj, env)
    if found is not None or reading.complete:
        return found
    from reflex.safety import plane as safety
    tool = obj.get("tool_name")
    tool_input = obj.get("tool_input")
    if isinstance(tool, str) and tool not in safety.CHECKED_TOOLS:
        return None
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        unseen = True
    else:
        # A tool input cut short may still hold what the check reads (a Write's file_path
        # comes before its content); only a field the cut may have swallowed is unseen.
        unseen = reading.open_keys[:1] == ("tool_input",) and any(
            k not in tool_input for k in safety.DECISIVE_FIELDS.get(tool, ()))
    if unseen:
        return safety.unverifiable(tool if isinstance(tool, str) else None, reading.problem.code)
    return None


def safety_denial(obj, env):
    """The safety plane's Denial for a decoded PreToolUse payload under hook_env `env`, or None."""
    from reflex.safety import plane as safety
    v = safety_verdict(obj, env)
    return v if isinstance(v, safety.Denial) else None


def safety_verdict(obj, env):
    """The safety plane's verdict (Denial, Redact or None) for a decoded PreToolUse payload."""
    from reflex import project
    from reflex.safety import plane as safety
    tool = obj.get("tool_name")
    tool_input = obj.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return None
    cwd = call_cwd(obj, env)
    cfg = _config(env.get("cfg"))
    # With the http transport, `ctx install` wrote the token into these settings files.
    tokens = tuple(f for f in cfg.get("installed_settings") or () if isinstance(f, str)) \
        if cfg.get("http_port") else ()
    policy = safety.SafetyPolicy(project_root=project.project_root(cwd, _project_env(env)) if cwd else None,
                                 home=env.get("home") or "",
                                 tmp_dirs=safety.tmp_dirs_for(env.get("tmpdir")),
                                 allow=safety.allow_list(env.get("cfg")),
                                 ctx_home=os.path.dirname(env["cfg"]) if env.get("cfg") else None,
                                 token_files=tokens)
    return safety.assess_tool(tool, tool_input, cwd, policy)


def safety_answer(obj, found, env):
    """The hook answer for a safety verdict (None: no answer), built the same in the shim and
    the daemon.

    A Denial denies.  A Redact of a Grep call keeps Claude Code's own permission flow with
    secret-excluding globs.  A Redact of a Bash command rewrites it to
    `<ctx> run --raw -- <command>` and never changes whether it runs (docs/permissions.md):
    settings rules only, read the same way on both sides — a deny rule means no rewrite (the
    harness's deny applies), an ask rule "ask", an allow rule "allow"; with no rule, "allow"
    only when every command in it only reads (which Claude Code itself lets run), else no
    decision and the harness asks as it would.
    """
    from reflex import project
    from reflex.harness.claude import answers as claude_answers
    from reflex.harness.claude import permissions
    from reflex.safety import plane as safety
    if found is None or not isinstance(obj, dict):
        return None
    if isinstance(found, safety.Denial):
        return claude_answers.deny(found.reason)
    if found.tool_input is not None:
        return claude_answers.update(found.tool_input, None, found.reason)
    tool_input = obj.get("tool_input") or {}
    command = tool_input.get("command")
    if not isinstance(command, str):
        return None
    cwd = call_cwd(obj, env)
    pdir = env.get("pdir") or (project.project_root(cwd, _project_env(env)) if cwd else None)
    mode = obj.get("permission_mode") if isinstance(obj.get("permission_mode"), str) else None
    pctx = permissions.gather(project_dir=pdir, home=env.get("home") or "", payload_mode=mode)
    rule = permissions.verdict(command, pctx)
    if rule.kind == "deny":
        return None
    permission = {"allow": "allow", "ask": "ask"}.get(rule.kind) or ("allow" if found.read_only else None)
    cfg = _config(env.get("cfg"))
    if cfg.get("rewrite_permission") == "allow":
        permission = "allow"
    import shlex
    from reflex import config
    launcher = cfg.get("launcher") or config.default_launcher()
    form = "run --" if is_plain_search(command) else "run --raw --"
    new = "%s %s %s" % (shlex.quote(launcher), form, shlex.quote(command))
    return claude_answers.rewrite(tool_input, new, permission, found.reason)


_SEARCH_TOOLS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
_SHELL_SYNTAX = frozenset("|&;<>()$`\\\n{}")


def is_plain_search(command):
    """Whether a recursive read is one search and nothing else (`grep -rn X .`, `rg X src`,
    `git grep X`): then `ctx run --` digests it with the search profile (issue 29) while
    redacting exactly as `ctx run --raw --` would; anything else keeps the whole-output form.
    Read from the text alone, the same way in the shim and in the daemon."""
    if any(c in _SHELL_SYNTAX for c in command):
        return False
    import shlex
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]  # LC_ALL=C grep …
    if not words:
        return False
    if words[0] == "git":
        return len(words) > 1 and words[1] == "grep"
    return os.path.basename(words[0]) in _SEARCH_TOOLS


def call_cwd(obj, env):
    """The call's working directory: the payload's when it names one, else the hook process's.

    Never this process's own cwd: the daemon runs somewhere else entirely."""
    cwd = obj.get("cwd")
    base = env.get("pcwd")
    if isinstance(cwd, str) and cwd:
        if cwd.startswith("/"):
            return cwd
        return os.path.join(base, cwd) if base else None
    return base


def _project_env(env):
    return {"CLAUDE_PROJECT_DIR": env["pdir"]} if env.get("pdir") else {}


_config_cache = {}


def _config(path=None):
    """ctx's config at `path` (the hook's, which the daemon is told), cached by mtime; {} without
    a file, so the shim imports no json for it."""
    from reflex import paths
    path = path or paths.resolve().config
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return {}
    hit = _config_cache.get(path)
    if hit is None or hit[0] != stamp:
        from reflex import config
        hit = _config_cache[path] = (stamp, config.load(path))
    return hit[1]
