"""The frame profiles are bound into by name (reflex/digest/profiles/runner.py): every profile but
generic is a parse bound there, detect looks at the lines its profile says and no others, output a
profile does not recognise reaches generic naming that profile, and a fallback reads it as its own."""

import os

import pytest

from reflex.digest.profiles import PROFILES, runner
from reflex.digest.text import Output

from tests.support.corpus import REPO, load


COMMAND_SHAPED = frozenset({"git", "search", "listing"})


def test_every_profile_but_generic_is_a_bound_parse():
    for name, profile in PROFILES.items():
        if name == "generic":
            assert not isinstance(profile, runner.BoundProfile)  # the frame hands over to it
            continue
        if name in COMMAND_SHAPED:
            # Their output's shape depends on the command line (git's subcommand, grep's -l/-c/-n):
            # a frame of their own that reads it, then hands over to generic like the bound ones.
            assert not isinstance(profile, runner.BoundProfile) and profile.name == name
            continue
        assert isinstance(profile, runner.BoundProfile), name
        assert profile.name == name


def _lines(n, at, line):
    """n lines of filler with `line` at index `at` (negative: from the end)."""
    lines = [f"building step {i}" for i in range(n)]
    lines[at] = line
    return Output.of(("\n".join(lines) + "\n").encode())


# (profile, a line its detect looks for, where it looks: "head" N / "tail" N / "ends" N)
WINDOWS = [
    ("pytest", "============================= test session starts ==============================", "head", 40),
    ("pytest", "======================== 1 failed, 2 passed in 0.12s ========================", "tail", 40),
    ("mypy", "Found 1 error in 1 file (checked 3 source files)", "tail", 5),
    ("ruff", "All checks passed!", "tail", 5),
    ("eslint", "✖ 3 problems (2 errors, 1 warning)", "tail", 10),
    ("tsc", "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.", "head", 200),
    ("tsc", "Found 6 errors in 2 files.", "tail", 20),
    ("vitest", " RUN  v1.6.0 /repo", "head", 5),
    ("vitest", " Test Files  1 failed | 2 passed (3)", "tail", 20),
    ("jest", "Tests:       1 failed, 4 passed, 5 total", "tail", 30),
    ("gotest", "--- FAIL: TestWrap (0.00s)", "head", 400),
    ("rspec", "3 examples, 1 failure", "ends", runner.DETECT_LINES),
]


@pytest.mark.parametrize("name,line,where,n", WINDOWS, ids=[f"{w[0]}-{w[2]}" for w in WINDOWS])
def test_detect_looks_at_its_window_and_no_further(name, line, where, n):
    total = 3 * n + 10
    detect = PROFILES[name].detect
    if where in ("head", "ends"):
        assert detect(_lines(total, n - 1, line))
        assert not detect(_lines(total, n, line))
    if where in ("tail", "ends"):
        assert detect(_lines(total, -n, line))
        assert not detect(_lines(total, -n - 1, line))


def test_cargo_test_is_detected_on_any_line():
    assert PROFILES["cargotest"].detect(_lines(5000, 2500, "running 3 tests"))
    assert not PROFILES["cargotest"].detect(_lines(5000, 2500, "walking 3 tests"))


@pytest.mark.parametrize("name", sorted(n for n in PROFILES if n != "generic"))
def test_output_a_profile_does_not_recognise_is_handed_to_generic_naming_it(name):
    facts = PROFILES[name].extract(b"make: *** [all] Error 2\n", 2, "make")
    assert (facts.profile, facts.recognized) == ("generic", False)
    # gotestsum without its summary is go test's text, so go test is the profile that gave up.
    assert facts.handed_over_from == ("gotest" if name == "gotestsum" else name)
    assert [h.text for h in facts.highlights] == ["make: *** [all] Error 2"]


def test_gotestsum_without_its_summary_reads_as_go_test():
    meta, raw = load(os.path.join(REPO, "evals", "corpus", "go", "plain", "meta.json"))
    facts = PROFILES["gotestsum"].extract(raw, meta["exit_code"], meta["command"])
    assert facts == PROFILES["gotest"].extract(raw, meta["exit_code"], meta["command"])
    assert facts.profile == "gotest" and facts.recognized and facts.handed_over_from is None
    assert {f.id for f in facts.failures} == set(meta["truth"]["failed"])
