"""`ctx policy compile --dataset DIR --engine duckdb|spark`: the compile's team-wide half as SQL.

A team dataset (reflex.analysis.dataset) holds every developer's events, the per-run compile facts
their exporters computed (reflex.analysis.compile_facts) and one inputs row per export.  What is
left of the compile is set arithmetic over tens of millions of rows, which is what SQL engines are
for: keep each session's latest facts, read a session found in two ledgers once (from the ledger
whose digest sorts first, as the SQLite compile does), add the facts up per command family x
reader, and count events and sessions per input.  The statements below are plain SQL that DuckDB
and Spark SQL both run unchanged (CTEs, joins, GROUP BY, CASE, count(DISTINCT)); each engine only
registers three views (`events`, `facts`, `inputs`, partition columns renamed part_date,
part_host, part_user) over the dataset's Parquet files.

The small result sets go through the same decision and TOML code as the SQLite compile
(reflex.analysis.compile._emit), so the epoch is byte-identical across engines and identical to
compiling the source ledger files directly (tests/analysis/test_team_dataset.py checks both).

Engines:
* duckdb (default): embedded, `pip install 'ctx-reflex[parquet]'`.
* spark: `pip install 'ctx-reflex[spark]'` (needs Java 17+).  `--spark-master URL` (or
  $SPARK_MASTER) picks the cluster, default local[*]; $SPARK_REMOTE (sc://host:15002) uses Spark
  Connect instead.  The dataset path must be readable by the executors (a shared filesystem,
  s3a://, hdfs://).
"""

from __future__ import annotations

import os

from reflex.analysis.evidence import OUTCOMES
from reflex.analysis.dataset import OUTCOME_COLUMNS

# The latest committed export of each ledger: its provenance and the range the readers may trust.
_LATEST_INPUTS = """
li AS (
  SELECT i.ledger, i.through_id, i.digest, i.fmt, i.events, i.facts_version
  FROM inputs i
  JOIN (SELECT ledger, max(through_id) AS t FROM inputs GROUP BY ledger) m
    ON i.ledger = m.ledger AND i.through_id = m.t
)"""

# Each session's latest facts within the committed range, read from one input.  Decided on the
# session rows (one per session and export) so the run rows go through a single join.
_CURRENT_FACTS = _LATEST_INPUTS + """,
ss AS (
  SELECT f.ledger, f.session_id, f.through_id, li.digest FROM facts f
  JOIN li ON f.ledger = li.ledger AND f.through_id <= li.through_id
  WHERE f.row_kind = 'session'
),
latest AS (
  SELECT ledger, session_id, max(through_id) AS t FROM ss GROUP BY ledger, session_id
),
cur AS (
  SELECT ss.* FROM ss JOIN latest
    ON ss.ledger = latest.ledger AND ss.session_id = latest.session_id AND ss.through_id = latest.t
),
owner AS (
  SELECT session_id, min(digest) AS digest FROM cur GROUP BY session_id
),
chosen AS (
  SELECT cur.ledger, cur.session_id, cur.through_id FROM cur
  JOIN owner ON cur.session_id = owner.session_id AND cur.digest = owner.digest
),
mine AS (
  SELECT f.* FROM facts f JOIN chosen
    ON f.ledger = chosen.ledger AND f.session_id = chosen.session_id AND f.through_id = chosen.through_id
)"""

SQL_INPUTS = "WITH " + _LATEST_INPUTS + """
SELECT li.ledger, li.through_id, li.digest, li.fmt, li.events, li.facts_version, coalesce(e.n, 0) AS in_dataset
FROM li LEFT JOIN (
  SELECT events.ledger, count(*) AS n FROM events JOIN li ON events.ledger = li.ledger AND events.id <= li.through_id
  GROUP BY events.ledger
) e ON li.ledger = e.ledger
ORDER BY li.digest, li.ledger"""

SQL_SESSIONS = "WITH " + _CURRENT_FACTS + """
SELECT cur.digest, count(*) AS sessions,
       sum(CASE WHEN owner.digest = cur.digest THEN 1 ELSE 0 END) AS read_here
FROM cur JOIN owner ON cur.session_id = owner.session_id
GROUP BY cur.digest
ORDER BY cur.digest"""

