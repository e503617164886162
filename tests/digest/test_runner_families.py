"""The runners added for issue 13: the signature names their family, the hook rewrites them to
`ctx run` through the real shim and daemon, and `ctx digest --command CMD` picks the profile the
command selects (the one ctx run would use), on a real output from the corpus."""

import json
import os
import shlex

import pytest
from blake3 import blake3
from click.testing import CliRunner

from reflex.commands.digest_cmd import digest_cmd
from reflex.arc.decide import REWRITE_FAMILIES
from reflex.digest import build_digest, family_of_command
from reflex.signature import signature

from tests.conftest import pre_bash, run_hook

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The shim gives up on a slow daemon after 1.5 s and lets the command pass (the agent is never
# held up); on a loaded 2-core CI machine a fresh daemon's first answer can take longer than that.
# These tests are about the decision, so they give the daemon time to make it.
def patient():
    return dict(os.environ, CTX_HOOK_REPLY_TIMEOUT="10")

# command -> (family, profile); every new family with two spellings an agent types.
RUNNERS = {
    "node --test": ("node-test", "nodetest"),
    "node --test --test-reporter=spec test/": ("node-test", "nodetest"),
    "mix test": ("mix", "exunit"),
    "mix test test/cart_test.exs:12 --trace": ("mix", "exunit"),
    "rspec": ("rspec", "rspec"),
    "bundle exec rspec spec/cart_spec.rb --fail-fast": ("rspec", "rspec"),
    "ruby -Itest test/test_cart.rb --seed 1": ("minitest", "minitest"),
    "bin/rails test test/models": ("minitest", "minitest"),
    "phpunit": ("phpunit", "phpunit"),
    "vendor/bin/phpunit --testdox --filter Cart": ("phpunit", "phpunit"),
    "java -jar junit-platform-console-standalone.jar -cp classes --select-package cart": ("junit", "junit"),
    "java -cp lib/* org.junit.platform.console.ConsoleLauncher --select-class a.BTest": ("junit", "junit"),
    "gotestsum -- ./...": ("gotestsum", "gotestsum"),
    "gotestsum --format testname -- -run TestWrap ./wordwrap/": ("gotestsum", "gotestsum"),
    "prove": ("prove", "prove"),
    "prove -lv t/cart.t": ("prove", "prove"),
    "ctest --test-dir build --output-on-failure": ("ctest", "ctest"),
    "cd build && ctest -R total -j4": ("ctest", "ctest"),
    "mvn test": ("maven", "surefire"),
    "mvn -B clean install": ("maven", "surefire"),
    "./mvnw -q test -Dtest=CartTest#tenTakesTenPercentOff": ("maven", "surefire"),
    "mvn -pl core verify": ("maven", "surefire"),
    "npx esbuild src/main.js --bundle --outdir=dist": ("esbuild", "esbuild"),
    "esbuild app.ts --bundle --minify --log-level=error": ("esbuild", "esbuild"),
    "npx webpack": ("webpack", "webpack"),
    "webpack build --mode production --stats=errors-only": ("webpack", "webpack"),
    "npx vite build": ("vite", "vite"),
    "pnpm vite build --mode staging": ("vite", "vite"),
    "flake8 .": ("flake8", "flake8"),
    "python -m flake8 --show-source --statistics src": ("flake8", "flake8"),
    "pylint src tests": ("pylint", "pylint"),
    "python3 -m pylint --output-format=parseable pkg": ("pylint", "pylint"),
    "shellcheck scripts/*.sh": ("shellcheck", "shellcheck"),
    "shellcheck -f gcc --color=always deploy.sh": ("shellcheck", "shellcheck"),
    "npx pyright": ("pyright", "pyright"),
    "pyright --level error src/app.py": ("pyright", "pyright"),
    "npx biome lint .": ("biome", "biome"),
    "biome check --reporter=github src": ("biome", "biome"),
    "bun test": ("bun-test", "buntest"),
    "bun test --bail -t discount test/cart.test.js": ("bun-test", "buntest"),
    "npx bun test --dots": ("bun-test", "buntest"),
    "deno test": ("deno", "denotest"),
    "deno test -A --fail-fast --reporter=dot test/ledger_test.ts": ("deno", "denotest"),
    "npx playwright test": ("playwright", "playwright"),
    "npx playwright test tests/shop.spec.ts:20 -x --reporter=line": ("playwright", "playwright"),
    "gradle test": ("gradle", "gradle"),
    "./gradlew clean :app:test --tests 'cart.DiscountTest'": ("gradle", "gradle"),
    "gradle build -x javadoc": ("gradle", "gradle"),
}
# A corpus case per profile: `ctx digest --command` must choose that profile for it.
CORPUS_CASES = ["flake8/show_source", "pylint/default", "shellcheck/tty", "pyright/default", "biome/check",
                "nodetest/tap", "exunit/plain", "rspec/progress", "minitest/verbose", "phpunit/plain", "junit/tree",
                "gotestsum/testname", "prove/plain", "ctest/plain", "maven/plain", "maven/compile_error",
                "esbuild/color", "webpack/errors_only", "vite/plain", "buntest/plain", "denotest/plain",
                "denotest/tap", "playwright/list", "playwright/load_error",
                "gradle/plain", "gradle/compile_error"]
# Build tools: their output is sniffed (make runs anything); compiler output gets the cc profile.
RUNNERS.update({
    "make": ("make", "cc"),
    "make -k -j4 CC=clang": ("make", "cc"),
    "cmake --build build": ("cmake-build", "cc"),
    "cmake --build build --target wordfreq -j 8": ("cmake-build", "cc"),
    "ninja -C build": ("ninja", "cc"),
    "ninja -C build -k 0 wordfreq": ("ninja", "cc"),
})
CORPUS_CASES += ["cc/link_error", "cc/make_j2", "cc/clang_color", "cc/cmake_ninja", "cc/cmake_make"]
RUNNERS.update({
    "cargo build": ("cargo-build", "cargobuild"),
    "cargo check --features broken --message-format short": ("cargo-build", "cargobuild"),
    "cargo clippy -- -D warnings": ("cargo-build", "cargobuild"),
    "cargo clippy --all-targets --color always": ("cargo-build", "cargobuild"),
})
CORPUS_CASES += ["cargobuild/build_broken", "cargobuild/check_short", "cargobuild/clippy_deny"]
RUNNERS.update({
    "go build ./...": ("go-build", "gobuild"),
    "go build -tags broken -o bin/ ./cmd/...": ("go-build", "gobuild"),
    "go vet ./...": ("go-vet", "govet"),
    "go vet -json ./stats/": ("go-vet", "govet"),
})
CORPUS_CASES += ["gobuild/vet", "gobuild/vet_json", "gobuild/vet_broken", "gobuild/build_broken"]
RUNNERS.update({"tsc --build": ("tsc", "tsc"), "npx tsc -b packages/app --verbose": ("tsc", "tsc")})
CORPUS_CASES += ["tscbuild/plain", "tscbuild/verbose", "tscbuild/pretty"]


def test_tsc_build_verbose_is_presentation():
    assert signature("tsc -b --verbose").core == signature("tsc -b").core


@pytest.mark.parametrize("command", sorted(RUNNERS))
def test_signature_names_the_family_and_it_is_rewritten(command):
    family, _profile = RUNNERS[command]
    assert signature(command).family == family
    assert family in REWRITE_FAMILIES


def test_node_without_test_is_not_a_runner():
    assert signature("node server.js").family == "other"


@pytest.mark.parametrize("command", ["mix phx.server", "mix format", "mix deps.get", "ruby script.rb",
                                     "rails server", "rake db:migrate", "java -jar app.jar",
                                     "mvn spring-boot:run", "mvn clean", "mvn -q dependency:tree",
                                     "mvn clean compile exec:java", "vite", "npx vite --port 3000", "vite preview",
                                     "npx webpack serve", "webpack --watch", "esbuild src/app.js --serve=8000",
                                     "esbuild src/app.js --bundle --watch",
                                     "pylint --generate-rcfile", "pyright --watch",
                                     "biome format --write .", "npx biome migrate",
                                     "deno run -A main.ts", "deno task dev", "npx playwright show-report",
                                     "npx playwright codegen", "npx playwright install chromium", "gradle bootRun", "./gradlew run",
                                     "gradle dependencies"])
def test_other_mix_tasks_are_not_rewritten(paths, running_daemon, user_allows_bash, command):
    rc, out, _err, _ = run_hook(pre_bash(command, cwd=str(paths.home)), env=patient(), timeout=30)
    assert rc == 0
    assert not out or "updatedInput" not in out


@pytest.mark.parametrize("command", sorted(RUNNERS))
def test_hook_rewrites_to_ctx_run(paths, running_daemon, user_allows_bash, command):
    payload = pre_bash(command, cwd=str(paths.home))
    rc, out, _err, _ = run_hook(payload, env=patient(), timeout=30)
    assert rc == 0 and out, "expected a rewrite answer"
    hso = json.loads(out)["hookSpecificOutput"]
    argv = shlex.split(hso["updatedInput"]["command"])
    assert argv[1:3] == ["run", "--"] and argv[3] == command


@pytest.mark.parametrize("case", CORPUS_CASES)
def test_ctx_digest_command_chooses_the_profile(case):
    d = os.path.join(REPO, "evals", "corpus", case)
    meta = json.load(open(os.path.join(d, "meta.json")))
    path = os.path.join(d, "output.txt")
    raw = open(path, "rb").read()
    r = CliRunner().invoke(digest_cmd, ["--command", meta["command"], "--exit-code", str(meta["exit_code"]), path])
    assert r.exit_code == 0, r.output
    family = family_of_command(meta["command"])
    expected = build_digest(raw, family=family, exit_code=meta["exit_code"], command=meta["command"],
                            handle="r:" + blake3(raw).hexdigest()[:12], cwd=os.getcwd())
    assert r.output == expected.text + "\n"
    profile = {p for _f, p in RUNNERS.values() if _f == family}
    assert expected.facts.profile in profile and expected.facts.recognized
    # Without --command the same bytes get the generic profile, which claims no counts.
    generic = CliRunner().invoke(digest_cmd, ["--json", path])
    assert json.loads(generic.output)["facts"]["profile"] == "generic"


@pytest.mark.parametrize("command", ["make run", "make serve", "cmake -S . -B build", "ninja -t clean"])
def test_build_tool_servers_and_configure_steps_are_not_rewritten(paths, running_daemon, user_allows_bash, command):
    rc, out, _err, _ = run_hook(pre_bash(command, cwd=str(paths.home)), env=patient(), timeout=30)
    assert rc == 0
    assert not out or "updatedInput" not in out


def test_make_running_a_test_runner_is_sniffed_as_that_runner():
    from reflex.digest import extract_facts
    meta = json.load(open(os.path.join(REPO, "evals", "corpus", "ctest", "plain", "meta.json")))
    raw = open(os.path.join(REPO, "evals", "corpus", "ctest", "plain", "output.txt"), "rb").read()
    assert extract_facts(raw, family="make", exit_code=2, command="make test").profile == "ctest"
    raw = open(os.path.join(REPO, "evals", "corpus", "pytest", "q", "output.txt"), "rb").read()
    assert extract_facts(raw, family="make", exit_code=2, command="make test").profile == "pytest"
    # Neither a runner nor a compiler: generic, which claims no counts.
    facts = extract_facts(b"./deploy.sh\nerror: host unreachable\nmake: *** [Makefile:3: deploy] Error 1\n",
                          family="make", exit_code=2, command="make deploy")
    assert facts.profile == "generic" and not facts.counts.reported()
