"""evidence_outcome/v1: outcome rows from a session's events, deterministic, never from censored windows.

Sessions here are ledger rows built by `Rows` (the same columns and `data` the daemon writes,
signatures computed by reflex.signature as the daemon does), so each test states exactly the
sequence it judges.  test_stats_golden.py runs the same joins over sessions recorded by the
real daemon.
"""

import json

import pytest

from reflex.analysis import evidence
from reflex.analysis.evidence import session_evidence
from reflex.signature import signature
from reflex.analysis.stats.timeline import build


class Rows:
    """A session's ledger rows, written the way the daemon writes them."""

    def __init__(self, session="s1", cwd="/proj", model="claude-haiku-4-5", start=True):
        self.session, self.cwd = session, cwd
        self.rows = []
        self.seq = 0
        self.n = 0
        self.handles = 0
        if start:
            self.start(model)

    def _row(self, **kw):
        self.seq += 1
        row = {"uid": "%s-%04d" % (self.session, self.seq), "session_id": self.session, "seq": self.seq,
               "ts": 1000.0 + self.seq, "kind": "hook", "hook_event": None, "tool_name": None, "tool_use_id": None,
               "cwd": self.cwd, "command": None, "family": None, "core_hash": None, "decision": "none",
               "decision_detail": None, "exit_code": None, "output_bytes": None, "rewrite_applied": None,
               "latency_us": 250, "data": {}}
        row.update(kw)
        row["data"] = json.dumps(row["data"], sort_keys=True)
        self.rows.append(row)
        return row

    def start(self, model="claude-haiku-4-5", source="startup"):
        self._row(hook_event="SessionStart", data={"model": model, "source": source})

    def end(self):
        self._row(hook_event="SessionEnd", data={"reason": "exit"})

    def compact(self):
        self._row(hook_event="PreCompact", data={})

    def prompt(self):
        self._row(hook_event="UserPromptSubmit", data={})

    def edit(self, path, denied=False):
        self.n += 1
        tid = "t%02d" % self.n
        self._row(hook_event="PreToolUse", tool_name="Edit", tool_use_id=tid, decision="deny" if denied else "pass",
                  data={"tool_input": {"file_path": path}})
        if not denied:
            self._row(hook_event="PostToolUse", tool_name="Edit", tool_use_id=tid, data={})
        return tid

    def bash(self, command, *, exit=0, decision=None, run=None, retrieval=None, out_bytes=120, wt=None,
             post=True, duration_ms=500.0):
        """run: dict of digest facts -> a ctx run event (rewrite by default)."""
        self.n += 1
        tid = "t%02d" % self.n
        sig = signature(command, self.cwd)
        decision = decision or ("rewrite" if run is not None else "pass")
        pre_data = {"tool_input": {"description": "d"}}
        if wt:
            pre_data["worktree_hash"] = wt
        self._row(hook_event="PreToolUse", tool_name="Bash", tool_use_id=tid, command=command, family=sig.family,
                  core_hash=sig.core_hash, decision=decision,
                  decision_detail="ctx run -- %r" % command if decision == "rewrite" else None, data=pre_data)
        if decision == "deny":
            return tid
        if run is not None:
            self.handles += 1
            handle = run.get("handle") or "r:%012x" % (0xabc000 + self.handles)
            failed_ids = run.get("failed_ids", [])
            data = {"handle": handle, "blob": "b3:" + "0" * 64, "density": run.get("density", "normal"),
                    "failed_ids": failed_ids, "failed_count": run.get("failed_count", len(failed_ids)),
                    "hints": run.get("hints", ["%s:L%d-%d" % (handle, 3 * i + 1, 3 * i + 3)
                                               for i in range(len(failed_ids))]),
                    "omitted": run.get("omitted", 0), "truncated": run.get("truncated", False),
                    "passthrough": run.get("passthrough", False), "profile": run.get("profile", "pytest"),
                    "raw_tokens": run.get("raw_tokens", 2000), "delivered_tokens": run.get("delivered_tokens", 400),
                    "slicer": run.get("slicer"), "duration_ms": run.get("duration_ms", 400.0),
                    "worktree_hash": run.get("worktree_hash")}
            if "harness_tokens" in run:
                data["harness_tokens"] = run["harness_tokens"]
            self._row(kind="run", command=command, family=sig.family, core_hash=sig.core_hash, exit_code=exit,
                      output_bytes=run.get("raw_bytes", 8000), data=data, latency_us=None)
            self.last_handle = handle
        if retrieval is not None:
            self._row(kind="retrieval", command=command, data=retrieval, latency_us=None)
        if post:
            hook = "PostToolUse" if exit == 0 else "PostToolUseFailure"
            data = {"duration_ms": duration_ms}
            data.update({"interrupted": False} if exit == 0 else {"error": "Exit code %d\n..." % exit})
            self._row(hook_event=hook, tool_name="Bash", tool_use_id=tid, command=command, family=sig.family,
                      core_hash=sig.core_hash, exit_code=exit, output_bytes=out_bytes,
                      rewrite_applied=1 if decision == "rewrite" else None, data=data)
        return tid

    def timeline(self):
        return build(self.session, self.rows)

    def evidence(self):
        return session_evidence(self.timeline())


