"""Properties of reflex.signature (hypothesis): never raises, core is idempotent,
presentation never changes the core, a selector makes a run narrower."""

import shlex

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reflex.signature import is_narrower, signature
from reflex.signature.chain import build

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- never raises

TOKENS = list("abcxyz -|&;<>()'\"\\$`{}[]*?~#=\n\t!%/.,:0123é") + [
    "pytest", "<<EOF\n", "\nEOF\n", "2>&1", "bash -c ", "sudo ", "cd ", "$(", "| tail -5", "&&", "-k",
    "sed -n 1,5p", "\x00", "git -C "]
shellish = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)


@SETTINGS
@given(st.one_of(st.text(max_size=200), shellish, st.binary(max_size=200)))
def test_never_raises(text):
    sig = signature(text)
    assert isinstance(sig.core, str) and isinstance(sig.core_hash, str)
    if isinstance(text, str):
        build(text)   # without signature()'s safety net


@SETTINGS
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=100), st.one_of(st.none(), st.text(max_size=20)))
def test_never_raises_with_any_cwd(text, cwd):
    signature(text, cwd)


# ---------------------------------------------------------------- realistic commands

HEADS = ["pytest", "python -m pytest", "uv run pytest", "go test", "cargo test", "npx jest", "npx vitest run",
         "npm test", "npm run build", "pnpm test", "yarn test", "tsc --noEmit", "ruff check", "ruff format", "mypy",
         "npx eslint", "make", "make test", "mix test", "./gradlew test", "mvn test", "git status", "git diff",
         "git log --oneline", "cat", "head -n 20", "tail -5", "sed -n 10,20p", "grep -rn foo", "rg -n bar",
         "find . -name '*.py'", "echo hi", "ls -la", "rm -rf", "cp a", "bash -c", "env X=1", "timeout 60", "sudo",
         "VAR=1 pytest"]
ARGS = ["-q", "-v", "-vv", "-x", "-xvs", "--tb=short", "-k", "'a and b'", "-m", "slow", "tests/", "tests/test_a.py",
        "tests/test_a.py::test_b", "src", "./...", "-run", "TestX", "--", "--nocapture", "-t", '"name pat"',
        "--reporter=verbose", "--color=yes", "-rA", "--lf", "--maxfail=2", "2>&1", "2>/dev/null", "> out.txt",
        ">> log", "< in.txt", "-C", "dir", "$HOME", '"$X"', "*.py", "~/x", '"a b"', "-n", "5", "+80", "--fix", "-e"]
TAILS = ["| tail -5", "| tail -n 20", "| head -50", "| grep -E '(tests|failures)'", "| grep -v x", "| wc -l",
         "| sort | uniq -c", "| tee log.txt", "| less", "| cat", "| awk '{print $1}'", "| sed -n 1,5p", "| jq ."]
JOINS = [" && ", " ; ", " || ", "\n", " | ", " & "]
PREFIXES = ["", "", "cd a && ", "cd /tmp/b; ", "source .venv/bin/activate && ", "export X=1; ", "sudo "]


@st.composite
def commands(draw):
    def one():
        return draw(st.sampled_from(HEADS)) + " " + " ".join(draw(st.lists(st.sampled_from(ARGS), max_size=5)))
    text = draw(st.sampled_from(PREFIXES)) + one()
    for _ in range(draw(st.integers(0, 2))):
        text += draw(st.sampled_from(JOINS)) + one()
    if draw(st.booleans()):
        text += " " + draw(st.sampled_from(TAILS))
    if draw(st.integers(0, 9)) == 0:
        text = "cat > f.py <<'EOF'\nimport x\nEOF\n" + text
    if draw(st.integers(0, 9)) == 0:
        text = "bash -c " + shlex.quote(text)
    return text


@SETTINGS
@given(commands(), st.sampled_from([None, "/repo", "rel/dir"]))
def test_core_is_idempotent(text, cwd):
    sig = signature(text, cwd)
    again = signature(sig.core, cwd)
    assert again.core == sig.core
    assert again.family == sig.family


# ---------------------------------------------------------------- presentation never changes the core

