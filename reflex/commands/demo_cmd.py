"""`ctx demo`: the daemon handling a recorded Claude Code hook session."""

import click

from reflex.errors import UserError


@click.command()
@click.option("--keep", is_flag=True, help="Keep the scratch project and CTX_HOME afterwards.")
def demo(keep):
    """Start a daemon in a throwaway CTX_HOME and replay a recorded Claude Code hook session through it."""
    from reflex import demo as demo_mod
    try:
        summary = demo_mod.run_demo(out=click.echo, keep=keep)
    except FileNotFoundError as e:
        raise UserError("demo data missing: %s" % e)
    if not summary.get("verify_ok"):
        raise SystemExit(1)
