"""Fold + detectors cost: µs per event for SessionReflex.apply, as the daemon pays it, against
the fold before issue 17 measured in the same run.

Every round folds each session's events into a fresh SessionReflex (so every command's
signature and re-run reading is computed, as it is for a live hook call), timing each apply()
alone.  Sessions: the 8 CC0 transcripts in ../shared/corpus/transcripts, the real public
sessions in evals/real_sessions (both splits; stored gzipped, converted to JSONL so the older
reader takes them too) and a synthetic instrumented session (the seed's starvation loop with
runs, retrievals and denies), so the run/retrieval paths are timed too.  Each tree is timed
in its own subprocess, the baseline being `reflex/` at evals.baseline_tree.ISSUE17_BASE.
Target: median < 200 µs per event.

Usage: python evals/bench_fold.py [--rounds N] [--baseline REV | --no-baseline]
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(REPO, "..", "shared", "corpus")
REAL_SESSIONS = os.path.join(REPO, "evals", "real_sessions")
TARGET_US = 200.0


def synthetic_session(Event, n_loops=20):
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


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100.0 * (len(xs) - 1))))]


def child(paths, rounds):
    """Time the fold of whatever `reflex` this interpreter imports: -> JSON on stdout."""
    from reflex.arc.events import Event
    from reflex.arc.fold import SessionReflex
    from reflex.arc.policy import default_policy
    from reflex.harness.claude.transcript import read_transcript
    sessions = [read_transcript(p) for p in paths]
    sessions.append(synthetic_session(Event))
    policy = default_policy()
    per_kind, all_us, errors = {}, [], 0
    for _ in range(rounds):
        for events in sessions:
            sr = SessionReflex(policy, reflexes=True)
            for e in events:
                t0 = time.perf_counter_ns()
                sr.apply(e)
                dt = (time.perf_counter_ns() - t0) / 1000.0
                all_us.append(dt)
                per_kind.setdefault(e.kind, []).append(dt)
            errors += sr.state.errors
    out = {"events_per_round": sum(len(s) for s in sessions), "errors": errors,
           "median_us": round(statistics.median(all_us), 1), "p95_us": round(_pct(all_us, 95), 1),
           "p99_us": round(_pct(all_us, 99), 1), "max_us": round(max(all_us), 1),
           "per_kind": {k: {"n": len(v), "median_us": round(statistics.median(v), 1),
                            "p95_us": round(_pct(v, 95), 1)} for k, v in sorted(per_kind.items())}}
    print(json.dumps(out))


def _jsonl_copies(tmp):
    """Every corpus transcript as a JSONL file (the real sessions are stored as gzipped JSON arrays)."""
    from reflex.harness.calls import read_recording, recording_stem
    out = sorted(glob.glob(os.path.join(SHARED, "transcripts", "*.jsonl")))
    for p in sorted(glob.glob(os.path.join(REAL_SESSIONS, "*", "*.json.gz"))):
        recs = json.loads(read_recording(p).decode("utf-8", "replace"), strict=False)
        dst = os.path.join(tmp, recording_stem(p) + ".jsonl")
        with open(dst, "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
        out.append(dst)
    return out


def _time_tree(root, paths, rounds):
    env = dict(os.environ)
    if root:
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--rounds", str(rounds)] + paths
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root or REPO, timeout=1200)
    if proc.returncode != 0:
        raise RuntimeError("fold timing failed in %s: %s" % (root or "this tree", proc.stderr[-2000:]))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--baseline", default=None, help="git revision of the baseline fold")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.paths, args.rounds)
    sys.path.insert(0, REPO)
    from evals import _common, baseline_tree
    rev = args.baseline or baseline_tree.ISSUE17_BASE
    with tempfile.TemporaryDirectory(prefix="ctx-fold-") as tmp:
        paths = _jsonl_copies(tmp)
        now = _time_tree(REPO, paths, args.rounds)
        base = None
        if not args.no_baseline:
            with baseline_tree.checkout(rev) as root:
                base = _time_tree(root, paths, args.rounds) if root else None
    result = {
        "machine": _common.machine(), "rounds": args.rounds, "transcripts": len(paths),
        **{k: now[k] for k in ("events_per_round", "median_us", "p95_us", "p99_us", "max_us", "per_kind")},
        "errors": now["errors"], "target_median_us": TARGET_US, "pass": now["median_us"] < TARGET_US,
        "baseline": {"rev": rev, **base} if base else None,
        "ratio_median": round(now["median_us"] / base["median_us"], 3) if base and base["median_us"] else None,
        "ratio_command_median": (round(now["per_kind"]["command"]["median_us"] /
                                       base["per_kind"]["command"]["median_us"], 3) if base else None),
    }
    print("fold + detectors, µs per event (%d events x %d rounds)" % (result["events_per_round"], args.rounds))
    print("  %-14s %8s %10s %10s %12s" % ("kind", "n", "median", "p95", "base median"))
    for k, v in result["per_kind"].items():
        b = (base or {}).get("per_kind", {}).get(k, {})
        print("  %-14s %8d %10.1f %10.1f %12s" % (k, v["n"], v["median_us"], v["p95_us"], b.get("median_us", "-")))
    print("  %-14s %8s %10.1f %10.1f %12s   (p99 %.1f, max %.1f)" % (
        "all", "", result["median_us"], result["p95_us"], base["median_us"] if base else "-",
        result["p99_us"], result["max_us"]))
    if base:
        print("ratio to the fold at %s: median %.2fx, commands %.2fx" % (rev, result["ratio_median"],
                                                                       result["ratio_command_median"]))
    print("target median < %.0f µs: %s" % (TARGET_US, "PASS" if result["pass"] else "FAIL"))
    print("wrote", _common.write_json("bench_fold.json", result))
    return 0 if result["pass"] and not now["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
