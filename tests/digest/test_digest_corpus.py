"""Every corpus case, every density, default budget: the census is complete or says what it left out.

Ground truth comes from each tool's structured output (evals/corpus/*/*/meta.json,
written by the corpus generator, never by our parsers).  The census is read
back from the digest text with the grammar census.py documents (tests/support/corpus.py).
"""

import re

import pytest
from blake3 import blake3

from reflex import tokens
from reflex.address import parse_hint
from reflex.digest import DENSITIES, extract_facts
from reflex.digest.budget import DEFAULT_BUDGETS
from reflex.digest.neutralize import clean_line
from tests.support.corpus import (
    CASES,
    case_id,
    codes_stated,
    diagnostic_listed,
    diagnostic_locations,
    digest_of,
    failure_lines,
    family_of,
    listed,
    load,
    omitted,
)

# Above SHARE_FROM_TOKENS raw tokens a normal digest is at most its family's share of the raw output
# (issue 13; a listing's census is its names: reflex/digest/budget.py).
from reflex.digest.budget import SHARE_FROM_TOKENS, share_target  # noqa: E402

pytestmark = pytest.mark.skipif(not CASES, reason="no corpus cases generated yet")


@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_facts_match_truth(meta_path):
    """The parser itself: every failing id, collection error and diagnostic the tool reported."""
    meta, raw = load(meta_path)
    truth = meta["truth"]
    facts = extract_facts(raw, family=family_of(meta), exit_code=meta["exit_code"], command=meta["command"])
    if meta["family"] == "generic":
        assert not facts.recognized and not facts.counts.reported()
        for d in truth["diagnostics"]:
            assert any(f.file == d["file"] and f.line == d["line"] and f.col == d["col"] for f in facts.diagnostics), d
        return
    assert facts.recognized
    ids = [f.id for f in facts.failures]
    leaf = truth.get("ids_printed") == "leaf"  # the output names tests without their suites
    errored = truth.get("errored_tests", [])  # tests that raised (minitest's Error blocks)
    if "display_ids" in truth:
        # The output prints ids in its own form (phpunit --testdox); the truth maps them.
        assert sorted(ids) == truth["display_ids"]
        return
    for t in truth["failed"] + errored:
        assert any(i == t or i.endswith("/" + t) or (leaf and t.endswith(" > " + i)) for i in ids), t
    # pytest 9 subtests: each failing subtest is listed besides the test that contains it.
    assert len(facts.failures) == len(truth["failed"]) + len(errored) + truth.get("subtests_failed", 0)
    wheres = [b.where for b in facts.build_errors]
    for c in truth["collection_errors"]:
        assert any(w == c or (w or "").endswith("/" + c) for w in wheres), c
    for unit in truth.get("failed_units", []):
        # A go package that failed with no failing test, an ExUnit module whose setup_all failed:
        # named by a labelled build error (PACKAGE FAIL, SETUP_ALL FAIL).
        assert any(b.where == unit and b.label for b in facts.build_errors), unit
    for file in truth.get("not_linted", []):  # a file eslint could not parse
        assert any(b.where.endswith(file) and b.label == "NOT LINTED" for b in facts.build_errors), file
    if truth.get("locations_printed") is False:  # codes and counts only: nothing to locate
        return
    for d in truth["diagnostics"]:
        assert any(
            (f.file == d["file"] or f.file.endswith("/" + d["file"])) and f.line == d["line"]
            and (f.col is None or f.col == d["col"]) and f.code == d["code"]
            for f in facts.diagnostics
        ), d
    assert len(facts.diagnostics) == len(truth["diagnostics"])
    reported = facts.counts.reported()
    if "failed" in reported and not errored:
        # pytest counts each failing subtest as one more failure; node counts tests cancelled by a
        # failed hook apart from the failed ones (its junit report lists both as failures).
        assert reported["failed"] + reported.get("cancelled", 0) == truth["failed_count"] + truth.get("subtests_failed", 0)
    if "passed" in reported:
        assert reported["passed"] == truth["passed_count"]


