"""The daemon: one long-lived process per ctx home that answers every hook and `ctx run`.

    __main__.py          `python -m reflex.daemon run`: the process entry (single-instance lock first)
    server.py            socket and HTTP listeners, spool ingestion, lifecycle
    http.py              the loopback HTTP transport for `type: "http"` hooks
    ops.py               one function per request op: (header, body) -> reply
    context.py           the long-lived context: ledger writer, blob store, config, caches
    reflexes.py          the reflex arc per session, fed from the ledger's rows
    runs.py              a `ctx run` capture -> blob and digest (worker thread)
    follow.py            a run's raw tokens counted while the command still runs
    retrieval.py         `get` and `search`: verified bytes under a token budget, or a typed miss
    retrieval_models.py  the know/miss contract of `ctx get --json` / `ctx search --json`
    linesearch.py        `ctx search`'s linear-time engine over redacted outputs
    session_facts.py     after sessions end, a child process stores their compile facts
    control.py           start, stop and inspect the daemon from the CLI

Imports anything in reflex but the analysis package (offline readers), the CLI and its commands:
what the daemon needs of the analysis (ended sessions' facts) runs as a separate process.
"""
