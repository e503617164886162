"""`ctx install` / `ctx uninstall`: hook entries in Claude Code's settings.json, or with --harness in
another harness's config (Codex, Gemini, Copilot, Qwen, Droid, Cursor) or OpenCode's plugin
(reflex/harness/install.py)."""

import json
import os

import click

from reflex import install as inst, paths as paths_mod
from reflex.shim import launcher as launcher_mod


def _target(scope, settings, transport="command"):
    return settings or inst.settings_path(scope, transport=transport)


HARNESS_CHOICES = ["claude", "codex", "gemini", "copilot", "qwen", "opencode", "droid", "cursor"]


@click.command()
@click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
              help="user: ~/.claude/settings.json (fast launcher); project: ./.claude/settings.json, safe to commit "
                   "(runs each user's ctx launcher, else `ctx` from PATH; checked on install; a no-op for teammates "
                   "without ctx); project with --transport http: "
                   "./.claude/settings.local.json, personal (it holds the hook token; never commit it).")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False), default=None,
              help="Write to this settings file instead of the scope's.")
@click.option("--transport", type=click.Choice(["command", "http"]), default="command", show_default=True,
              help="command: a process per hook (the safety plane works with the daemon down); http: loopback posts.")
@click.option("--port", type=int, default=None, help="Loopback port for the http transport.")
@click.option("--dry-run", is_flag=True, help="Print the resulting settings; change nothing.")
@click.option("--harness", type=click.Choice(HARNESS_CHOICES), default="claude",
              show_default=True, help="The agent CLI whose hooks to install (docs/harnesses.md).")
def install(scope, settings_file, transport, port, dry_run, harness):
    """Install ctx's hooks into Claude Code or another agent CLI (idempotent; backs up first)."""
    paths = paths_mod.resolve()
    if harness != "claude":
        return _install_harness(paths, harness, scope, settings_file, dry_run)
    target = _target(scope, settings_file, transport)
    launcher = launcher_mod.launcher_path(paths) if dry_run else launcher_mod.write_launcher(paths)
    new, changed, backup = inst.install(paths, target, launcher=launcher, transport=transport,
                                        port=port, dry_run=dry_run,
                                        portable=scope == "project" and settings_file is None and transport != "http")
    if dry_run:
        click.echo(json.dumps(new, indent=2))
        click.echo("(dry run: %s not changed)" % target, err=True)
        return
    click.echo("%s %s" % ("installed ctx hooks into" if changed else "ctx hooks already current in", target))
    if transport == "http":
        # The http hooks carry the bearer token: the file is personal, never advertised as committable.
        click.echo("the http hooks hold ctx's bearer token (from %s): %s is private (mode 600); do not "
                   "commit or share it%s" % (paths.http_token, target,
                                             " (Claude Code keeps settings.local.json out of git)"
                                             if target.endswith("settings.local.json") else ""))
    elif scope == "project" and settings_file is None:
        # Said loudly, not left for later: hooks that find no ctx do nothing, the safety plane included.
        ok, detail = inst.probe_hook(inst.probe_command(new) or inst.PORTABLE_COMMAND,
                                     os.path.dirname(os.path.dirname(os.path.abspath(target))))
        if not ok:
            raise inst.InstallError("the hooks in %s are written but do not work for you: they %s. Run `ctx "
                                    "install` again from the ctx you use (it writes your launcher), or put ctx on "
                                    "PATH" % (target, detail))
        click.echo("project scope: the hooks run your ctx launcher, else `ctx` from PATH, so the file can be "
                   "committed (checked: they %s); a teammate without ctx gets no-op hooks until they install it"
                   % detail)
    if backup:
        click.echo("backup: %s%s" % (backup, " (mode 600)" if transport == "http" else ""))
    if transport == "http":
        click.echo("http transport on 127.0.0.1:%d; restart the daemon (`ctx daemon stop`) to bind it" % port)


@click.command()
@click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
              help="Which settings file to remove ctx's hooks from.")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False), default=None,
              help="Remove from this settings file instead of the scope's.")
@click.option("--dry-run", is_flag=True, help="Print the resulting settings; change nothing.")
@click.option("--harness", type=click.Choice(HARNESS_CHOICES), default="claude",
              show_default=True, help="The agent CLI whose hooks to remove.")
def uninstall(scope, settings_file, dry_run, harness):
    """Remove ctx's hooks from Claude Code settings or another agent CLI's (other hooks untouched)."""
    paths = paths_mod.resolve()
    if harness != "claude":
        from reflex.harness import install as hinst
        try:
            target = settings_file or hinst.config_path(harness, scope)
            new, changed, backup = hinst.uninstall(paths, harness, target, dry_run=dry_run)
        except inst.InstallError as e:
            raise
    else:
        target = _target(scope, settings_file)
        local = _target(scope, settings_file, "http")
        if local != target and os.path.exists(local):
            # The http transport's project hooks live in settings.local.json (they hold the token).
            _, local_changed, local_backup = inst.uninstall(paths, local, dry_run=dry_run)
            if local_changed and not dry_run:
                click.echo("removed ctx hooks from %s" % local)
                if local_backup:
                    click.echo("backup: %s (mode 600)" % local_backup)
        new, changed, backup = inst.uninstall(paths, target, dry_run=dry_run)
    if dry_run:
        click.echo(json.dumps(new, indent=2))
        return
    click.echo("removed ctx hooks from %s" % target if changed else "no ctx hooks in %s" % target)
    if backup:
        click.echo("backup: %s" % backup)


def _install_harness(paths, harness, scope, settings_file, dry_run):
    from reflex.harness import install as hinst
    launcher = launcher_mod.launcher_path(paths) if dry_run else launcher_mod.write_launcher(paths)
    portable = scope == "project" and settings_file is None
    try:
        target = settings_file or hinst.config_path(harness, scope)
        new, changed, backup = hinst.install(paths, harness, target, launcher=launcher, portable=portable,
                                             dry_run=dry_run)
    except inst.InstallError as e:
        raise
    if dry_run:
        click.echo(json.dumps(new, indent=2))
        click.echo("(dry run: %s not changed)" % target, err=True)
        return
    click.echo("%s %s" % ("installed ctx hooks into" if changed else "ctx hooks already current in", target))
    if backup:
        click.echo("backup: %s" % backup)
    if harness == "codex":
        click.echo(hinst.CODEX_TRUST_STEP)
    if harness == "gemini" and scope == "project":
        click.echo("Gemini runs project hooks only in a trusted folder (it asks when the hooks change).")