@pytest.mark.parametrize("density", DENSITIES)
@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_census_complete_in_every_density(meta_path, density):
    meta, raw = load(meta_path)
    truth = meta["truth"]
    dg = digest_of(meta, raw, density)
    text = dg.text
    assert dg.tokens == tokens.count(text) <= DEFAULT_BUDGETS[density]
    if dg.passthrough and dg.reason is None:
        # Passed through unchanged: the whole output, line for line (cleaned and redacted only),
        # and no footer (nothing was hidden, so nothing needs a handle).
        from reflex.digest.source import Source

        src = Source(raw, dg.handle)
        body = "\n".join(src.lines(0, len(src.out)))
        # It ends as the output did: Maven's last line is colour resets with no newline after them.
        assert text == (body + "\n" if raw.endswith(b"\n") else body)
        return
    header = text.split("\n")[-1] if dg.passthrough else text.split("\n")[0]
    assert header.startswith("[ctx] ") and dg.handle in header
    assert f"exit {meta['exit_code']}" in header
    left_out = omitted(text)
    if meta["family"] == "generic":
        # No parsed ids: the failing tests' names are quoted, or the digest says which lines it did not show.
        names_shown = all(t.split(" ", 2)[-1] in text for t in truth["failed"])
        assert names_shown or " not shown: ctx get r:" in text or left_out
        return
    lines = failure_lines(text)
    named = truth.get("display_ids") or truth["failed"] + truth.get("errored_tests", [])
    if truth.get("ids_printed") == "leaf":
        missing = [t for t in named if not listed(t.rsplit(" > ", 1)[-1], lines)]
    else:
        missing = [t for t in named if not listed(t, lines)]
    if missing:
        assert left_out.get("failures", 0) >= len(missing), (missing, left_out)
        assert dg.truncated
    for c in truth["collection_errors"] + truth.get("failed_units", []) + truth.get("not_linted", []):
        assert c in text or left_out.get("build errors"), c
    if truth.get("locations_printed") is False:
        # The output names codes and counts only (ruff --statistics): the digest states each of them.
        assert codes_stated(truth["diagnostics"], text) == []
    elif truth["diagnostics"]:
        found, codes = diagnostic_locations(text)
        if codes:
            want: dict[str, int] = {}
            for d in truth["diagnostics"]:
                key = d["code"] or d["severity"]
                want[key] = want.get(key, 0) + 1
            assert codes == want or left_out.get("diagnostic codes")
            assert "[ctx] locations of" in text
        else:
            missing = [d for d in truth["diagnostics"] if not diagnostic_listed(d, found)]
            if missing:
                assert left_out.get("diagnostics", 0) >= len(missing), (missing[:3], left_out)
    if density == "dense":
        # Dense promises every location at the default budget on this corpus (no omissions).
        assert not left_out, left_out


@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_digest_never_larger_than_raw(meta_path):
    """At every density a digest costs at most what the raw output would once made safe to quote; at
    normal density, above 2,000 raw tokens, at most 35% of it (a listing: 60%, reflex/digest/budget.py).

    "Safe to quote": a line with a harness-like tag (JUnit prints `"<parameter1>" is null`) is
    shown with its `<` escaped, which costs a token or two more than the raw line; no digest can
    avoid that without quoting the tag as it is."""
    meta, raw = load(meta_path)
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    safe_raw_tokens = tokens.count("\n".join(clean_line(line) for line in text.split("\n")))
    for density in DENSITIES:
        dg = digest_of(meta, raw, density)
        assert dg.tokens <= max(dg.raw_tokens, safe_raw_tokens), (density, dg.tokens, dg.raw_tokens, safe_raw_tokens)
        if density == "normal" and dg.raw_tokens > SHARE_FROM_TOKENS:
            assert dg.tokens <= share_target(meta["family"]) * dg.raw_tokens, (dg.tokens, dg.raw_tokens)


@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_hints_round_trip(meta_path):
    meta, raw = load(meta_path)
    try:
        raw.decode("utf-8")
        valid_utf8 = True
    except UnicodeDecodeError:
        valid_utf8 = False
    facts_ids = None
    for density in DENSITIES:
        dg = digest_of(meta, raw, density)
        text_lines = dg.text.split("\n")
        for h in dg.hints:
            start, end = h.span
            assert 0 <= start <= end <= len(raw)
            if valid_utf8:
                raw[start:end].decode("utf-8")  # both ends on UTF-8 boundaries of valid text
            else:  # bytes that are not UTF-8 (git/diff_odd_bytes): line-aligned, so on a boundary anyway
                assert start == 0 or raw[start - 1:start] == b"\n", (start, end)
            assert blake3(raw[start:end]).hexdigest()[:8] == h.b3
            assert any(h.command in line for line in text_lines)
            parsed = parse_hint(h.command)
            assert parsed.address.handle == dg.handle and parsed.b3 == h.b3
            if parsed.address.kind == "lines":
                from reflex.address import line_span
                assert line_span(raw, parsed.address.first_line, parsed.address.last_line) == (start, end)
            elif parsed.address.kind == "test":
                facts_ids = facts_ids or {f.id: f.span for f in dg.facts.failures}
                assert facts_ids[parsed.address.test_id] == (start, end)
        # Every hint-looking line in the digest is one of ours.
        for line in text_lines:
            parsed = parse_hint(line)
            if parsed is not None:
                assert parsed.address.handle == dg.handle
                assert any(parsed.b3 == h.b3 for h in dg.hints)


@pytest.mark.parametrize("meta_path", CASES[:12], ids=case_id)
def test_same_input_same_bytes(meta_path):
    meta, raw = load(meta_path)
    assert digest_of(meta, raw, "normal").text == digest_of(meta, raw, "normal").text


@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_a_digest_does_not_depend_on_where_the_repository_is_checked_out(meta_path, monkeypatch):
    # Tools print absolute paths; the case records the root they were printed under, so the
    # report's figures are the same in CI's clone as in the one that recorded them.
    from tests.support import corpus
    meta, raw = load(meta_path)
    here = digest_of(meta, raw, "normal").text
    monkeypatch.setattr(corpus, "REPO", "/somewhere/else/ctx")
    assert corpus.digest_of(meta, raw, "normal").text == here
