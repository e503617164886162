"""cilog: `gh run view --log` / `--log-failed` output, parsed against the truth of the steps that really ran.

The corpus (evals/corpus/cilog/, made by evals/gen_cilog_corpus.py) is real step output (pytest,
ruff, bash, git) framed the way GitHub's runner and gh frame it; its truth comes from the commands
(exit codes, pytest's JUnit XML, ruff's JSON), never from this parser.
"""

import glob
import os
import re

import pytest
from blake3 import blake3

from reflex import tokens
from reflex.digest import DENSITIES
from reflex.digest.profiles import cilog
from reflex.digest.render import render
from tests.support.corpus import load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = sorted(glob.glob(os.path.join(ROOT, "evals", "corpus", "cilog", "*", "meta.json")))
# What gh puts before every line: `JOB<TAB>STEP<TAB>` and the runner's timestamp.
PREFIX = re.compile(r"\t\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z")



def digest(raw, meta, density="normal", budget=None):
    facts = cilog.PROFILE.extract(raw, meta["exit_code"], meta["command"])
    return render(facts, raw, density=density, budget=budget, handle="r:" + blake3(raw).hexdigest()[:12])


def case_id(p):
    return os.path.basename(os.path.dirname(p))


def test_corpus_is_there():
    assert len(CASES) >= 6


@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_facts_match_truth(meta_path):
    meta, raw = load(meta_path)
    truth = meta["truth"]
    facts = cilog.PROFILE.extract(raw, meta["exit_code"], meta["command"])
    assert facts.profile == "cilog" and facts.recognized
    steps = [b for b in facts.build_errors if b.label == "FAILED STEP"]
    assert [b.where for b in steps] == [f"{s['job']} / {s['step']}" for s in truth["failed_steps"]] or all(
        b.where.startswith(f"{s['job']} / Run ") for b, s in zip(steps, truth["failed_steps"])), steps
    for b, s in zip(steps, truth["failed_steps"]):
        assert f"exit code {s['exit_code']}" in b.message
    assert sorted(f.id for f in facts.failures) == truth["failed"]
    assert sorted((d.file, d.line, d.col, d.code) for d in facts.diagnostics) == sorted(
        (d["file"], d["line"], d["col"], d["code"]) for d in truth["diagnostics"])
    warnings = [it.text for it in facts.items if it.group == "warnings"]
    assert len(warnings) == len(truth["warnings"]) and all(w in t for w, t in zip(truth["warnings"], warnings))
    reported = facts.counts.reported()
    n_failed = len(truth["failed_steps"])
    if n_failed:
        assert reported["failed step" if n_failed == 1 else "failed steps"] == n_failed
    if truth["steps_passed"]:
        assert reported["passed step" if truth["steps_passed"] == 1 else "passed steps"] == truth["steps_passed"]
    if truth["failed"]:
        assert reported["passed"] == truth["passed_count"]
    assert [it.text.split(":")[0] for it in facts.items if it.group == "jobs"] == truth["jobs"]


@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_digest_names_every_failure_with_prefixes_stripped(meta_path):
    meta, raw = load(meta_path)
    truth = meta["truth"]
    for density in DENSITIES:
        dg = digest(raw, meta, density)
        assert dg.tokens == tokens.count(dg.text) <= dg.budget
        if density == "raw-capped":  # the circuit breaker quotes the raw output itself, by design
            continue
        assert dg.tokens < dg.raw_tokens
        assert not PREFIX.search(dg.text), density  # no `job<TAB>step<TAB>timestamp` shown
        for s in truth["failed_steps"]:
            assert f"FAILED STEP {s['job']} / " in dg.text
        omitted = sum(int(n) for n in re.findall(r"^\[ctx\] (\d+) more failures not listed", dg.text, re.MULTILINE))
        missing = [t for t in truth["failed"] if t.split("[")[0] not in dg.text]
        assert len(missing) <= omitted, (density, missing[:3])
        for h in dg.hints:  # every address names the prefixed raw lines, byte-exact
            assert blake3(raw[h.span[0]:h.span[1]]).hexdigest()[:8] == h.b3
            assert h.span[0] == 0 or raw[h.span[0] - 1:h.span[0]] == b"\n"


@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_failure_evidence_is_shown_without_prefixes(meta_path):
    """The failing tests' evidence is the step's own output (`E   assert …`), not gh's framing."""
    meta, raw = load(meta_path)
    facts = cilog.PROFILE.extract(raw, meta["exit_code"], meta["command"])
    for f in facts.failures:
        assert f.detail and not PREFIX.search(f.detail)
        first = raw[f.span[0]:f.span[1]].split(b"\n", 1)[0].decode()
        assert PREFIX.search(first)  # ... while its span covers the prefixed lines in raw


BOM = "\ufeff"


def step_log(job, step, lines, start=0):
    return "".join(f"{job}\t{step}\t{BOM if k == 0 else ''}2026-05-01T10:00:{(start + k) % 60:02d}.1234567Z {s}\n"
                   for k, s in enumerate(lines))


def test_a_step_no_profile_knows_is_named_by_its_last_words():
    raw = (step_log("build", "Set up job", ["Current runner version: '2.323.0'", "Complete job name: build"])
           + step_log("build", "Compile", ["##[group]Run make all", "make all", "shell: /usr/bin/bash -e {0}",
                                           "##[endgroup]", "cc -c main.c", "make: *** [all] Error 2",
                                           "##[error]Process completed with exit code 2."])).encode()
    facts = cilog.PROFILE.extract(raw, 0, "gh run view 1 --log")
    (be,) = facts.build_errors
    assert be.where == "build / Compile" and be.label == "FAILED STEP"
    assert be.message == "make: *** [all] Error 2 (Process completed with exit code 2.)"
    assert "shell: /usr/bin/bash" not in be.detail and "make: *** [all] Error 2" in be.detail


def test_bad_bytes_and_huge_lines_keep_spans_on_line_boundaries():
    junk = b"\xff\xfe binary \x00\x01" + b"x" * 300_000
    raw = (step_log("t", "Test", ["##[group]Run ./check", "./check", "##[endgroup]"]).encode()
           + b"t\tTest\t2026-05-01T10:00:09.1234567Z " + junk + b"\n"
           + step_log("t", "Test", ["##[error]Process completed with exit code 1."], start=10).encode())
    facts = cilog.PROFILE.extract(raw, 0, "gh run view 1 --log-failed")
    (be,) = facts.build_errors
    assert "exit code 1" in be.message
    dg = digest(raw, {"exit_code": 0, "command": "gh run view 1 --log-failed"})
    assert dg.tokens <= dg.budget and dg.tokens < dg.raw_tokens
    for h in dg.hints:
        assert h.span[0] == 0 or raw[h.span[0] - 1:h.span[0]] == b"\n"


def test_output_that_is_not_a_ci_log_is_not_claimed():
    raw = b"==== 1 failed, 2 passed in 0.1s ====\nFAILED t.py::test_x - assert 1 == 2\n"
    assert cilog.parse(cilog.Output.of(raw)) is None
    facts = cilog.PROFILE.extract(raw, 1, "gh run view 1 --log")
    assert not facts.recognized and facts.handed_over_from == "cilog"
