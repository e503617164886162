"""Savings on real sessions: of the tool-result tokens the model received, how many ctx acts on
and how much of them it would have delivered (reflex.analysis.savings, `ctx replay --savings`).

The sessions are evals/real_sessions: dev/ (what ctx is tuned on) and heldout/ (never tuned
on; the honest figure).  Every count is exact o200k on the text the model received.

Targets (issue 29), on each split: ctx acts on >= 50% of tool-result tokens, delivers <= 0.4x
of what the harness delivered for those calls, and never more than the harness for any call;
the dev set replays in under 60 s.

Baseline, same run: the same accounting (this tree's savings module, loaded by path) over the
package as it was before issue 29 (`git archive` of BASE, evals/baseline_tree.py): its rewrite
families, its digests, no read memo.

Usage: python evals/bench_savings.py [--no-baseline] [--extra DIR ...]
  --extra DIR   also replay the Claude Code transcripts of DIR as a group of its own (reported,
                not judged: e.g. /work/shared/corpus/transcripts for exploration)
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common, baseline_tree  # noqa: E402
from reflex.analysis import savings  # noqa: E402

BASE = "6c84094"          # the tree before issue 29
ACTED_TARGET = 0.50
RATIO_TARGET = 0.40
REPLAY_TARGET_S = 60.0
SESSIONS = os.path.join(_common.REPO, "evals", "real_sessions")
SPLITS = ("dev", "heldout")

# Run in a child whose import path starts with the baseline tree: this tree's savings module,
# loaded by path, counts with the old package.
_BASELINE_CHILD = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("savings_under_test", sys.argv[1])
mod = sys.modules["savings_under_test"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
groups = json.loads(sys.argv[2])
import reflex
assert reflex.__file__.startswith(sys.argv[3]), reflex.__file__  # the old tree, not this one
print(json.dumps(mod.report(groups)))
"""


def groups(extra=()):
    out = {split: savings.session_files(os.path.join(SESSIONS, split)) for split in SPLITS}
    for d in extra:
        out[os.path.basename(os.path.normpath(d))] = savings.session_files(d)
    return out


def baseline(grp):
    """The report over the tree before issue 29, or None when git cannot give that tree."""
    with baseline_tree.checkout(BASE) as root:
        if root is None:
            return None
        p = subprocess.run([sys.executable, "-c", _BASELINE_CHILD, savings.__file__, json.dumps(grp), root],
                           capture_output=True, text=True, env=baseline_tree.env(root), cwd=root, timeout=600)
        if p.returncode != 0:
            raise SystemExit("baseline replay failed: %s" % p.stderr[-2000:])
        return json.loads(p.stdout)


def judge(total):
    acted = total["acted_share"] or 0.0
    ratio = total["ratio"]
    return {"acted_share": acted, "ratio": ratio, "larger": total["larger"],
            "pass": acted >= ACTED_TARGET and ratio is not None and ratio <= RATIO_TARGET and total["larger"] == 0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--extra", action="append", default=[])
    args = ap.parse_args()
    grp = groups(args.extra)
    t0 = time.perf_counter()
    dev_only = savings.report({"dev": grp["dev"]})
    dev_s = time.perf_counter() - t0
    rep = savings.report(grp)
    base = None if args.no_baseline else baseline(grp)
    splits = {}
    for name, g in rep["groups"].items():
        row = {"sessions": g["sessions"], "total": g["total"], "by_tool": g["by_tool"],
               "by_program": dict(list(g["by_program"].items())[:30]), **judge(g["total"])}
        if base is not None:
            b = base["groups"][name]["total"]
            row["baseline"] = {"acted_share": b["acted_share"], "ratio": b["ratio"], "larger": b["larger"],
                               "acted_received": b["acted_received"], "delivered": b["delivered"]}
        splits[name] = row
    judged = [splits[s] for s in SPLITS]
    result = {
        "machine": _common.machine(),
        "read_handled": rep["read_handled"],
        "splits": splits,
        "why_tokens": rep["why_tokens"],
        "cut_calls": rep["cut_calls"],
        "dev_replay_s": round(dev_s, 3),
        "dev_calls": dev_only["all"]["total"]["calls"],
        "baseline_rev": BASE if base is not None else None,
        "targets": {"acted_share_min": ACTED_TARGET, "ratio_max": RATIO_TARGET, "larger": 0,
                    "dev_replay_s_max": REPLAY_TARGET_S},
        "pass": all(s["pass"] for s in judged) and dev_s < REPLAY_TARGET_S,
    }
    print(savings.render_text(rep, programs=15), end="")
    print()
    for name, s in splits.items():
        judged_split = name in SPLITS
        line = "%-8s acts on %5.1f%% (target >= %.0f%%), delivers %s (target <= %.2f×), %d larger" % (
            name, 100 * s["acted_share"], 100 * ACTED_TARGET,
            "%.3f×" % s["ratio"] if s["ratio"] is not None else "-", RATIO_TARGET, s["larger"])
        if "baseline" in s:
            b = s["baseline"]
            line += "   | before issue 29 (%s): acts on %.1f%%, delivers %s" % (
                BASE, 100 * (b["acted_share"] or 0), "%.3f×" % b["ratio"] if b["ratio"] is not None else "-")
        print(line + ("" if judged_split else "   (not judged)"))
    print("dev set replayed in %.2f s (%d tool results; target < %.0f s)" % (dev_s, result["dev_calls"],
                                                                            REPLAY_TARGET_S))
    print("targets: %s" % ("PASS" if result["pass"] else "FAIL"))
    print("wrote", _common.write_json("bench_savings.json", result))


if __name__ == "__main__":
    main()
