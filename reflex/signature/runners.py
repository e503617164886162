"""Test runners, type checkers, linters and build tools: family, core, scope.

One analyzer per tool, each a declarative Spec (flags.py) plus the few rules
a spec cannot say (subcommands, `--` passthrough, `-C DIR`).  What counts as
presentation is chosen per tool: a flag is stripped only when it changes how
results are shown, never which tests run or what is checked.

Decision on `pytest -x` (also `--maxfail`, `go test -failfast`, `jest
--bail`, `mix test --max-failures`): not presentation.  It changes what runs
(the run stops at the first failure, later failures are never seen), so it
stays in the core and is a scope item of kind `exitfirst`: `pytest -x` has a
different core from `pytest` and is narrower than it.  A re-run without
`-x` after a `-x` run asks for more than the digest could have held, which is
not starvation.
"""

from __future__ import annotations

from reflex.signature.flags import Spec, walk
from reflex.signature.model import Decoration, FileRef, ScopeItem
from reflex.signature.syntax import Word, quote
from reflex.signature.view import View

VERBOSITY = {
    "-v": ("verbose", "1"), "-vv": ("verbose", "2"), "-vvv": ("verbose", "3"), "-vvvv": ("verbose", "4"),
    "--verbose": ("verbose", "1"),
    "-q": ("quiet", "1"), "-qq": ("quiet", "2"), "-qqq": ("quiet", "3"), "--quiet": ("quiet", "1"),
}


def _apply(v: View, head: list[str], p, tail: list[str] | None = None) -> None:
    v.words = head + p.kept + (tail or [])
    v.unscoped = head + p.unscoped + (tail or [])
    v.decorations.extend(p.decorations)
    v.scope.extend(p.scope)


# ---------------------------------------------------------------- pytest

PYTEST = Spec(
    display={**VERBOSITY, "-s": ("capture", "no"), "-l": ("showlocals", ""), "--showlocals": ("showlocals", ""),
             "--no-header": ("no-header", ""), "--no-summary": ("no-summary", ""),
             "--disable-warnings": ("warnings", "off"), "--disable-pytest-warnings": ("warnings", "off"),
             "--full-trace": ("tb", "full"), "--no-showlocals": ("showlocals", "no")},
    display_valued={"--tb": "tb", "--color": "color", "--capture": "capture", "--durations": "durations",
                    "--durations-min": "durations-min", "--show-capture": "show-capture",
                    "--code-highlight": "code-highlight", "--verbosity": "verbose", "-r": "report"},
    scope_flags={"-x": "exitfirst", "--exitfirst": "exitfirst", "--lf": "last-failed",
                 "--last-failed": "last-failed", "--sw": "exitfirst", "--stepwise": "exitfirst"},
    scope_valued={"-k": "keyword", "-m": "marker", "--maxfail": "exitfirst", "--deselect": "skip",
                  "--ignore": "skip", "--ignore-glob": "skip"},
    attached={"-r": ("report", "display"), "-k": ("keyword", "scope"), "-m": ("marker", "scope")},
    valued=frozenset({"-c", "--rootdir", "-n", "--numprocesses", "--dist", "-o", "--override-ini", "-W",
                      "--pythonwarnings", "--cov", "--cov-report", "--cov-config", "--junitxml", "--junit-xml",
                      "--basetemp", "--confcutdir", "--import-mode", "--log-level", "--log-cli-level",
                      "--log-file", "--timeout", "--count", "-p", "--randomly-seed", "--maxprocesses",
                      "--reruns", "--html", "--alluredir", "--ds", "--asyncio-mode", "--cov-fail-under",
                      "--json-report-file", "--benchmark-json", "--max-worker-restart"}),
    bundle="xvqsl",
)


def pytest(v: View, args: list[Word]) -> None:
    v.family = "pytest"
    kept: list[Word] = []
    i = 0
    while i < len(args):   # `-p no:cacheprovider` is display, `-p xdist` is not
        a = args[i]
        if a.value == "-p" and i + 1 < len(args) and args[i + 1].value.startswith("no:"):
            v.decorations.append(Decoration("plugin", args[i + 1].value))
            i += 2
            continue
        if a.value.startswith("-pno:"):
            v.decorations.append(Decoration("plugin", a.value[2:]))
            i += 1
            continue
        kept.append(a)
        i += 1
    p = walk(kept, PYTEST)
    tail = []
    if p.rest:
        q = walk(p.rest, Spec(positional="path", stop_at_dd=False))
        tail = ["--"] + q.kept
        p.scope.extend(q.scope)
    _apply(v, ["pytest"], p, tail)
    v.unscoped = ["pytest"] + p.unscoped + (["--"] + q.unscoped if tail and q.unscoped else [])


# ---------------------------------------------------------------- go test

GO_TEST = Spec(
    single_dash_long=True,
    display={"-v": ("verbose", "1"), "-json": ("format", "json"), "-x": ("print-commands", "")},
    scope_valued={"-run": "name", "-test.run": "name", "-skip": "skip"},
    scope_flags={"-failfast": "exitfirst", "-short": "short"},
    valued=frozenset({"-count", "-timeout", "-p", "-parallel", "-tags", "-coverprofile", "-covermode",
                      "-coverpkg", "-cpu", "-bench", "-benchtime", "-o", "-exec", "-ldflags", "-gcflags",
                      "-mod", "-shuffle", "-vet", "-fuzz", "-fuzztime", "-list", "-cpuprofile",
                      "-memprofile", "-blockprofile", "-modfile", "-asmflags", "-pkgdir", "-toolexec"}),
)


def go(v: View, args: list[Word]) -> None:
    if args and args[0].value in ("build", "vet"):
        _go_build_or_vet(v, args[0].value, args[1:])
        return
    if not args or args[0].value != "test":
        v.words = ["go"] + [a.text for a in args]
        v.subcommand = args[0].value if args else ""
        return
    v.family = "go-test"
    v.subcommand = "test"
    rest = list(args[1:])
    for i, a in enumerate(rest):
        if a.value == "-C" and i + 1 < len(rest):
            v.chdir = rest[i + 1].value
            del rest[i:i + 2]
            break
        if a.value.startswith("-C="):
            v.chdir = a.value[3:]
            del rest[i]
            break
    rest = [Word("--", "--", True) if a.value == "-args" else a for a in rest]
    p = walk(rest, GO_TEST)
    tail = (["-args"] + [a.text for a in p.rest]) if p.rest else []
    _apply(v, ["go", "test"], p, tail)


# ---------------------------------------------------------------- cargo

_CARGO_COMMON_DISPLAY = {"-q": ("quiet", "1"), "--quiet": ("quiet", "1"), "-v": ("verbose", "1"),
                         "-vv": ("verbose", "2"), "--verbose": ("verbose", "1")}
