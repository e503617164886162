"""`ctx install` / `ctx uninstall`: Claude Code hook entries in settings.json."""

import json

import click

from reflex import install as inst, paths as paths_mod
from reflex.shim import launcher as launcher_mod


def _target(scope, settings):
    return settings or inst.settings_path(scope)


@click.command()
@click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
              help="user: ~/.claude/settings.json (fast launcher); project: ./.claude/settings.json, safe to commit "
                   "(runs `ctx` from PATH, a no-op for teammates without ctx).")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False), default=None,
              help="Write to this settings file instead of the scope's.")
@click.option("--transport", type=click.Choice(["command", "http"]), default="command", show_default=True,
              help="command: a process per hook (the safety plane works with the daemon down); http: loopback posts.")
@click.option("--port", type=int, default=None, help="Loopback port for the http transport.")
@click.option("--dry-run", is_flag=True, help="Print the resulting settings; change nothing.")
def install(scope, settings_file, transport, port, dry_run):
    """Install ctx's hooks into Claude Code (idempotent; backs up first)."""
    paths = paths_mod.resolve()
    target = _target(scope, settings_file)
    launcher = launcher_mod.launcher_path(paths) if dry_run else launcher_mod.write_launcher(paths)
    new, changed, backup = inst.install(paths, target, launcher=launcher, transport=transport,
                                        port=port, dry_run=dry_run,
                                        portable=scope == "project" and settings_file is None)
    if dry_run:
        click.echo(json.dumps(new, indent=2))
        click.echo("(dry run: %s not changed)" % target, err=True)
        return
    click.echo("%s %s" % ("installed ctx hooks into" if changed else "ctx hooks already current in", target))
    if scope == "project" and settings_file is None:
        click.echo("project scope: the hooks run `ctx` from PATH, so the file can be committed; a teammate "
                   "without ctx gets no-op hooks")
    if backup:
        click.echo("backup: %s" % backup)
    if transport == "http":
        click.echo("http transport on 127.0.0.1:%d; restart the daemon (`ctx daemon stop`) to bind it" % port)


@click.command()
@click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
              help="Which settings file to remove ctx's hooks from.")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False), default=None,
              help="Remove from this settings file instead of the scope's.")
@click.option("--dry-run", is_flag=True, help="Print the resulting settings; change nothing.")
def uninstall(scope, settings_file, dry_run):
    """Remove ctx's hooks from Claude Code settings (other hooks untouched)."""
    paths = paths_mod.resolve()
    target = _target(scope, settings_file)
    new, changed, backup = inst.uninstall(paths, target, dry_run=dry_run)
    if dry_run:
        click.echo(json.dumps(new, indent=2))
        return
    click.echo("removed ctx hooks from %s" % target if changed else "no ctx hooks in %s" % target)
    if backup:
        click.echo("backup: %s" % backup)
