"""`ctx replay PATH [--format claude|events] [--json]`: a recorded session through the fold."""

import json

import click

from reflex.cli import ReflexError


@click.command("replay")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["claude", "events"]), default=None,
              help="claude: a Claude Code transcript JSONL; events: a ledger (database or `ctx ledger export`) "
                   "or a JSONL of fold events.  Detected from the file when omitted.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: commands, decisions, firings.")
@click.option("--policy", "policy_path", type=click.Path(dir_okay=False), default=None,
              help="Policy epoch TOML to replay under (default: the shipped default epoch).")
def replay_cmd(path, fmt, as_json, policy_path):
    """Show what ctx would have decided at each command of a recorded session, and every
    detector firing (starvation, affordance, friction, landings)."""
    from reflex import replay
    from reflex.policy import PolicyError, default_policy, load_policy

    try:
        policy = load_policy(policy_path) if policy_path else default_policy()
    except PolicyError as e:
        raise ReflexError(str(e)) from None
    try:
        sessions = replay.load(path, fmt)
    except OSError as e:
        raise ReflexError("cannot read %s: %s" % (path, e.strerror or e)) from None
    report = replay.replay(sessions, policy)
    if as_json:
        click.echo(json.dumps(replay.json_report(report), ensure_ascii=False))
    else:
        click.echo(replay.render_text(report), nl=False)
