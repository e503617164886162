"""evidence_outcome/v1: what became of each piece of evidence ctx delivered.

Every ``ctx run`` hands the agent a piece of evidence (a digest, or the raw output).  This
module joins the ledger's runs, retrievals and the commands that followed into outcome rows:
a pure function from one session's timeline to rows, each with a deterministic attribution
reason and a confidence.  ``ctx policy compile`` aggregates them (``[plan_value]`` priors and
the density/hint decisions); ``ctx stats`` derives landings from them.

Terms.  For a run R of core signature S: P is the previous run of S and N the next issue of
S (any Bash call with the same core hash), both in R's epoch; the window W is everything
after R up to N, or to the epoch's end.  "Changed" means a change event (edit, file-writing
command, user turn) lies between, or the worktree hashes differ (reflex.analysis.stats.timeline).

    outcome               attached to  when                                            confidence
    retrieved             R   a ctx get/search on R's handle later in the epoch          1.0 know, 0.5 miss
    narrowed              R   a call in W runs a strict subset of S (is_narrower)        1.0 names a failing
                                                                                         test of R, else 0.7
    landed                R   R failed and the worktree changed in W (an edit)           1.0 the edit names a
                                                                                         file R named, else 0.6
    validated_after_edit  R   P failed, the worktree changed, R passes (N -> 0)          1.0
    discriminated         R   P failed, changed, R fails on a strict subset of P's       1.0 (0.7 counts only,
                              failures (8 -> 5: which fixes worked)                      0.6 mixed fixed/new)
    reversed              R   changed since P, and R is worse (more failures, new ones   0.8
                              and none fixed, or P passed and R fails);
                              or a revert (git checkout/restore/reset --hard/stash) in W 0.6
    equivalent_requery    R   N was issued with the worktree unchanged: the agent asked  1.0 equal hashes,
                              the same question again (not a file re-read, not polling)  0.8 no change event
    redundant             R   P gave the same result (exit, failing ids and count) and   1.0 equal hashes,
                              nothing changed since P: R told the agent nothing new      0.8 no change event
    abandoned             R   R failed, S is never issued again in the epoch, nothing    0.6
                              positive happened to R, and at least ABANDON_AFTER (5)
                              other calls were observed after it

Censoring: nothing is compared across an epoch (SessionStart, SessionEnd, compaction).  A
window cut short by a boundary or by the end of the ledger gives no negative outcome: a run
that ends its epoch with fewer than ABANDON_AFTER calls after it and no outcome is reported
as censored, never as abandoned.

Keys: a row's key is blake2b("evidence_outcome/v1", session, run uid, outcome), so a row
attaches at most one outcome of each kind to a run, and ``record`` (insert-if-absent on the
key) can run any number of times over the same ledger and still yield the same rows.
"""

from __future__ import annotations

import hashlib
import json
import time
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from reflex.analysis.stats.timeline import Call, Timeline, build, signature_of
from reflex.arc.detectors.landings import names_test

SCHEMA = "evidence_outcome/v1"
OUTCOMES = ("retrieved", "narrowed", "landed", "validated_after_edit", "discriminated", "reversed",
            "equivalent_requery", "redundant", "abandoned")
POSITIVE = frozenset({"retrieved", "narrowed", "landed", "validated_after_edit", "discriminated"})
NEGATIVE = frozenset({"reversed", "equivalent_requery", "redundant", "abandoned"})
# Outcomes that show the agent used what a digest's hints pointed at.
HINT_FOLLOWED = frozenset({"retrieved"})
ABANDON_AFTER = 5
POLLING_WORDS = frozenset({"sleep", "watch"})


@dataclass(frozen=True)
class EvidenceOutcome:
    session_id: str
    run_uid: str
    run_seq: int
    tool_use_id: str | None
    event_uid: str | None
    outcome: str
    reason: str
    confidence: float
    family: str | None
    core_hash: str | None
    data: dict = field(default_factory=dict, hash=False, compare=True)

    @property
    def key(self) -> str:
        h = hashlib.blake2b(digest_size=16)
        for part in (SCHEMA, self.session_id, self.run_uid, self.outcome):
            h.update(part.encode("utf-8", "surrogatepass") + b"\x00")
        return "eo1:" + h.hexdigest()

    def to_json(self) -> dict:
        return {"key": self.key, "schema": SCHEMA, "session_id": self.session_id, "run_uid": self.run_uid,
                "run_seq": self.run_seq, "tool_use_id": self.tool_use_id, "event_uid": self.event_uid,
                "outcome": self.outcome, "reason": self.reason, "confidence": self.confidence,
                "family": self.family, "core_hash": self.core_hash, "data": self.data}