def failing(n, file="test_a.py"):
    return {"failed_ids": ["%s::test_%d" % (file, i) for i in range(n)]}


def outcomes_of(ev):
    """{run_seq: sorted [(outcome, confidence)]}"""
    out = {}
    for o in ev.outcomes:
        out.setdefault(o.run_seq, []).append((o.outcome, o.confidence))
    return {k: sorted(v) for k, v in out.items()}


def _run_seqs(rows):
    return [r["seq"] for r in rows.rows if r["kind"] == "run"]


def test_the_seed_loop_session():
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(8))
    s.bash("python -m pytest -q | tail -50", exit=1, run=dict(failing(8), slicer="tail -50"))
    s.bash("python -m pytest -q --tb=long", exit=1, run=failing(8))
    s.edit("/proj/test_a.py")
    s.bash("python -m pytest -q", exit=1, run=failing(5))
    s.edit("/proj/src/mod.py")
    s.bash("python -m pytest -q", exit=0, run=failing(0))
    s.end()
    r1, r2, r3, r4, r5 = _run_seqs(s)
    got = outcomes_of(s.evidence())
    assert got == {
        r1: [("equivalent_requery", 0.8)],
        r2: [("equivalent_requery", 0.8), ("redundant", 0.8)],
        r3: [("landed", 1.0), ("redundant", 0.8)],            # edited test_a.py, a file the digest named
        r4: [("discriminated", 1.0), ("landed", 0.6)],        # 8 -> 5, a subset; then src/mod.py (not named)
        r5: [("validated_after_edit", 1.0)],
    }
    ev = s.evidence()
    d = next(o for o in ev.outcomes if o.outcome == "discriminated")
    assert d.reason == "fixed 3, still failing 5 (8 -> 5)" and d.data["fixed"] == ["test_a.py::test_5",
                                                                                   "test_a.py::test_6",
                                                                                   "test_a.py::test_7"]
    req = next(o for o in ev.outcomes if o.outcome == "equivalent_requery" and o.run_seq == r1)
    assert req.data["next_command"] == "python -m pytest -q | tail -50" and req.tool_use_id == "t01"
    assert ev.censored == [] and ev.runs == 5


def test_retrieved_know_and_miss():
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(3))
    h = s.last_handle
    s.bash("ctx get %s:L1-3" % h, retrieval={"address": h + ":L1-3", "result": "know", "handle": h})
    s.bash("python -m pytest -q", exit=1, run=failing(3))
    h2 = s.last_handle
    s.bash("ctx search AssertionError --handle %s" % h2,
           retrieval={"pattern": "AssertionError", "result": "miss", "reason": "evicted", "handle": h2})
    s.end()
    ev = s.evidence()
    ret = [o for o in ev.outcomes if o.outcome == "retrieved"]
    assert [(o.confidence, o.data.get("result")) for o in ret] == [(1.0, "know"), (0.5, "miss")]
    assert ret[0].reason == "ctx get %s:L1-3 answered know" % h
    # a retrieval is not a re-issue of the test command: the re-run still counts as a requery
    assert ("equivalent_requery", 0.8) in outcomes_of(ev)[_run_seqs(s)[0]]


def test_narrowed_to_a_named_failing_test_and_to_an_unnamed_selection():
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(4))
    s.bash("python -m pytest -q test_a.py::test_2", exit=1, run=failing(1))
    s.end()
    ev = s.evidence()
    n = next(o for o in ev.outcomes if o.outcome == "narrowed")
    assert n.confidence == 1.0 and n.data["test"] == "test_a.py::test_2" and n.event_uid == "s1-0005"

    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(4))
    s.bash("python -m pytest -q -k slow_things", exit=0, run=failing(0))
    s.end()
    n = next(o for o in s.evidence().outcomes if o.outcome == "narrowed")
    assert n.confidence == 0.7 and "test" not in n.data


def test_reversed_by_a_regression_and_by_a_revert():
    s = Rows()
    s.bash("python -m pytest -q", exit=0, run=failing(0))
    s.edit("/proj/src/mod.py")
    s.bash("python -m pytest -q", exit=1, run=failing(2))
    s.end()
    assert outcomes_of(s.evidence())[_run_seqs(s)[1]] == [("reversed", 0.8)]

    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(3))
    s.edit("/proj/src/mod.py")
    s.bash("git checkout -- src/mod.py")
    s.end()
    got = outcomes_of(s.evidence())[_run_seqs(s)[0]]
    assert ("reversed", 0.6) in got and ("landed", 0.6) in got