# family -> (base command, its argument units, display units that may go between units)
RUNNERS = {
    "pytest": ("pytest", ["tests/", "tests/test_a.py", "-k 'a and b'", "-x", "-m slow", "--cov=src", "-n 4"],
               ["-q", "-v", "-vv", "-s", "--tb=short", "--tb long", "-rA", "-ra", "--no-header", "--color=yes",
                "-p no:cacheprovider", "--durations=5", "-l", "--disable-warnings"]),
    "go-test": ("go test", ["./...", "./pkg/api", "-run TestX", "-count=1", "-race"], ["-v", "-json"]),
    "cargo-test": ("cargo test", ["parser", "-p core", "--lib", "--features x"], ["-q", "--color=never"]),
    "jest": ("npx jest", ["src/a.test.ts", "-t 'adds up'", "--coverage"],
             ["--verbose", "--silent", "--ci", "--colors", "--reporters=default"]),
    "vitest": ("npx vitest run", ["src/a.test.ts", "-t 'adds up'", "--coverage"],
               ["--reporter=verbose", "--reporter dot", "--silent", "--no-color"]),
    "mypy": ("mypy", ["src", "--strict", "-p pkg"], ["--pretty", "--show-error-codes", "--no-error-summary"]),
    "ruff": ("ruff check", ["src", "tests", "--select E"], ["--output-format=concise", "-q", "--statistics"]),
    "eslint": ("npx eslint", ["src", "--ext .ts"], ["-f compact", "--format stylish", "--no-color"]),
    "mix": ("mix test", ["test/a_test.exs", "--only slow", "--failed"], ["--trace", "--color"]),
    "make": ("make", ["test", "lint", "V=1"], ["-s", "--no-print-directory"]),
    "gradle": ("./gradlew test", ["--tests Foo", "--offline"], ["-q", "--info", "--console=plain", "--stacktrace"]),
    "maven": ("mvn test", ["-Dtest=Foo", "-pl core"], ["-q", "-B", "-e", "-ntp"]),
    "tsc": ("npx tsc", ["--noEmit", "-p tsconfig.json"], ["--pretty", "--pretty false"]),
    "npm-script": ("npm test", ["-- src/a.test.ts"], ["--silent", "--loglevel warn"]),
}
SLICERS = ["2>&1", "2>/dev/null", "| tail -5", "| tail -n 40", "| head -100", "| grep -E '(passed|failed)'",
           "| grep -v DEBUG", "| wc -l", "| less", "| cat", "| sort | uniq", "2>&1 | tail -3"]


@st.composite
def runner_with_display(draw):
    family = draw(st.sampled_from(sorted(RUNNERS)))
    base, units, display = RUNNERS[family]
    if family == "npm-script":   # npm's own display flags go before `--`
        chosen = draw(st.lists(st.sampled_from(units), max_size=1, unique=True))
        plain = base + ("" if not chosen else " " + chosen[0])
        decorated = base + " " + draw(st.sampled_from(display)) + ("" if not chosen else " " + chosen[0])
        return family, plain, decorated
    chosen = draw(st.lists(st.sampled_from(units), max_size=3, unique=True))
    plain = " ".join([base] + chosen)
    flag = draw(st.sampled_from(display))
    at = draw(st.integers(0, len(chosen)))
    decorated = " ".join([base] + chosen[:at] + [flag] + chosen[at:])
    return family, plain, decorated


@SETTINGS
@given(runner_with_display(), st.lists(st.sampled_from(SLICERS), max_size=2), st.booleans())
def test_display_flags_and_slicers_never_change_the_core(case, slicers, with_cd):
    family, plain, decorated = case
    if slicers:
        decorated += " " + " ".join(slicers)
    if with_cd:
        plain, decorated = "cd sub && " + plain, "cd sub && " + decorated
    a, b = signature(plain, "/r"), signature(decorated, "/r")
    assert a.family == b.family == family
    assert a.core == b.core and a.core_hash == b.core_hash
    assert len(b.decorations) > len(a.decorations)


# ---------------------------------------------------------------- a selector narrows

SELECTORS = {
    "pytest": ("pytest", ["-k test_x", "-x", "--lf", "-m slow", "--maxfail=1", "tests/test_a.py",
                          "tests/test_a.py::test_b", "--deselect tests/test_a.py::test_c"]),
    "go-test": ("go test", ["-run TestX", "-failfast", "-short", "./pkg/api"]),
    "cargo-test": ("cargo test", ["parser", "-p core", "--lib", "--test integ"]),
    "jest": ("npx jest", ["src/a.test.ts", "-t adds", "--bail", "--onlyFailures"]),
    "vitest": ("npx vitest run", ["src/a.test.ts", "-t adds", "--bail 1"]),
    "mix": ("mix test", ["test/a_test.exs", "test/a_test.exs:12", "--failed", "--only slow", "--max-failures 1"]),
    "gradle": ("./gradlew test", ["--tests FooTest"]),
    "maven": ("mvn test", ["-Dtest=FooTest", "-pl core"]),
    "search": ("grep -rn TODO", ["src/parser.py", "src/"]),
}


@SETTINGS
@given(st.sampled_from(sorted(SELECTORS)), st.data(), st.sampled_from(["", "-q", "2>&1 | tail -5"]))
def test_adding_a_selector_is_narrower(family, data, display):
    base, selectors = SELECTORS[family]
    selector = data.draw(st.sampled_from(selectors))
    wide = signature(f"{base} {display}".strip())
    narrow = signature(f"{base} {selector} {display}".strip())
    assert wide.family == narrow.family == family
    assert is_narrower(narrow, wide)
    assert not is_narrower(wide, narrow)
    assert not is_narrower(wide, wide)
