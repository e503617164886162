"""Merging ctx's hook entries into Claude Code settings, and taking them out.

Rules (each learned from a peer's bug report):
- idempotent: our entries are recognised by their command/URL and replaced,
  never duplicated; entries that are not ours are never touched;
- the file is backed up before any change and written atomically, keeping its
  mode; a settings file that is not valid JSON is refused, not overwritten;
- explicit small timeouts (seconds, not milliseconds);
- PostToolUse AND PostToolUseFailure: non-zero Bash exits arrive only on the
  latter;
- SessionStart is always a command hook, even with the http transport: it is
  what starts the daemon when a session begins.
"""

import json
import os
import secrets
import shutil
import time

from reflex import protocol
from reflex import config as config_mod
from reflex.errors import UserError

PRE_MATCHER = "Bash|Read|Grep|Glob|Edit|MultiEdit|Write|NotebookEdit"
# PostToolUse: Bash (digests of held-back commands), Read (an unchanged re-read answered with a
# pointer, docs/reads.md) and Grep (a large result answered with its search digest,
# docs/harnesses.md).  A failed Read or Grep has nothing to replace, so the failure hook stays Bash.
POST_MATCHER = "Bash|Read|Grep"
POST_FAILURE_MATCHER = "Bash"
TOOL_TIMEOUT_S = 5
SESSION_TIMEOUT_S = 5
EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "SessionEnd")


class InstallError(UserError):
    pass


def settings_path(scope, project_dir=None, home=None, transport="command"):
    """The settings file a scope's hooks go to.  With the http transport the hooks carry ctx's
    bearer token, so a project's go to `.claude/settings.local.json` (personal: Claude Code
    keeps it out of git), never to the `.claude/settings.json` a team commits."""
    home = home or os.path.expanduser("~")
    if scope == "user":
        return os.path.join(home, ".claude", "settings.json")
    if scope == "project":
        name = "settings.local.json" if transport == "http" else "settings.json"
        return os.path.join(project_dir or os.getcwd(), ".claude", name)
    raise InstallError("scope must be user or project, not %r" % scope)


def holds_token(text, token):
    """Whether settings text holds ctx's HTTP token (a file that must stay private)."""
    return bool(token) and isinstance(text, str) and token in text


# Project settings are usually committed: their hook must work for the user who installed it,
# for every teammate who has ctx (their own launcher, written by `ctx install`, or ctx on PATH:
# pipx, uv tool, an activated venv), and do nothing, silently and successfully, for one who has
# not.  So it names no per-user absolute path: the launcher is found where each user's ctx puts
# it (reflex.paths.resolve: $CTX_HOME, else $XDG_DATA_HOME/ctx, else ~/.local/share/ctx, then
# bin/ctx), and PATH is tried after it.  The first form (PATH only) left the installing user
# with no-op hooks whenever the venv holding ctx was not on PATH (issue 30).
PORTABLE_COMMAND = ('L="${CTX_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/ctx}/bin/ctx"; '
                    '[ -x "$L" ] && exec "$L" hook claude; '
                    'command -v ctx >/dev/null 2>&1 && exec ctx hook claude; exit 0')
# Earlier portable forms: still ours (uninstall removes them, install replaces them).
LEGACY_PORTABLE_COMMANDS = ("command -v ctx >/dev/null 2>&1 || exit 0; exec ctx hook claude",)


def is_ours(handler):
    if not isinstance(handler, dict):
        return False
    if handler.get("type") == "command":
        cmd = str(handler.get("command", "")).strip()
        if cmd == PORTABLE_COMMAND or cmd in LEGACY_PORTABLE_COMMANDS:
            return True
        parts = cmd.split()
        return len(parts) >= 3 and os.path.basename(parts[0].strip("'\"")) == "ctx" \
            and parts[-2:] == ["hook", "claude"]
    if handler.get("type") == "http":
        url = str(handler.get("url", ""))
        return url.startswith("http://127.0.0.1:") and url.endswith("/hook/claude")
    return False