CARGO_TEST = Spec(
    display=_CARGO_COMMON_DISPLAY,
    display_valued={"--color": "color", "--message-format": "format"},
    scope_valued={"-p": "package", "--package": "package", "--test": "target", "--bin": "target",
                  "--example": "target", "--bench": "target"},
    scope_flags={"--lib": "target", "--doc": "target"},
    valued=frozenset({"--features", "-F", "--target", "--manifest-path", "-j", "--jobs", "--profile",
                      "--target-dir", "-Z", "--config", "--exclude"}),
    positional="name",
)
LIBTEST = Spec(
    display={"--nocapture": ("capture", "no"), "--no-capture": ("capture", "no"),
             "--show-output": ("show-output", ""), "-q": ("quiet", "1"), "--quiet": ("quiet", "1")},
    display_valued={"--format": "format", "--color": "color", "--test-threads": "threads"},
    scope_flags={"--exact": "exact", "--ignored": "ignored"},
    scope_valued={"--skip": "skip"},
    positional="name", stop_at_dd=False,
)
NEXTEST = Spec(
    display={**_CARGO_COMMON_DISPLAY, "--no-capture": ("capture", "no"), "--nocapture": ("capture", "no"),
             "--hide-progress-bar": ("progress", "no"), "--cargo-quiet": ("quiet", "1")},
    display_valued={"--failure-output": "failure-output", "--success-output": "success-output",
                    "--status-level": "status-level", "--final-status-level": "final-status-level",
                    "--color": "color", "--message-format": "format"},
    scope_valued={"-E": "name", "--filterset": "name", "-p": "package", "--package": "package",
                  "--test": "target"},
    valued=frozenset({"--features", "-F", "--target", "--manifest-path", "-j", "--jobs", "--profile",
                      "--cargo-profile", "--target-dir", "--retries", "--partition", "-P"}),
    positional="name",
)


def cargo(v: View, args: list[Word]) -> None:
    head = ["cargo"]
    i = 0
    while i < len(args) and (args[i].value.startswith("+") or args[i].value in ("--locked", "--frozen", "--offline")):
        head.append(args[i].text)
        i += 1
    sub = args[i].value if i < len(args) else ""
    v.subcommand = sub
    if sub == "test" or (sub == "t"):
        spec, head = CARGO_TEST, head + ["test"]
        rest = args[i + 1:]
    elif sub == "nextest" and i + 1 < len(args) and args[i + 1].value == "run":
        spec, head = NEXTEST, head + ["nextest", "run"]
        rest = args[i + 2:]
    elif sub in CARGO_BUILD_SUBCOMMANDS:
        _cargo_build(v, head, sub, args[i + 1:])
        return
    else:
        v.words = head + [a.text for a in args[i:]]
        if sub == "fmt":
            v.writes.append(FileRef("."))
        return
    v.family = "cargo-test"
    p = walk(rest, spec)
    tail: list[str] = []
    tail_unscoped: list[str] = []
    if p.rest:
        q = walk(p.rest, LIBTEST if spec is CARGO_TEST else Spec(positional="name", stop_at_dd=False))
        p.decorations.extend(q.decorations)
        p.scope.extend(q.scope)
        if q.kept:
            tail, tail_unscoped = ["--"] + q.kept, ["--"] + q.unscoped
    _apply(v, head, p, tail)
    v.unscoped = head + p.unscoped + tail_unscoped


# ---------------------------------------------------------------- JavaScript

JEST = Spec(
    display={"--verbose": ("verbose", "1"), "--silent": ("silent", ""), "--colors": ("color", "yes"),
             "--ci": ("ci", ""), "--json": ("format", "json"), "--noStackTrace": ("stack", "no"),
             "--useStderr": ("stderr", ""), "--expand": ("expand", ""), "-i": ("serial", ""),
             "--runInBand": ("serial", ""), "--no-watchman": ("watchman", "no")},
    display_valued={"--reporters": "reporter", "--color": "color", "--maxWorkers": "workers", "-w": "workers"},
    scope_valued={"-t": "name", "--testNamePattern": "name", "--testPathPattern": "path",
                  "--testPathPatterns": "path", "--selectProjects": "package", "--shard": "shard"},
    scope_flags={"--bail": "exitfirst", "-b": "exitfirst", "--onlyFailures": "last-failed",
                 "-f": "last-failed", "--onlyChanged": "changed", "-o": "changed",
                 "--findRelatedTests": "related"},
    valued=frozenset({"-c", "--config", "--testTimeout", "--rootDir", "--roots", "--outputFile", "--env",
                      "--testEnvironment", "--coverageReporters", "--collectCoverageFrom", "--setupFiles",
                      "--testMatch", "--testRegex", "--coverageDirectory"}),
)
VITEST = Spec(
    display={"--silent": ("silent", ""), "--no-color": ("color", "no"), "--color": ("color", "yes"),
             "--hideSkippedTests": ("hide-skipped", ""), "--verbose": ("verbose", "1")},
    display_valued={"--reporter": "reporter"},
    scope_valued={"-t": "name", "--testNamePattern": "name", "--project": "package", "--shard": "shard",
                  "--bail": "exitfirst"},
    scope_flags={"--changed": "changed"},
    valued=frozenset({"-c", "--config", "-r", "--root", "--dir", "--environment", "--pool", "--maxWorkers",
                      "--minWorkers", "--testTimeout", "--outputFile", "--mode", "--exclude"}),
)
_VITEST_SUBS = frozenset({"run", "watch", "dev", "related", "bench", "list", "init"})


def jest(v: View, args: list[Word]) -> None:
    v.family = "jest"
    p = walk(args, JEST)
    _apply(v, ["jest"], p)
    for w in _outputs(args, ("--outputFile",)):
        v.writes.append(FileRef(w))


def vitest(v: View, args: list[Word]) -> None:
    v.family = "vitest"
    head = ["vitest"]
    if args and args[0].value in _VITEST_SUBS:
        head.append(args[0].value)
        v.subcommand = args[0].value
        args = args[1:]
    p = walk(args, VITEST)
    _apply(v, head, p)


def _outputs(args: list[Word], names) -> list[str]:
    out = []
    for i, a in enumerate(args):
        name, eq, val = a.value.partition("=")
        if name in names:
            if eq:
                out.append(val)
            elif i + 1 < len(args):
                out.append(args[i + 1].value)
    return out


# Arguments handed through a package manager to a script's runner.
SCRIPT_ARGS = Spec(
    display={**VERBOSITY, "--silent": ("silent", ""), "--colors": ("color", "yes"), "--no-color": ("color", "no")},
    display_valued={"--reporter": "reporter", "--reporters": "reporter", "--tb": "tb", "--color": "color"},
    scope_valued={"-t": "name", "--testNamePattern": "name", "-k": "keyword"},
    scope_flags={"--bail": "exitfirst", "-x": "exitfirst"},
    stop_at_dd=False,
)
PM_DISPLAY = {"--silent": ("silent", ""), "-s": ("silent", ""), "--quiet": ("quiet", "1"),
              "--no-color": ("color", "no")}
PM_DISPLAY_VALUED = {"--loglevel": "loglevel", "--reporter": "reporter", "--color": "color"}
PM_CHDIR = {"npm": ("--prefix", "-C"), "pnpm": ("-C", "--dir"), "yarn": ("--cwd",), "bun": ("--cwd",)}
PM_PACKAGE = {"npm": ("-w", "--workspace"), "pnpm": ("--filter", "-F"), "yarn": (), "bun": ("--filter",)}
_NPM_RUN = frozenset({"run", "run-script", "rum", "urn"})
_NPM_TEST = frozenset({"test", "t", "tst"})
_PNPM_BUILTIN = frozenset({
    "add", "install", "i", "update", "up", "upgrade", "remove", "rm", "uninstall", "un", "link", "ln",
    "unlink", "import", "rebuild", "rb", "prune", "fetch", "patch", "patch-commit", "publish", "pack",
    "audit", "outdated", "list", "ls", "ll", "why", "exec", "dlx", "create", "init", "store", "env",
    "setup", "config", "server", "root", "bin", "deploy", "licenses", "doctor", "recursive", "approve-builds",
    "info", "view", "version", "help", "login", "logout", "cache", "self-update", "ci", "x",
    "dedupe", "catalog", "workspace", "workspaces", "global", "node", "set", "get", "upgrade-interactive",
    "pm", "whoami", "owner", "npm", "plugin", "constraints", "explain", "stage", "unplug",
    "search", "team", "tag", "dist-tag",
})


