"""The labelled corpus (tests/data/signature_corpus.jsonl): accuracy and coverage.

Entries come from real Claude Code transcripts (source transcript:<session>),
commands quoted in the design docs and seeds (docs), commands this project's
own sessions ran (session), realistic runner commands typical of agent
transcripts (typical), and a blind set labelled by hand before the
implementation ran on it (blind).  evals/bench_signature.py prints every miss.
"""

import pytest

from reflex.signature import is_narrower, signature

from tests.support.signature_labels import FIELDS, load_corpus, observed as _observed

ROWS = load_corpus()


@pytest.fixture(scope="module")
def results():
    return [(r, _observed(signature(r["command"], r["cwd"]))) for r in ROWS]


def test_corpus_shape():
    assert len(ROWS) >= 300
    assert len({r["command"] for r in ROWS}) == len(ROWS)
    for r in ROWS:
        for key in ("id", "source", "command", "cwd", "family", "core", "decorations", "scope", "reads", "writes"):
            assert key in r, (r["id"], key)
    sources = [r["source"].split(":")[0] for r in ROWS]
    assert sources.count("transcript") >= 150
    assert sources.count("blind") >= 30


def test_family_and_core_accuracy(results):
    ok = sum(got["family"] == r["family"] and got["core"] == r["core"] for r, got in results)
    assert ok / len(results) >= 0.98
    blind = [(r, got) for r, got in results if r["labeled"] == "blind"]
    blind_ok = sum(got["family"] == r["family"] and got["core"] == r["core"] for r, got in blind)
    assert blind_ok / len(blind) >= 0.95


@pytest.mark.parametrize("field", FIELDS)
def test_field_accuracy(results, field):
    labelled = [(r, got) for r, got in results if r.get(field) is not None]
    ok = sum(got[field] == r[field] for r, got in labelled)
    assert ok / len(labelled) >= 0.95


def test_every_core_in_the_corpus_is_idempotent():
    for r in ROWS:
        sig = signature(r["command"], r["cwd"])
        assert signature(sig.core, r["cwd"]).core == sig.core, r["id"]


def _find(command):
    return next(r for r in ROWS if r["command"] == command)


def test_corpus_holds_the_hard_cases():
    page1, page2 = _find("sed -n 1,80p lib/app.ex"), _find("sed -n 80,160p lib/app.ex")
    assert page1["core"] != page2["core"] and page1["reads"] != page2["reads"]
    tail, grep = _find("mix test 2>&1 | tail -5"), _find('mix test 2>&1 | grep -E "(tests|failures)"')
    assert tail["core"] == grep["core"] and tail["decorations"] != grep["decorations"]
    h1 = _find("cat > src/config.py << 'EOF'\nDEBUG = False\nPORT = 8080\nEOF")
    h2 = _find("cat > src/config.py << 'EOF'\nDEBUG = True\nPORT = 8080\nEOF")
    assert h1["core"] != h2["core"] and h1["writes"] == h2["writes"]
    a, b = _find("cd a && pytest -q"), _find("cd b && pytest -q")
    assert a["core"] == b["core"] and a["expect_cwd"] != b["expect_cwd"]
    out, dup = _find("pytest -q > test_output.txt 2>&1"), _find("pytest -q 2>&1 | tail -50")
    assert out["writes"] and out["core"] != dup["core"]
    assert _find("pytest -x")["core"] != _find("pytest")["core"]
    wide, narrow = _find('grep -rn "TODO" src/'), _find('grep -rn "TODO" src/parser.py')
    assert is_narrower(signature(narrow["command"], narrow["cwd"]), signature(wide["command"], wide["cwd"]))
