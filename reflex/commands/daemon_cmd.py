"""`ctx daemon start|stop|status|run` and `ctx paths`."""

import json

import click

from reflex import paths as paths_mod
from reflex.daemon import control as daemon_control


@click.group()
def daemon():
    """Manage the ctx daemon (one per user)."""


@daemon.command()
def start():
    """Start the daemon in the background and wait until it answers."""
    st = daemon_control.start(paths_mod.resolve())
    click.echo("ctx daemon running: pid %s, socket %s" % (st.get("pid"), st.get("socket")))


@daemon.command()
def stop():
    """Stop the daemon (drains requests and flushes the ledger first)."""
    stopped = daemon_control.stop(paths_mod.resolve())
    click.echo("ctx daemon stopped" if stopped else "ctx daemon was not running")


@daemon.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status (or paths) as JSON.")
def status(as_json):
    """Is the daemon running? (exit 1 when it is not)"""
    st = daemon_control.status(paths_mod.resolve())
    if as_json:
        click.echo(json.dumps(st, indent=2, sort_keys=True))
    elif st["running"]:
        click.echo("running: pid %s, version %s, protocol %s, up %.0fs, %s requests, socket %s" % (
            st.get("pid"), st.get("version"), st.get("protocol"), st.get("uptime_s", 0),
            st.get("requests"), st["socket"]))
    else:
        click.echo("not running (%s)" % st.get("reason"))
    raise SystemExit(0 if st["running"] else 1)


@daemon.command("run")
def run_foreground():
    """Run the daemon in the foreground (for debugging and service managers)."""
    raise SystemExit(daemon_control.start(paths_mod.resolve(), foreground=True))


@click.command("paths")
@click.option("--json", "as_json", is_flag=True, help="Print the status (or paths) as JSON.")
def paths_cmd(as_json):
    """Print where ctx keeps its state ($CTX_HOME overrides)."""
    d = paths_mod.resolve().as_dict()
    if as_json:
        click.echo(json.dumps(d, indent=2, sort_keys=True))
    else:
        width = max(map(len, d))
        for k, v in d.items():
            click.echo("%s  %s" % (k.ljust(width), v))