def package_script(v: View, pm: str, args: list[Word]) -> None:
    """npm/pnpm/yarn/bun running a package.json script: canonical
    `<pm> run <script> [args]` (`npm test` ≡ `npm run test`)."""
    v.subcommand = ""
    chdir_opts, pkg_opts = PM_CHDIR.get(pm, ()), PM_PACKAGE.get(pm, ())
    pre: list[Word] = []
    pre_scoped: set = set()
    scope: list[ScopeItem] = []
    i = 0
    while i < len(args) and args[i].value.startswith("-"):
        a = args[i]
        name, eq, val = a.value.partition("=")
        nxt = args[i + 1].value if i + 1 < len(args) else None
        if name in chdir_opts or name in pkg_opts or name in PM_DISPLAY_VALUED:
            value = val if eq else nxt
            if value is None:
                break
            if name in chdir_opts:
                v.chdir = value
            elif name in pkg_opts:
                scope.append(ScopeItem("package", value))
                taken = [a] if eq else [a, args[i + 1]]
                pre += taken
                pre_scoped.update(id(x) for x in taken)
            else:
                v.decorations.append(Decoration(PM_DISPLAY_VALUED[name], value))
            i += 1 if eq else 2
            continue
        if name in PM_DISPLAY:
            v.decorations.append(Decoration(*PM_DISPLAY[name]))
        else:
            pre.append(a)
        i += 1
    if i >= len(args):
        v.words = [pm] + [a.text for a in pre]
        return
    sub, rest = args[i].value, args[i + 1:]
    script = None
    if sub in _NPM_RUN or (pm != "npm" and sub == "run"):
        if rest:
            script, rest = rest[0].value, rest[1:]
    elif sub in _NPM_TEST or sub in ("start", "stop", "restart"):
        script = "test" if sub in _NPM_TEST else sub
        if pm == "bun" and sub == "test":
            script = None
    elif pm == "bun":
        if sub == "test":
            script = None
        elif sub not in ("install", "i", "add", "remove", "rm", "x", "build", "create", "pm", "upgrade",
                         "update", "link", "unlink", "init", "publish", "outdated", "repl", "exec") \
                and "." not in sub and "/" not in sub:
            script = sub
    elif pm in ("pnpm", "yarn") and sub not in _PNPM_BUILTIN:
        script = sub
    if pm == "bun" and sub == "test":
        bun_test(v, [a.text for a in pre], rest)   # bun's own test runner, not a package script
        v.scope[:0] = scope
        return
    if script is None:
        v.words = [pm] + [a.text for a in pre] + [args[i].text] + [a.text for a in rest]
        v.subcommand = sub
        return
    v.family, v.subcommand = "npm-script", script
    # Package-manager display flags may also follow the script name (npm run test --silent).
    tail_args: list[Word] = []
    passthrough: list[Word] | None = None
    j = 0
    while j < len(rest):
        a = rest[j]
        j += 1
        if a.value == "--":
            passthrough = list(rest[j:])
            break
        name, eq, val = a.value.partition("=")
        if pm == "npm" and a.value in PM_DISPLAY:
            v.decorations.append(Decoration(*PM_DISPLAY[a.value]))
            continue
        if pm == "npm" and name in PM_DISPLAY_VALUED and (eq or j < len(rest)):
            v.decorations.append(Decoration(PM_DISPLAY_VALUED[name], val if eq else rest[j].value))
            j += 0 if eq else 1
            continue
        tail_args.append(a)
    if pm == "npm":
        # npm hands the script only what follows `--`; before it are npm's own options.
        p = walk(passthrough or [], SCRIPT_ARGS)
        head = ["npm"] + [a.text for a in pre] + ["run", _q(script)] + [a.text for a in tail_args]
        if p.kept:
            _apply(v, head + ["--"], p)
            v.unscoped = head + (["--"] + p.unscoped if p.unscoped else [])
        else:
            _apply(v, head, p)
    else:
        # pnpm/yarn/bun hand the script everything; a `--` is only noise there
        tail_args = [a for a in tail_args + (passthrough or []) if a.value != "--"]
        p = walk(tail_args, SCRIPT_ARGS)
        _apply(v, [pm] + [a.text for a in pre] + ["run", _q(script)], p)
    v.scope[:0] = scope
    if pre_scoped:
        drop = {x.text for x in pre if id(x) in pre_scoped}
        v.unscoped = [t for t in v.unscoped if t not in drop]


def _q(s: str) -> str:
    return quote(s)


# ---------------------------------------------------------------- checkers

TSC = Spec(
    display={"--pretty": ("pretty", "true"), "--preserveWatchOutput": ("preserve-watch-output", "")},
    optional_bool=frozenset({"--pretty"}),
    valued=frozenset({"-p", "--project", "--target", "--module", "--outDir", "--rootDir", "--lib", "--jsx",
                      "--moduleResolution", "--baseUrl", "--tsBuildInfoFile", "--types", "--declarationDir",
                      "--outFile", "--generateTrace"}),
)


def tsc(v: View, name: str, args: list[Word]) -> None:
    v.family = "tsc"
    p = walk(args, TSC)
    _apply(v, [name], p)


RUFF = Spec(
    display={"-q": ("quiet", "1"), "--quiet": ("quiet", "1"), "-s": ("silent", ""), "--silent": ("silent", ""),
             "-v": ("verbose", "1"), "--verbose": ("verbose", "1"), "--show-fixes": ("show-fixes", ""),
             "--no-show-fixes": ("show-fixes", "no"), "--statistics": ("statistics", ""),
             "--no-cache": ("cache", "no"), "-n": ("cache", "no"), "--no-color": ("color", "no")},
    display_valued={"--output-format": "format", "--format": "format"},
    valued=frozenset({"--select", "--ignore", "--extend-select", "--extend-ignore", "--config",
                      "--target-version", "--line-length", "--exclude", "--extend-exclude",
                      "--per-file-ignores", "--fixable", "--unfixable", "--cache-dir", "--stdin-filename",
                      "--extend-fixable", "--range"}),
)
_RUFF_SUBS = frozenset({"check", "format", "rule", "config", "linter", "clean", "version", "analyze", "server"})


def ruff(v: View, args: list[Word]) -> None:
    v.family = "ruff"
    head = ["ruff"]
    sub = "check"
    if args and args[0].value in _RUFF_SUBS:
        sub = args[0].value
        head.append(sub)
        args = args[1:]
    v.subcommand = sub
    p = walk(args, RUFF)
    _apply(v, head, p)
    vals = {a.value for a in args}
    paths = [s.value for s in p.scope if s.kind == "path"] or ["."]
    if (sub == "check" and ("--fix" in vals or "--unsafe-fixes" in vals) and "--no-fix" not in vals
            and "--diff" not in vals) or (sub == "format" and not vals & {"--check", "--diff"}):
        v.writes.extend(FileRef(x) for x in paths)


