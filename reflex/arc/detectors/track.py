"""The session track: what every detector needs to know about the session so far.

The fold keeps one Track per session and updates it after the detectors have looked at each
event, so a detector always sees the session *before* the event it judges:

* issues and views: every command issued (an Issue) and, once it finished, the view it gave
  the agent (the same Issue, completed: which rendering, whether it left something out).
  The last view per core signature is what a re-issue is compared with.
* changes: a counter of worktree-change evidence (edits, file-writing commands, user turns).
  Two moments with equal worktree hashes are unchanged whatever the counter says; without
  both hashes, an increase of the counter between them is a change.
* epoch: a counter of censoring boundaries (session start/end, compaction).  Evidence never
  crosses an epoch: a re-issue after a compaction says nothing about the digest before it.
* hints outstanding per core: what the last run of a signature pointed at, and whether the
  agent followed it.
* per file: when it was last written (a command's output file, an edit), so that a re-read of
  a finished log is judged by that file alone; and the background commands still running
  with the files they write.

Lossiness is the heart of starvation: a view is lossy when it showed the agent less than the
command produced: a digest that omitted or truncated, the harness's own truncation, or the
agent's own presentation (a trailing head/tail/grep, -q, --tb=line, stderr to /dev/null).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LOSSY_SLICERS = frozenset({"head", "tail", "grep", "awk", "cut", "wc", "uniq", "jq"})
_LOSSY_FLAGS = frozenset({"quiet", "silent"})
_LOSSY_TB = frozenset({"line", "no", "short"})
_SED_CUTS = re.compile(r"(^|[;\s0-9/$,])[dq]\d*\s*($|;)")


def own_lossiness(sig) -> str | None:
    """Why a command's own presentation shows less than it produces, or None.  A slicer
    is named before a quiet flag, a quiet flag before a dropped stream."""
    found: list[tuple[int, str]] = []
    for d in sig.decorations:
        k = d.kind
        if k in _LOSSY_SLICERS:
            found.append((0, ("%s %s" % (k, d.value)).strip() if k in ("head", "tail") else k))
        elif k == "sed" and ("-n" in d.flags or _SED_CUTS.search(d.value or "")):
            found.append((0, "sed"))
        elif k in _LOSSY_FLAGS:
            found.append((1, k))
        elif k == "tb" and d.value in _LOSSY_TB:
            found.append((1, "--tb=" + d.value))
        elif k == "redirect" and "/dev/null" in (d.value or ""):
            found.append((2, "output dropped (%s)" % d.value))
    return min(found, key=lambda x: x[0])[1] if found else None


def view_key(sig) -> tuple:
    """The presentation a command asked for: two issues with equal keys see the same view."""
    return tuple((d.kind, d.value, d.flags) for d in sig.decorations)


def all_reads(sig) -> tuple[str, ...]:
    """Files a command reads, with their line range when it names one ("f.py:10-40")."""
    out = []
    for s in (sig,) + tuple(sig.segments):
        for r in s.reads:
            item = r.path + (":" + r.lines if r.lines else "")
            if item not in out:
                out.append(item)
    return tuple(out)


@dataclass(slots=True)
class Issue:
    """One issued command and, once done, the view it gave the agent."""
    seq: int
    tool_use_id: str | None
    core_hash: str
    core: str
    family: str
    raw: str
    key: tuple
    own_lossy: str | None
    changes: int
    epoch: int
    wt: str | None
    decision: str | None
    background: bool
    routes: tuple[str, ...] = ()
    # the starvation detector's reading (detectors/rerun.py)
    rkey: str = ""                 # equal keys: the same producer
    read_path: str | None = None   # the file, when the producer is a file
    window: tuple | None = None    # the line window a file view showed
    mutation: str | None = None    # what the command changes, if anything
    live: str | None = None        # why its output follows state that changes by itself
    # completion
    done: bool = False
    ran: bool | None = None
    instrumented: bool = False
    lossy: str | None = None
    density: str | None = None
    handle: str | None = None
    exit_code: int | None = None
    failed_count: int | None = None
    done_seq: int | None = None
    timed_out: bool = False        # the harness stopped it: its output ends where it was killed

    def to_json(self) -> dict:
        return {"seq": self.seq, "tool_use_id": self.tool_use_id, "core_hash": self.core_hash,
                "family": self.family, "raw": self.raw, "own_lossy": self.own_lossy,
                "changes": self.changes, "epoch": self.epoch, "wt": self.wt, "decision": self.decision,
                "background": self.background, "done": self.done, "ran": self.ran,
                "instrumented": self.instrumented, "lossy": self.lossy, "density": self.density,
                "handle": self.handle, "exit_code": self.exit_code, "failed_count": self.failed_count,
                "done_seq": self.done_seq, "rkey": self.rkey, "read_path": self.read_path,
                "mutation": self.mutation, "live": self.live, "timed_out": self.timed_out}


@dataclass(slots=True)
class OpenHints:
    """The hints the last run of a signature emitted, and whether one was followed."""
    handle: str | None
    count: int
    tests: tuple[str, ...]
    files: tuple[str, ...]
    seq: int
    epoch: int
    resolved: str | None = None

    def to_json(self) -> dict:
        return {"handle": self.handle, "count": self.count, "tests": list(self.tests),
                "files": list(self.files), "seq": self.seq, "epoch": self.epoch, "resolved": self.resolved}


@dataclass(slots=True)
class Track:
    changes: int = 0
    epoch: int = 0
    background: int = 0
    bg_paths: set = field(default_factory=set)
    issues: dict = field(default_factory=dict)      # core_hash -> times issued
    views: dict = field(default_factory=dict)       # core_hash -> last completed Issue
    pending: dict = field(default_factory=dict)     # tool_use_id (or "#seq") -> Issue
    hints: dict = field(default_factory=dict)       # core_hash -> OpenHints
    handles: dict = field(default_factory=dict)     # handle -> core_hash
    failed: dict = field(default_factory=dict)      # core_hash -> failed_count of its last run
    sigs: dict = field(default_factory=dict)        # core_hash -> Signature of its last issue (cache)
    rviews: dict = field(default_factory=dict)      # rerun key -> last completed Issue (starvation's prior)
    path_changed: dict = field(default_factory=dict)  # absolute path -> `changes` when last written
    anon_changed: int = -1                          # `changes` at the last change of unknown paths
    outputs: set = field(default_factory=set)       # files commands wrote their output to (logs)
    bg_tasks: dict = field(default_factory=dict)    # tool_use_id of a running background command -> its paths

    def changed(self, before: Issue, now_changes: int, now_wt: str | None) -> bool:
        """Did the worktree change between `before` was issued and now?"""
        if before.wt and now_wt:
            return before.wt != now_wt
        return now_changes > before.changes

    def file_changed(self, path: str, before: Issue) -> bool:
        """Was `path` written (or could it have been) since `before` was issued?  A file is
        its own evidence: edits elsewhere in the worktree do not change a finished log."""
        return max(self.path_changed.get(path, -1), self.anon_changed) > before.changes

    def note_change(self, paths=()) -> None:
        """One piece of change evidence; `paths` when known, else it could be anything."""
        self.changes += 1
        if paths:
            for p in paths:
                self.path_changed[p] = self.changes
        else:
            self.anon_changed = self.changes

    def pending_of_core(self, core_hash: str) -> Issue | None:
        best = None
        for issue in self.pending.values():
            if issue.core_hash == core_hash and not issue.done and (best is None or issue.seq > best.seq):
                best = issue
        return best

    def to_json(self) -> dict:
        return {"changes": self.changes, "epoch": self.epoch, "background": self.background,
                "bg_paths": sorted(self.bg_paths), "issues": dict(sorted(self.issues.items())),
                "views": {k: v.to_json() for k, v in sorted(self.views.items())},
                "pending": {k: v.to_json() for k, v in sorted(self.pending.items())},
                "hints": {k: v.to_json() for k, v in sorted(self.hints.items())},
                "handles": dict(sorted(self.handles.items())),
                "failed": dict(sorted(self.failed.items())),
                "rviews": {k: v.seq for k, v in sorted(self.rviews.items())},
                "path_changed": dict(sorted(self.path_changed.items())), "anon_changed": self.anon_changed,
                "outputs": sorted(self.outputs),
                "bg_tasks": {k: sorted(v) for k, v in sorted(self.bg_tasks.items())}}


def named_targets(event) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(test ids, files) a run's digest named: failing ids, `#test` hint anchors, locations."""
    tests: list[str] = []
    for t in event.failed_ids:
        if t and t not in tests:
            tests.append(t)
    for h in event.hints:
        if "#" in h:
            t = h.split("#", 1)[1]
            if t and t not in tests:
                tests.append(t)
    files: list[str] = []
    for t in tests:
        f = t.split("::", 1)[0] if "::" in t else ""
        if f and f not in files:
            files.append(f)
    for loc in event.locations:
        f = re.sub(r":\d+(?::\d+)?(?:-\d+)?$", "", loc)
        if f and f not in files:
            files.append(f)
    return tuple(tests), tuple(files)


def path_matches(read: str, named: str) -> bool:
    """Does a read path (maybe absolute, maybe with :range) name the same file as `named`?"""
    path = re.sub(r":(?:\d+-?\d*|last:\d+|bytes:[\d-]+)$", "", read)
    while path.startswith("./"):
        path = path[2:]
    while named.startswith("./"):
        named = named[2:]
    if not path or not named:
        return False
    return path == named or path.endswith("/" + named) or named.endswith("/" + path)
