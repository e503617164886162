"""`ctx install --harness codex|gemini|copilot`: ctx's hook entries in each harness's own config.

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

HARNESSES = ("codex", "gemini", "copilot")
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
    raise InstallError("unknown harness %r (one of: claude, %s)" % (harness, ", ".join(HARNESSES)))


def hook_command(launcher: str, harness: str, event: str | None = None, portable: bool = False) -> str:
    tail = "hook %s%s" % (harness, " " + event if event else "")
    if portable:
        # Shared (project) files: whoever has no ctx on PATH gets a silent no-op.
        return "command -v ctx >/dev/null 2>&1 || exit 0; exec ctx %s" % tail
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
    raise InstallError("unknown harness %r" % harness)


def strip_ours(settings: dict[str, Any], harness: str) -> dict[str, Any]:
    out: dict[str, Any] = strip_handlers(settings, lambda h: is_ours(h, harness), flat=harness == "copilot")
    if harness == "copilot" and set(out) <= {"version"}:
        return {}
    return out


def merged(settings: dict[str, Any], harness: str, launcher: str, portable: bool) -> dict[str, Any]:
    out = strip_ours(settings, harness)
    if harness == "copilot":
        out.setdefault("version", 1)
    hooks = out.setdefault("hooks", {})
    for event, groups in entries(harness, launcher, portable).items():
        hooks.setdefault(event, []).extend(groups)
    return out


def install(paths: Any, harness: str, target: str, *, launcher: str, portable: bool = False,
            dry_run: bool = False) -> tuple[dict[str, Any], bool, str | None]:
    current, text = load_settings(target)
    new = merged(current, harness, launcher, portable)
    return _apply(paths, harness, target, current, new, text, dry_run, add=True, launcher=launcher)


def uninstall(paths: Any, harness: str, target: str, *, dry_run: bool = False) -> tuple[dict, bool, str | None]:
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