def hook_entries(launcher, transport="command", port=None, token=None, portable=False):
    """{event: [matcher group]} for our hooks (`portable`: the PATH-resolved command, for shared files)."""
    cmd = {"type": "command", "command": PORTABLE_COMMAND if portable else "%s hook claude" % _quote(launcher)}

    def command_handler(timeout):
        return dict(cmd, timeout=timeout)

    def tool_handler():
        if transport == "http":
            return {"type": "http", "url": "http://127.0.0.1:%d/hook/claude" % port,
                    "headers": {"Authorization": "Bearer %s" % token}, "timeout": TOOL_TIMEOUT_S}
        return command_handler(TOOL_TIMEOUT_S)

    return {
        "PreToolUse": [{"matcher": PRE_MATCHER, "hooks": [tool_handler()]}],
        "PostToolUse": [{"matcher": POST_MATCHER, "hooks": [tool_handler()]}],
        "PostToolUseFailure": [{"matcher": POST_FAILURE_MATCHER, "hooks": [tool_handler()]}],
        "SessionStart": [{"hooks": [command_handler(SESSION_TIMEOUT_S)]}],
        "SessionEnd": [{"hooks": [tool_handler() if transport == "http" else command_handler(SESSION_TIMEOUT_S)]}],
    }


# The call the probe makes: a secret read the safety plane denies with the daemon up or down,
# so an empty answer can only mean the hook never reached ctx.
PROBE_COMMAND = "cat .env"
PROBE_SESSION = protocol.PROBE_SESSION
PROBE_TIMEOUT_S = 20


