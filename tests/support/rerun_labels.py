"""The hand-labelled re-run sets and how starvation is scored against them.

Three sets, reported separately and never pooled:

    cc0           the 8 CC0 transcripts in ../shared/corpus/transcripts (tests/data/transcript_labels.json)
    real-dev      real public sessions used while building the detector
    real-heldout  real public sessions from other repositories, never used to tune it
                  (tests/data/real_session_labels.json; the files are in the repository,
                  evals/real_sessions/{dev,heldout}/*.json.gz, sources and licences in its README)

Every label was written before the detector it scores was run on the set.  A re-run is keyed
by its tool_use_id (one call copied into a resumed session's transcript is one re-run).  Two
scores per set:

    firings   the starvation detector's firings (it warns once per streak of starved re-runs)
    re-runs   the re-issues it classified as starved (every re-run of a streak it fired on)

precision/recall are None ("n/a") when their denominator is 0: never a perfect score from no
evidence.
"""

from __future__ import annotations

import glob
import json
import os

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus"))
if not os.path.isdir(SHARED):
    SHARED = "/work/shared/corpus"
REAL_SESSIONS = os.path.join(os.path.dirname(HERE), "evals", "real_sessions")
CC0_LABELS = os.path.join(HERE, "data", "transcript_labels.json")
REAL_LABELS = os.path.join(HERE, "data", "real_session_labels.json")
SETS = ("cc0", "real-dev", "real-heldout")
# Labels whose re-run must never be called starved, whatever else the detector gets wrong.
NEVER = {"progress": "after a change", "polling": "polling or a live endpoint"}
STATE_KINDS = frozenset({"state-retry", "live-endpoint", "live-state", "ci-status", "sleep", "polling", "background"})


def set_files(name: str) -> list[str]:
    """The transcript files of a set (cc0: empty when the shared corpus is not here; the real
    sessions are stored gzipped in the repository and every transcript reader takes them so)."""
    if name == "cc0":
        return sorted(glob.glob(os.path.join(SHARED, "transcripts", "*.jsonl")))
    split = name.split("-", 1)[1]
    return sorted(glob.glob(os.path.join(REAL_SESSIONS, split, "*.json.gz")))


def labels(name: str) -> list[dict]:
    if name == "cc0":
        with open(CC0_LABELS) as f:
            return [dict(lab, set="cc0") for lab in json.load(f)["labels"]]
    with open(REAL_LABELS) as f:
        return [lab for lab in json.load(f)["labels"] if lab["set"] == name]


def label_key(lab: dict) -> str:
    return lab["tool_use_id"]


def transcript_name(name: str, path: str) -> str:
    base = os.path.basename(path)
    if base.endswith(".gz"):
        base = base[:-3]
    return base if name == "cc0" else "%s/%s" % (name.split("-", 1)[1], base)


def _ratio(a, b):
    return round(a / b, 3) if b else None


def score(name: str, fired: dict, classified: dict) -> dict:
    """fired / classified: {tool_use_id: reason} of starvation firings / re-runs classified starved."""
    labs = {}
    for lab in labels(name):
        labs.setdefault(label_key(lab), lab)
    positive = {k for k, lab in labs.items() if lab["label"] == "starvation"}
    out = {"reruns_labelled": len(labs), "starved_labelled": len(positive),
           "by_label": {k: sum(1 for lab in labs.values() if lab["label"] == k)
                        for k in ("starvation", "progress", "paging", "polling", "other")}}
    for what, got in (("firings", fired), ("reruns", classified)):
        hit = set(got)
        tp, fp, fn = len(hit & positive), len(hit - positive), len(positive - hit)
        wrong = {}
        for k in sorted(hit - positive):
            lab = labs.get(k)
            wrong[k] = {"label": lab["label"] if lab else "unlabelled", "kind": lab.get("kind") if lab else None,
                        "command": (lab or {}).get("command", "")[:160], "reason": got[k]}
        out[what] = {"tp": tp, "fp": fp, "fn": fn, "precision": _ratio(tp, tp + fp), "precision_n": tp + fp,
                     "recall": _ratio(tp, tp + fn), "recall_n": tp + fn,
                     "after_change": sum(1 for k in hit if labs.get(k, {}).get("label") == "progress"),
                     "on_polling_or_state": sum(1 for k in hit if labs.get(k, {}).get("label") == "polling"
                                                or labs.get(k, {}).get("kind") in STATE_KINDS),
                     "false": wrong, "missed": sorted(positive - hit)}
    return out


def replay_set(name: str) -> tuple[dict, dict, int]:
    """({tool_use_id: reason} fired, {tool_use_id: why} classified starved, commands) with this tree's replay."""
    from reflex.analysis.replay import load, replay
    fired, classified, commands = {}, {}, 0
    for path in set_files(name):
        rep = replay(load(path, "claude"))
        commands += rep["commands"]
        for f in rep["firings"]:
            if f["detector"] == "starvation" and not f["reason"].startswith("circuit breaker"):
                fired.setdefault(f["tool_use_id"], f["reason"])
        for s in rep["sessions"]:
            for d in s["decisions"]:
                if d.get("rerun") == "starvation":
                    classified.setdefault(d["tool_use_id"], d.get("rerun_why") or "")
    return fired, classified, commands
