"""`ctx install --harness NAME`: ctx's hook entries in each harness's own config.

Same rules as the Claude installer (reflex/install.py, whose file handling this reuses): our
entries are recognised by their command and replaced, never duplicated; entries that are not ours
are never touched; the file is backed up before a change and written atomically; a file that is
not valid JSON is refused.

Where each harness reads hooks (user scope / project scope):

    codex    $CODEX_HOME/hooks.json (CODEX_HOME defaults to ~/.codex) / <project>/.codex/hooks.json
    gemini   $GEMINI_CLI_HOME/.gemini/settings.json (GEMINI_CLI_HOME defaults to ~) /
             <project>/.gemini/settings.json
    copilot  $COPILOT_HOME/hooks/ctx.json (COPILOT_HOME defaults to ~/.copilot) /
             <project>/.github/hooks/ctx.json   (a file of ctx's own)
    qwen     ~/.qwen/settings.json / <project>/.qwen/settings.json
    droid    ~/.factory/settings.json / <project>/.factory/settings.json
    cursor   ~/.cursor/hooks.json / <project>/.cursor/hooks.json (fail-open; a failClosed set on ctx's
             entries is kept)
    opencode the plugin file $XDG_CONFIG_HOME/opencode/plugins/ctx.js (XDG_CONFIG_HOME defaults
             to ~/.config) / <project>/.opencode/plugins/ctx.js (a file of ctx's own); with
             --settings FILE, FILE is an opencode.json whose `plugin` list gets the plugin's file://
             URL (the plugin then lives in ctx's home; no plugin directory is created, which spares
             OpenCode's background npm install of its plugin SDK that a plugin directory triggers)

Each gets the pre and post hooks of its shell tool and a session-start hook, which starts the
daemon so the session's first command is handled (the shim waits for a cold daemon only there),
plus session end where the harness has one.  Timeouts are in the harness's unit.

Codex runs a hook only after the user trusted it (Codex stores a hash of each trusted hook in
config.toml under `hooks.state`); there is no supported way to trust hooks from outside Codex, so
`install` prints the step (`/hooks` in Codex) and `ctx doctor` checks for it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import Any

from reflex import config as config_mod
from reflex.install import InstallError, load_settings, strip_handlers, write_settings

HARNESSES = ("codex", "gemini", "copilot", "qwen", "opencode", "droid", "cursor")
_SETTINGS_DIR = {"qwen": ".qwen", "droid": ".factory"}
_FLAT = ("copilot", "cursor")  # events list their handlers directly, in a file with a "version"
PLUGIN_MARKER = "ctx-plugin marker"
TOOL_TIMEOUT_S = 5
SESSION_TIMEOUT_S = 10
CODEX_TRUST_STEP = ("Codex runs a hook only once you trust it: start `codex`, type /hooks, and trust the ctx "
                    "hooks (PreToolUse, PostToolUse, SessionStart). Automation that vets its hooks can pass "
                    "--dangerously-bypass-hook-trust instead.")


def config_path(harness: str, scope: str, project_dir: str | None = None,
                environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    project = project_dir or os.getcwd()
    if scope not in ("user", "project"):
        raise InstallError("scope must be user or project, not %r" % scope)
    if harness == "codex":
        base = env.get("CODEX_HOME") or os.path.join(home, ".codex")
        return os.path.join(base, "hooks.json") if scope == "user" else os.path.join(project, ".codex", "hooks.json")
    if harness == "gemini":
        base = env.get("GEMINI_CLI_HOME") or home
        return os.path.join(base if scope == "user" else project, ".gemini", "settings.json")
    if harness == "copilot":
        base = env.get("COPILOT_HOME") or os.path.join(home, ".copilot")
        return os.path.join(base, "hooks", "ctx.json") if scope == "user" else \
            os.path.join(project, ".github", "hooks", "ctx.json")
    if harness in _SETTINGS_DIR:
        return os.path.join(home if scope == "user" else project, _SETTINGS_DIR[harness], "settings.json")
    if harness == "cursor":
        return os.path.join(home if scope == "user" else project, ".cursor", "hooks.json")
    if harness == "opencode":
        base = os.path.join(env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "opencode") \
            if scope == "user" else os.path.join(project, ".opencode")
        return os.path.join(base, "plugins", "ctx.js")
    raise InstallError("unknown harness %r (one of: claude, %s)" % (harness, ", ".join(HARNESSES)))


def hook_command(launcher: str, harness: str, event: str | None = None, portable: bool = False) -> str:
    tail = "hook %s%s" % (harness, " " + event if event else "")
    if portable:
        # Shared (project) files: whoever has no ctx on PATH gets a silent no-op (Cursor's
        # failClosed hook needs its "{}" for that).
        noop = "{ echo '{}'; exit 0; }" if harness == "cursor" else "exit 0"
        return "command -v ctx >/dev/null 2>&1 || %s; exec ctx %s" % (noop, tail)
    return "%s %s" % (shlex.quote(launcher), tail)


def is_ours(handler: Any, harness: str) -> bool:
    if not isinstance(handler, dict):
        return False
    cmd = str(handler.get("command") or handler.get("bash") or "").strip()
    if cmd.startswith("command -v ctx ") and (" ctx hook %s" % harness) in cmd:
        return True
    parts = cmd.split()
    return len(parts) >= 3 and os.path.basename(parts[0].strip("'\"")) == "ctx" and parts[1:3] == ["hook", harness]


def entries(harness: str, launcher: str, portable: bool = False) -> dict[str, list[dict[str, Any]]]:
    """{event: [group]} in the harness's own format."""
    def cmd(event: str | None = None) -> str:
        return hook_command(launcher, harness, event, portable)
    if harness == "codex":
        tool = {"type": "command", "command": cmd(), "timeout": TOOL_TIMEOUT_S}
        return {"PreToolUse": [{"matcher": "Bash", "hooks": [tool]}],
                "PostToolUse": [{"matcher": "Bash", "hooks": [tool]}],
                "SessionStart": [{"hooks": [dict(tool, timeout=SESSION_TIMEOUT_S)]}]}
    if harness == "gemini":
        def h(name: str, timeout_s: int) -> dict[str, Any]:
            return {"name": name, "type": "command", "command": cmd(), "timeout": timeout_s * 1000}
        from reflex.harness.gemini import PRE_MATCHER
        return {"BeforeTool": [{"matcher": PRE_MATCHER, "hooks": [h("ctx-pre", TOOL_TIMEOUT_S)]}],
                "AfterTool": [{"matcher": "run_shell_command", "hooks": [h("ctx-post", TOOL_TIMEOUT_S)]}],
                "SessionStart": [{"hooks": [h("ctx-session-start", SESSION_TIMEOUT_S)]}],
                "SessionEnd": [{"hooks": [h("ctx-session-end", TOOL_TIMEOUT_S)]}]}
    if harness == "copilot":
        def c(event: str, timeout_s: int) -> list[dict[str, Any]]:
            return [{"type": "command", "bash": cmd(event), "timeoutSec": timeout_s}]
        return {"preToolUse": c("preToolUse", TOOL_TIMEOUT_S), "postToolUse": c("postToolUse", TOOL_TIMEOUT_S),
                "sessionStart": c("sessionStart", SESSION_TIMEOUT_S), "sessionEnd": c("sessionEnd", TOOL_TIMEOUT_S)}
    if harness in _SETTINGS_DIR:  # Claude-shaped groups (Qwen: ms timeouts, Droid: seconds)
        from reflex.harness.codecs import get
        codec = get(harness)
        assert codec is not None
        scale = 1000 if codec.CAPS.timeout_unit == "ms" else 1

        def group(timeout_s: int, matcher: str | None = None) -> list[dict[str, Any]]:
            g: dict[str, Any] = {"hooks": [{"type": "command", "command": cmd(), "timeout": timeout_s * scale}]}
            if matcher:
                g["matcher"] = matcher
            return [g]
        out = {"PreToolUse": group(TOOL_TIMEOUT_S, codec.PRE_MATCHER),
               "PostToolUse": group(TOOL_TIMEOUT_S, codec.CAPS.shell_tool),
               "SessionStart": group(SESSION_TIMEOUT_S), "SessionEnd": group(TOOL_TIMEOUT_S)}
        if harness == "qwen":
            out["PostToolUseFailure"] = group(TOOL_TIMEOUT_S, codec.CAPS.shell_tool)
        return out
    if harness == "cursor":
        from reflex.harness.cursor import PRE_MATCHER as CURSOR_PRE
        # Fail-open like Cursor's default: ctx's own failure (a deleted launcher, a broken
        # Python) must not block the agent.  A user or admin may set failClosed on ctx's entries;
        # re-installing keeps it (merged), and the shim then still answers "{}" on every path.
        return {"preToolUse": [{"command": cmd(), "matcher": CURSOR_PRE, "timeout": TOOL_TIMEOUT_S}],
                "postToolUse": [{"command": cmd(), "matcher": "Shell", "timeout": TOOL_TIMEOUT_S}],
                "sessionStart": [{"command": cmd(), "timeout": SESSION_TIMEOUT_S}],
                "sessionEnd": [{"command": cmd(), "timeout": TOOL_TIMEOUT_S}]}
    raise InstallError("unknown harness %r" % harness)