# Two levels instead of count(DISTINCT session_id): per session first, then per cell.
SQL_CELLS = "WITH " + _CURRENT_FACTS + """,
per_session AS (
  SELECT family, reader, session_id, count(*) AS runs,
         sum(densified) AS densified_n, sum(densified * requeried) AS densified_k,
         sum(hinted) AS hints_n, sum(hinted * followed) AS hints_k,
         sum(positive) AS positive, sum(negative) AS negative, """ + ", ".join(
    "sum(%s) AS %s" % (c, c) for c in OUTCOME_COLUMNS) + """
  FROM mine WHERE row_kind = 'run'
  GROUP BY family, reader, session_id
)
SELECT family, reader, count(*) AS sessions, sum(runs) AS runs,
       sum(densified_n), sum(densified_k), sum(hints_n), sum(hints_k), sum(positive), sum(negative), """ + ", ".join(
    "sum(%s)" % c for c in OUTCOME_COLUMNS) + """
FROM per_session
GROUP BY family, reader
ORDER BY family, reader"""

SQL_FIRST = "WITH " + _CURRENT_FACTS + """
SELECT family, reader, first_density, count(*) AS n, sum(requeried) AS k
FROM mine WHERE row_kind = 'run' AND first_density IS NOT NULL
GROUP BY family, reader, first_density
ORDER BY family, reader, first_density"""

QUERIES = {"inputs": SQL_INPUTS, "sessions": SQL_SESSIONS, "cells": SQL_CELLS, "first": SQL_FIRST}


def _table_glob(dataset_dir, table) -> str:
    return os.path.join(dataset_dir, table, "date=*", "host=*", "user=*", "part-*.parquet")


def _check_dataset(dataset_dir):
    from reflex.analysis.compile import CompileError
    import glob
    if not os.path.isdir(dataset_dir):
        raise CompileError("no dataset at %s (`ctx ledger export --format parquet --dataset %s` makes one)"
                           % (dataset_dir, dataset_dir))
    for t in ("events", "facts", "inputs"):
        if "://" not in dataset_dir and not glob.glob(_table_glob(dataset_dir, t)):
            raise CompileError("%s is not a ctx team dataset: no %s/date=*/host=*/user=*/part-*.parquet files"
                               % (dataset_dir, t))


class DuckDB:
    """The embedded engine: one in-process connection over the dataset's files."""

    name = "duckdb"

    def __init__(self, dataset_dir, *, memory_limit: str | None = None, threads: int | None = None):
        import duckdb
        self.con = duckdb.connect(":memory:")
        # DuckDB takes up to 80% of RAM by default and spills past its limit: a shared machine can
        # cap it (e.g. CTX_DUCKDB_MEMORY_LIMIT=1GB) at the price of temp files.
        memory_limit = memory_limit or os.environ.get("CTX_DUCKDB_MEMORY_LIMIT")
        if memory_limit:
            self.con.execute("SET memory_limit = '%s'" % memory_limit.replace("'", ""))
        if threads:
            self.con.execute("SET threads = %d" % int(threads))
        self.con.execute("SET preserve_insertion_order = false")
        for t in ("events", "facts", "inputs"):
            path = _table_glob(dataset_dir, t).replace("'", "''")
            self.con.execute(
                "CREATE VIEW %s AS SELECT * EXCLUDE (\"date\", \"host\", \"user\"), \"date\" AS part_date, "
                "\"host\" AS part_host, \"user\" AS part_user FROM read_parquet('%s', hive_partitioning = true, "
                "hive_types_autocast = false, union_by_name = true)" % (t, path))

    def rows(self, sql) -> list[tuple]:
        return [tuple(r) for r in self.con.execute(sql).fetchall()]

    def close(self):
        self.con.close()


def spark_session(master: str | None = None, *, app="ctx-policy-compile"):
    """A SparkSession: Spark Connect when $SPARK_REMOTE is set, else master (or $SPARK_MASTER,
    default local[*])."""
    from pyspark.sql import SparkSession
    remote = os.environ.get("SPARK_REMOTE")
    b = SparkSession.builder.appName(app)
    if remote and not master:
        return b.remote(remote).getOrCreate()
    master = master or os.environ.get("SPARK_MASTER") or "local[*]"
    if master.startswith("local"):
        # One machine, small shuffles: adaptive re-planning costs more stages than it saves.
        b = b.config("spark.sql.adaptive.enabled", "false")
    return (b.master(master)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", os.environ.get("CTX_SPARK_SHUFFLE_PARTITIONS", "8"))
            .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
            .getOrCreate())


