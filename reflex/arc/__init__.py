"""The reflex arc: what happened in a session, what ctx expected, and how it adapts.

    events.py         the fold's input vocabulary: one Event per thing that happened
    intents.py        what each intervention expects the agent to do next
    fold.py           a session's events -> its state and the reflexes it drives (pure)
    detectors/        starvation, affordance, friction, landings: (state, event) -> firings
    decide.py         the PreToolUse decision for a Bash command: pass or rewrite (pure)
    reads.py          a file re-read: deliver it, or point at the earlier result (pure)
    policy.py         a policy epoch: the reviewed starting point of the arc
    ledger_events.py  ledger rows -> Events (daemon restart, `ctx replay --format events`)

Pure functions over events, no I/O except ledger_events' reading.  Imports: the standard
library, reflex.signature and reflex's top-level modules; never the daemon, a harness or
reflex.analysis.
"""
