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
import re

from reflex.analysis.evidence import OUTCOMES
from reflex.analysis.dataset import OUTCOME_COLUMNS, TABLES, table_glob

# The latest committed export of each ledger: its provenance and the range the readers may trust.
SQL_LATEST_INPUTS = """
SELECT i.ledger, i.through_id, i.digest, i.fmt, i.events, i.facts_version
FROM inputs i
JOIN (SELECT ledger, max(through_id) AS t FROM inputs GROUP BY ledger) m
  ON i.ledger = m.ledger AND i.through_id = m.t"""

# Each session's latest facts snapshot within its ledger's committed range (`li`), one row per
# ledger and session, decided on the session rows alone (a few percent of the facts), and kept
# narrow (no digest, no path): at 100M events it holds millions of rows.  `owned` marks the
# snapshot the compile reads: a session found in two ledgers is read from the ledger whose digest
# sorts first, as the SQLite compile does.  Hash aggregates and joins only (no window over the
# millions of rows: a sort).  Materialized once (Engine.materialize): the run rows then go
# through a single join with it.
SQL_CURRENT_SESSIONS = """
WITH s AS (
  SELECT f.ledger, f.session_id, max(f.through_id) AS through_id
  FROM facts f JOIN li ON f.ledger = li.ledger AND f.through_id <= li.through_id
  WHERE f.row_kind = 'session'
  GROUP BY f.ledger, f.session_id
), d AS (
  SELECT s.ledger, s.session_id, s.through_id, l.digest
  FROM s JOIN (SELECT ledger, min(digest) AS digest FROM li GROUP BY ledger) l ON s.ledger = l.ledger
)
SELECT d.ledger, d.session_id, d.through_id, CASE WHEN d.digest = m.digest THEN 1 ELSE 0 END AS owned
FROM d JOIN (SELECT session_id, min(digest) AS digest FROM d GROUP BY session_id) m ON d.session_id = m.session_id"""

# The run rows of the snapshots read (`cur` with owned = 1).
MINE_RUNS = """facts f JOIN cur c
  ON f.ledger = c.ledger AND f.session_id = c.session_id AND f.through_id = c.through_id
WHERE c.owned = 1 AND f.row_kind = 'run'"""

# Per ledger (compile_dataset adds them up per digest, as the SQLite compile counts per file).
SQL_SESSIONS = """
SELECT ledger, count(*) AS sessions, sum(owned) AS read_here
FROM cur
GROUP BY ledger
ORDER BY ledger"""

# Every density a first digest was rendered at, in any snapshot (a superset of those read: a
# density no row read has adds a pair of zero columns, which compile_dataset ignores).  No join.
SQL_DENSITIES = "SELECT DISTINCT first_density FROM facts WHERE row_kind = 'run' AND first_density IS NOT NULL"


def sql_cells(densities) -> str:
    """Every cell's counts in one scan of the run rows: per session first (a cell counts the
    sessions that ran its family), then per cell.  The first-digest counts ride along as one
    pair of columns per density (`densities`: SQL_DENSITIES' answer), so no second scan."""
    first = "".join(
        ", sum(CASE WHEN f.first_density = %s THEN 1 ELSE 0 END) AS fn%d"
        ", sum(CASE WHEN f.first_density = %s THEN f.requeried ELSE 0 END) AS fk%d" % (_lit(d), i, _lit(d), i)
        for i, d in enumerate(densities))
    return """
WITH per_session AS (
  SELECT f.family, f.reader, f.session_id, count(*) AS runs,
         sum(f.densified) AS densified_n, sum(f.densified * f.requeried) AS densified_k,
         sum(f.hinted) AS hints_n, sum(f.hinted * f.followed) AS hints_k,
         sum(f.positive) AS positive, sum(f.negative) AS negative, """ + ", ".join(
        "sum(f.%s) AS %s" % (c, c) for c in OUTCOME_COLUMNS) + first + """
  FROM """ + MINE_RUNS + """
  GROUP BY f.family, f.reader, f.session_id
)
SELECT family, reader, count(*) AS sessions, sum(runs) AS runs,
       sum(densified_n), sum(densified_k), sum(hints_n), sum(hints_k), sum(positive), sum(negative), """ + ", ".join(
        "sum(%s)" % c for c in OUTCOME_COLUMNS) + "".join(
        ", sum(fn%d), sum(fk%d)" % (i, i) for i in range(len(densities))) + """
FROM per_session
GROUP BY family, reader
ORDER BY family, reader"""


def _lit(text: str) -> str:
    return "'%s'" % text.replace("'", "''")