class Spark:
    """Spark SQL over the same files; the caller may pass a session it already has (tests share one)."""

    name = "spark"

    def __init__(self, dataset_dir, *, spark=None, master: str | None = None):
        self.own = spark is None
        self.spark = spark or spark_session(master)
        self.spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        self.cached: list = []
        for t in ("events", "facts", "inputs"):
            df = self.spark.read.parquet(os.path.join(dataset_dir, t))
            for c in ("date", "host", "user"):
                df = df.withColumnRenamed(c, "part_" + c)
            if t != "events":
                # facts and inputs are small (a row per run, per export) and every query re-reads
                # them through the same CTEs: keep them in memory for the compile's four queries.
                df = df.cache()
                self.cached.append(df)
            df.createOrReplaceTempView(t)

    def rows(self, sql) -> list[tuple]:
        return [tuple(r) for r in self.spark.sql(sql).collect()]

    def close(self):
        for df in self.cached:
            df.unpersist()
        if self.own:
            self.spark.stop()


def open_engine(engine: str, dataset_dir, **kw):
    from reflex.analysis.compile import CompileError
    _check_dataset(dataset_dir)
    try:
        if engine == "duckdb":
            return DuckDB(dataset_dir, **{k: v for k, v in kw.items() if k in ("memory_limit", "threads")})
        if engine == "spark":
            return Spark(dataset_dir, **{k: v for k, v in kw.items() if k in ("spark", "master")})
    except ImportError as e:
        extra = "parquet" if engine == "duckdb" else "spark"
        raise CompileError("--engine %s needs %s: pip install 'ctx-reflex[%s]' (%s)"
                           % (engine, "duckdb" if engine == "duckdb" else "pyspark", extra, e)) from None
    raise CompileError("unknown engine %r (duckdb or spark)" % engine)


def compile_dataset(dataset_dir, *, engine: str = "duckdb", plan_value=False, base=None, **engine_kw):
    """The epoch of every committed export in dataset_dir (a CompileResult, as compile_epoch)."""
    from reflex.analysis.compile_facts import FACTS_VERSION
    from reflex.arc.policy import LADDER, FamilyDefaults, Policy, PolicyError, default_policy, load_policy, parse_policy
    from reflex.analysis.compile import Cell, CompileError, Input, _emit
    try:
        base_policy = load_policy(base) if base else default_policy()
    except PolicyError as e:
        raise CompileError("base epoch: %s" % e) from None
    eng = open_engine(engine, os.fspath(dataset_dir), **engine_kw)
    try:
        res = {k: eng.rows(sql) for k, sql in QUERIES.items()}
    except CompileError:
        raise
    except Exception as e:          # the engine's own error: say which dataset and engine
        raise CompileError("%s could not read the dataset %s: %s" % (eng.name, dataset_dir, e)) from None
    finally:
        eng.close()
    inputs, seen = [], set()
    for ledger, through, digest, fmt, events, version, in_dataset in res["inputs"]:
        if version != FACTS_VERSION:
            raise CompileError("ledger %s was exported with compile facts v%s; this ctx reads v%d: re-export it "
                               "into a fresh dataset" % (ledger, version, FACTS_VERSION))
        if in_dataset != events:
            raise CompileError("ledger %s: the dataset holds %d of the %d events its export %d committed "
                               "(files missing or deleted?)" % (ledger, in_dataset, events, through))
        if digest in seen:         # the same ledger file exported twice (e.g. from two machines)
            continue
        seen.add(digest)
        inputs.append(Input("dataset:%s@%d" % (ledger, through), digest, fmt, int(events)))
    if not inputs:
        raise CompileError("%s holds no committed exports" % dataset_dir)
    by_digest = {i.digest: i for i in inputs}
    n_sessions = 0
    for digest, sessions, read_here in res["sessions"]:
        if digest in by_digest:
            by_digest[digest].sessions = int(read_here)
            by_digest[digest].skipped_sessions = int(sessions) - int(read_here)
            n_sessions += int(read_here)
    cells: dict = {}
    for row in res["cells"]:
        fam, reader, sessions, runs, dn, dk, hn, hk, pos, neg = row[:10]
        c = Cell(sessions=int(sessions), runs=int(runs), positive=int(pos), negative=int(neg))
        c.densified = [int(dn), int(dk)]
        c.hints = [int(hn), int(hk)]
        for name, v in zip(OUTCOME_COLUMNS, row[10:]):
            if v:
                c.outcomes[name[2:]] = int(v)
        cells[(fam, reader)] = c
    for fam, reader, density, n, k in res["first"]:
        cells[(fam, reader)].first[density] = [int(n), int(k)]
    assert {c[2:] for c in OUTCOME_COLUMNS} == set(OUTCOMES)
    events = sum(i.events for i in inputs)
    return _emit(base_policy, cells, inputs, events, n_sessions, plan_value,
                 Policy, FamilyDefaults, LADDER, parse_policy)