MYPY = Spec(
    display={"--pretty": ("pretty", ""), "--no-pretty": ("pretty", "no"),
             "--show-error-codes": ("error-codes", ""), "--hide-error-codes": ("error-codes", "no"),
             "--no-error-summary": ("error-summary", "no"), "--error-summary": ("error-summary", ""),
             "--show-column-numbers": ("column-numbers", ""), "--show-error-context": ("error-context", ""),
             "--show-traceback": ("tb", "long"), "--tb": ("tb", "long"), "--color-output": ("color", "yes"),
             "--no-color-output": ("color", "no"), "--show-absolute-path": ("absolute-path", ""),
             "--show-error-code-links": ("error-code-links", ""),
             "-v": ("verbose", "1"), "--verbose": ("verbose", "1")},
    display_valued={"--soft-error-limit": "error-limit"},
    scope_valued={"-p": "package", "--package": "package", "-m": "package", "--module": "package"},
    valued=frozenset({"--config-file", "--python-version", "--follow-imports", "--cache-dir", "--exclude",
                      "--platform", "--python-executable", "--junit-xml", "--always-true", "--always-false",
                      "--enable-error-code", "--disable-error-code", "-c", "--command", "--custom-typeshed-dir"}),
)


def mypy(v: View, name: str, args: list[Word]) -> None:
    v.family = "mypy"
    head = [name]
    if name == "dmypy":
        # dmypy [--status-file F] run|check|recheck [-- ] [mypy flags and files]
        if len(args) > 1 and args[0].value == "--status-file":
            head += [args[0].text, args[1].text]
            args = args[2:]
        if args and not args[0].value.startswith("-"):
            v.subcommand = args[0].value
            head.append(args[0].text)
            args = args[1:]
        args = [a for a in args if a.value != "--"]
        if v.subcommand in ("run", "check", "recheck"):
            head.append("--")
    p = walk(args, MYPY)
    _apply(v, head, p)


ESLINT = Spec(
    display={"--color": ("color", "yes"), "--no-color": ("color", "no"), "--quiet": ("quiet", "1"),
             "--cache": ("cache", "")},
    display_valued={"-f": "format", "--format": "format"},
    valued=frozenset({"-c", "--config", "--ext", "--max-warnings", "--rule", "--parser", "--plugin",
                      "--resolve-plugins-relative-to", "--ignore-path", "--ignore-pattern", "-o",
                      "--output-file", "--cache-location", "--rulesdir", "--env", "--global",
                      "--parser-options", "--report-unused-disable-directives-severity", "--cache-strategy"}),
)


def eslint(v: View, args: list[Word]) -> None:
    v.family = "eslint"
    p = walk(args, ESLINT)
    _apply(v, ["eslint"], p)
    vals = {a.value for a in args}
    if "--fix" in vals:
        v.writes.extend(FileRef(s.value) for s in p.scope if s.kind == "path")
        if not any(s.kind == "path" for s in p.scope):
            v.writes.append(FileRef("."))
    for w in _outputs(args, ("-o", "--output-file")):
        v.writes.append(FileRef(w))


# ---------------------------------------------------------------- build tools

MAKE = Spec(
    display={"-s": ("silent", ""), "--silent": ("silent", ""), "--quiet": ("silent", ""),
             "--no-print-directory": ("no-print-directory", ""), "-w": ("print-directory", ""),
             "--print-directory": ("print-directory", "")},
    valued=frozenset({"-f", "--file", "--makefile", "-l", "--load-average", "-I", "--include-dir", "-o", "-W"}),
    positional=None,
)


def _take_chdir(v: View, args: list[Word], names=("-C", "--directory")) -> list[Word]:
    out: list[Word] = []
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, val = a.value.partition("=")
        if name in names and not eq and i + 1 < len(args):
            v.chdir = _join(v.chdir, args[i + 1].value)
            i += 2
            continue
        if name in names and eq:
            v.chdir = _join(v.chdir, val)
        elif a.value.startswith("-C") and len(a.value) > 2 and "-C" in names and not a.value.startswith("--"):
            v.chdir = _join(v.chdir, a.value[2:])
        else:
            out.append(a)
        i += 1
    return out


def _join(base, path):
    import posixpath
    if base is None or path.startswith(("/", "~", "$")):
        return path
    return posixpath.normpath(posixpath.join(base, path))


def make(v: View, name: str, args: list[Word]) -> None:
    v.family = "make"
    args = _take_chdir(v, args)
    p = walk(args, MAKE)
    _apply(v, [name], p)
    v.subcommand = next((a.value for a in p.positionals if "=" not in a.value), "")


MIX_TEST = Spec(
    display={"--trace": ("trace", ""), "--color": ("color", "yes"), "--no-color": ("color", "no")},
    display_valued={"--formatter": "formatter", "--slowest": "slowest"},
    scope_flags={"--failed": "last-failed", "--stale": "stale"},
    scope_valued={"--only": "marker", "--exclude": "skip", "--max-failures": "exitfirst"},
    valued=frozenset({"--seed", "--partitions", "--timeout", "--max-cases", "--include", "--export-coverage",
                      "--repeat-until-failure"}),
)


def mix(v: View, args: list[Word]) -> None:
    v.family = "mix"
    if not args:
        v.words = ["mix"]
        return
    task = args[0].value
    v.subcommand = task
    if task == "test":
        p = walk(args[1:], MIX_TEST)
        _apply(v, ["mix", "test"], p)
        return
    v.words = ["mix"] + [a.text for a in args]
    if task == "format" and not any(a.value in ("--check-formatted", "--dry-run") for a in args):
        paths = [a.value for a in args[1:] if not a.value.startswith("-")]
        v.writes.extend(FileRef(x) for x in (paths or ["."]))


GRADLE = Spec(
    display={"-q": ("quiet", "1"), "--quiet": ("quiet", "1"), "-i": ("info", ""), "--info": ("info", ""),
             "-d": ("debug", ""), "--debug": ("debug", ""), "-w": ("warn", ""), "--warn": ("warn", ""),
             "-s": ("stacktrace", ""), "--stacktrace": ("stacktrace", ""), "-S": ("stacktrace", "full"),
             "--full-stacktrace": ("stacktrace", "full"), "--no-daemon": ("daemon", "no"),
             "--daemon": ("daemon", "yes")},
    display_valued={"--console": "console", "--warning-mode": "warning-mode"},
    scope_valued={"--tests": "name"},
    valued=frozenset({"-p", "--project-dir", "-x", "--exclude-task", "--init-script", "-I", "--max-workers",
                      "--build-file", "-b", "--settings-file", "-c", "-g", "--gradle-user-home"}),
    positional=None,
)
MAVEN = Spec(
    display={"-q": ("quiet", "1"), "--quiet": ("quiet", "1"), "-B": ("batch", ""), "--batch-mode": ("batch", ""),
             "-e": ("errors", ""), "--errors": ("errors", ""), "-X": ("debug", ""), "--debug": ("debug", ""),
             "-ntp": ("transfer-progress", "no"), "--no-transfer-progress": ("transfer-progress", "no")},
    display_valued={"--color": "color"},
    attached={"-Dtest=": ("name", "scope"), "-Dstyle.color=": ("color", "display")},
    scope_valued={"-pl": "package", "--projects": "package"},
    valued=frozenset({"-f", "--file", "-s", "--settings", "-T", "--threads", "-P", "--activate-profiles",
                      "-rf", "--resume-from", "-gs", "--global-settings"}),
    positional=None,
)


# Tasks that compile, test or check; `:app:test` is the `test` task of the app project.
GRADLE_BUILD_TASKS = ("clean", "compileJava", "compileTestJava", "compileKotlin", "compileTestKotlin", "classes",
                      "testClasses", "test", "integrationTest", "check", "assemble", "build")


