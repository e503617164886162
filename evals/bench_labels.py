"""Starvation against hand labels, per set, before and after issue 17, in the same run.

`ctx replay` over each labelled set (tests/support/rerun_labels.py: the CC0 transcripts, the real
public sessions used to build the detector, and the held-out real sessions never tuned
against), scored against the labels written before the detector ran on them.  The same sets
are replayed by `reflex/` at evals.baseline_tree.ISSUE17_BASE in a subprocess (the detector
as the issue found it; the real sessions handed to it as JSONL, the only form its reader
takes; they are stored gzipped in evals/real_sessions/).  Reported per set, never pooled: precision and recall with their n, "n/a" when
nothing fired or nothing was labelled starved; by firings (the detector warns once per streak
of starved re-runs) and by re-runs (every re-run it classified starved); and firings on
re-runs after a change or on polling/state-changing commands, which must be 0.

Usage: python evals/bench_labels.py [--baseline REV [--baseline REV2 ...] | --no-baseline]
(several --baseline: each is replayed and scored in the same run; the first is "before" in the
JSON, every one is in its "before_at")
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from evals import _common, baseline_tree  # noqa: E402
from reflex.harness.calls import read_recording, recording_stem  # noqa: E402
from tests.support import rerun_labels  # noqa: E402

# Run inside the baseline tree: its replay, its classification (recorded by wrapping
# starvation.classify, which its detect() looks up at call time).  In a tree from before the
# restructure the detector module is loaded under its old name (reflex.detectors.starvation) by
# the fold and may be loaded again under the alias: every loaded copy is wrapped.
_BASELINE_CHILD = r'''
import json, sys
import reflex.arc.detectors.starvation
from reflex.analysis.replay import load, replay
seen = {}
def wrap(mod):
    orig = mod.classify
    def wrapped(track, obs, policy):
        r = orig(track, obs, policy)
        if r[0] == "starvation":
            seen.setdefault(obs.event.tool_use_id, r[1])
        return r
    mod.classify = wrapped
for name, mod in list(sys.modules.items()):
    if name.endswith("detectors.starvation") and hasattr(mod, "classify") and hasattr(mod, "detect"):
        wrap(mod)
out = {}
for name, paths in json.load(sys.stdin).items():
    fired = {}
    seen.clear()
    for p in paths:
        rep = replay(load(p, "claude"))
        for f in rep["firings"]:
            if f["detector"] == "starvation" and not f["reason"].startswith("circuit breaker"):
                fired.setdefault(f["tool_use_id"], f["reason"])
    out[name] = {"fired": fired, "classified": dict(seen)}
print(json.dumps(out))
'''


def _as_jsonl(paths, tmp):
    out = []
    for p in paths:
        if p.endswith(".jsonl"):
            out.append(p)
            continue
        recs = json.loads(read_recording(p).decode("utf-8", "replace"), strict=False)
        dst = os.path.join(tmp, os.path.basename(os.path.dirname(p)) + "__" + recording_stem(p) + ".jsonl")
        with open(dst, "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
        out.append(dst)
    return out


def baseline(rev, files):
    with tempfile.TemporaryDirectory(prefix="ctx-labels-") as tmp:
        sets = {name: _as_jsonl(paths, tmp) for name, paths in files.items()}
        with baseline_tree.checkout(rev) as root:
            if root is None:
                return None
            proc = subprocess.run([sys.executable, "-c", _BASELINE_CHILD], input=json.dumps(sets),
                                  capture_output=True, text=True, env=baseline_tree.env(root), cwd=root,
                                  timeout=1200)
    if proc.returncode != 0:
        raise RuntimeError("baseline replay failed: %s" % proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _line(name, when, d):
    def f(x):
        return "n/a" if x is None else "%.2f" % x
    return ("  %-13s %-7s firings: P %s (n=%d) R %s (n=%d) | re-runs: P %s (n=%d) R %s (n=%d) | "
            "after change %d, on polling/state %d" % (
                name, when, f(d["firings"]["precision"]), d["firings"]["precision_n"], f(d["firings"]["recall"]),
                d["firings"]["recall_n"], f(d["reruns"]["precision"]), d["reruns"]["precision_n"],
                f(d["reruns"]["recall"]), d["reruns"]["recall_n"], d["firings"]["after_change"],
                d["firings"]["on_polling_or_state"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", action="append", default=None,
                    help="git revision of the detector to compare with (repeatable)")
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    revs = args.baseline or [baseline_tree.ISSUE17_BASE]
    files = {name: rerun_labels.set_files(name) for name in rerun_labels.SETS}
    files = {k: v for k, v in files.items() if v}
    if not files:
        print("no labelled transcripts (evals/real_sessions/, ../shared/corpus): skipped")
        return 0
    befores = {} if args.no_baseline else {rev: baseline(rev, files) for rev in revs}
    befores = {rev: b for rev, b in befores.items() if b is not None}
    res = {"machine": _common.machine(), "baseline_rev": next(iter(befores), None), "sets": {}}
    print("starvation vs hand labels (%s)" % ("after | before = %s" % ", ".join(befores) if befores else "after"))
    for name, paths in files.items():
        fired, classified, commands = rerun_labels.replay_set(name)
        after = rerun_labels.score(name, fired, classified)
        entry = {"transcripts": len(paths), "commands": commands, "after": after}
        if befores:
            entry["before_at"] = {rev: rerun_labels.score(name, b[name]["fired"], b[name]["classified"])
                                  for rev, b in befores.items()}
            entry["before"] = entry["before_at"][res["baseline_rev"]]
        res["sets"][name] = entry
        print("%s: %d transcripts, %d re-runs labelled (%s)" % (
            name, len(paths), after["reruns_labelled"], ", ".join("%s %d" % kv for kv in after["by_label"].items() if kv[1])))
        print(_line(name, "after", after))
        for rev, sc in entry.get("before_at", {}).items():
            print(_line(name, rev[:7], sc))
    print("wrote", _common.write_json("bench_labels.json", res))
    ok = all(s["after"]["firings"]["after_change"] == 0 and s["after"]["firings"]["on_polling_or_state"] == 0
             for s in res["sets"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
