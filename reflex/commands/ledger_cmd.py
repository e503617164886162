"""`ctx ledger export|verify|schema`."""

import json
import os
import sys

import click

from reflex import paths as paths_mod
from reflex.errors import UserError


@click.group()
def ledger():
    """Read the append-only ledger."""


def _ledger_path(path):
    p = path or paths_mod.resolve().ledger
    if not os.path.exists(p):
        raise UserError("no ledger at %s (nothing recorded yet?)" % p)
    return p


@ledger.command()
@click.option("--session", default=None, help="Only this session's events.")
@click.option("--ledger", "ledger_path", type=click.Path(dir_okay=False), default=None,
              help="Another ledger file (default: this user's, see `ctx paths`).")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "parquet"]), default="jsonl", show_default=True,
              help="jsonl on stdout, or parquet (needs pyarrow: the parquet extra).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Output file (parquet needs --out or --dataset).")
@click.option("--dataset", "dataset_dir", type=click.Path(file_okay=False), default=None,
              help="Append this ledger's new events to a team dataset directory (parquet; docs/team.md).")
@click.option("--host", default=None, help="With --dataset: this machine's name in the dataset (default: hostname).")
@click.option("--user", default=None, help="With --dataset: your name in the dataset (default: login name).")
@click.option("--hash-user", is_flag=True,
              help="With --dataset: leave no name of yours in the dataset: user and host as hashes, your home "
                   "directory as ~ in paths and commands.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="With --dataset: processes for a large export (default: the CPUs ctx may use).")
def export(session, ledger_path, fmt, out_path, dataset_dir, host, user, hash_user, workers):
    """Export events, in global order: JSONL on stdout, a parquet file (--out) or a team dataset (--dataset)."""
    path = _ledger_path(ledger_path)
    if dataset_dir or host or user or hash_user or workers:
        if fmt != "parquet" or not dataset_dir or out_path or session:
            raise UserError("--dataset DIR goes with --format parquet, without --out or --session "
                              "(--host, --user, --hash-user and --workers go with --dataset)")
        _export_dataset(path, dataset_dir, host, user, hash_user, workers)
        return
    if fmt == "parquet":
        if not out_path:
            raise UserError("--format parquet needs --out FILE")
        try:
            from reflex.ledger.parquet import export_parquet
        except ImportError as e:
            raise UserError("parquet export needs pyarrow: pip install 'ctx-reflex[parquet]' (%s)" % e)
        n = export_parquet(path, out_path, session=session)
        click.echo("wrote %s events to %s" % (n, out_path), err=True)
        return
    from reflex.ledger.export import export_jsonl
    if out_path:
        with open(out_path, "w", encoding="utf-8") as f:
            export_jsonl(path, f, session)
    else:
        export_jsonl(path, sys.stdout, session)


def _export_dataset(path, dataset_dir, host, user, hash_user, workers=None):
    import getpass
    import socket
    try:
        from reflex.analysis.dataset import DatasetError, export_dataset, use_system_allocator
        import pyarrow  # noqa: F401
        import duckdb  # noqa: F401
        import adbc_driver_sqlite.dbapi  # noqa: F401
    except ImportError as e:
        raise UserError("dataset export needs pyarrow, duckdb and adbc-driver-sqlite: pip install "
                        "'ctx-reflex[parquet]' (%s)" % e)
    use_system_allocator()
    try:
        res = export_dataset(path, dataset_dir, host=host or socket.gethostname(), user=user or getpass.getuser(),
                             hash_user=hash_user, workers=workers)
    except DatasetError as e:
        raise UserError(str(e)) from None
    if res.rows:
        click.echo("appended %d events (ids %d-%d) and the facts of %d sessions (%d stored as they ended, %d "
                   "computed now) to %s" % (res.rows, res.first_id, res.last_id, res.sessions, res.stored_sessions,
                                            res.sessions - res.stored_sessions, dataset_dir), err=True)
    else:
        click.echo("nothing new: %s already holds every event of this ledger (0 rows added)" % dataset_dir, err=True)


@ledger.command()
@click.option("--ledger", "ledger_path", type=click.Path(dir_okay=False), default=None,
              help="Another ledger file (default: this user's, see `ctx paths`).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-head", "no_head", is_flag=True,
              help="The ledger never had a head anchor (copied without it, written by another tool): "
                   "its absence is a note, not a problem.")
@click.option("--dataset", "dataset_dir", type=click.Path(file_okay=False), default=None,
              help="Check a team dataset instead: every file against the hash its export recorded (docs/team.md).")
def verify(ledger_path, as_json, no_head, dataset_dir):
    """Check integrity, hash chain, sequences and blobs (exit 1 on any problem)."""
    if dataset_dir:
        if ledger_path or no_head:
            raise UserError("--dataset goes without --ledger and --no-head")
        _verify_dataset(dataset_dir, as_json)
    from reflex.ledger.verify import verify as run_verify
    paths = paths_mod.resolve()
    rep = run_verify(_ledger_path(ledger_path), paths.blobs, require_head=not no_head)
    if not ledger_path:
        # Events that never reached the ledger are a gap in it, even if every row verifies.
        from reflex.shim import spool
        for frame, why in spool.quarantined(paths.spool):
            rep.problem("spool", "quarantined, not in the ledger: %s (%s)" % (frame, why))
    if as_json:
        click.echo(json.dumps(rep.as_dict(), indent=2, sort_keys=True))
    else:
        c = rep.counts
        click.echo("events %s · sessions %s · runs %s · blobs evicted %s" % (
            c.get("events"), c.get("sessions"), c.get("runs"), c.get("blobs_evicted")))
        for note in rep.notes:
            click.echo("note: %s" % note)
        for check, msg in rep.problems:
            click.echo("PROBLEM [%s] %s" % (check, msg))
        click.echo("ledger OK" if rep.ok else "ledger has %d problem(s)" % len(rep.problems))
    raise SystemExit(0 if rep.ok else 1)


def _verify_dataset(dataset_dir, as_json):
    try:
        from reflex.analysis.dataset import verify_dataset
        import pyarrow  # noqa: F401
    except ImportError as e:
        raise UserError("dataset verify needs pyarrow: pip install 'ctx-reflex[parquet]' (%s)" % e)
    rep = verify_dataset(dataset_dir)
    if as_json:
        click.echo(json.dumps(rep.as_dict(), indent=2, sort_keys=True))
    else:
        c = rep.counts
        click.echo("exports %s · files %s (%s hashed, %.1f MB) · %s" % (
            c.get("exports"), c.get("files"), c.get("hashed"), (c.get("bytes") or 0) / 1e6, dataset_dir))
        for note in rep.notes:
            click.echo("note: %s" % note)
        for check, msg in rep.problems:
            click.echo("PROBLEM [%s] %s" % (check, msg))
        click.echo("dataset OK" if rep.ok else "dataset has %d problem(s)" % len(rep.problems))
    raise SystemExit(0 if rep.ok else 1)


@ledger.command()
def schema():
    """Print the ledger schema (SQL) generated from the migrations."""
    from reflex.ledger.schema import dump_sql
    click.echo(dump_sql(), nl=False)
