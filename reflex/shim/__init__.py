"""The hot path: what runs on every tool call and inside the agent's loop.

    hook.py       `ctx hook <harness>`: payload in, answer out; never blocks the agent
    run.py        `ctx run -- CMD`: run, capture (bounded), print the daemon's digest
    retrieve.py   `ctx get ADDRESS`, `ctx search PATTERN`
    fallback.py   the safety verdict the shim takes itself (daemon down or slow)
    client.py     talking to the daemon over its socket (framing: reflex.protocol)
    spool.py      events waiting while the daemon is down
    capture.py    how much of an output `ctx run` keeps, and how it says what it dropped
    pipesplit.py  finding `producer | slicer` in a command
    pipetee.py    the bounded tee between a producer and the agent's slicer
    launcher.py   the `python -S` launcher script and its precompiled modules

Imports: the standard library, reflex's top-level stdlib modules (paths, config, protocol,
errors, project, address), reflex.safety and the harness modules listed in
reflex.STDLIB_ONLY.  Nothing here may import click, pydantic, sqlite_utils, tiktoken or the
daemon (tests/test_import_contract.py).
"""