def committed_event_rows(file_rows, latest) -> dict:
    """Events per ledger in its committed exports' files: {ledger: rows}.

    file_rows: (path, rows) of every events file (Engine.file_rows); latest: {ledger: through_id}.
    A file's name says which export wrote it (reflex.analysis.dataset), and every event of an
    export has an id within its range, so this counts exactly the events with id <= through_id,
    without reading them."""
    from reflex.analysis.dataset import parse_part_name
    out: dict = {}
    for path, rows in file_rows:
        m = parse_part_name(path)
        if m is not None and m["ledger"] in latest and m["last"] <= latest[m["ledger"]]:
            out[m["ledger"]] = out.get(m["ledger"], 0) + int(rows)
    return out


def hadoop_path(path) -> str:
    """A local path as Spark (Hadoop's glob) reads it literally: its pattern characters escaped
    with a backslash (Hadoop takes no `[[]`).  A URL is the user's to spell."""
    if "://" in path:
        return path
    return re.sub(r"([\\\[\]{}*?^])", r"\\\1", path)


# hooks (the stats' summaries) came later: a dataset exported by an older ctx compiles without them.
REQUIRED_TABLES = ("events", "facts", "inputs")


def _present(dataset_dir) -> list[str]:
    """The dataset's tables that have files (every table, for a path only the engine can list)."""
    import glob
    return [t for t in TABLES if t in REQUIRED_TABLES or "://" in dataset_dir or glob.glob(table_glob(dataset_dir, t))]


def _check_dataset(dataset_dir):
    from reflex.analysis.compile import CompileError
    import glob
    if not os.path.isdir(dataset_dir):
        raise CompileError("no dataset at %s (`ctx ledger export --format parquet --dataset %s` makes one)"
                           % (dataset_dir, dataset_dir))
    for t in REQUIRED_TABLES:
        if "://" not in dataset_dir and not glob.glob(table_glob(dataset_dir, t)):
            raise CompileError("%s is not a ctx team dataset: no %s/date=*/host=*/user=*/part-*.parquet files"
                               % (dataset_dir, t))


DEFAULT_MEMORY_LIMIT = "700MB"


class DuckDB:
    """The embedded engine: one in-process connection over the dataset's files."""

    name = "duckdb"

    def __init__(self, dataset_dir, *, memory_limit: str | None = None, threads: int | None = None):
        import duckdb
        self.con = duckdb.connect(":memory:")
        # DuckDB would take up to 80% of RAM; capped, it spills.  700MB keeps the whole process
        # under 1 GB at 100M events (evals/bench_team.py) for little time;
        # CTX_DUCKDB_MEMORY_LIMIT (e.g. 8GB) lets a big machine trade memory for speed.
        memory_limit = memory_limit or os.environ.get("CTX_DUCKDB_MEMORY_LIMIT") or DEFAULT_MEMORY_LIMIT
        self.con.execute("SET memory_limit = '%s'" % memory_limit.replace("'", ""))
        # Spill (past the limit) into a private temp directory, not ./.tmp wherever the user stands.
        import tempfile
        self.spill = tempfile.mkdtemp(prefix="ctx-duckdb-")
        self.con.execute("SET temp_directory = '%s'" % self.spill.replace("'", "''"))
        if threads:
            self.con.execute("SET threads = %d" % int(threads))
        self.con.execute("SET preserve_insertion_order = false")
        self.globs = {}
        for t in _present(dataset_dir):
            self.globs[t] = table_glob(dataset_dir, t)
            path = self.globs[t].replace("'", "''")
            self.con.execute(
                "CREATE VIEW %s AS SELECT * EXCLUDE (\"date\", \"host\", \"user\"), \"date\" AS part_date, "
                "\"host\" AS part_host, \"user\" AS part_user FROM read_parquet('%s', hive_partitioning = true, "
                "hive_types_autocast = false, union_by_name = true)" % (t, path))

    def rows(self, sql) -> list[tuple]:
        return [tuple(r) for r in self.con.execute(sql).fetchall()]

    def materialize(self, name, sql) -> None:
        self.con.execute("CREATE OR REPLACE TEMP TABLE %s AS %s" % (name, sql))

    def columns(self, table) -> list[str]:
        """The view's column names (a column only newer exports write may be absent)."""
        return [r[0] for r in self.con.execute("DESCRIBE %s" % table).fetchall()]

    def file_rows(self, table) -> list[tuple]:
        """(path, rows) of each of the table's files, from the Parquet footers (no row is read)."""
        return self.rows("SELECT file_name, num_rows FROM parquet_file_metadata('%s')"
                         % self.globs[table].replace("'", "''"))

    def close(self):
        import shutil
        self.con.close()
        shutil.rmtree(self.spill, ignore_errors=True)