@dataclass
class Evidence:
    """A session's outcomes, plus the runs whose window was censored before anything happened."""
    outcomes: list
    censored: list          # run uids
    runs: int

    def by_run(self) -> dict:
        out: dict = {}
        for o in self.outcomes:
            out.setdefault(o.run_uid, []).append(o)
        return out


def _failed_set(run) -> frozenset:
    return frozenset(run.failed_ids)


def _failed_n(run) -> int:
    if run.failed_count is not None:
        return run.failed_count
    if run.failed_ids:
        return len(run.failed_ids)
    return 1 if run.exit_code else 0


def _file_of(test_id: str) -> str:
    return test_id.split("::", 1)[0].split("[", 1)[0]


def _path_hit(path: str, named: frozenset) -> str | None:
    p = path.lstrip("./")
    for n in sorted(named):
        n2 = n.lstrip("./")
        if n2 and (p == n2 or p.endswith("/" + n2) or n2.endswith("/" + p)):
            return n
    return None


def _same_result(a, b) -> bool:
    return (a.exit_code == b.exit_code and _failed_set(a) == _failed_set(b)
            and _failed_n(a) == _failed_n(b))


def _polling(c: Call) -> bool:
    head = c.command.split(None, 1)[:1]
    return bool(head) and head[0] in POLLING_WORDS


class _Session:
    def __init__(self, tl: Timeline):
        self.tl = tl
        self.by_core: dict = {}           # (epoch, core_hash) -> [Call] in order
        self.pos: dict = {}               # call idx -> its index in by_core's list
        for c in tl.calls:
            if c.core_hash and not c.is_retrieval and not c.background:
                lst = self.by_core.setdefault((c.epoch, c.core_hash), [])
                self.pos[c.idx] = len(lst)
                lst.append(c)
        self.epoch_end: dict = {}          # epoch -> seq of the boundary that ends it
        for i, (seq, _kind) in enumerate(tl.boundaries):
            self.epoch_end[i] = seq       # boundary i ends epoch i (epochs count boundaries)
        # Calls are in issue order; a call that only had a post or a run sorts by its seq too.
        self.order = sorted(tl.calls, key=lambda x: (x.seq, x.idx))
        self.call_seqs = [x.seq for x in self.order]
        self.edit_seqs = [e.seq for e in tl.edits]
        self.retrievals: dict = {}         # handle -> [retrieval] in order
        for r in tl.retrievals:
            if r["handle"]:
                self.retrievals.setdefault(r["handle"], []).append(r)

    def neighbours(self, c: Call):
        lst = self.by_core.get((c.epoch, c.core_hash), [])
        i = self.pos.get(c.idx)
        if i is None:
            return None, None
        prev_run = next((x for x in reversed(lst[:i]) if x.run is not None), None)
        nxt = lst[i + 1] if i + 1 < len(lst) else None
        return prev_run, nxt

    def window(self, c: Call, nxt: Call | None):
        end = nxt.seq if nxt is not None else self.epoch_end.get(c.epoch, float("inf"))
        lo = bisect_right(self.call_seqs, c.seq)
        hi = bisect_left(self.call_seqs, end, lo)
        calls = [x for x in self.order[lo:hi] if x.epoch == c.epoch and x is not c]
        lo = bisect_right(self.edit_seqs, c.seq)
        hi = bisect_left(self.edit_seqs, end, lo)
        edits = [e for e in self.tl.edits[lo:hi] if e.epoch == c.epoch]
        return end, calls, edits


def _mk(tl, c: Call, outcome, reason, conf, event_uid=None, **data) -> EvidenceOutcome:
    r = c.run
    return EvidenceOutcome(tl.session_id, r.uid, r.seq, c.tool_use_id, event_uid, outcome, reason,
                           conf, r.family or c.family, r.core_hash or c.core_hash,
                           {k: v for k, v in sorted(data.items()) if v is not None})


