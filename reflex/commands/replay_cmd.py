"""`ctx replay PATH [--format claude|events|qwen|droid] [--json]`: a recorded session through the fold."""

import json

import click

from reflex.errors import UserError


@click.command("replay")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["claude", "events", "qwen", "droid"]), default=None,
              help="claude: a Claude Code transcript JSONL; events: a ledger (database or `ctx ledger export`) "
                   "or a JSONL of fold events; qwen, droid: those CLIs' own session files.  Detected from the "
                   "file when omitted.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: commands, decisions, firings.")
@click.option("--policy", "policy_path", type=click.Path(dir_okay=False), default=None,
              help="Policy epoch TOML to replay under (default: the shipped default epoch).")
def replay_cmd(path, fmt, as_json, policy_path):
    """Show what ctx would have decided at each command of a recorded session, and every
    detector firing (starvation, affordance, friction, landings)."""
    from reflex.analysis import replay
    from reflex.arc.policy import default_policy, load_policy

    policy = load_policy(policy_path) if policy_path else default_policy()
    try:
        sessions = replay.load(path, fmt)
    except OSError as e:
        raise UserError("cannot read %s: %s" % (path, e.strerror or e)) from None
    report = replay.replay(sessions, policy)
    if as_json:
        click.echo(json.dumps(replay.json_report(report), ensure_ascii=False))
    else:
        click.echo(replay.render_text(report), nl=False)
