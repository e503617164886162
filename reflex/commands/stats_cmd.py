"""`ctx stats`: the scorecard of one session, or totals across sessions and projects."""

import csv
import json
import sys

import click

from reflex.errors import UserError


def _ledger(path):
    if path:
        return path
    from reflex import paths as paths_mod
    return paths_mod.resolve().ledger


@click.command("stats")
@click.option("--session", "session_id", default=None, metavar="ID", help="The scorecard of this session.")
@click.option("--last", is_flag=True, help="The scorecard of the most recent session.")
@click.option("--since", default=None, metavar="WHEN", help="Across sessions active since: 7d, 12h, 2w or an ISO date.")
@click.option("--project", default=None, type=click.Path(file_okay=False), help="Only sessions under this directory.")
@click.option("--json", "as_json", is_flag=True, help="Stable JSON (schemas in reflex.analysis.stats.scorecard / aggregate).")
@click.option("--csv", "as_csv", is_flag=True, help="Across sessions: one CSV row per session.")
@click.option("--html", "as_html", is_flag=True,
              help="One self-contained page with plots (no network needed to view it); see --out.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the --html page to this file (default: standard output).")
@click.option("--harness", default=None, metavar="NAME",
              help="Across sessions: only sessions of this agent harness (claude, codex, gemini, copilot).")
@click.option("--ledger", "ledger_path", type=click.Path(dir_okay=False), default=None, help="Another ledger file.")
@click.option("--round-price", type=click.IntRange(min=0), default=None, metavar="TOKENS",
              help="Tokens charged per extra round in the cost estimate (default 2000).")
@click.option("--dataset", "dataset_dir", default=None,
              help="The team scorecard of a team dataset (`ctx ledger export --dataset`; docs/team.md).")
def stats_cmd(session_id, last, since, project, as_json, as_csv, as_html, out_path, harness, ledger_path,
              round_price, dataset_dir):
    """Scorecards: what ctx did, what it cost, what landed, where the agent looped."""
    if dataset_dir:
        if session_id or last or since or project or harness or ledger_path or round_price is not None:
            raise UserError("--dataset takes only --json, --csv or --html (and --out)")
        _team(dataset_dir, as_json, as_csv, as_html, out_path)
        return
    from reflex.analysis.stats import render
    from reflex.analysis.stats.scorecard import PRICE_PER_EXTRA_ROUND
    price = PRICE_PER_EXTRA_ROUND if round_price is None else round_price
    path = _ledger(ledger_path)
    if sum(map(bool, (as_json, as_csv, as_html))) > 1:
        raise UserError("choose one of --json, --csv and --html")
    if out_path and not as_html:
        raise UserError("--out goes with --html (the other formats print to standard output)")
    if session_id or last:
        if since or project or as_csv or harness:
            raise UserError("--since, --project, --harness and --csv apply across sessions, not to "
                            "--session/--last")
        from reflex.analysis.stats.scorecard import scorecard_from_ledger
        card = scorecard_from_ledger(path, session_id, round_price=price)
        if card is None:
            raise UserError("no session %s in %s" % (session_id, path) if session_id
                              else "no sessions in %s yet" % path)
        if as_json:
            click.echo(json.dumps(card, indent=2, sort_keys=True, ensure_ascii=False))
        elif as_html:
            from reflex.analysis.stats.html import session_page
            _write_page(session_page(card), out_path)
        else:
            click.echo(render.scorecard_text(card, render.use_colour(sys.stdout)), nl=False)
        return
    from reflex.analysis.stats.aggregate import CSV_FIELDS, aggregate_ledger, parse_since
    try:
        cutoff = parse_since(since) if since else None
    except ValueError as e:
        raise UserError(str(e)) from None
    agg = aggregate_ledger(path, since=cutoff, project=project, round_price=price, harness=harness)
    if as_csv:
        w = csv.DictWriter(sys.stdout, fieldnames=list(CSV_FIELDS), lineterminator="\n")
        w.writeheader()
        for row in agg["per_session"]:
            w.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in CSV_FIELDS})
    elif as_json:
        click.echo(json.dumps(agg, indent=2, sort_keys=True, ensure_ascii=False))
    elif as_html:
        from reflex.analysis.stats.html import aggregate_page
        _write_page(aggregate_page(agg), out_path)
    else:
        click.echo(render.aggregate_text(agg, render.use_colour(sys.stdout)), nl=False)


def _team(dataset_dir, as_json, as_csv, as_html, out_path):
    from reflex.analysis import team
    if sum(map(bool, (as_json, as_csv, as_html))) > 1:
        raise UserError("choose one of --json, --csv and --html")
    if out_path and not as_html:
        raise UserError("--out goes with --html (the other formats print to standard output)")
    card = team.team_scorecard(dataset_dir)
    if as_json:
        click.echo(json.dumps(card, indent=2, sort_keys=True, ensure_ascii=False))
    elif as_csv:
        w = csv.DictWriter(sys.stdout, fieldnames=list(team.CSV_FIELDS), lineterminator="\n")
        w.writeheader()
        for row in card["rows"]:
            w.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in team.CSV_FIELDS})
    elif as_html:
        _write_page(team.page(card), out_path)
    else:
        click.echo(team.text(card), nl=False)


def _write_page(page, out_path):
    if not out_path:
        click.echo(page, nl=False)
        return
    import os
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(tmp, out_path)
    click.echo("wrote %s (%d KB; open it in a browser, no network needed)" % (out_path, len(page) // 1024), err=True)