def _compare(tl, c: Call, p: Call, out: list):
    """validated_after_edit / discriminated / reversed: R against the previous run P."""
    r, pr = c.run, p.run
    if not tl.changed(p, c):
        return
    pn, rn = _failed_n(pr), _failed_n(r)
    pf, rf = _failed_set(pr), _failed_set(r)
    counts = {"from": pn, "to": rn, "prev_run_uid": pr.uid}
    if not pr.failing:
        if r.failing:
            out.append(_mk(tl, c, "reversed", "it passed before the change and fails after it (0 -> %d)" % rn,
                           0.8, c.run.uid, **counts))
        return
    if not r.failing:
        out.append(_mk(tl, c, "validated_after_edit", "all failures fixed after a change (%d -> 0)" % pn,
                       1.0, c.run.uid, **counts))
        return
    fixed, new = pf - rf, rf - pf
    if pf and rf:
        if fixed and not new:
            out.append(_mk(tl, c, "discriminated", "fixed %d, still failing %d (%d -> %d)"
                           % (len(fixed), len(rf), pn, rn), 1.0, c.run.uid, fixed=sorted(fixed)[:20], **counts))
        elif fixed and new:
            out.append(_mk(tl, c, "discriminated", "fixed %d, new failures %d (%d -> %d)"
                           % (len(fixed), len(new), pn, rn), 0.6, c.run.uid, fixed=sorted(fixed)[:20],
                           new=sorted(new)[:20], **counts))
        elif new:
            out.append(_mk(tl, c, "reversed", "new failures and none fixed after a change (%d -> %d)" % (pn, rn),
                           0.8, c.run.uid, new=sorted(new)[:20], **counts))
        return
    if rn < pn:
        out.append(_mk(tl, c, "discriminated", "failure count fell after a change (%d -> %d)" % (pn, rn),
                       0.7, c.run.uid, **counts))
    elif rn > pn:
        out.append(_mk(tl, c, "reversed", "failure count rose after a change (%d -> %d)" % (pn, rn),
                       0.8, c.run.uid, **counts))


def _narrowed(tl, c: Call, calls) -> EvidenceOutcome | None:
    cands = [x for x in calls if x.family == c.family and x.core_hash != c.core_hash and not x.is_retrieval
             and x.family not in (None, "other", "file-read", "search", "git")]
    if not cands:
        return None
    from reflex.signature import is_narrower
    broad = signature_of(c.run.command or c.command, c.cwd)
    for x in cands:
        sig = signature_of(x.command, x.cwd)
        if is_narrower(sig, broad):
            named = names_test(sig, c.run.failed_ids)
            if named:
                return _mk(tl, c, "narrowed", "narrower re-run of a named failing test: %s" % named, 1.0,
                           x.uid, next_tool_use_id=x.tool_use_id, command=x.command, test=named)
            return _mk(tl, c, "narrowed", "narrower re-run: %s" % x.command, 0.7, x.uid,
                       next_tool_use_id=x.tool_use_id, command=x.command)
    return None


def _landed(tl, c: Call, calls, edits) -> EvidenceOutcome | None:
    named = frozenset(_file_of(t) for t in c.run.failed_ids if t)
    changes = [(e.seq, e.uid, e.paths, e.tool) for e in edits]
    changes += [(x.seq, x.uid, (), x.command) for x in calls if x.writes and not x.reverts and x.ran]
    if not changes:
        return None
    changes.sort(key=lambda t: t[0])
    for _seq, uid, paths, _what in changes:
        for p in paths:
            hit = _path_hit(p, named) if named else None
            if hit:
                return _mk(tl, c, "landed", "edited %s, a file the evidence named" % p, 1.0, uid, path=p)
    seq, uid, paths, what = changes[0]
    where = paths[0] if paths else what
    return _mk(tl, c, "landed", "the worktree changed after it (%s)" % where, 0.6, uid,
               path=paths[0] if paths else None)