def plugin_source(launcher: str) -> str:
    """ctx's OpenCode plugin, with the command it runs (the launcher, or `ctx` on PATH)."""
    from importlib.resources import files
    from reflex.harness.opencode import PLUGIN_RESOURCE
    text = files("reflex").joinpath(PLUGIN_RESOURCE).read_text(encoding="utf-8")
    return text.replace("__CTX_LAUNCHER__", launcher.replace("\\", "\\\\").replace('"', '\\"'))


def plugin_path(paths: Any) -> str:
    """Where `--settings opencode.json` installs keep the plugin: ctx's own home."""
    return os.path.join(os.path.dirname(os.path.abspath(paths.config)), "opencode", "ctx-plugin.js")


def _is_plugin_file(target: str) -> bool:
    return target.endswith(".js")


def _install_plugin(paths: Any, target: str, launcher: str, portable: bool, dry_run: bool
                    ) -> tuple[dict[str, Any], bool, str | None]:
    """OpenCode: the plugin file itself (a plugin directory), or its URL in an opencode.json."""
    source = plugin_source("ctx" if portable else launcher)
    if _is_plugin_file(target):
        current = _read(target)
        if current is not None and PLUGIN_MARKER not in current:
            raise InstallError("%s exists and is not ctx's plugin; not overwritten" % target)
        changed = current != source
        if changed and not dry_run:
            _write_text(target, source)
        if not dry_run:
            _remember(paths, "opencode", target, add=True, launcher=launcher)
        return {"plugin": target}, changed, None
    plugin = plugin_path(paths)
    if not dry_run and _read(plugin) != source:
        _write_text(plugin, source)
    current, text = load_settings(target)
    new = _without_plugin(current)
    new["plugin"] = list(new.get("plugin") or []) + ["file://" + plugin]
    return _apply(paths, "opencode", target, current, new, text, dry_run, add=True, launcher=launcher)


