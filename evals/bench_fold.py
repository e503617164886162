"""Fold + detectors cost: µs per event for SessionReflex.apply, as the daemon pays it.

Every round folds each corpus transcript's events into a fresh SessionReflex (so every
command's signature is computed, as it is for a live hook call), timing each apply() alone.
Events come from /work/shared/corpus/transcripts (8 real Claude Code sessions) plus a
synthetic instrumented session (the seed's starvation loop with runs, retrievals and denies),
so the run/retrieval paths are timed too.  Target: median < 200 µs per event.

Usage: python evals/bench_fold.py [--rounds N]
"""

import argparse
import glob
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402
from reflex.events import Event  # noqa: E402
from reflex.fold import SessionReflex  # noqa: E402
from reflex.policy import default_policy  # noqa: E402
from reflex.transcript import read_transcript  # noqa: E402

CORPUS = "/work/shared/corpus/transcripts"
TARGET_US = 200.0


def synthetic_session(n_loops=20):
    h = "r:0123456789ab"
    ev, n = [Event("session_start", seq=0, model="claude-haiku-4-5")], 1

    def add(kind, **kw):
        nonlocal n
        ev.append(Event(kind, seq=n, session_id="syn", cwd="/proj", **kw))
        n += 1

    for loop in range(n_loops):
        for i, cmd in enumerate(("pytest tests/ -q", "pytest tests/ -q | tail -50", "pytest --tb=long tests/")):
            tid = "t%d_%d" % (loop, i)
            add("command", tool_use_id=tid, command=cmd + " -k case%d" % loop, decision="rewrite")
            add("run", command=cmd + " -k case%d" % loop, handle=h, density="normal", omitted=3,
                hints=(h + "#tests/test_a.py::test_%d" % loop, h + ":L10-40"),
                failed_ids=("tests/test_a.py::test_%d" % loop,), failed_count=3 - i % 3)
            add("result", tool_use_id=tid, exit_code=1)
        add("retrieval", address=h + ":L10-40", handle=h, result="know")
        add("command", tool_use_id="d%d" % loop, command="cat .env", decision="deny", decision_detail="secret-read")
        add("edit", paths=("src/a.py",))
    return ev


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    sessions = [read_transcript(p) for p in sorted(glob.glob(os.path.join(CORPUS, "*.jsonl")))]
    sessions.append(synthetic_session())
    policy = default_policy()
    per_kind: dict[str, list[float]] = {}
    all_us: list[float] = []
    for _ in range(args.rounds):
        for events in sessions:
            sr = SessionReflex(policy, reflexes=True)
            for e in events:
                t0 = time.perf_counter_ns()
                sr.apply(e)
                dt = (time.perf_counter_ns() - t0) / 1000.0
                all_us.append(dt)
                per_kind.setdefault(e.kind, []).append(dt)
            assert sr.state.errors == 0, sr.state.last_error
    med = statistics.median(all_us)
    result = {
        "machine": _common.machine(),
        "rounds": args.rounds,
        "events_per_round": sum(len(s) for s in sessions),
        "median_us": round(med, 1),
        "p95_us": round(_common.pct(all_us, 95), 1),
        "p99_us": round(_common.pct(all_us, 99), 1),
        "max_us": round(max(all_us), 1),
        "per_kind": {k: {"n": len(v), "median_us": round(statistics.median(v), 1),
                         "p95_us": round(_common.pct(v, 95), 1)} for k, v in sorted(per_kind.items())},
        "target_median_us": TARGET_US,
        "pass": med < TARGET_US,
    }
    print("fold + detectors, µs per event (%d events x %d rounds)" % (result["events_per_round"], args.rounds))
    print("  %-14s %8s %10s %10s" % ("kind", "n", "median", "p95"))
    for k, v in result["per_kind"].items():
        print("  %-14s %8d %10.1f %10.1f" % (k, v["n"], v["median_us"], v["p95_us"]))
    print("  %-14s %8d %10.1f %10.1f   (p99 %.1f, max %.1f)" % ("all", len(all_us), result["median_us"],
                                                                result["p95_us"], result["p99_us"], result["max_us"]))
    print("target median < %.0f µs: %s" % (TARGET_US, "PASS" if result["pass"] else "FAIL"))
    print("wrote", _common.write_json("bench_fold.json", result))


if __name__ == "__main__":
    main()