def _reported_step(steps: list[str], order: tuple[str, ...]) -> str:
    """The step a build tool's output reports on: of known steps (in `order`) the last one run
    (`gradle clean test`, `mvn clean install`); a step it does not know (`bootRun`,
    `spring-boot:run`) names the command as it is."""
    other = [s for s in steps if s not in order]
    return other[0] if other else max(steps, key=order.index, default="")


def gradle(v: View, name: str, args: list[Word]) -> None:
    v.family = "gradle"
    p = walk(args, GRADLE)
    _apply(v, [name], p)
    v.subcommand = _reported_step([a.value.rsplit(":", 1)[-1] for a in p.positionals], GRADLE_BUILD_TASKS)


# Maven's build lifecycle, in order: a command that runs only phases (and Surefire's own goal) ends
# in the last one it names, which is what its output reports on (`mvn clean install` tests, then
# packages).  Any other goal (`spring-boot:run`, `exec:java`, `dependency:tree`) names the command.
MAVEN_PHASES = ("clean", "validate", "initialize", "generate-sources", "process-sources", "generate-resources",
                "process-resources", "compile", "process-classes", "generate-test-sources",
                "process-test-sources", "generate-test-resources", "process-test-resources", "test-compile",
                "process-test-classes", "test", "surefire:test", "prepare-package", "package",
                "pre-integration-test", "integration-test", "post-integration-test", "verify", "install")


def maven(v: View, name: str, args: list[Word]) -> None:
    v.family = "maven"
    p = walk(args, MAVEN)
    _apply(v, [name], p)
    v.subcommand = _reported_step([a.value for a in p.positionals], MAVEN_PHASES)


# ---------------------------------------------------------------- runtimes' own test runners

NODE_TEST = Spec(
    display_valued={"--test-reporter": "reporter", "--test-reporter-destination": "reporter-destination"},
    scope_valued={"--test-name-pattern": "name", "--test-skip-pattern": "skip", "--test-shard": "shard"},
    scope_flags={"--test-only": "only"},
    valued=frozenset({"--test-concurrency", "--test-timeout", "--import", "--require", "-r", "--loader",
                      "--experimental-loader", "--env-file", "--conditions", "-C"}),
)


def node(v: View, args: list[Word]) -> None:
    """`node --test [files]` is node's test runner; any other node command is just a program."""
    if not any(a.value == "--test" for a in args):
        v.words = ["node"] + [a.text for a in args]
        return
    v.family = "node-test"
    p = walk([a for a in args if a.value != "--test"], NODE_TEST)
    _apply(v, ["node", "--test"], p)


# ---------------------------------------------------------------- Ruby

RSPEC = Spec(
    display={"--color": ("color", "yes"), "--no-color": ("color", "no"), "--force-color": ("color", "yes"),
             "-b": ("backtrace", "full"), "--backtrace": ("backtrace", "full"), "-w": ("warnings", ""),
             "--profile": ("profile", ""), "-p": ("profile", "")},
    display_valued={"-f": "format", "--format": "format", "-o": "out", "--out": "out"},
    attached={"-f": ("format", "display")},
    scope_flags={"--fail-fast": "exitfirst", "--only-failures": "last-failed", "--next-failure": "last-failed"},
    scope_valued={"-e": "name", "--example": "name", "-t": "marker", "--tag": "marker", "--seed": "seed",
                  "--order": "order"},
    valued=frozenset({"-r", "--require", "-I", "--default-path", "-P", "--pattern", "--exclude-pattern"}),
)
MINITEST = Spec(
    display={"-v": ("verbose", "1"), "--verbose": ("verbose", "1"), "-p": ("pride", ""), "--pride": ("pride", "")},
    scope_valued={"-n": "name", "--name": "name", "-e": "skip", "--exclude": "skip", "-s": "seed",
                  "--seed": "seed"},
    valued=frozenset(),
)
_RUBY_TEST = ("test_", "_test.rb", "/test/", "test/")


def rspec(v: View, args: list[Word]) -> None:
    v.family = "rspec"
    p = walk(args, RSPEC)
    _apply(v, ["rspec"], p)


def ruby(v: View, args: list[Word]) -> None:
    """`ruby [-Itest] test/test_x.rb [minitest options]`: a Minitest file when the script is a test."""
    i = 0
    head = ["ruby"]
    while i < len(args) and args[i].value.startswith("-"):
        head.append(args[i].text)
        i += 2 if args[i].value in ("-I", "-r") else 1
        if args[i - 1].value in ("-I", "-r"):
            head.append(args[i - 1].text)
    script = args[i].value if i < len(args) else ""
    name = script.rsplit("/", 1)[-1]
    if not (name.startswith("test_") or name.endswith("_test.rb") or script.startswith("test/")
            or "/test/" in script):
        v.words = ["ruby"] + [a.text for a in args]
        return
    v.family = "minitest"
    p = walk(args[i + 1:], MINITEST)
    _apply(v, head + [args[i].text], p)


def rake_or_rails(v: View, name: str, args: list[Word]) -> None:
    """`rake test` / `rails test` run Minitest; other tasks are not test runs."""
    task = next((a.value for a in args if not a.value.startswith("-")), "")
    v.subcommand = task
    if task.split(":")[0] != "test":
        v.words = [name] + [a.text for a in args]
        return
    v.family = "minitest"
    p = walk([a for a in args if a.value != task], MINITEST)
    _apply(v, [name, task], p)


# ---------------------------------------------------------------- PHP

PHPUNIT = Spec(
    display={"--testdox": ("format", "testdox"), "--teamcity": ("format", "teamcity"), "--debug": ("debug", ""),
             "-v": ("verbose", "1"), "--verbose": ("verbose", "1"), "--no-progress": ("progress", "no")},
    display_valued={"--colors": "color", "--log-junit": "log", "--testdox-html": "log", "--testdox-text": "log",
                    "--printer": "printer"},
    scope_flags={"--stop-on-failure": "exitfirst", "--stop-on-error": "exitfirst", "--stop-on-defect": "exitfirst"},
    scope_valued={"--filter": "name", "--group": "marker", "--exclude-group": "skip", "--testsuite": "package"},
    valued=frozenset({"-c", "--configuration", "--bootstrap", "--cache-result-file", "--coverage-clover",
                      "--coverage-html", "--coverage-text", "--include-path", "-d"}),
)


def phpunit(v: View, name: str, args: list[Word]) -> None:
    v.family = "phpunit"
    p = walk(args, PHPUNIT)
    _apply(v, [name], p)


# ---------------------------------------------------------------- JVM

JUNIT_CONSOLE = Spec(
    display={"--disable-banner": ("banner", "no"), "--disable-ansi-colors": ("color", "no"),
             "--fail-if-no-tests": ("fail-if-no-tests", "")},
    display_valued={"--details": "details", "--details-theme": "theme", "--reports-dir": "reports"},
    scope_valued={"--select-class": "name", "-c": "name", "--select-method": "name", "-m": "name",
                  "--select-package": "package", "-p": "package", "--include-tag": "marker", "-t": "marker",
                  "--exclude-tag": "skip", "-T": "skip", "--select": "name", "--scan-classpath": "path",
                  "--include-classname": "name", "-n": "name"},
    valued=frozenset({"-cp", "--classpath", "--class-path", "--config"}),
)


def java(v: View, args: list[Word]) -> None:
    """`java -jar junit-platform-console-standalone.jar …` or `java … ConsoleLauncher …`: JUnit 5."""
    at = next((k for k, a in enumerate(args) if "junit-platform-console" in a.value
               or a.value.endswith("ConsoleLauncher")), None)
    if at is None:
        v.words = ["java"] + [a.text for a in args]
        return
    v.family = "junit"
    rest = args[at + 1:]
    if rest and rest[0].value in ("execute", "discover"):
        rest = rest[1:]
    p = walk(rest, JUNIT_CONSOLE)
    _apply(v, ["java"] + [a.text for a in args[:at + 1]], p)


