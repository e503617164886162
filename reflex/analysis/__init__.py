"""Offline readers of the ledger: scorecards, evidence, the next policy epoch, replay.

    stats/        per-session scorecards, aggregates, terminal and HTML views (`ctx stats`)
    evidence.py   what became of each piece of evidence ctx delivered
    compile.py    `ctx policy compile`: ledgers in, the next policy epoch out
    replay.py     `ctx replay`: what ctx would have decided at each command of a session

Imports anything in reflex except the daemon and the shim; nothing imports it but the CLI
and the evals (it is never on the hot path).
"""
