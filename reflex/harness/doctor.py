"""`ctx doctor` for every harness but Claude: each harness found on this machine, whether ctx's
hooks are in its config, and (Codex) whether Codex will run them.

A harness is "found" when its CLI is on PATH or its config directory exists.  Codex skips a hook
until the user trusted it; the trust is kept in $CODEX_HOME/config.toml under `hooks.state`
(one entry per hook, with a `trusted_hash` of the hook).  ctx cannot compute that hash the way
Codex does, so the check counts trusted entries for the hooks file and says how to trust them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import Any

from typing import NamedTuple

from reflex.harness import install as hinst
from reflex.install import InstallError, load_settings


class Check(NamedTuple):
    """One line of `ctx doctor` (reflex.doctor turns it into its own Check)."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None

_CONFIG_DIRS = {"codex": ("CODEX_HOME", ".codex"), "gemini": ("GEMINI_CLI_HOME", ".gemini"),
                "copilot": ("COPILOT_HOME", ".copilot"), "qwen": ("", ".qwen"), "droid": ("", ".factory"),
                "cursor": ("", ".cursor"), "opencode": ("XDG_CONFIG_HOME", os.path.join(".config", "opencode"))}
_BINARIES = {"cursor": "cursor-agent"}


def found(harness: str, environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    var, sub = _CONFIG_DIRS[harness]
    home = env.get("HOME") or os.path.expanduser("~")
    base = (var and env.get(var)) or os.path.join(home, sub)
    if harness in ("gemini", "opencode") and var and env.get(var):
        base = os.path.join(env[var], os.path.basename(sub))
    return shutil.which(_BINARIES.get(harness, harness), path=env.get("PATH")) is not None or os.path.isdir(base)


def checks(paths: Any, environ: Mapping[str, str] | None = None, cwd: str | None = None) -> list[Check]:
    out = []
    from reflex import config as config_mod
    installed = config_mod.load(paths.config).get("installed_harnesses") or {}
    for harness in hinst.HARNESSES:
        if not found(harness, environ) and not installed.get(harness):
            continue
        targets = [(scope, hinst.config_path(harness, scope, cwd, environ)) for scope in ("user", "project")]
        hooked = []
        for scope, target in targets:
            if harness == "opencode":  # a plugin file, not hook entries
                if os.path.isfile(target):
                    hooked.append(target)
                    out.append(Check(harness, True, "%s (%s): ctx's plugin installed" % (target, scope)))
                continue
            try:
                data, _ = load_settings(target)
            except InstallError as e:
                out.append(Check(harness, False, str(e), "fix the JSON in %s" % target))
                continue
            events = _our_events(data, harness)
            wanted = set(hinst.entries(harness, "ctx"))
            if events:
                missing = sorted(wanted - events)
                hooked.append(target)
                out.append(Check(harness, not missing, "%s (%s): %s" % (
                    target, scope, "all %d events hooked" % len(wanted) if not missing
                    else "missing %s" % ", ".join(missing)),
                    None if not missing else "re-run `ctx install --harness %s --scope %s`" % (harness, scope)))
        if not hooked:
            out.append(Check(harness, True, "found, but ctx's hooks are not installed",
                             "`ctx install --harness %s` to put ctx between %s and its shell" % (harness, harness)))
        elif harness == "codex":
            out.append(_codex_trust(hooked, environ))
    return out


def _our_events(data: dict[str, Any], harness: str) -> set[str]:
    events = set()
    for event, groups in (data.get("hooks") or {}).items():
        if not isinstance(groups, list):
            continue
        for g in groups:
            handlers = [g] if harness in ("copilot", "cursor") else (g.get("hooks") or []) if isinstance(g, dict) else []
            if any(hinst.is_ours(h, harness) for h in handlers):
                events.add(event)
    return events


def _codex_trust(hook_files: list[str], environ: Mapping[str, str] | None) -> Check:
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    config = os.path.join(env.get("CODEX_HOME") or os.path.join(home, ".codex"), "config.toml")
    try:
        import tomllib
        with open(config, "rb") as f:
            state = ((tomllib.load(f).get("hooks") or {}).get("state") or {})
    except FileNotFoundError:
        state = {}
    except (OSError, ValueError) as e:
        return Check("codex trust", False, "cannot read %s: %s" % (config, e), hinst.CODEX_TRUST_STEP)
    trusted = [k for k, v in state.items() if isinstance(v, dict) and v.get("trusted_hash")
               and any(f in k or os.path.basename(os.path.dirname(f)) in k for f in hook_files)]
    wanted = len(hinst.entries("codex", "ctx"))
    if len(trusted) >= wanted:
        return Check("codex trust", True, "%d hook(s) trusted in %s (Codex re-asks if a hook changes)"
                     % (len(trusted), config))
    return Check("codex trust", False, "Codex has not trusted ctx's hooks (%d of %d trusted in %s): it skips them"
                 % (len(trusted), wanted, config), hinst.CODEX_TRUST_STEP)