GOTESTSUM = Spec(
    display_valued={"--format": "format", "-f": "format", "--jsonfile": "log", "--junitfile": "log",
                    "--hide-summary": "summary", "--format-hide-empty-pkg": "format"},
    display={"--no-color": ("color", "no"), "--format-icons": ("icons", "")},
    scope_valued={"--rerun-fails": "rerun", "--packages": "package"},
    valued=frozenset({"--raw-command", "--post-run-command", "--watch", "--max-fails", "--rerun-fails-max-failures",
                      "--rerun-fails-report", "--junitfile-testsuite-name", "--junitfile-testcase-classname"}),
)


def gotestsum(v: View, args: list[Word]) -> None:
    """`gotestsum [opts] [-- go test args]`: go test under gotestsum's formatter."""
    v.family = "gotestsum"
    dd = next((k for k, a in enumerate(args) if a.value == "--"), len(args))
    p = walk(args[:dd], GOTESTSUM)
    q = walk(args[dd + 1:], GO_TEST) if dd < len(args) else None
    tail = (["--"] + q.kept) if q and q.kept else []
    if q:
        p.scope.extend(q.scope)
        p.decorations.extend(q.decorations)
    _apply(v, ["gotestsum"], p, tail)


# ---------------------------------------------------------------- Perl

PROVE = Spec(
    display={"-v": ("verbose", "1"), "--verbose": ("verbose", "1"), "-q": ("quiet", "1"), "--quiet": ("quiet", "1"),
             "-Q": ("quiet", "2"), "--QUIET": ("quiet", "2"), "--color": ("color", "yes"), "-c": ("color", "yes"),
             "--nocolor": ("color", "no"), "--timer": ("timer", ""), "-f": ("failures", ""),
             "--failures": ("failures", ""), "-o": ("comments", ""), "--comments": ("comments", "")},
    display_valued={"--formatter": "formatter"},
    scope_flags={"-r": "recurse", "--recurse": "recurse", "-s": "shuffle", "--shuffle": "shuffle"},
    scope_valued={"--state": "state"},
    valued=frozenset({"-I", "-P", "-M", "-j", "--jobs", "-e", "--exec", "--ext", "--harness", "--source",
                      "-a", "--archive"}),
    bundle="vqlbrsfoc",
)


def prove(v: View, args: list[Word]) -> None:
    v.family = "prove"
    p = walk(args, PROVE)
    _apply(v, ["prove"], p)


# ---------------------------------------------------------------- CMake

CTEST = Spec(
    display={"-V": ("verbose", "1"), "--verbose": ("verbose", "1"), "-VV": ("verbose", "2"),
             "--extra-verbose": ("verbose", "2"), "-Q": ("quiet", "1"), "--quiet": ("quiet", "1"),
             "--output-on-failure": ("output-on-failure", ""), "--progress": ("progress", ""),
             "--no-label-summary": ("label-summary", "no"), "--no-subproject-summary": ("subproject-summary", "no")},
    display_valued={"--output-junit": "log", "-O": "log", "--output-log": "log"},
    scope_flags={"--stop-on-failure": "exitfirst", "--rerun-failed": "last-failed"},
    scope_valued={"-R": "name", "--tests-regex": "name", "-E": "skip", "--exclude-regex": "skip",
                  "-L": "marker", "--label-regex": "marker", "-LE": "skip", "--label-exclude": "skip",
                  "-I": "name", "--tests-information": "name"},
    valued=frozenset({"-j", "--parallel", "-C", "--build-config", "--timeout", "--repeat", "--test-dir",
                      "--resource-spec-file", "--test-load", "--schedule-random-seed"}),
    positional=None,
)


def ctest(v: View, args: list[Word]) -> None:
    v.family = "ctest"
    for k, a in enumerate(args):
        if a.value == "--test-dir" and k + 1 < len(args):
            v.chdir = _join(v.chdir, args[k + 1].value)
    p = walk([a for k, a in enumerate(args) if a.value != "--test-dir"
              and not (k and args[k - 1].value == "--test-dir")], CTEST)
    _apply(v, ["ctest"], p)


# ---------------------------------------------------------------- bundlers

ESBUILD = Spec(
    display={"--color=true": ("color", "yes"), "--color=false": ("color", "no")},
    display_valued={"--log-level": "log-level", "--log-limit": "log-limit", "--color": "color"},
    valued=frozenset({"--outdir", "--outfile", "--platform", "--format", "--target", "--loader", "--define",
                      "--external", "--tsconfig", "--sourcemap"}),
)


def esbuild(v: View, args: list[Word]) -> None:
    """`esbuild ENTRY… [flags]`: a build, unless it watches or serves (then it never exits)."""
    v.family = "esbuild"
    p = walk(args, ESBUILD)
    _apply(v, ["esbuild"], p)
    flags = [a.value.partition("=")[0] for a in args]
    v.subcommand = next((f[2:] for f in flags if f in ("--watch", "--serve")), "build")


WEBPACK = Spec(
    display={"--color": ("color", "yes"), "--no-color": ("color", "no"), "--progress": ("progress", "")},
    display_valued={"--stats": "stats", "--json": "json"},
    valued=frozenset({"-c", "--config", "--config-name", "--mode", "--entry", "-o", "--output-path", "--env",
                      "--node-env", "--target", "-t", "--devtool", "-d", "--name"}),
)
# webpack-cli's commands; without one it builds.
_WEBPACK_COMMANDS = frozenset({"build", "bundle", "b", "serve", "server", "s", "watch", "w", "info", "i",
                               "configtest", "t", "init", "create", "new", "c", "n", "loader", "plugin",
                               "version", "help"})


def webpack(v: View, args: list[Word]) -> None:
    v.family = "webpack"
    p = walk(args, WEBPACK)
    _apply(v, ["webpack"], p)
    first = next((a.value for a in p.positionals), "")
    v.subcommand = first if first in _WEBPACK_COMMANDS else "build"
    if any(a.value in ("--watch", "-w") for a in args):
        v.subcommand = "watch"


VITE = Spec(
    display={"--clearScreen": ("clear-screen", "yes"), "--debug": ("debug", ""), "-d": ("debug", "")},
    display_valued={"--logLevel": "log-level", "-l": "log-level"},
    valued=frozenset({"--mode", "-m", "-c", "--config", "--base", "--outDir", "--assetsDir", "--filter", "-f",
                      "--port", "--host", "--target", "--sourcemap", "--minify", "--ssr"}),
)
_VITE_COMMANDS = frozenset({"build", "dev", "serve", "preview", "optimize"})


def vite(v: View, args: list[Word]) -> None:
    """`vite build` bundles and exits; `vite` alone (or dev/serve/preview) runs a server."""
    v.family = "vite"
    p = walk(args, VITE)
    _apply(v, ["vite"], p)
    first = next((a.value for a in p.positionals), "")
    v.subcommand = first if first in _VITE_COMMANDS else "dev"
    if v.subcommand == "build" and any(a.value in ("--watch", "-w") for a in args):
        v.subcommand = "watch"


# ---------------------------------------------------------------- Python and shell linters (issue 13)
# Rule selection (--select, --disable, -S severity) changes what is checked: identity, kept in the core.

