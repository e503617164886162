"""Starvation against hand labels: `ctx replay` over the real Claude Code transcripts in
shared/corpus/transcripts, compared with tests/data/transcript_labels.json (every re-run in
those sessions, labelled starvation / progress / paging / polling / other, with why).

Usage: python evals/bench_labels.py
"""

import glob
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from evals import _common  # noqa: E402


def main():
    corpus = sorted(glob.glob(os.path.join(REPO, "..", "shared", "corpus", "transcripts", "*.jsonl")))
    if not corpus:
        print("no transcripts in ../shared/corpus/transcripts: skipped")
        return 0
    from reflex.replay import load, replay
    with open(os.path.join(REPO, "tests", "data", "transcript_labels.json")) as f:
        labels = json.load(f)["labels"]
    fired = set()
    commands = 0
    for p in corpus:
        rep = replay(load(p))
        commands += rep.get("commands", 0) if isinstance(rep, dict) else 0
        fired |= {(os.path.basename(p), f["tool_use_id"]) for f in rep["firings"] if f["detector"] == "starvation"}
    positive = {(lab["transcript"], lab["tool_use_id"]) for lab in labels if lab["label"] == "starvation"}
    after_change = {(lab["transcript"], lab["tool_use_id"]) for lab in labels if lab["label"] == "progress"}
    tp, fp, fn = len(fired & positive), len(fired - positive), len(positive - fired)
    res = {"machine": _common.machine(), "transcripts": len(corpus), "reruns_labelled": len(labels),
           "by_label": {k: sum(1 for lab in labels if lab["label"] == k) for k in
                        ("starvation", "progress", "paging", "polling", "other")},
           "tp": tp, "fp": fp, "fn": fn,
           # None (n/a) when nothing fired / nothing was labelled: never a perfect score from no evidence.
           "precision": tp / (tp + fp) if tp + fp else None, "precision_n": tp + fp,
           "recall": tp / (tp + fn) if tp + fn else None, "recall_n": tp + fn,
           "false_starvation_after_change": len(fired & after_change)}
    print(json.dumps(res, indent=2))
    print("wrote", _common.write_json("bench_labels.json", res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
