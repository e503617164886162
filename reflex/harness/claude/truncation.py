"""What reached the model: Claude Code's own truncation of Bash output, modelled.

"Tokens saved" only means something against what the agent would have got WITHOUT ctx, and
without ctx the harness already truncates.  So every saving in a scorecard is counted against
this model of the harness, never against the raw output.

The model (Claude Code 2.1.332, docs/real-harness-testing.md and docs/claude-code-hooks.md):

* failure (a non-zero exit, PostToolUseFailure): the model gets ``Exit code N`` and the merged
  output; past 10,000 characters it is middle-truncated to the first 5,000 and the last 5,000
  characters joined by ``... [N characters truncated] ...`` (seen: a 28.3 k-character failing
  pytest reached the model as 2,883 o200k tokens of its 7,957).
* success (PostToolUse): output over BASH_MAX_OUTPUT_LENGTH characters (default 30,000, capped
  at 150,000) is spilled to a file and the model gets its path and a preview.  We count the
  first LIMIT characters as delivered.  If the real preview is shorter, the baseline (and so the
  saving) of such a run is overstated; scorecards count these runs separately
  (``tokens.baseline.cut_success``) so they can be discounted.  The failure path, where digests
  matter most, is the observed one.
* exit 1 of grep, rg, egrep, fgrep, find, diff, test, [, git diff, git grep is a success for
  the harness.

Two ways to count tokens of the harness's view:

* ``harness_tokens(text, exit_code, command)`` - exact: cut the text as the harness does and
  count o200k tokens (loads tiktoken; for the daemon, which has the raw output at hand).
* ``estimate_harness_tokens(raw_tokens, raw_chars, failed)`` - proportional: the kept share of
  the characters times the raw token count, plus the marker.  Within ~3% of exact on pytest
  output (tests/harness/claude/test_truncation.py measures it); used when the ledger has only counts.

Characters are approximated by bytes when only bytes are known (exact for ASCII output).
"""

from __future__ import annotations

import os

SUCCESS_LIMIT = 30_000
SUCCESS_LIMIT_MAX = 150_000
FAILURE_LIMIT = 10_000
FAILURE_HEAD = 5_000
FAILURE_TAIL = 5_000
# o200k tokens of "\n\n... [N characters truncated] ...\n\n" for 4-6 digit N (measured: 8-9).
MARKER_TOKENS = 9
MARKER = "\n\n... [%d characters truncated] ...\n\n"
BENIGN_EXIT1 = frozenset({"grep", "rg", "egrep", "fgrep", "find", "diff", "test", "[", "git diff", "git grep"})


def success_limit(environ=None) -> int:
    """BASH_MAX_OUTPUT_LENGTH as the harness reads it (default 30,000, capped at 150,000)."""
    env = os.environ if environ is None else environ
    try:
        n = int(env.get("BASH_MAX_OUTPUT_LENGTH") or SUCCESS_LIMIT)
    except ValueError:
        n = SUCCESS_LIMIT
    return max(1, min(n, SUCCESS_LIMIT_MAX))


def is_failure(exit_code, command: str | None = None) -> bool:
    """Whether the harness reports this exit as a tool failure (PostToolUseFailure)."""
    if not exit_code:
        return False
    if exit_code == 1 and command:
        words = command.split()
        if words and (words[0] in BENIGN_EXIT1 or " ".join(words[:2]) in BENIGN_EXIT1):
            return False
    return True


def harness_view(text: str, exit_code=0, command: str | None = None, limit: int | None = None) -> str:
    """The output as the model would see it (without the ``Exit code N`` line)."""
    if is_failure(exit_code, command):
        if len(text) <= FAILURE_LIMIT:
            return text
        cut = len(text) - FAILURE_HEAD - FAILURE_TAIL
        return text[:FAILURE_HEAD] + MARKER % cut + text[-FAILURE_TAIL:]
    lim = limit or success_limit()
    return text if len(text) <= lim else text[:lim]


def kept_chars(n_chars: int, failed: bool, limit: int | None = None) -> tuple[int, bool]:
    """(characters that reach the model, whether the harness cut anything)."""
    if failed:
        return (n_chars, False) if n_chars <= FAILURE_LIMIT else (FAILURE_HEAD + FAILURE_TAIL, True)
    lim = limit or SUCCESS_LIMIT
    return (n_chars, False) if n_chars <= lim else (lim, True)


def harness_tokens(text: str, exit_code=0, command: str | None = None, limit: int | None = None) -> int:
    """Exact o200k tokens of what the harness alone would deliver for `text`."""
    from reflex import tokens
    return tokens.count(harness_view(text, exit_code, command, limit))


def estimate_harness_tokens(raw_tokens: int, raw_chars: int, failed: bool, limit: int | None = None) -> int:
    """Proportional estimate of harness_tokens from counts only."""
    if raw_tokens <= 0 or raw_chars <= 0:
        return max(0, raw_tokens)
    kept, cut = kept_chars(raw_chars, failed, limit)
    if not cut:
        return raw_tokens
    est = (raw_tokens * kept + raw_chars // 2) // raw_chars
    return min(raw_tokens, est + (MARKER_TOKENS if failed else 0))
