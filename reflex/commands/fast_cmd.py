"""Help-only entries for the agent-facing commands.

The real work happens on the stdlib fast path (reflex.entry); these exist so
`ctx --help` and `ctx run --help` describe them, and they delegate to the same
functions if click ever does route to them.
"""

import sys

import click

_CTX = dict(ignore_unknown_options=True, allow_extra_args=True, help_option_names=["-h", "--help"])


@click.command(context_settings=_CTX)
@click.argument("harness", default="claude")
def hook(harness):
    """Answer one hook call: payload on stdin, answer on stdout (harness: claude)."""
    from reflex.hook import main
    sys.exit(main([harness]))


@click.command(context_settings=_CTX)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(command):
    """Run COMMAND, store its full output by BLAKE3 handle, print the digest; keeps the exit code."""
    from reflex.runner import main
    sys.exit(main(list(command)))


@click.command(context_settings=_CTX)
@click.argument("address")
@click.option("--json", "as_json", is_flag=True, help="Answer with a know/miss JSON object.")
def get(address, as_json):
    """Print stored output: r:<handle>, r:<handle>:L<a>-<b>, r:<handle>#<test id>."""
    from reflex.retrieve import get_main
    sys.exit(get_main([address] + (["--json"] if as_json else [])))


@click.command(context_settings=_CTX)
@click.argument("pattern")
@click.option("--handle", default=None)
@click.option("--session", default=None)
@click.option("--json", "as_json", is_flag=True)
def search(pattern, handle, session, as_json):
    """Search stored outputs for PATTERN (a regular expression)."""
    from reflex.retrieve import search_main
    argv = [pattern]
    if handle:
        argv += ["--handle", handle]
    if session:
        argv += ["--session", session]
    if as_json:
        argv.append("--json")
    sys.exit(search_main(argv))