FLAKE8 = Spec(
    display={"--show-source": ("show-source", ""), "--no-show-source": ("show-source", "no"),
             "--statistics": ("statistics", ""), "--count": ("count", ""), "--benchmark": ("benchmark", ""),
             "-q": ("quiet", "1"), "--quiet": ("quiet", "1"), "-qq": ("quiet", "2"),
             "-v": ("verbose", "1"), "--verbose": ("verbose", "1"), "-vv": ("verbose", "2")},
    display_valued={"--color": "color", "--format": "format", "--output-file": "log", "--tee": "tee"},
    valued=frozenset({"--select", "--extend-select", "--ignore", "--extend-ignore", "--exclude", "--extend-exclude",
                      "--filename", "--per-file-ignores", "--max-line-length", "--max-doc-length",
                      "--max-complexity", "--config", "--append-config", "--jobs", "-j", "--stdin-display-name",
                      "--hang-closing", "--indent-size", "--enable-extensions", "--require-plugins"}),
)
PYLINT = Spec(
    display={"-ry": ("reports", "y"), "-rn": ("reports", "n"), "--score=y": ("score", "y"),
             "--score=n": ("score", "n"), "-sy": ("score", "y"), "-sn": ("score", "n"), "-v": ("verbose", "1"),
             "--verbose": ("verbose", "1")},
    display_valued={"--output-format": "format", "-f": "format", "--reports": "reports", "-r": "reports",
                    "--score": "score", "-s": "score", "--msg-template": "template", "--output": "log"},
    valued=frozenset({"--rcfile", "--disable", "-d", "--enable", "-e", "--jobs", "-j", "--ignore",
                      "--ignore-patterns", "--ignore-paths", "--load-plugins", "--init-hook", "--fail-under",
                      "--fail-on", "--max-line-length", "--py-version", "--confidence", "--good-names",
                      "--extension-pkg-allow-list", "--source-roots", "--ignored-modules", "--recursive"}),
)
_PYLINT_NOT_CHECKS = frozenset({"--generate-rcfile", "--generate-toml-config", "--list-msgs", "--list-msgs-enabled",
                                "--list-groups", "--list-conf-levels", "--list-extensions", "--help-msg",
                                "--full-documentation", "--version", "--long-help", "--help", "-h"})
SHELLCHECK = Spec(
    display_valued={"-f": "format", "--format": "format", "-C": "color", "--color": "color",
                    "-W": "wiki-links", "--wiki-link-count": "wiki-links"},
    display={"-C": ("color", "auto"), "--color": ("color", "auto")},
    attached={"-C": ("color", "display"), "-f": ("format", "display")},
    valued=frozenset({"-S", "--severity", "-e", "--exclude", "-i", "--include", "-s", "--shell",
                      "-o", "--enable", "-P", "--source-path", "--rcfile"}),
)


def flake8(v: View, args: list[Word]) -> None:
    v.family = "flake8"
    p = walk(args, FLAKE8)
    _apply(v, ["flake8"], p)
    for w in _outputs(args, ("--output-file",)):
        v.writes.append(FileRef(w))


def pylint(v: View, args: list[Word]) -> None:
    """`pylint [opts] modules…`; its non-check modes (--generate-rcfile, --list-msgs…) are not rewritten."""
    v.family = "pylint"
    if any(a.value.split("=", 1)[0] in _PYLINT_NOT_CHECKS for a in args):
        v.subcommand = "info"
        v.words = ["pylint"] + [a.text for a in args]
        return
    v.subcommand = "check"
    p = walk(args, PYLINT)
    _apply(v, ["pylint"], p)


def shellcheck(v: View, args: list[Word]) -> None:
    v.family = "shellcheck"
    p = walk(args, SHELLCHECK)
    _apply(v, ["shellcheck"], p)


PYRIGHT = Spec(
    display={"--outputjson": ("format", "json"), "--verbose": ("verbose", "1"), "--stats": ("stats", ""),
             "--dependencies": ("dependencies", "")},
    display_valued={"--level": "level"},
    valued=frozenset({"-p", "--project", "--pythonpath", "--pythonplatform", "--pythonversion", "-t",
                      "--typeshedpath", "--venvpath", "-v", "--threads", "--skipunannotated"}),
)
_PYRIGHT_NOT_CHECKS = frozenset({"--version", "--help", "-h", "--watch", "-w", "--createstub", "--verifytypes",
                                 "--writebaseline"})


def pyright(v: View, name: str, args: list[Word]) -> None:
    """`pyright [opts] [files]`; --watch, --createstub, --verifytypes and --version are not checks to digest."""
    v.family = "pyright"
    if any(a.value in _PYRIGHT_NOT_CHECKS for a in args):
        v.subcommand = "info"
        v.words = [name] + [a.text for a in args]
        return
    v.subcommand = "check"
    p = walk(args, PYRIGHT)
    _apply(v, [name], p)


BIOME = Spec(
    display={"--verbose": ("verbose", "1"), "--no-errors-on-unmatched": ("unmatched", "no")},
    display_valued={"--reporter": "reporter", "--colors": "color", "--diagnostic-level": "level",
                    "--max-diagnostics": "max-diagnostics", "--log-level": "log-level", "--log-kind": "log-kind",
                    "--reporter-file": "log"},
    valued=frozenset({"--config-path", "--only", "--skip", "--stdin-file-path", "--vcs-root", "--changed",
                      "--since", "--files-max-size", "--threads"}),
)
_BIOME_CHECKS = frozenset({"lint", "check", "ci", "format"})
_BIOME_WRITES = frozenset({"--write", "--fix", "--apply", "--apply-unsafe", "--unsafe"})


def biome(v: View, args: list[Word]) -> None:
    """`biome lint|check|ci|format [opts] [paths]`; `format --write` only rewrites files (no findings to digest),
    and the other commands (init, migrate, start, explain…) are not checks."""
    v.family = "biome"
    sub = args[0].value if args else ""
    if sub not in _BIOME_CHECKS:
        v.subcommand = sub
        v.words = ["biome"] + [a.text for a in args]
        return
    rest = args[1:]
    writes = any(a.value.split("=", 1)[0] in _BIOME_WRITES for a in rest)
    v.subcommand = "format-write" if sub == "format" and writes else sub
    p = walk(rest, BIOME)
    _apply(v, ["biome", sub], p)
    if writes:
        v.writes.extend(FileRef(s.value) for s in p.scope if s.kind == "path")
        if not any(s.kind == "path" for s in p.scope):
            v.writes.append(FileRef("."))


# ---------------------------------------------------------------- JS runtimes' own test runners (issue 13)

BUN_TEST = Spec(
    display={"--dots": ("reporter", "dots"), "--only-failures": ("only-failures", ""),
             "--silent": ("silent", "")},
    display_valued={"--reporter": "reporter", "--reporter-outfile": "log", "--coverage-reporter": "coverage",
                    "--coverage-dir": "coverage"},
    scope_flags={"--bail": "exitfirst", "--only": "only", "--todo": "todo", "--changed": "changed"},
    scope_valued={"-t": "name", "--test-name-pattern": "name", "--shard": "shard",
                  "--path-ignore-patterns": "skip"},
    valued=frozenset({"--timeout", "--rerun-each", "--retry", "--seed", "--max-concurrency", "--timings",
                      "--preload", "-r", "--require", "--config", "-c", "--env-file", "--tsconfig-override",
                      "--conditions", "--define", "-d", "--loader", "-l"}),
)


def bun_test(v: View, head_opts: list[str], args: list[Word]) -> None:
    """`bun test [opts] [path filters]`: bun's test runner (also reached through npx/bunx)."""
    v.family, v.subcommand = "bun-test", "test"
    p = walk(args, BUN_TEST)
    _apply(v, ["bun"] + head_opts + ["test"], p)