def session_evidence(tl: Timeline) -> Evidence:
    """All evidence outcomes of one session, deterministic, in run order."""
    s = _Session(tl)
    out: list = []
    censored: list = []
    runs = 0
    for c in tl.calls:
        if c.run is None:
            continue
        runs += 1
        mine: list = []
        r = c.run
        prev, nxt = s.neighbours(c) if c.core_hash else (None, None)
        end, calls, edits = s.window(c, nxt)
        # retrieved: any retrieval of this handle later in the epoch
        if r.handle:
            hits = [x for x in s.retrievals.get(r.handle, ()) if x["epoch"] == c.epoch and x["seq"] > c.seq]
            if hits:
                h = hits[0]
                know = h["result"] == "know"
                mine.append(_mk(tl, c, "retrieved", "%s %s answered %s" % (
                    "ctx get" if h["address"] else "ctx search", h["address"] or h["pattern"],
                    h["result"] or "?"), 1.0 if know else 0.5, h["uid"], address=h["address"],
                    pattern=h["pattern"], result=h["result"], count=len(hits)))
        n = _narrowed(tl, c, calls)
        if n is not None:
            mine.append(n)
        if r.failing:
            landed = _landed(tl, c, calls, edits)
            if landed is not None:
                mine.append(landed)
        if prev is not None:
            _compare(tl, c, prev, mine)
        revert = next((x for x in calls if x.reverts and x.ran), None)
        if revert is not None and not any(o.outcome == "reversed" for o in mine):
            mine.append(_mk(tl, c, "reversed", "changes reverted after it: %s" % revert.command, 0.6, revert.uid,
                            command=revert.command))
        if nxt is not None and not nxt.is_retrieval and nxt.family != "file-read" and not _polling(nxt) \
                and not tl.changed(c, nxt):
            hashes = bool((c.wt_after or c.wt) and nxt.wt)
            mine.append(_mk(tl, c, "equivalent_requery", "re-issued with the worktree unchanged: %s" % nxt.command,
                            1.0 if hashes else 0.8, nxt.uid, next_tool_use_id=nxt.tool_use_id,
                            next_command=nxt.command, same_command=nxt.command == c.command,
                            denied=nxt.decision == "deny" or None))
        if prev is not None and not tl.changed(prev, c) and _same_result(prev.run, r):
            mine.append(_mk(tl, c, "redundant", "the same result as the run at seq %d with nothing changed"
                            % prev.run.seq, 1.0 if ((prev.wt_after or prev.wt) and c.wt) else 0.8, r.uid,
                            prev_run_uid=prev.run.uid))
        if r.failing and nxt is None and not any(o.outcome in POSITIVE for o in mine):
            later = [x for x in calls if not x.is_retrieval]
            if len(later) >= ABANDON_AFTER:
                mine.append(_mk(tl, c, "abandoned", "never re-issued; %d other calls followed and nothing used it"
                                % len(later), 0.6, later[ABANDON_AFTER - 1].uid, calls_after=len(later)))
        if not mine:
            after = [x for x in calls if not x.is_retrieval]
            if nxt is None and len(after) < ABANDON_AFTER:
                censored.append(r.uid)
        mine.sort(key=lambda o: OUTCOMES.index(o.outcome))
        out.extend(mine)
    return Evidence(out, censored, runs)


def evidence_from_rows(session_id: str, rows) -> Evidence:
    return session_evidence(build(session_id, rows))


# -- storage ---------------------------------------------------------------------------------

# Not INSERT OR IGNORE: the ledger refuses any INSERT that collides with a row (schema m003).
_INSERT = ("INSERT INTO evidence_outcomes (key, schema, session_id, run_uid, event_uid, outcome, "
           "reason, confidence, family, core_hash, data, recorded_at) SELECT ?,?,?,?,?,?,?,?,?,?,?,? "
           "WHERE NOT EXISTS (SELECT 1 FROM evidence_outcomes WHERE key = ?)")


def record(ledger_path, outcomes, *, now=None) -> int:
    """Append outcomes to the ledger's evidence_outcomes table; -> rows actually inserted.

    Insert-if-absent on the deterministic key: recomputing over the same ledger and recording
    again inserts nothing, so the stored rows stay exactly those first written.  Opens the
    ledger with open_ledger (migrating an old schema) and writes in one transaction; this is
    a second writer next to the daemon's, which SQLite serialises (busy_timeout 5 s)."""
    from reflex.ledger.db import open_ledger
    db = open_ledger(ledger_path)
    conn = db.conn
    ts = time.time() if now is None else now
    rows = [(o.key, SCHEMA, o.session_id, o.run_uid, o.event_uid, o.outcome, o.reason, float(o.confidence),
             o.family, o.core_hash, json.dumps(o.data, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
             ts, o.key) for o in outcomes]
    try:
        conn.execute("BEGIN IMMEDIATE")
        before = conn.total_changes
        conn.executemany(_INSERT, rows)
        inserted = conn.total_changes - before
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return inserted
