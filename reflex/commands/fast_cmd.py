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
    """Answer one hook call: payload on stdin, answer on stdout.

    HARNESS: claude (default), codex, gemini, copilot, qwen, opencode, droid or cursor; also
    given as `--harness NAME`."""
    from reflex.shim.hook import main
    sys.exit(main([harness]))


@click.command(context_settings=_CTX)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(command):
    """Run COMMAND, store its full output by BLAKE3 handle, print the digest; keeps the exit code.

    Put `--` before the command so its own options are not read as ctx's; a command with
    pipes or quotes goes in as one quoted string.

    \b
      ctx run -- pytest -q
      ctx run -- 'pytest -q 2>&1 | tail -20'
    """
    from reflex.shim.run import main
    sys.exit(main(list(command)))


@click.command(context_settings=_CTX)
@click.argument("address")
@click.option("--json", "as_json", is_flag=True, help="Answer with a know/miss JSON object.")
def get(address, as_json):
    """Print stored output: r:<handle>, r:<handle>:L<a>-<b>, r:<handle>#<test id>.

    A digest's hints read `ctx get r:<handle>:L<a>-<b> b3=<hex>`: the b3= prefix is the BLAKE3
    hash of exactly those bytes, and a mismatch is answered as a miss, never as other bytes.

    \b
      ctx get r:7f3a2c9d01ab:L120-188 b3=26e54c1e
      ctx get 'r:7f3a2c9d01ab#tests/test_x.py::test_y' --json
    """
    from reflex.shim.retrieve import get_main
    sys.exit(get_main([address] + (["--json"] if as_json else [])))


@click.command(context_settings=_CTX)
@click.argument("pattern")
@click.option("--handle", default=None, help="Only this stored output (r:<handle> or <handle>).")
@click.option("--session", default=None, help="Only outputs of this session id.")
@click.option("--json", "as_json", is_flag=True, help="Answer with a know/miss JSON object.")
def search(pattern, handle, session, as_json):
    """Search stored outputs for PATTERN (a regular expression): matching lines with context.

    \b
      ctx search 'AssertionError' --handle r:7f3a2c9d01ab
      ctx search 'test_parse' --session "$CLAUDE_CODE_SESSION_ID" --json
    """
    from reflex.shim.retrieve import search_main
    argv = [pattern]
    if handle:
        argv += ["--handle", handle]
    if session:
        argv += ["--session", session]
    if as_json:
        argv.append("--json")
    sys.exit(search_main(argv))
