"""`ctx demo`: the daemon handling a recorded Claude Code hook session."""

import click

from reflex.errors import UserError


@click.command()
@click.option("--clean", is_flag=True, help="Remove the demo's project and CTX_HOME afterwards (by default they "
                                            "are kept, so the addresses the demo printed resolve).")
@click.option("--keep", is_flag=True, hidden=True, help="Kept for old scripts: keeping is the default now.")
def demo(clean, keep):
    """Start a daemon in a CTX_HOME of its own and replay a recorded Claude Code hook session through it.

    Exits 1 when the demo cannot show ctx working: a tool the session runs is missing (pytest),
    no run was digested (no tokenizer), or the ledger does not verify."""
    from reflex import demo as demo_mod
    try:
        summary = demo_mod.run_demo(out=click.echo, keep=not clean)
    except FileNotFoundError as e:
        raise UserError("demo data missing: %s" % e)
    problems = demo_mod.problems(summary)
    if problems:
        raise UserError("ctx demo did not show ctx working: %s" % "; ".join(problems))