def test_censored_windows_are_never_negative_evidence():
    # the same command after a compaction is no requery, and the failing run before it not abandoned
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(3))
    s.compact()
    s.bash("python -m pytest -q", exit=1, run=failing(3))
    s.end()
    ev = s.evidence()
    assert ev.outcomes == [] and ev.censored == [r["uid"] for r in s.rows if r["kind"] == "run"]

    # a failing run and then the session ends after two unrelated calls: censored, not abandoned
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(3))
    s.bash("ls")
    s.bash("git status")
    s.end()
    ev = s.evidence()
    assert ev.outcomes == [] and len(ev.censored) == 1


def test_abandoned_needs_five_observed_calls():
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(3))
    for cmd in ("ls", "git status", "git log -1", "cat README.md", "echo done"):
        s.bash(cmd)
    s.end()
    ev = s.evidence()
    (o,) = ev.outcomes
    assert (o.outcome, o.confidence, o.data["calls_after"]) == ("abandoned", 0.6, 5)
    assert o.event_uid == [r["uid"] for r in s.rows if r["command"] == "echo done"][0]


def test_worktree_hashes_and_change_events():
    # equal hashes, no change event: a requery with confidence 1.0
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=dict(failing(2), worktree_hash="wt:a"), wt="wt:a")
    s.bash("python -m pytest -q", exit=1, run=dict(failing(2), worktree_hash="wt:a"), wt="wt:a")
    s.end()
    assert outcomes_of(s.evidence())[_run_seqs(s)[0]] == [("equivalent_requery", 1.0)]
    # an Edit between wins over an equal (stale) hash: progress, not a requery
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=dict(failing(2), worktree_hash="wt:a"), wt="wt:a")
    s.edit("/proj/x.py")
    s.bash("python -m pytest -q", exit=1, run=dict(failing(1), worktree_hash="wt:b"), wt="wt:a")
    s.end()
    assert "equivalent_requery" not in {o.outcome for o in s.evidence().outcomes}
    # no change event but the hash moved (a script wrote files): changed
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=dict(failing(2), worktree_hash="wt:a"), wt="wt:a")
    s.bash("python -m pytest -q", exit=1, run=dict(failing(2), worktree_hash="wt:c"), wt="wt:c")
    s.end()
    assert "equivalent_requery" not in {o.outcome for o in s.evidence().outcomes}
    # a file-writing Bash command counts as a change
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(2))
    s.bash("sed -i s/a/b/ src/mod.py")
    s.bash("python -m pytest -q", exit=1, run=failing(1))
    s.end()
    kinds = {o.outcome for o in s.evidence().outcomes}
    assert "equivalent_requery" not in kinds and "discriminated" in kinds and "landed" in kinds


def test_keys_are_deterministic_and_one_outcome_kind_per_run():
    def session():
        s = Rows()
        s.bash("python -m pytest -q", exit=1, run=dict(failing(3), handle="r:0000000000aa"))
        s.bash("python -m pytest -q", exit=1, run=dict(failing(3), handle="r:0000000000bb"))
        s.end()
        return s.evidence()
    a, b = session(), session()
    assert [o.to_json() for o in a.outcomes] == [o.to_json() for o in b.outcomes]
    keys = [o.key for o in a.outcomes]
    assert len(keys) == len(set(keys)) and all(k.startswith("eo1:") for k in keys)


def test_record_appends_once_and_recomputing_yields_the_same_rows(tmp_path):
    from reflex.ledger.db import open_ledger
    path = str(tmp_path / "ledger.db")
    open_ledger(path).conn.close()
    s = Rows()
    s.bash("python -m pytest -q", exit=1, run=failing(3))
    s.bash("python -m pytest -q | tail -5", exit=1, run=failing(3))
    s.edit("/proj/test_a.py")
    s.bash("python -m pytest -q", exit=0, run=failing(0))
    s.end()
    outs = s.evidence().outcomes
    assert evidence.record(path, outs, now=1.0) == len(outs) > 0
    assert evidence.record(path, s.evidence().outcomes, now=2.0) == 0
    import sqlite3
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT key, schema, outcome, reason, confidence, data, recorded_at FROM evidence_outcomes "
                        "ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [o.key for o in outs]
    assert {r[1] for r in rows} == {"evidence_outcome/v1"} and {r[6] for r in rows} == {1.0}
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM evidence_outcomes")
    conn.close()