DENO_TEST = Spec(
    display={"--quiet": ("quiet", "1"), "-q": ("quiet", "1"), "--hide-stacktraces": ("stacktraces", "no")},
    display_valued={"--reporter": "reporter", "--junit-path": "log", "--coverage": "coverage"},
    scope_flags={"--fail-fast": "exitfirst", "--doc": "doc", "--parallel": "parallel", "--no-run": "no-run",
                 "--shuffle": "shuffle"},
    scope_valued={"--filter": "name", "--ignore": "skip"},
    valued=frozenset({"--config", "-c", "--import-map", "--lock", "--cert", "--location", "--seed",
                      "--v8-flags", "--env-file", "--trace-leaks", "--ext"}),
)


def deno(v: View, args: list[Word]) -> None:
    """`deno test [opts] [files]` is deno's test runner; `deno run/task/serve/fmt …` are not checks."""
    sub = next((a.value for a in args if not a.value.startswith("-")), "")
    v.family, v.subcommand = "deno", sub
    if sub != "test":
        v.words = ["deno"] + [a.text for a in args]
        return
    at = next(k for k, a in enumerate(args) if a.value == "test")
    head = ["deno"] + [a.text for a in args[:at]] + ["test"]
    rest = list(args[at + 1:])
    perms = [a for a in rest if a.value.startswith(("-A", "--allow-", "--deny-")) or a.value in ("-A", "-R", "-W", "-N", "-E")]
    p = walk([a for a in rest if a not in perms], DENO_TEST)
    _apply(v, head + [a.text for a in perms], p)
    if p.rest:  # `--` hands the rest to the tests as Deno.args
        v.words += ["--"] + [a.text for a in p.rest]
        v.unscoped += ["--"] + [a.text for a in p.rest]


PLAYWRIGHT_TEST = Spec(
    display={"--quiet": ("quiet", "1"), "-q": ("quiet", "1"), "--headed": ("headed", ""),
             "--no-deps": ("deps", "no")},
    display_valued={"--reporter": "reporter", "--output": "output-dir", "--trace": "trace"},
    scope_flags={"-x": "exitfirst", "--last-failed": "last-failed", "--only-changed": "changed",
                 "--fail-on-flaky-tests": "flaky", "--pass-with-no-tests": "no-tests"},
    scope_valued={"-g": "name", "--grep": "name", "--grep-invert": "skip", "--project": "package",
                  "--max-failures": "exitfirst", "--shard": "shard", "--tag": "marker"},
    valued=frozenset({"-c", "--config", "-j", "--workers", "--retries", "--timeout", "--repeat-each",
                      "--global-timeout", "--update-snapshots", "-u", "--browser", "--ignore-snapshots"}),
)
_PLAYWRIGHT_CHECKS = frozenset({"test"})


def playwright(v: View, args: list[Word]) -> None:
    """`playwright test [opts] [file[:line] filters]` is a test run; `show-report`, `codegen`,
    `install`, `open`, `show-trace` are not checks."""
    sub = args[0].value if args else ""
    v.family, v.subcommand = "playwright", sub
    if sub not in _PLAYWRIGHT_CHECKS:
        v.words = ["playwright"] + [a.text for a in args]
        return
    p = walk(args[1:], PLAYWRIGHT_TEST)
    _apply(v, ["playwright", "test"], p)


# ---------------------------------------------------------------- cmake --build, ninja (compiler output: cc profile)

CMAKE_BUILD = Spec(
    display={"-v": ("verbose", "1"), "--verbose": ("verbose", "1")},
    scope_valued={"-t": "target", "--target": "target"},
    valued=frozenset({"-j", "--parallel", "--config", "--preset", "--resolve-package-references"}),
    positional=None,
)
NINJA = Spec(
    display={"-v": ("verbose", "1"), "--verbose": ("verbose", "1"), "--quiet": ("quiet", "1")},
    valued=frozenset({"-j", "-k", "-l", "-f", "-d", "-w"}),
    positional=None,
)


def cmake(v: View, args: list[Word]) -> None:
    """`cmake --build DIR …` builds (the native tool's compiler output); configuring is not a build."""
    if not args or args[0].value != "--build":
        v.words = ["cmake"] + [a.text for a in args]
        return
    v.family, v.subcommand = "cmake-build", "build"
    p = walk(args[2:], CMAKE_BUILD)
    tail = (["--"] + [a.text for a in p.rest]) if p.rest else []
    head = ["cmake", "--build"] + ([args[1].text] if len(args) > 1 else [])
    _apply(v, head, p, tail)


def ninja(v: View, args: list[Word]) -> None:
    if any(a.value == "-t" or a.value.startswith("-t") and len(a.value) > 2 and not a.value.startswith("--")
           for a in args):
        v.words = ["ninja"] + [a.text for a in args]
        v.subcommand = "tool"   # `ninja -t clean`, `-t compdb`: not a build
        return
    v.family = "ninja"
    args = _take_chdir(v, args, names=("-C",))
    p = walk(args, NINJA)
    _apply(v, ["ninja"], p)
    v.subcommand = next((a.value for a in p.positionals), "")


# ---------------------------------------------------------------- cargo build / check / clippy (cargobuild profile)

CARGO_BUILD_SUBCOMMANDS = frozenset({"build", "b", "check", "c", "clippy"})
CARGO_BUILD = Spec(
    display={**_CARGO_COMMON_DISPLAY},
    display_valued={"--color": "color", "--message-format": "format"},
    scope_valued={"-p": "package", "--package": "package", "--bin": "target", "--test": "target",
                  "--example": "target", "--bench": "target"},
    scope_flags={"--lib": "target", "--bins": "target", "--tests": "target", "--examples": "target",
                 "--benches": "target", "--all-targets": "target", "--workspace": "package"},
    valued=frozenset({"--features", "-F", "--target", "--manifest-path", "-j", "--jobs", "--profile",
                      "--target-dir", "-Z", "--config", "--exclude"}),
    positional=None,
)


def _cargo_build(v: View, head: list[str], sub: str, rest: list[Word]) -> None:
    """`cargo build|check|clippy …`; clippy's lint flags after `--` (`-D warnings`) change what fails: kept."""
    v.family, v.subcommand = "cargo-build", {"b": "build", "c": "check"}.get(sub, sub)
    p = walk(rest, CARGO_BUILD)
    tail = (["--"] + [a.text for a in p.rest]) if p.rest else []
    _apply(v, head + [sub], p, tail)


# ---------------------------------------------------------------- go build / go vet (gobuild, govet profiles)

GO_BUILD = Spec(
    single_dash_long=True,
    display={"-v": ("verbose", "1"), "-x": ("print-commands", ""), "-json": ("format", "json")},
    valued=frozenset({"-tags", "-o", "-ldflags", "-gcflags", "-asmflags", "-mod", "-modfile", "-p", "-pkgdir",
                      "-toolexec", "-buildmode", "-compiler", "-installsuffix", "-overlay", "-pgo", "-C",
                      "-vettool", "-c"}),
)


def _go_build_or_vet(v: View, sub: str, rest: list[Word]) -> None:
    v.family, v.subcommand = f"go-{sub}", sub
    p = walk(rest, GO_BUILD)
    _apply(v, ["go", sub], p)


# ---------------------------------------------------------------- tsc --build
TSC.display["--verbose"] = ("verbose", "1")  # build mode's progress lines: how results are shown
