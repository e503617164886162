"""`ctx doctor`."""

import json

import click

from reflex import doctor as doctor_mod, paths as paths_mod


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON (name, ok, detail, fix).")
def doctor(as_json):
    """Check the daemon, permissions, ledger, tokenizer and installed hooks."""
    checks = doctor_mod.run_checks(paths_mod.resolve())
    if as_json:
        click.echo(json.dumps([c.as_dict() for c in checks], indent=2))
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            mark = click.style("ok ", fg="green") if c.ok else click.style("!! ", fg="red")
            click.echo("%s%s  %s" % (mark, c.name.ljust(width), c.detail))
            if not c.ok and c.fix:
                click.echo("   %s  -> %s" % (" " * width, c.fix))
    raise SystemExit(0 if all(c.ok for c in checks) else 1)