def spark_session(master: str | None = None, *, app="ctx-policy-compile"):
    """A SparkSession: Spark Connect when $SPARK_REMOTE is set, else master (or $SPARK_MASTER,
    default local[*])."""
    from pyspark.sql import SparkSession
    remote = os.environ.get("SPARK_REMOTE")
    b = SparkSession.builder.appName(app)
    if remote and not master:
        check_reachable(remote)
        return b.remote(remote).getOrCreate()
    master = master or os.environ.get("SPARK_MASTER") or "local[*]"
    check_reachable(master)
    if master.startswith("local"):
        # One machine, small shuffles: adaptive re-planning costs more stages than it saves.
        b = b.config("spark.sql.adaptive.enabled", "false")
    return (b.master(master)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", os.environ.get("CTX_SPARK_SHUFFLE_PARTITIONS", "8"))
            .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
            .getOrCreate())


# The ports a URL without one means: a standalone master's, Spark Connect's.
_DEFAULT_PORTS = {"spark": 7077, "sc": 15002}
CONNECT_TIMEOUT_S = 3.0


def master_addresses(url: str) -> list[tuple[str, int]]:
    """The (host, port) a spark:// or sc:// URL names (spark://a:7077,b:7077 names two masters,
    for standby failover); [] for any other master (local[*], yarn, k8s://...: Spark finds those)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in _DEFAULT_PORTS:
        return []
    out = []
    for hostport in rest.split("/", 1)[0].split(";", 1)[0].split(","):
        host, colon, port = hostport.rpartition(":")
        if not colon or not port.isdigit():
            host, port = hostport, str(_DEFAULT_PORTS[scheme])
        host = host.strip("[]")
        if host:
            out.append((host, int(port)))
    return out


def check_reachable(url: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse a Spark master (or Spark Connect server) that nothing answers at, in seconds:
    Spark itself retries a standalone master for a minute and then fails with a Py4J traceback."""
    import socket
    from reflex.analysis.compile import CompileError
    addresses = master_addresses(url)
    why = []
    for host, port in addresses:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            return
        except OSError as e:
            why.append("%s:%d: %s" % (host, port, e.strerror or e))
    if addresses:
        raise CompileError("no Spark %s answers at %s (%s). Start one (docs/team.md shows a standalone cluster "
                           "from the pyspark wheel), or pick another with --spark-master / $SPARK_MASTER / "
                           "$SPARK_REMOTE" % ("Connect server" if url.startswith("sc:") else "master", url,
                                              "; ".join(why)))


def damaged_files(dataset_dir) -> list[tuple[str, str]]:
    """The dataset's files whose Parquet footer cannot be read (a truncated copy, a file cut by a
    full disk): [(path, why)].  Asked only once an engine failed, to name the file."""
    import glob
    import pyarrow as pa
    import pyarrow.parquet as pq
    if "://" in dataset_dir:
        return []
    out = []
    for t in TABLES:
        for path in sorted(glob.glob(table_glob(dataset_dir, t))):
            try:
                pq.read_metadata(path)
            except (pa.ArrowException, OSError) as e:
                out.append((path, str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__))
    return out


def engine_failure(engine_name: str, dataset_dir, e: BaseException):
    """The CompileError for an engine's own error over dataset_dir: the damaged files by name when
    there are any (the engine's message may name only the first, inside its SQL), else its message."""
    from reflex.analysis.compile import CompileError
    dataset_dir = os.fspath(dataset_dir)
    try:
        damaged = damaged_files(dataset_dir)
    except ImportError:
        damaged = []
    if damaged:
        names = "; ".join("%s (%s)" % (p, why) for p, why in damaged[:5])
        more = " and %d more" % (len(damaged) - 5) if len(damaged) > 5 else ""
        return CompileError("the dataset %s has %d damaged file(s), not readable as Parquet: %s%s. "
                            "`ctx ledger verify --dataset %s` checks every file against the hash its export "
                            "recorded; restore a damaged file from a backup, or re-export its ledger (the host "
                            "in its name) into a fresh dataset" % (dataset_dir, len(damaged), names, more, dataset_dir))
    return CompileError("%s could not read the dataset %s: %s" % (engine_name, dataset_dir, _first_line(e)))


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class Spark:
    """Spark SQL over the same files; the caller may pass a session it already has (tests share one)."""

    name = "spark"

    def __init__(self, dataset_dir, *, spark=None, master: str | None = None):
        self.own = spark is None
        self.spark = spark or spark_session(master)
        self.spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        self.cached: list = []
        for t in _present(dataset_dir):
            df = self.spark.read.parquet(hadoop_path(os.path.join(dataset_dir, t)))
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

    def materialize(self, name, sql) -> None:
        df = self.spark.sql(sql).cache()
        self.cached.append(df)
        df.createOrReplaceTempView(name)

    def columns(self, table) -> list[str]:
        return list(self.spark.table(table).columns)

    def file_rows(self, table) -> list[tuple]:
        """(path, rows) of each of the table's files (Spark counts them: it has no footer-only read
        in SQL)."""
        from pyspark.sql import functions as F
        df = self.spark.table(table).groupBy(F.input_file_name().alias("path")).count()
        return [(r["path"], r["count"]) for r in df.collect()]

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
    except CompileError:
        raise
    except Exception as e:          # the engine reads every file's schema as it opens: a damaged one fails here
        raise engine_failure(engine, dataset_dir, e) from None
    raise CompileError("unknown engine %r (duckdb or spark)" % engine)


