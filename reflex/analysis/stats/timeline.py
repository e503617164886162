"""A session's timeline: its ledger rows, paired into calls, runs, edits and boundaries.

The ledger records each Bash tool call as separate events: the PreToolUse decision, the
``ctx run`` that may have executed it (its own ``run`` event, with the digest's facts), a
``ctx get/search`` retrieval, and the PostToolUse/PostToolUseFailure result.  Scorecards and
evidence outcomes need them joined back into one Call per tool call:

* a post event joins its PreToolUse by ``tool_use_id``;
* a run event joins the open call (issued, not yet finished) with its core signature, else
  the open call that was rewritten to ``ctx run``; a run no hook saw (``ctx run`` typed in a
  terminal with CLAUDE_CODE_SESSION_ID set) becomes a call of its own;
* a retrieval joins the open ``ctx get/search`` call, else stands alone.

Alongside, the timeline counts the two things every later judgement depends on:

* ``changes`` - evidence that the worktree changed: an Edit/Write/MultiEdit/NotebookEdit call
  that was not denied, a subagent, a user turn, or a Bash command that writes files (its
  signature's writes) or reverts them (git checkout/restore/reset/stash).  ``changed`` also
  reads the daemon's worktree hashes, but never lets equal hashes hide a change event.
* ``epoch`` - censoring boundaries (SessionStart, SessionEnd, compaction).  Nothing is compared
  across an epoch: what the agent does after a compaction is no evidence about a digest before.

Pure: rows in, Timeline out.  Signatures are parsed only for commands a cheap text check says
may write files, and cached per process.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from reflex.arc.events import ctx_inner, ctx_retrieval, handle_of

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
READ_TOOLS = frozenset({"Read", "Grep", "Glob", "NotebookRead", "LS"})
# What may make a Bash command write files; only such commands are parsed (a redirect to a file,
# not 2>&1; a writer; sed -i; git subcommands that rewrite the worktree; curl/wget to a file).
_GIT_WRITE = re.compile(r"\bgit\s+(checkout|restore|reset|stash|apply|am|merge|rebase|pull|switch|mv|rm|clean|"
                        r"cherry-pick|revert)\b")
_MAY_WRITE = re.compile(r">>?(?!&)|\b(tee|mv|cp|rm|touch|mkdir|ln|patch|truncate|install|dd|perl|black|isort|"
                        r"prettier|gofmt|rustfmt|autopep8|yapf|unzip|tar)\b|\bsed\s+(-\w+\s+)*-i|"
                        r"\b(curl|wget)\b.*\s-[oO]|" + _GIT_WRITE.pattern)
# A redirect to /dev/null (2>/dev/null, &>/dev/null, > /dev/null ...) writes no file: on its own
# it does not make a command worth parsing.  Real Claude Code commands: 29% match _MAY_WRITE, and
# for 44% of those a /dev/null redirect is the only reason (a parse each, ~270 us).
_TO_DEV_NULL = re.compile(r"(?:\d|&)?>>?[ \t]*/dev/null(?=$|[\s;&|)`\"'])")
REVERT = re.compile(r"\bgit\s+(checkout\s+(--\s+)?\S|restore\b|reset\s+--hard|stash(\s+(push|save))?\s*($|[;&|]))")
_SIG_CACHE: dict = {}
_SIG_CACHE_MAX = 20000


def signature_of(command: str, cwd: str | None):
    """reflex.signature.signature, cached per process (compile parses the same lines often)."""
    key = (command, cwd)
    sig = _SIG_CACHE.get(key)
    if sig is None:
        from reflex.signature import signature
        if len(_SIG_CACHE) >= _SIG_CACHE_MAX:
            _SIG_CACHE.clear()
        sig = _SIG_CACHE[key] = signature(command, cwd)
    return sig


def load_data(row) -> dict:
    d = row.get("data")
    if isinstance(d, dict):
        return d
    if not d:
        return {}
    try:
        d = json.loads(d)
    except (TypeError, ValueError):
        return {}
    return d if isinstance(d, dict) else {}


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _strs(v) -> tuple[str, ...]:
    return tuple(str(x) for x in v) if isinstance(v, (list, tuple)) else ()


@dataclass(slots=True)
class Run:
    """One `ctx run`: the output it stored and the digest it printed."""
    uid: str
    seq: int
    command: str
    family: str | None
    core_hash: str | None
    exit_code: int | None
    raw_bytes: int | None
    handle: str | None
    profile: str | None
    density: str | None
    reason: str | None
    raw_tokens: int | None
    delivered_tokens: int | None
    harness_tokens: int | None         # exact baseline, when the daemon recorded one
    failed_ids: tuple[str, ...]
    failed_count: int | None
    hints: tuple[str, ...]
    omitted: int
    truncated: bool
    passthrough: bool
    slicer: str | None
    duration_ms: float | None
    worktree_hash: str | None
    digest_error: str | None

    @property
    def digested(self) -> bool:
        """A digest (not the raw output, not a failed digest) reached the agent."""
        return self.delivered_tokens is not None and not self.passthrough and not self.digest_error

    @property
    def lossy(self) -> bool:
        return self.digested and (self.omitted > 0 or self.truncated or bool(self.hints)
                                  or self.density not in ("raw", "raw-capped"))

    @property
    def failing(self) -> bool:
        return bool(self.failed_count) or bool(self.exit_code)


@dataclass(slots=True)
class Call:
    """One Bash tool call (or a ctx run no hook saw), as issued and as finished."""
    idx: int
    seq: int
    uid: str
    tool_use_id: str | None
    command: str
    cwd: str | None
    family: str | None
    core_hash: str | None
    decision: str | None
    detail: str | None
    epoch: int
    changes: int
    wt: str | None                          # worktree hash when issued
    background: bool = False
    held_back: bool = False                 # digestible, let through untouched to keep the harness's permission call
    wt_after: str | None = None             # worktree hash after it ran (its run's)
    retrieval_cmd: tuple | None = None     # ("get", address) / ("search", pattern)
    writes: bool = False                    # the command itself changes the worktree
    reverts: bool = False
    # finish
    post_seq: int | None = None
    post_uid: str | None = None
    exit_code: int | None = None
    output_bytes: int | None = None
    failed: bool | None = None              # PostToolUseFailure
    interrupted: bool = False
    rewrite_applied: int | None = None
    post_duration_ms: float | None = None
    harness_cut: bool = False               # the harness truncated what it delivered
    run: Run | None = None
    retrieval: dict | None = None

    @property
    def ran(self) -> bool:
        return self.decision != "deny" and not self.interrupted

    @property
    def is_retrieval(self) -> bool:
        return self.retrieval_cmd is not None or (self.retrieval is not None and self.run is None)


@dataclass(slots=True)
class Edit:
    seq: int
    uid: str
    tool: str
    paths: tuple[str, ...]
    epoch: int


@dataclass(slots=True)
class Timeline:
    session_id: str
    model: str | None = None
    cwd: str | None = None
    first_ts: float | None = None
    last_ts: float | None = None
    events: int = 0
    calls: list = field(default_factory=list)
    edits: list = field(default_factory=list)
    retrievals: list = field(default_factory=list)       # every retrieval event, in order
    boundaries: list = field(default_factory=list)       # (seq, kind)
    hook_latency_us: list = field(default_factory=list)
    changes_at: list = field(default_factory=list)       # seq of each change, in order
    epochs: int = 0
    ended: bool = False

    def changed(self, a: Call, b: Call) -> bool:
        """Whether the worktree changed between call a and issuing call b.

        A change event between them (an edit, a file-writing command, a user turn) is a change
        whatever the hashes say: the daemon's hash at PreToolUse can lag an Edit made
        milliseconds earlier.  Without one, differing hashes (a's after it ran, b's at issue)
        are a change, e.g. a script that wrote files.  Both readings err towards "changed",
        which can only suppress negative evidence, never invent it."""
        if b.changes != a.changes:
            return True
        after = a.wt_after or a.wt
        return bool(after and b.wt and after != b.wt)

    def runs(self):
        return [c for c in self.calls if c.run is not None]


def _core(command: str, cwd, family, core_hash):
    """A command the agent wrapped in `ctx run` itself is read as the command it runs."""
    inner = ctx_inner(command)
    if inner is None:
        return family, core_hash
    sig = signature_of(inner, cwd)
    return sig.family, sig.core_hash


def _writes(command: str, cwd) -> tuple[bool, bool]:
    if not command or not _MAY_WRITE.search(command):
        return False, False
    if "/dev/null" in command and not _MAY_WRITE.search(_TO_DEV_NULL.sub(" ", command)):
        # Nothing else hints at a write (no git word either, so no revert): the parse would find
        # only the /dev/null redirects, which are not writes.
        return False, False
    reverts = bool(REVERT.search(command))
    if reverts or _GIT_WRITE.search(command):
        return True, reverts
    sig = signature_of(command, cwd)
    writes = any(w.path not in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-")
                 for s in (sig,) + tuple(sig.segments) for w in s.writes)
    return writes or reverts, reverts


def _run_of(row, data) -> Run:
    return Run(
        uid=row.get("uid") or "", seq=row.get("seq") or 0, command=row.get("command") or "",
        family=row.get("family"), core_hash=row.get("core_hash"), exit_code=_int(row.get("exit_code")),
        raw_bytes=_int(row.get("output_bytes")), handle=data.get("handle"), profile=data.get("profile"),
        density=data.get("density"), reason=data.get("reason"), raw_tokens=_int(data.get("raw_tokens")),
        delivered_tokens=_int(data.get("delivered_tokens")), harness_tokens=_int(data.get("harness_tokens")),
        failed_ids=_strs(data.get("failed_ids")), failed_count=_int(data.get("failed_count")),
        hints=_strs(data.get("hints")), omitted=_int(data.get("omitted")) or 0,
        truncated=data.get("truncated") is True, passthrough=data.get("passthrough") is True,
        slicer=data.get("slicer") if isinstance(data.get("slicer"), str) else None,
        duration_ms=_num(data.get("duration_ms")), worktree_hash=data.get("worktree_hash"),
        digest_error=data.get("digest_error"))


class _Builder:
    def __init__(self, session_id):
        self.tl = Timeline(session_id)
        self.open: dict = {}          # tool_use_id -> Call (issued, not finished)
        self.closed: set = set()      # tool_use_ids of finished calls
        self.open_order: list = []    # Calls issued and not finished, oldest first
        self.changes = 0

    def _change(self, seq):
        self.changes += 1
        self.tl.changes_at.append(seq)

    def _new_call(self, row, command, decision, data, *, wt=None):
        tl = self.tl
        cwd = row.get("cwd")
        family, core_hash = _core(command, cwd, row.get("family"), row.get("core_hash"))
        ti = data.get("tool_input") if isinstance(data.get("tool_input"), dict) else {}
        c = Call(idx=len(tl.calls), seq=row.get("seq") or 0, uid=row.get("uid") or "",
                 tool_use_id=row.get("tool_use_id"), command=command, cwd=cwd, family=family,
                 core_hash=core_hash, decision=decision, detail=row.get("decision_detail"),
                 epoch=tl.epochs, changes=self.changes, wt=wt or data.get("worktree_hash"),
                 background=bool(ti.get("run_in_background")), retrieval_cmd=ctx_retrieval(command),
                 held_back=data.get("rewrite_held_back") is True)
        tl.calls.append(c)
        return c

    def _issued(self, c: Call):
        if c.tool_use_id:
            self.open[c.tool_use_id] = c
        if c.decision == "deny":
            return          # never runs: no run or retrieval can belong to it
        self.open_order.append(c)
        if c.retrieval_cmd is None:
            c.writes, c.reverts = _writes(c.command, c.cwd)

    def _finished(self, c: Call):
        if c in self.open_order:
            self.open_order.remove(c)
        if c.tool_use_id:
            self.closed.add(c.tool_use_id)
            if self.open.get(c.tool_use_id) is c:
                del self.open[c.tool_use_id]
        if c.writes and c.ran:
            self._change(c.post_seq or c.seq)

    def pre(self, row):
        tool = row.get("tool_name")
        decision = row.get("decision") if row.get("decision") in ("pass", "rewrite", "deny") else None
        if tool == "Bash" and isinstance(row.get("command"), str):
            tid = row.get("tool_use_id")
            if tid and (tid in self.open or tid in self.closed):
                # A duplicate PreToolUse (a spool replay; ctx hooked twice, in user and project
                # settings, so the harness sends every event to both): keep the first.
                return
            self._issued(self._new_call(row, row["command"], decision, load_data(row)))
            return
        if decision == "deny":
            return
        if tool in EDIT_TOOLS or tool in SUBAGENT_TOOLS:
            data = load_data(row)           # (other tools' data is never read: not parsed)
            ti = data.get("tool_input") if isinstance(data.get("tool_input"), dict) else {}
            path = ti.get("file_path") or ti.get("notebook_path")
            self.tl.edits.append(Edit(row.get("seq") or 0, row.get("uid") or "", tool,
                                      (path,) if isinstance(path, str) and path else (), self.tl.epochs))
            self._change(row.get("seq") or 0)

    def post(self, row):
        tool = row.get("tool_name")
        if tool == "AskUserQuestion":
            self._change(row.get("seq") or 0)
            return
        if tool != "Bash":
            return
        tid = row.get("tool_use_id")
        if tid and tid in self.closed and tid not in self.open:
            return      # the same result delivered twice (ctx hooked twice): the call finished already
        data = load_data(row)
        c = self.open.get(tid) if tid else None
        if c is None:
            if not isinstance(row.get("command"), str):
                return
            c = self._new_call(row, row["command"], None, data)   # its PreToolUse was never recorded
            c.writes, c.reverts = (_writes(c.command, c.cwd) if c.retrieval_cmd is None else (False, False))
        c.post_seq = row.get("seq")
        c.post_uid = row.get("uid")
        c.exit_code = _int(row.get("exit_code"))
        c.output_bytes = _int(row.get("output_bytes"))
        c.failed = row.get("hook_event") == "PostToolUseFailure"
        c.interrupted = bool(data.get("interrupted") or data.get("is_interrupt"))
        c.rewrite_applied = _int(row.get("rewrite_applied"))
        c.post_duration_ms = _num(data.get("duration_ms"))
        err = data.get("error")
        c.harness_cut = bool(data.get("persisted_output")) or (
            isinstance(err, str) and "characters truncated] ..." in err)
        self._finished(c)

    def run(self, row):
        data = load_data(row)
        r = _run_of(row, data)
        target = None
        for c in reversed(self.open_order):
            if c.run is None and c.decision != "deny" and c.core_hash and c.core_hash == r.core_hash:
                target = c
                break
        if target is None:
            for c in reversed(self.open_order):
                if c.run is None and (c.decision == "rewrite" or ctx_inner(c.command) is not None):
                    target = c
                    break
        if target is None:
            target = self._new_call(row, r.command, None, {}, wt=r.worktree_hash)
            target.exit_code = r.exit_code
            target.writes, target.reverts = _writes(r.command, target.cwd)
            if target.writes:
                self._change(r.seq)
        target.run = r
        target.wt_after = r.worktree_hash

    def retrieval(self, row):
        data = load_data(row)
        address = data.get("address")
        ret = {"seq": row.get("seq") or 0, "uid": row.get("uid") or "", "command": row.get("command"),
               "address": address, "pattern": data.get("pattern"),
               "handle": data.get("handle") or handle_of(address), "result": data.get("result"),
               "reason": data.get("reason"), "epoch": self.tl.epochs, "call": None}
        for c in reversed(self.open_order):
            if c.retrieval is None and c.retrieval_cmd is not None:
                c.retrieval = ret
                ret["call"] = c.idx
                break
        self.tl.retrievals.append(ret)

    def boundary(self, row, kind):
        self.tl.epochs += 1
        self.tl.boundaries.append((row.get("seq") or 0, kind))
        # Calls still open across a boundary are finished as far as evidence goes.
        self.open.clear()
        self.open_order.clear()


def build(session_id: str, rows) -> Timeline:
    """rows: one session's ledger events (dicts with the events columns), in seq order."""
    b = _Builder(session_id)
    tl = b.tl
    for row in rows:
        tl.events += 1
        ts = row.get("ts")
        if ts is not None:
            tl.first_ts = ts if tl.first_ts is None else min(tl.first_ts, ts)
            tl.last_ts = ts if tl.last_ts is None else max(tl.last_ts, ts)
        if tl.cwd is None and row.get("cwd"):
            tl.cwd = row["cwd"]
        kind = row.get("kind")
        if kind == "run":
            b.run(row)
            continue
        if kind == "retrieval":
            b.retrieval(row)
            continue
        if kind != "hook":
            continue
        lat = row.get("latency_us")
        if isinstance(lat, int):
            tl.hook_latency_us.append(lat)
        hook = row.get("hook_event")
        if hook == "PreToolUse":
            b.pre(row)
        elif hook in ("PostToolUse", "PostToolUseFailure"):
            b.post(row)
        elif hook == "SessionStart":
            data = load_data(row)
            if data.get("model") and data.get("source") != "compact":
                tl.model = data["model"]
            b.boundary(row, "compaction" if data.get("source") == "compact" else "session_start")
        elif hook == "SessionEnd":
            tl.ended = True
            b.boundary(row, "session_end")
        elif hook == "PreCompact":
            b.boundary(row, "compaction")
        elif hook == "UserPromptSubmit":
            b._change(row.get("seq") or 0)
    return tl