def _without_plugin(settings: dict[str, Any]) -> dict[str, Any]:
    out = dict(settings)
    plugins = out.get("plugin")
    if isinstance(plugins, list):
        kept = [p for p in plugins if not (isinstance(p, str) and p.endswith("/opencode/ctx-plugin.js"))]
        if kept:
            out["plugin"] = kept
        else:
            del out["plugin"]
    return out


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _write_text(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def strip_ours(settings: dict[str, Any], harness: str) -> dict[str, Any]:
    out: dict[str, Any] = strip_handlers(settings, lambda h: is_ours(h, harness), flat=harness in _FLAT)
    if harness == "copilot" and set(out) <= {"version"}:
        return {}
    return out


def merged(settings: dict[str, Any], harness: str, launcher: str, portable: bool) -> dict[str, Any]:
    kept = _fail_closed_events(settings, harness)
    out = strip_ours(settings, harness)
    if harness in _FLAT:
        out.setdefault("version", 1)
    hooks = out.setdefault("hooks", {})
    for event, groups in entries(harness, launcher, portable).items():
        if event in kept:
            groups = [dict(g, failClosed=True) for g in groups]
        hooks.setdefault(event, []).extend(groups)
    return out


def _fail_closed_events(settings: dict[str, Any], harness: str) -> set[str]:
    """Cursor events whose ctx entry the user set failClosed on (kept across re-installs)."""
    if harness != "cursor" or not isinstance(settings.get("hooks"), dict):
        return set()
    return {event for event, handlers in settings["hooks"].items() if isinstance(handlers, list)
            and any(is_ours(h, harness) and h.get("failClosed") is True for h in handlers)}


def install(paths: Any, harness: str, target: str, *, launcher: str, portable: bool = False,
            dry_run: bool = False) -> tuple[dict[str, Any], bool, str | None]:
    if harness == "opencode":
        return _install_plugin(paths, target, launcher, portable, dry_run)
    current, text = load_settings(target)
    new = merged(current, harness, launcher, portable)
    return _apply(paths, harness, target, current, new, text, dry_run, add=True, launcher=launcher)


def uninstall(paths: Any, harness: str, target: str, *, dry_run: bool = False) -> tuple[dict, bool, str | None]:
    if harness == "opencode" and _is_plugin_file(target):
        current_text = _read(target)
        ours = current_text is not None and PLUGIN_MARKER in current_text
        if ours and not dry_run:
            os.unlink(target)
            _remember(paths, harness, target, add=False)
        return {}, ours, None
    if harness == "opencode":
        current, text = load_settings(target)
        return _apply(paths, harness, target, current, _without_plugin(current), text, dry_run, add=False)
    current, text = load_settings(target)
    new = strip_ours(current, harness)
    if harness == "copilot" and not new and current and not dry_run:
        # ctx's own file: nothing else lives there; remove it (after a backup).
        backup = write_settings(target, {}, text)
        os.unlink(target)
        _remember(paths, harness, target, add=False)
        return new, True, backup
    return _apply(paths, harness, target, current, new, text, dry_run, add=False)


def _apply(paths, harness, target, current, new, text, dry_run, *, add, launcher=None):  # noqa: ANN001
    changed = new != current
    backup = None
    if not dry_run:
        from reflex.install import require_valid_config
        require_valid_config(paths)
        if changed:
            backup = write_settings(target, new, text)
        _remember(paths, harness, target, add=add, launcher=launcher)
    return new, changed, backup


def _remember(paths: Any, harness: str, target: str, *, add: bool, launcher: str | None = None) -> None:
    cfg = config_mod.load(paths.config)
    installed = cfg.get("installed_harnesses") if isinstance(cfg.get("installed_harnesses"), dict) else {}
    files = [f for f in installed.get(harness) or [] if f != os.path.abspath(target)]
    if add:
        files.append(os.path.abspath(target))
        if launcher:
            cfg["launcher"] = launcher
    installed[harness] = files
    cfg["installed_harnesses"] = {k: v for k, v in installed.items() if v}
    config_mod.save(paths.config, cfg)
