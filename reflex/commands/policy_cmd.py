"""`ctx policy compile|evidence|check`: the slow loop, from ledgers to the next policy epoch."""

import json
import sys

import click



def _default_ledger():
    from reflex import paths as paths_mod
    return paths_mod.resolve().ledger


@click.group("policy")
def policy_group():
    """Policy epochs: compile them from ledgers, check them, record evidence outcomes."""


@policy_group.command("compile")
@click.option("--ledger", "ledgers", multiple=True, type=click.Path(exists=False),
              help="A ledger, a ledger export (JSONL/parquet) or a directory of them; repeatable. "
                   "Default: this user's ledger.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Write the epoch here (atomically); default: stdout.")
@click.option("--plan-value", is_flag=True, help="Add [plan_value] priors from evidence outcomes.")
@click.option("--base", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The epoch to start from (default: the shipped policies/default.toml).")
@click.option("--dataset", "dataset_dir", default=None,
              help="Compile a team dataset (`ctx ledger export --dataset`) instead of ledgers (docs/team.md).")
@click.option("--engine", type=click.Choice(["duckdb", "spark"]), default=None,
              help="With --dataset: the SQL engine (default duckdb, embedded; spark needs the spark extra).")
@click.option("--spark-master", default=None,
              help="With --engine spark: the master URL (default $SPARK_MASTER or local[*]; $SPARK_REMOTE for "
                   "Spark Connect).")
def compile_cmd(ledgers, out_path, plan_value, base, dataset_dir, engine, spark_master):
    """Read ledgers, write the next policy epoch (TOML).  Same ledgers, same bytes."""
    from reflex.analysis.compile import compile_epoch, write_atomic
    from reflex.errors import UserError
    if dataset_dir and ledgers:
        raise UserError("--dataset and --ledger are two ways to give the inputs: choose one")
    if (engine or spark_master) and not dataset_dir:
        raise UserError("--engine and --spark-master go with --dataset")
    if spark_master and engine != "spark":
        raise UserError("--spark-master goes with --engine spark")
    if dataset_dir:
        from reflex.analysis.compile_sql import compile_dataset
        kw = {"master": spark_master} if spark_master else {}
        result = compile_dataset(dataset_dir, engine=engine or "duckdb", plan_value=plan_value, base=base, **kw)
        _emit_result(result, out_path, write_atomic)
        return
    progress = _tty_progress()
    try:
        result = compile_epoch(list(ledgers) or [_default_ledger()], plan_value=plan_value, base=base,
                               progress=progress)
    finally:
        if progress is not None:
            sys.stderr.write("\n")
    _emit_result(result, out_path, write_atomic)


def _emit_result(result, out_path, write_atomic):
    for w in result.warnings:
        click.echo("warning: " + w, err=True)
    if out_path:
        write_atomic(out_path, result.text)
        click.echo("wrote %s: %d ledger(s), %d events, %d sessions" % (
            out_path, len(result.inputs), result.events, result.sessions), err=True)
    else:
        sys.stdout.write(result.text)


@policy_group.command("evidence")
@click.option("--ledger", "ledger_path", type=click.Path(dir_okay=False), default=None,
              help="Another ledger file (default: this user's, see `ctx paths`).")
@click.option("--session", "session_id", default=None, help="Only this session.")
@click.option("--dry-run", is_flag=True, help="Print the outcomes as JSON lines; write nothing.")
def evidence_cmd(ledger_path, session_id, dry_run):
    """Compute evidence_outcome/v1 rows and append the new ones to the ledger (idempotent)."""
    from reflex.analysis import evidence
    from reflex.analysis.stats.ledger_read import Reader
    from reflex.analysis.stats.timeline import build
    path = ledger_path or _default_ledger()
    outs = []
    with Reader(path) as reader:
        for sid, rows in reader.iter_sessions([session_id] if session_id else None):
            outs.extend(evidence.session_evidence(build(sid, rows)).outcomes)
    if dry_run:
        for o in outs:
            click.echo(json.dumps(o.to_json(), sort_keys=True, ensure_ascii=False))
        return
    n = evidence.record(path, outs)
    click.echo("%d evidence outcomes computed, %d new rows recorded" % (len(outs), n), err=True)


@policy_group.command("check")
@click.argument("path", type=click.Path(dir_okay=False))
def check_cmd(path):
    """Validate an epoch file as the daemon would (exit 1 with every problem listed)."""
    from reflex.arc.policy import load_policy
    p = load_policy(path)
    click.echo("%s: epoch %s v%d (%s) OK" % (path, p.epoch.name, p.epoch.version, p.epoch.source))


def _tty_progress():
    """A one-line progress display on a terminal's stderr; nothing when stderr is not a terminal."""
    import sys
    import time
    if not sys.stderr.isatty():
        return None
    started = time.monotonic()

    def show(path, sessions, events):
        sys.stderr.write("\r\033[Kcompiling %s: %d sessions (%s events) · %.0fs" % (
            path, sessions, "{:,}".format(events) if events else "?", time.monotonic() - started))
        sys.stderr.flush()
    return show
