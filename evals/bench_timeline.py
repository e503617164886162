"""The compile's per-command cost on real commands: the timeline's file-write check, this tree
against the tree before the /dev/null gate (baseline_tree.DEV_NULL_GATE_BASE), same run.

`ctx policy compile`, `ctx stats` and the team export build a timeline of every session, and for
each Bash call ask whether the command writes files (reflex.analysis.stats.timeline._writes): a
cheap text check, then a full parse (reflex.signature) for the commands it flags.  The commands
are every Bash command of the real Claude Code sessions in evals/real_sessions (dev and
held-out), each with its session's cwd.  Each tree runs in fresh interpreters, interleaved
(A B A B), with both signature caches emptied before every pass; per tree the fastest pass.

Figures: µs per command over all of them, the commands parsed, and the ratio to the baseline.
Target: <= 0.75x the baseline (a /dev/null redirect alone was the reason for 44% of the parses).

Usage: python evals/bench_timeline.py [--pairs N] [--passes N] [--baseline-rev REV]
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common, baseline_tree  # noqa: E402

TARGET_RATIO = 0.75

CHILD = r"""
import json, sys, time
spec = json.load(sys.stdin)
from reflex.analysis.stats import timeline as T
import reflex.signature as S
parses = []
real = T.signature_of
T.signature_of = lambda c, w: parses.append(1) or real(c, w)
cmds = spec["commands"]
best, writes = None, None
for _ in range(spec["passes"]):
    T._SIG_CACHE.clear()
    S._MEMO.clear()            # the signature module's own memo: every pass parses afresh
    parses.clear()
    t = time.process_time()
    got = [T._writes(c, w) for c, w in cmds]
    dt = time.process_time() - t
    best = dt if best is None else min(best, dt)
    writes = sum(1 for g in got if g[0])
print(json.dumps({"s": best, "parses": len(parses), "writes": writes, "file": T.__file__}))
"""


def run_tree(env, spec):
    p = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(spec), capture_output=True, text=True,
                       env=env, cwd="/", timeout=600)
    if p.returncode != 0:
        raise SystemExit(p.stderr[-2000:])
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--baseline-rev", default=None)
    args = ap.parse_args()
    rev = args.baseline_rev or baseline_tree.DEV_NULL_GATE_BASE
    from tests.support.real_sessions import bash_commands
    cmds = bash_commands()
    spec = {"commands": cmds, "passes": args.passes}
    current_env = dict(os.environ, PYTHONPATH=_common.REPO)
    runs = {"current": [], "baseline": []}
    with baseline_tree.checkout(rev) as root:
        if root is None:
            raise SystemExit("cannot extract reflex/ at %s" % rev)
        base_env = baseline_tree.env(root)
        for _ in range(args.pairs):
            runs["current"].append(run_tree(current_env, spec))
            runs["baseline"].append(run_tree(base_env, spec))
    assert runs["current"][0]["file"].startswith(_common.REPO), runs["current"][0]["file"]
    assert runs["baseline"][0]["file"].startswith(root), runs["baseline"][0]["file"]
    cur = min(runs["current"], key=lambda r: r["s"])
    base = min(runs["baseline"], key=lambda r: r["s"])
    n = len(cmds)
    res = {"machine": _common.machine(), "commands": n, "baseline_rev": rev, "pairs": args.pairs,
           "passes": args.passes,
           "current": {"us_per_command": round(cur["s"] / n * 1e6, 1), "parses": cur["parses"],
                       "writes": cur["writes"], "runs_s": [round(r["s"], 4) for r in runs["current"]]},
           "baseline": {"us_per_command": round(base["s"] / n * 1e6, 1), "parses": base["parses"],
                        "writes": base["writes"], "runs_s": [round(r["s"], 4) for r in runs["baseline"]]},
           "ratio": round(cur["s"] / base["s"], 3), "target_ratio": TARGET_RATIO}
    # The gate changes the cost, never the answer: the same commands write in both trees.
    res["same_answers"] = cur["writes"] == base["writes"]
    res["pass"] = res["same_answers"] and res["ratio"] <= TARGET_RATIO
    print("%d real commands: %.1f us/command (%d parsed), baseline %s %.1f us/command (%d parsed): %.2fx; "
          "commands that write: %d vs %d" % (n, res["current"]["us_per_command"], cur["parses"], rev,
                                             res["baseline"]["us_per_command"], base["parses"], res["ratio"],
                                             cur["writes"], base["writes"]))
    print("wrote", _common.write_json("bench_timeline.json", res))
    return 0 if res["same_answers"] else 1


if __name__ == "__main__":
    sys.exit(main())
