"""Offline readers of the ledger: scorecards, evidence, the next policy epoch, replay, team datasets.

    stats/            per-session scorecards, aggregates, terminal and HTML views (`ctx stats`)
    evidence.py       what became of each piece of evidence ctx delivered
    compile.py        `ctx policy compile`: ledgers in, the next policy epoch out
    dataset.py        `ctx ledger export --dataset`: a team's ledgers as one hive-partitioned,
                      append-only Parquet dataset (events, per-run compile facts, one row per export)
    compile_facts.py  one session's timeline -> the per-run facts the compile adds up (the part of
                      the compile that is a sequential join, kept in Python; a team dataset stores them)
    facts_store.py    ended sessions' facts stored beside the ledger (a cache the export reads; the
                      daemon runs it as a child process, `python -m reflex.analysis.facts_store`)
    compile_sql.py    the compile's team-wide half as engine-neutral SQL over a team dataset
                      (reflex.analysis.dataset), run on DuckDB (embedded) or Spark
    team.py           `ctx stats --dataset`: the team scorecard, SQL over the same dataset
    replay.py         `ctx replay`: what ctx would have decided at each command of a session
    savings.py        `ctx replay --savings`: per tool and program, the tokens the model received
                      and what ctx would have delivered instead (docs/savings.md)

Imports anything in reflex except the daemon and the shim; nothing imports it but the CLI
and the evals (it is never on the hot path; the daemon only starts facts_store as a process).
duckdb, pyspark, pyarrow and adbc-driver-sqlite are optional and imported lazily.
"""
