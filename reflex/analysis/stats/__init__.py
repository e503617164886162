"""Reading the ledger: per-session scorecards, cross-session aggregates, their terminal view.

    scorecard.py        one session -> its scorecard (JSON documented there)
    aggregate.py        many sessions -> totals per family, profile, intervention class
    timeline.py         ledger rows -> one session's calls, runs, edits and boundaries
    anomalies.py        behavioral anomalies (loops, thrash, zero landings)
    ledger_read.py      opening ledgers for reading (read-only, migrated when old)
    render.py           the terminal view
"""
