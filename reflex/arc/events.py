"""The session fold's input vocabulary: one Event per thing that happened in a session.

Every source of session history is translated into this one shape before the fold sees it:
the daemon's live hook calls, a ledger (reflex.arc.ledger_events) and a recorded Claude Code
transcript (reflex.harness.claude.transcript).  The fold never looks at where an event came from.

Kinds:

* ``command``   the agent issued a shell command (PreToolUse of Bash).  ``command`` is the text
                as the model wrote it, ``decision`` what ctx answered (pass / rewrite / deny,
                ``decision_detail`` the rewritten command or the deny rule), ``background``
                whether it runs detached, ``worktree_hash`` the project's hash at issue time,
                ``agent_id`` the subagent that issued it (None: the session's own agent).
* ``result``    a command finished (PostToolUse / PostToolUseFailure / tool_result), paired by
                ``tool_use_id``.  ``ran`` is False when the call never ran (denied, rejected,
                interrupted); ``truncated`` when the harness cut the output before the agent
                saw it; ``reason`` "timed out" when the harness stopped the command; ``paths``
                for a background command: the files the harness writes its output to.
* ``run``       ``ctx run`` stored an output and printed a digest: ``handle``, ``density``,
                ``reason``, ``hints`` (addresses emitted), ``failed_ids``, ``failed_count``,
                ``omitted``, ``truncated``, ``worktree_hash``.
* ``retrieval`` ``ctx get ADDRESS`` / ``ctx search PATTERN``: ``address`` or ``pattern``,
                ``handle``, ``result`` (know / miss), ``miss_reason``.
* ``edit``      the worktree changed: an Edit/Write/MultiEdit/NotebookEdit call, a command that
                writes files, a subagent that may have.  ``paths`` the files, when known.
* ``read``      a non-shell file read (Read/Grep/Glob tools): ``paths``, with ``:La-b`` ranges.
* ``prompt``    the user took a turn (a prompt, an answer): anything may have changed outside
                the agent's view, so it counts as a possible change when no worktree hashes are
                known.
* ``task_end``  a background command finished (the harness's task notification, a BashOutput
                that reports it done): ``tool_use_id`` of the command, ``paths`` its output
                files.  What it wrote is final from here on.
* ``session_start`` / ``session_end`` / ``compaction``  censoring boundaries: nothing before one
                is evidence about what the agent does after it.  ``model`` on session_start.

Events are frozen and JSON-able (``to_json`` / ``from_json`` round-trip), so `ctx replay
--format events` can also read a file of them.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass, fields

KINDS = ("command", "result", "run", "retrieval", "edit", "read", "prompt", "task_end",
         "session_start", "session_end", "compaction")
CENSORING = frozenset({"session_start", "session_end", "compaction"})
DECISIONS = ("pass", "rewrite", "deny")

# Claude Code tools that change files; their calls are `edit` events.
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
# Tools that only read; their calls are `read` events (a read of a named file resolves a hint).
READ_TOOLS = frozenset({"Read", "Grep", "Glob", "NotebookRead", "LS"})
# Paths that a redirect may name without changing the worktree.
NON_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
# How much of a command is looked at for a leading `ctx run` / `ctx get`: enough for the
# absolute launcher path a rewrite writes (a harness that records the rewritten command, as
# Gemini does, keeps `/home/<user>/…/bin/ctx run -- …`), short enough to stay cheap.
_HEAD_CHARS = 4096


@dataclass(frozen=True, slots=True)
class Event:
    kind: str
    seq: int = 0
    session_id: str = ""
    tool_use_id: str | None = None
    tool_name: str | None = None
    command: str | None = None
    cwd: str | None = None
    worktree_hash: str | None = None
    exit_code: int | None = None
    decision: str | None = None
    decision_detail: str | None = None
    background: bool = False
    ran: bool | None = None
    truncated: bool | None = None
    paths: tuple[str, ...] = ()
    model: str | None = None
    agent_id: str | None = None      # the subagent that made the call (hooks inside subagents say so)
    # run details
    handle: str | None = None
    density: str | None = None
    reason: str | None = None
    hints: tuple[str, ...] = ()
    failed_ids: tuple[str, ...] = ()
    failed_count: int | None = None
    omitted: int | None = None
    locations: tuple[str, ...] = ()
    # retrieval details
    address: str | None = None
    pattern: str | None = None
    result: str | None = None
    miss_reason: str | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError("unknown event kind %r; one of %s" % (self.kind, ", ".join(KINDS)))

    def to_json(self) -> dict:
        """Only the fields that differ from their defaults (kind and seq always)."""
        out = {"kind": self.kind, "seq": self.seq}
        for f in fields(self):
            if f.name in out:
                continue
            v = getattr(self, f.name)
            if v == f.default:
                continue
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    @classmethod
    def from_json(cls, obj: dict) -> "Event":
        kw = {}
        for f in fields(cls):
            if f.name not in obj:
                continue
            v = obj[f.name]
            if isinstance(v, list):
                v = tuple(str(x) for x in v)
            kw[f.name] = v
        return cls(**kw)


def _words(command: str) -> list[str] | None:
    try:
        return shlex.split(command)
    except ValueError:
        return None


def ctx_inner(command: str | None) -> str | None:
    """The command a `ctx run -- CMD` line runs (ctx quotes it as one word), or None.

    The fold reads a command the agent wrapped itself (or a recorded rewrite) as the
    command it runs, so `ctx run -- 'pytest -q'` and `pytest -q` share one signature."""
    if not command:
        return None
    head = command.lstrip()[:_HEAD_CHARS].split(None, 2)
    if len(head) < 2 or head[1] != "run" or not (head[0] == "ctx" or head[0].endswith("/ctx")):
        return None
    words = _words(command)
    if not words or "--" not in words:
        return None
    rest = words[words.index("--") + 1:]
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else shlex.join(rest)


def ctx_retrieval(command: str | None) -> tuple[str, str] | None:
    """("get", ADDRESS) or ("search", PATTERN) for a `ctx get/search` line, else None."""
    if not command:
        return None
    head = command.lstrip()[:_HEAD_CHARS].split(None, 2)
    if len(head) < 2 or head[1] not in ("get", "search") or not (head[0] == "ctx" or head[0].endswith("/ctx")):
        return None
    words = _words(command)
    if not words or len(words) < 3:
        return None
    args = [w for w in words[2:] if not w.startswith("-") and not w.startswith("b3=")]
    return (words[1], args[0]) if args else None


def handle_of(address: str | None) -> str | None:
    """The `r:<12 hex>` handle an address names, or None."""
    if not address or not address.startswith("r:") or len(address) < 14:
        return None
    h = address[:14]
    return h if all(c in "0123456789abcdef" for c in h[2:]) else None


def file_writes(sig) -> tuple[str, ...]:
    """Files a command's signature says it writes (redirects to /dev/null are not files)."""
    return tuple(w.path for w in sig.writes if w.path not in NON_FILES)


def abs_path(path: str, cwd: str | None) -> str:
    """`path` as one spelling per file: joined to `cwd` when relative, normalised; `~` is
    left alone (the fold never reads the environment)."""
    if not path:
        return path
    if path.startswith(("/", "~")) or not cwd:
        return posixpath.normpath(path)
    return posixpath.normpath(posixpath.join(cwd, path))
