"""The labelled signature corpus and the view of a Signature its labels record.

Shared by tests/signature/test_signature_corpus.py and evals/bench_signature.py, so the accuracy the
benchmark reports is measured exactly as the tests check it.
"""

import json
import os

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "signature_corpus.jsonl")
FIELDS = ("expect_cwd", "decorations", "scope", "reads", "writes", "wrapper_route")


def load_corpus(path=CORPUS):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def observed(sig):
    """The labelled fields of a Signature, in the corpus's shape."""
    return {
        "family": sig.family, "core": sig.core, "expect_cwd": sig.cwd,
        "decorations": [[d.kind, d.value] for d in sig.decorations],
        "scope": [[s.kind, s.value] for s in sig.scope],
        "reads": [[r.path, r.lines] for r in sig.reads],
        "writes": [[w.path, w.lines] for w in sig.writes],
        "wrapper_route": list(sig.wrapper_route),
    }