def current_sessions(eng) -> list[tuple]:
    """Materialize `li` (SQL_LATEST_INPUTS) and `cur` (SQL_CURRENT_SESSIONS) in eng; -> li's rows."""
    eng.materialize("li", SQL_LATEST_INPUTS)
    eng.materialize("cur", SQL_CURRENT_SESSIONS)
    return eng.rows("SELECT * FROM li ORDER BY digest, ledger")


def _compile_queries(eng) -> dict:
    """What compile_dataset reads from the engine: one scan of the session rows (materialized),
    one of the run rows (two, counting the distinct first densities), none of the events (their
    count per ledger comes from the files' row counts)."""
    inputs = current_sessions(eng)
    densities = sorted(d for (d,) in eng.rows(SQL_DENSITIES))
    latest = {ledger: through for ledger, through, *_rest in inputs}
    return {"inputs": inputs, "event_rows": committed_event_rows(eng.file_rows("events"), latest),
            "sessions": eng.rows(SQL_SESSIONS), "densities": densities, "cells": eng.rows(sql_cells(densities))}


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
        res = _compile_queries(eng)
    except CompileError:
        raise
    except Exception as e:          # the engine's own error: say which dataset and engine (and file)
        raise engine_failure(eng.name, dataset_dir, e) from None
    finally:
        eng.close()
    inputs, seen = [], set()
    for ledger, through, digest, fmt, events, version in res["inputs"]:
        in_dataset = res["event_rows"].get(ledger, 0)
        if version != FACTS_VERSION:
            raise CompileError("ledger %s was exported with compile facts v%s; this ctx reads v%d: re-export it "
                               "into a fresh dataset" % (ledger, version, FACTS_VERSION))
        if in_dataset != events:
            raise CompileError("ledger %s: the dataset holds %d of the %d events its export %d committed "
                               "(files missing or deleted?)" % (ledger, in_dataset, events, through))
        if digest in seen:         # the same events exported twice (a copy of one ledger, from two machines)
            continue
        seen.add(digest)
        inputs.append(Input("dataset:%s@%d" % (ledger, through), digest, fmt, int(events)))
    if not inputs:
        raise CompileError("%s holds no committed exports" % dataset_dir)
    by_digest = {i.digest: i for i in inputs}
    n_sessions = 0
    digest_of = {ledger: digest for ledger, _t, digest, *_rest in res["inputs"]}
    for ledger, sessions, read_here in res["sessions"]:
        digest = digest_of.get(ledger)
        if digest in by_digest:
            by_digest[digest].sessions += int(read_here)
            by_digest[digest].skipped_sessions += int(sessions) - int(read_here)
            n_sessions += int(read_here)
    cells: dict = {}
    n_out = len(OUTCOME_COLUMNS)
    for row in res["cells"]:
        fam, reader, sessions, runs, dn, dk, hn, hk, pos, neg = row[:10]
        c = Cell(sessions=int(sessions), runs=int(runs), positive=int(pos), negative=int(neg))
        c.densified = [int(dn), int(dk)]
        c.hints = [int(hn), int(hk)]
        for name, v in zip(OUTCOME_COLUMNS, row[10:10 + n_out]):
            if v:
                c.outcomes[name[2:]] = int(v)
        first = row[10 + n_out:]
        for i, density in enumerate(res["densities"]):
            if first[2 * i]:
                c.first[density] = [int(first[2 * i]), int(first[2 * i + 1])]
        cells[(fam, reader)] = c
    assert {c[2:] for c in OUTCOME_COLUMNS} == set(OUTCOMES)
    events = sum(i.events for i in inputs)
    return _emit(base_policy, cells, inputs, events, n_sessions, plan_value,
                 Policy, FamilyDefaults, LADDER, parse_policy)
