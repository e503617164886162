"""Claude Code: everything ctx knows about this one harness.

    payload.py      raw hook stdin -> a decoded payload, one clear error per failure (stdlib)
    answers.py      the hook answers ctx gives (rewrite, deny, digest, context) (stdlib)
    permissions.py  the permission mirror: would Claude Code run this without ctx? (stdlib)
    proc.py         the harness process behind a hook call, and its command line
    models.py       pydantic models of the hook payloads (the daemon's trust boundary)
    hooks.py        the daemon's handler per hook event -> (answer, ledger event)
    grep_result.py  a Grep tool result -> its search digest in Grep's own output shape
    transcript.py   a recorded session transcript -> reflex.arc Events
    truncation.py   what reached the model: Claude Code's own cut of Bash output, modelled

payload, answers and permissions run in the shim (reflex.STDLIB_ONLY); the rest run in the
daemon or offline.
"""
