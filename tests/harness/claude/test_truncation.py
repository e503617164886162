"""The harness model behind "tokens saved": what Claude Code alone would have delivered."""

import pytest

from reflex import tokens
from reflex.harness.claude import truncation as td


def _pytest_output(n_fail, filler=60):
    lines = ["============================= test session starts =============================="]
    for i in range(n_fail):
        lines.append("_" * 30 + " test_case_%d " % i + "_" * 30)
        lines.append("")
        lines.append("    def test_case_%d():" % i)
        for k in range(filler // 10):
            lines.append("        value_%d = compute_something(%d, key='alpha-%d')  # context line" % (k, k * i, k))
        lines.append(">       assert value_0 == %d" % (i + 100))
        lines.append("E       AssertionError: assert %d == %d" % (i, i + 100))
        lines.append("")
        lines.append("tests/test_mod.py:%d: AssertionError" % (10 + i))
    lines.append("=========================== short test summary info ============================")
    lines += ["FAILED tests/test_mod.py::test_case_%d - AssertionError: assert %d == %d" % (i, i, i + 100)
              for i in range(n_fail)]
    lines.append("============================== %d failed in 0.42s ==============================" % n_fail)
    return "\n".join(lines) + "\n"


def test_failure_is_middle_truncated_past_10000_chars_like_the_observed_harness():
    text = "x" * 28306
    view = td.harness_view(text, exit_code=1)
    assert view.startswith("x" * 5000) and view.endswith("x" * 5000)
    assert "\n\n... [18306 characters truncated] ...\n\n" in view      # the observed 2.1.332 marker
    assert len(view) == 10000 + len("\n\n... [18306 characters truncated] ...\n\n")
    assert td.harness_view("y" * 10000, exit_code=2) == "y" * 10000   # at the limit: untouched


def test_success_keeps_the_first_limit_chars_and_honours_bash_max_output_length():
    text = "".join("%06d\n" % i for i in range(10000))                # 70,000 chars
    assert td.harness_view(text, 0) == text[:30000]
    assert td.success_limit({"BASH_MAX_OUTPUT_LENGTH": "50000"}) == 50000
    assert td.success_limit({"BASH_MAX_OUTPUT_LENGTH": "900000"}) == 150000   # capped
    assert td.success_limit({"BASH_MAX_OUTPUT_LENGTH": "junk"}) == 30000
    assert td.harness_view(text, 0, limit=50000) == text[:50000]


@pytest.mark.parametrize("command,failed", [
    ("grep -rn foo src", False), ("rg foo", False), ("git diff", False), ("diff a b", False),
    ("pytest -q", True), ("git status", True)])
def test_exit_1_of_search_and_diff_commands_is_a_success_for_the_harness(command, failed):
    assert td.is_failure(1, command) is failed
    assert td.is_failure(2, command) is True
    assert td.is_failure(0, command) is False


def test_kept_chars():
    assert td.kept_chars(9000, True) == (9000, False)
    assert td.kept_chars(28306, True) == (10000, True)
    assert td.kept_chars(28306, False) == (28306, False)
    assert td.kept_chars(45000, False) == (30000, True)


def test_marker_token_constant_matches_the_tokenizer():
    counts = {tokens.count(td.MARKER % n) for n in (1234, 18306, 99999, 123456)}
    assert max(counts) <= td.MARKER_TOKENS and min(counts) >= td.MARKER_TOKENS - 1


def test_proportional_estimate_is_within_3_percent_of_exact_on_pytest_output():
    text = _pytest_output(40)
    assert len(text) > 20000
    raw_tokens = tokens.count(text)
    exact = td.harness_tokens(text, exit_code=1)
    est = td.estimate_harness_tokens(raw_tokens, len(text), failed=True)
    assert exact < raw_tokens / 2                  # the harness really cuts it
    assert abs(est - exact) / exact < 0.03
    # under the limit the harness delivers everything: the baseline is the raw count
    small = _pytest_output(2)
    assert td.estimate_harness_tokens(tokens.count(small), len(small), True) == tokens.count(small)
    assert td.harness_tokens(small, 1) == tokens.count(small)


def test_estimate_handles_empty_and_unknown():
    assert td.estimate_harness_tokens(0, 0, True) == 0
    assert td.estimate_harness_tokens(50, 0, True) == 50