def probe_hook(command, cwd, env=None, timeout=PROBE_TIMEOUT_S):
    """Run an installed hook command as Claude Code does (`sh -c`, this environment, so this
    PATH; a PreToolUse payload for `cat .env` on stdin) -> (ok, what it answered).

    ok: the answer is the safety plane's deny.  The call reaches ctx like any other, and the
    daemon answers it without recording it (its session is protocol.PROBE_SESSION)."""
    import subprocess
    payload = json.dumps({"session_id": PROBE_SESSION, "hook_event_name": "PreToolUse", "cwd": cwd,
                          "permission_mode": "default", "tool_name": "Bash",
                          "tool_input": {"command": PROBE_COMMAND}, "tool_use_id": "ctx-doctor-probe"})
    try:
        p = subprocess.run(["/bin/sh", "-c", command], input=payload.encode(), capture_output=True, cwd=cwd,
                           env=os.environ if env is None else env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "the hook command did not answer `%s` within %ds" % (PROBE_COMMAND, timeout)
    except OSError as e:
        return False, "the hook command could not be run: %s" % e
    out = p.stdout.decode("utf-8", "replace").strip()
    err = p.stderr.decode("utf-8", "replace").strip()
    try:
        answer = json.loads(out) if out else None
    except ValueError:
        answer = None
    decision = ((answer or {}).get("hookSpecificOutput") or {}).get("permissionDecision") \
        if isinstance(answer, dict) else None
    if decision == "deny":
        return True, "answered `%s` with the safety plane's deny" % PROBE_COMMAND
    what = ("nothing" if not out else "%r" % out[:120]) + " (exit %d%s)" % (
        p.returncode, ", stderr: %s" % err[:200] if err else "")
    if not out and p.returncode == 0:
        what += ": it found no ctx (PATH=%s), so every hook does nothing, the safety plane included" % (
            (os.environ if env is None else env).get("PATH", ""))
    return False, "answered `%s` with %s" % (PROBE_COMMAND, what)


def probe_command(settings):
    """The command of our PreToolUse hook for Bash in `settings`, or None (none, or http)."""
    for group in ((settings.get("hooks") or {}).get("PreToolUse") or []):
        if not isinstance(group, dict) or "Bash" not in str(group.get("matcher") or "Bash").split("|"):
            continue
        for h in group.get("hooks") or []:
            if is_ours(h) and h.get("type") == "command":
                return str(h["command"])
    return None


def _quote(path):
    import shlex
    return shlex.quote(path)


def load_settings(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return {}, None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as e:
        raise InstallError("%s is not valid JSON (%s); fix it first, ctx will not overwrite it" % (path, e))
    if not isinstance(data, dict):
        raise InstallError("%s does not hold a JSON object" % path)
    return data, text


def strip_ours(settings):
    """A copy of settings without ctx's handlers; empty groups/events removed."""
    return strip_handlers(settings, is_ours)


def strip_handlers(settings, ours, flat=False):
    """A copy of a harness's settings without the handlers `ours` claims; groups and events
    left empty by that are removed, everything else stays as the user wrote it.  Settings
    hold {"hooks": {event: [group]}}, a group {"hooks": [handler]}; `flat`: the events list
    handlers directly (Copilot)."""
    out = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if flat:
                if not ours(group):
                    kept_groups.append(group)
                continue
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            handlers = [h for h in group["hooks"] if not ours(h)]
            if handlers:
                kept_groups.append(dict(group, hooks=handlers))
            elif not group["hooks"]:
                kept_groups.append(group)  # the user's own empty group: not ours to remove
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def merged(settings, entries):
    out = strip_ours(settings)
    hooks = out.setdefault("hooks", {})
    for event, groups in entries.items():
        hooks.setdefault(event, [])
        hooks[event].extend(groups)
    return out


def write_settings(path, data, original_text, private=False):
    """Write `data` to `path` atomically after a backup.  The backup is 0600 whatever the file's
    mode (it may hold the token an earlier http install wrote); `private`: the new content holds
    the token, so the file is made 0600 too."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    backup = None
    if original_text is not None:
        backup = "%s.ctx-backup-%s" % (path, time.strftime("%Y%m%d-%H%M%S"))
        n = 1
        while os.path.exists(backup):
            n += 1
            backup = "%s.ctx-backup-%s-%d" % (path, time.strftime("%Y%m%d-%H%M%S"), n)
        _private_copy(path, backup)
    mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o600
    if private:
        mode = 0o600
    tmp = "%s.ctx-tmp-%d" % (path, os.getpid())
    try:
        os.unlink(tmp)  # a leftover (or a planted link): never written through
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return backup


def _private_copy(src, dst):
    """Copy src to a new file dst created 0600 (never through a planted link), times kept."""
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out, open(src, "rb") as f:
        shutil.copyfileobj(f, out)
    shutil.copystat(src, dst)       # times; the mode it copies is put back to 0600 below
    os.chmod(dst, 0o600)


def ensure_token(paths):
    # Only a token file of ours is reused: one another user wrote is a token they know.
    from reflex.paths import ensure_private_dir, read_private_file
    existing = read_private_file(paths.http_token, 4096)
    tok = existing.decode("utf-8", "replace").strip() if existing else ""
    if tok:
        return tok
    tok = secrets.token_urlsafe(24)
    ensure_private_dir(paths.home)
    try:
        os.unlink(paths.http_token)
    except FileNotFoundError:
        pass
    fd = os.open(paths.http_token, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(tok + "\n")
    return tok


def install(paths, settings_file, *, launcher, transport="command", port=None, dry_run=False, portable=False):
    """Merge our entries into settings_file.  Returns (new_settings, changed, backup)."""
    if transport not in ("command", "http"):
        raise InstallError("transport must be command or http")
    token = None
    if transport == "http":
        if not port:
            raise InstallError("the http transport needs --port")
        token = ensure_token(paths) if not dry_run else "<token>"
    current, text = load_settings(settings_file)
    new = merged(current, hook_entries(launcher, transport, port, token, portable))
    private = transport == "http" or holds_token(text, _current_token(paths))

    def remember(cfg, target):
        cfg["installed_settings"] = [f for f in cfg.get("installed_settings") or [] if f != target] + [target]
        cfg["launcher"] = launcher
        if transport == "http":
            cfg["http_port"] = int(port)
    return _apply(paths, settings_file, current, new, text, dry_run, remember, private)


def _current_token(paths):
    from reflex.paths import read_private_file
    data = read_private_file(paths.http_token, 4096)
    return data.decode("utf-8", "replace").strip() if data else ""


def _apply(paths, settings_file, current, new, text, dry_run, update_config, private=False):
    """Write `new` if it differs (after a backup) and record the file in ctx's config."""
    changed = new != current
    backup = None
    if not dry_run:
        require_valid_config(paths)
        if changed:
            backup = write_settings(settings_file, new, text, private)
        elif private and os.path.exists(settings_file):
            os.chmod(settings_file, 0o600)      # an unchanged file that holds the token
        cfg = config_mod.load(paths.config)
        update_config(cfg, os.path.abspath(settings_file))
        config_mod.save(paths.config, cfg)
    return new, changed, backup


def require_valid_config(paths):
    """Installing records the file in ctx's config.json: one that is broken would be rewritten with
    defaults (its other keys lost), so it is refused, naming the file and the key, first."""
    from reflex.config_model import ConfigInvalid, require_valid
    try:
        require_valid(paths.config)
    except ConfigInvalid as e:
        raise InstallError("%s; nothing was installed" % e) from None


def uninstall(paths, settings_file, *, dry_run=False):
    current, text = load_settings(settings_file)

    def forget(cfg, target):
        cfg["installed_settings"] = [f for f in cfg.get("installed_settings") or [] if f != target]
    return _apply(paths, settings_file, current, strip_ours(current), text, dry_run, forget,
                  holds_token(text, _current_token(paths)))
