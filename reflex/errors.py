"""The one error base: every failure ctx reports to a user is a CtxError.

The CLI catches CtxError once, at its edge (reflex.cli), prints `ctx: <message>` and exits
with the error's code.  Exit codes follow pre-commit's convention:

    1    the user's input or environment is wrong (UserError: a bad flag value, a missing
         ledger, an unreadable file) — fix the input and retry
    3    ctx itself failed (FatalError, or any unexpected exception the edge catches)
    130  interrupted (KeyboardInterrupt)

Hot-path code (reflex.shim) never lets an error reach the agent as a failure of its tool
call: it fails open and says so on stderr.  Stdlib only.
"""

from __future__ import annotations


class CtxError(Exception):
    """A failure ctx reports to the user, with the exit code the CLI ends with."""

    exit_code = 1


class UserError(CtxError):
    """The input or the environment is wrong; the message says what to change."""

    exit_code = 1


class FatalError(CtxError):
    """ctx itself failed; a bug or a broken installation."""

    exit_code = 3
