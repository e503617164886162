"""`ctx digest`: digest a saved output offline with the same engine `ctx run` uses.

    ctx digest --family pytest [--budget N] [--density D] [--json] [FILE|-]
    ctx digest --command "npx jest --ci" FILE    # the profile the hook would choose for that command

The handle is computed from the bytes (r: + 12 hex of their BLAKE3), so the
hints printed are the ones `ctx run` would print for the same output; they
resolve with `ctx get` only if that output is also in the blob store.
"""

from __future__ import annotations

import json
import os
import sys

import click

from reflex.digest.budget import DENSITIES, MIN_BUDGET


@click.command("digest")
@click.option("--family", "-f", default=None,
              help="Command family (pytest, go-test, cargo-test, jest, vitest, npm-script, tsc, eslint, ruff, mypy, "
                   "make, other).  Default: the family of --command, as the hook reads it; else other.")
@click.option("--budget", "-b", type=click.IntRange(min=MIN_BUDGET), default=None,
              help=f"Token budget (o200k, exact); at least {MIN_BUDGET}.  Default: the density's own.")
@click.option("--density", "-d", type=click.Choice(DENSITIES), default="normal", show_default=True,
              help="How much to show: lean < normal < dense (every failing id) < inline (evidence inlined) < raw-capped.")
@click.option("--exit-code", type=int, default=None, help="Exit code the command returned, for the header.")
@click.option("--command", "command_text", default="", help="The command that produced the output.")
@click.option("--json", "as_json", is_flag=True, help="Print the digest, its hints and facts as JSON.")
@click.argument("source", type=click.File("rb"), default="-")
def digest_cmd(family, budget, density, exit_code, command_text, as_json, source):
    """Digest a saved command output (FILE, or - for stdin)."""
    from blake3 import blake3

    from reflex.digest import build_digest, family_of_command
    from reflex.tokens import TokenizerUnavailable

    if family is None:
        family = family_of_command(command_text, os.getcwd()) if command_text else "other"
    raw = source.read()
    handle = "r:" + blake3(raw).hexdigest()[:12]
    try:
        digest = build_digest(raw, family=family, exit_code=exit_code, command=command_text, handle=handle,
                              density=density, budget=budget, cwd=os.getcwd())
    except TokenizerUnavailable as exc:
        raise click.ClickException(f"cannot count tokens: {exc}") from None
    if as_json:
        click.echo(json.dumps(digest.as_dict(), ensure_ascii=False, sort_keys=True))
    else:
        sys.stdout.write(digest.text + "\n")
