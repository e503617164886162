"""`ctx replay PATH [--format claude|codex|gemini|copilot|qwen|droid|events] [--harness NAME] [--json]`: a
recorded session through the fold.  `ctx replay --savings FILE|DIR… [--json]`: what the model received
per tool and program, and what ctx would have delivered (reflex.analysis.savings)."""

import json
import os

import click

from reflex.errors import UserError


@click.command("replay")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["claude", "codex", "gemini", "copilot", "qwen", "droid", "events"]), default=None,
              help="claude: a Claude Code transcript JSONL; codex: a Codex rollout "
                   "(~/.codex/sessions/…/rollout-*.jsonl); gemini: a Gemini CLI chat recording "
                   "(~/.gemini/tmp/<project>/chats/session-*.jsonl); copilot: a Copilot CLI "
                   "~/.copilot/session-state/<id>/events.jsonl; qwen: ~/.qwen/projects/<project>/chats/*.jsonl; "
                   "droid: ~/.factory/sessions/<cwd>/*.jsonl; events: a ledger (database or "
                   "`ctx ledger export`) or a JSONL of fold events.  Detected from the file when omitted.  "
                   "A harness's own file may be gzipped (session.jsonl.gz).")
@click.option("--harness", default=None,
              help="Only the sessions of this harness (claude, codex, gemini, copilot, qwen, opencode, droid, cursor): for a ledger, the harness "
                   "its hooks came from; for a harness's own recording, that harness.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: commands, decisions, firings.")
@click.option("--policy", "policy_path", type=click.Path(dir_okay=False), default=None,
              help="Policy epoch TOML to replay under (default: the shipped default epoch).")
@click.option("--savings", is_flag=True,
              help="Claude Code transcripts (files, or directories of them: each directory is a group, "
                   "e.g. dev and heldout): per tool and per program, the tokens the model received and "
                   "what ctx would have delivered.")
def replay_cmd(paths, fmt, harness, as_json, policy_path, savings):
    """Show what ctx would have decided at each command of a recorded session, and every
    detector firing (starvation, affordance, friction, landings).  With --savings: the tokens
    each tool and program delivered to the model in Claude Code transcripts, and what ctx would
    have delivered instead (docs/savings.md)."""
    if savings:
        _savings(paths, as_json)
        return
    if len(paths) != 1 or os.path.isdir(paths[0]):
        raise click.UsageError("replay takes one session file (several, or directories, only with --savings)")
    path = paths[0]
    from reflex.analysis import replay
    from reflex.arc.policy import default_policy, load_policy

    policy = load_policy(policy_path) if policy_path else default_policy()
    try:
        fmt = fmt or replay.detect_format(path)
        sessions = replay.load(path, fmt)
        if harness is not None:
            of = replay.harnesses(path, fmt, sessions)
            sessions = {sid: evs for sid, evs in sessions.items() if of[sid] == harness}
    except OSError as e:
        raise UserError("cannot read %s: %s" % (path, e.strerror or e)) from None
    report = replay.replay(sessions, policy)
    if as_json:
        click.echo(json.dumps({"format": fmt, "harness": harness, **replay.json_report(report)}, ensure_ascii=False))
    else:
        click.echo("%s: %s\n" % (fmt, path) + replay.render_text(report), nl=False)


def _savings(paths, as_json):
    from reflex.analysis import savings

    groups = {}
    for p in paths:
        if not os.path.exists(p):
            raise UserError("cannot read %s: no such file or directory" % p)
        name = os.path.basename(os.path.normpath(p)) if os.path.isdir(p) else "files"
        groups.setdefault(name, []).extend(savings.session_files(p))
    try:
        report = savings.report(groups)
    except OSError as e:
        raise UserError("cannot read %s: %s" % (e.filename, e.strerror or e)) from None
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False))
    else:
        click.echo(savings.render_text(report), nl=False)
