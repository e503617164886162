"""The evidence plane's PreToolUse decision for a Bash command: pass or rewrite.

Pure: everything it depends on is an argument (signature, the user's rule
verdict, the ctx launcher path, the set of families ctx can digest), so
replay can call it with recorded inputs and get the recorded answer.  The
safety plane runs before this and is not affected by anything here.
"""

import shlex
from dataclasses import dataclass

# Families whose output ctx run digests with a dedicated profile (plus npm
# scripts, whose profile is chosen by sniffing the output).  ctx run executes
# the command verbatim, so a rewrite never changes what runs; a family not
# listed passes through untouched.
REWRITE_FAMILIES = frozenset({"pytest", "go-test", "cargo-test", "jest", "vitest", "npm-script", "tsc",
                              "ruff", "mypy", "eslint", "node-test", "mix", "rspec",
                              "minitest", "phpunit", "junit", "gotestsum",
                              "prove", "ctest", "maven", "esbuild", "webpack", "vite",
                              "flake8", "pylint", "shellcheck", "pyright", "biome",
                              "bun-test", "deno", "playwright",
                              "make", "cmake-build", "ninja", "cargo-build", "go-build", "go-vet", "gradle"}
                             | {"git", "gh", "pkg-install", "search", "listing", "golangci-lint"})
# Tools that are not runners (issue 29: where agents' tokens go): ctx digests what they print only
# when that output is what reaches the model — see `reaches_model` — and never a machine format the
# agent asked for so that it (or a script) can parse it.
REACH_FAMILIES = frozenset({"git", "gh", "pkg-install", "search", "listing", "golangci-lint"})
# Flags that ask for a machine format (or a never-ending form): such a command passes untouched.
MACHINE_FLAGS = {
    "git": ("--porcelain", "-z", "--null", "--format", "--pretty=format:", "--pretty=tformat:", "--patch-with-raw",
            "--raw", "--numstat", "--name-only"),
    "gh": ("--json", "--jq", "-q", "--template", "-t", "--web", "-w", "--watch"),
    "search": ("-Z", "--null", "-0", "--json", "-print0", "--print0", "-printf", "-fprint", "-q", "--quiet",
               "--vimgrep", "-exec", "-execdir", "-delete", "-ok"),
    "listing": ("-J", "-X", "--zero"),  # tree's JSON/XML, ls --zero
    "pkg-install": ("--json", "--report", "-q", "--quiet"),
    "golangci-lint": ("--out-format", "--output.json.path", "--output.checkstyle.path", "--output.sarif.path"),
}
# Statements that may stand beside a digested tool in one command line without changing what
# its output is (status echoes, `|| true`, a `cd`).
_QUIET_WORDS = frozenset({"echo", "printf", "true", "false", ":", "cd", "pushd", "popd", "sleep", "export", "set",
                          "unset", "wait", "exit"})
_SLICER_WORDS = frozenset({"head", "tail", "grep", "egrep", "fgrep", "rg", "sed", "awk", "gawk", "cut", "wc", "sort",
                           "uniq", "less", "more", "cat", "column", "nl", "tr", "fold", "fmt", "tac"})
# Families whose tool also runs servers, generators and formatters: only these subcommands are
# test or check runs whose output has a profile (`mix phx.server` must not be wrapped).
REWRITE_SUBCOMMANDS = {"mix": frozenset({"test"}),
                       # the phases that compile or test (a command's last phase: see signature.runners.maven)
                       "maven": frozenset({"compile", "test-compile", "process-test-classes", "test", "surefire:test",
                                           "prepare-package", "package", "integration-test", "verify", "install"}),
                       # bundlers also watch and serve (they never exit): only a build is digested
                       "esbuild": frozenset({"build"}), "webpack": frozenset({"build", "bundle", "b"}),
                       "vite": frozenset({"build"}),
                       # pylint and pyright also print configs, lists and stubs, or watch: only a check
                       "pylint": frozenset({"check"}), "pyright": frozenset({"check"}),
                       "biome": frozenset({"lint", "check", "ci", "format"}),  # not format --write
                       "deno": frozenset({"test"}),  # not `deno run`, `deno task`, `deno serve`
                       "playwright": frozenset({"test"}),  # not `show-report`, `codegen`, `install`
                       # tasks that compile, test or check (a command's last one: see signature.runners.gradle)
                       "git": frozenset({"status", "diff", "show", "log", "commit", "push", "pull", "fetch", "checkout",
                                         "switch", "merge", "rebase", "add", "clone", "cherry-pick", "revert", "stash"}),
                       # gh's CI logs (`gh run view --log`, `--log-failed`); its other views are short tables
                       "gh": frozenset({"run view"}),
                       "golangci-lint": frozenset({"run"}),
                       "gradle": frozenset({"compileJava", "compileTestJava", "compileKotlin", "compileTestKotlin",
                                            "classes", "testClasses", "test", "integrationTest", "check",
                                            "assemble", "build"})}  # not bootRun, run, dependencies
# Build tools whose targets can also run a server, a watcher or a shell: these targets pass untouched
# (every other target, the default one included, is a build or a check whose output is sniffed).
PASS_SUBCOMMANDS = {"make": frozenset({"run", "serve", "server", "dev", "watch", "start", "shell", "repl", "console",
                                       "up", "logs", "tail", "docs-serve", "debug", "menuconfig", "nconfig",
                                       "xconfig", "gconfig"})}

# Commands that do not exit on their own (issue 30: dev servers, watch modes): at its Bash
# timeout the harness hands the model what they printed so far and moves them to a background
# task file the agent reads while they run.  ctx run prints only at exit (a digest), so it never
# wraps them: they pass untouched, exactly as without ctx (docs/never-exiting.md).
# Package scripts named for a server or a watcher, judged by name: a word of the script name
# (`dev`, `start:dev`, `watch:css`, `serve-docs`) — the package.json body is not read, so replay
# decides from the recorded command alone.
NEVER_EXIT_SCRIPT_WORDS = frozenset({"dev", "develop", "start", "serve", "server", "watch", "preview",
                                     "storybook"})
# Flags that make a runner watch, serve or listen instead of exiting, per family.  Short flags are
# listed only where they mean that (jest's `-w` is --maxWorkers; vitest's is --watch).  npm-script:
# a flag handed on to the script's runner (`npm test -- --watch`, `pnpm test --watch`).
WATCH_FLAGS = {
    "npm-script": ("--watch", "--watchAll", "--watch-all", "-w"),
    "jest": ("--watch", "--watchAll"),
    "vitest": ("--watch", "-w", "--ui"),
    "tsc": ("--watch", "-w"),
    "node-test": ("--watch", "--watch-path"),
    "deno": ("--watch",),
    "bun-test": ("--watch",),
    "ruff": ("--watch", "-w"),
    "pyright": ("--watch", "-w"),
    "gotestsum": ("--watch",),
    "pytest": ("-f", "--looponfail"),           # pytest-xdist's loop-on-fail
    "gradle": ("--continuous", "-t"),
    "playwright": ("--ui",),
    "mix": ("--listen-on-stdin",),              # re-runs on each line of stdin: never exits
}
# Subcommands that watch with or without a TTY (vitest 3.2.7: `vitest watch`/`dev` watched with
# stdin from /dev/null; bare `vitest` ran once and exited there, and watched only on a TTY).
WATCH_SUBCOMMANDS = {"vitest": frozenset({"watch", "dev"})}


@dataclass(frozen=True)
class Decision:
    action: str                 # "pass" | "rewrite"
    command: str | None = None  # the rewritten command
    permission: str | None = None  # permissionDecision to send with a rewrite
    why: str = ""
    # Set when a digestible command passes through only to keep the harness's permission
    # decision its own: the post hook can still deliver the digest (see daemon/claude.py).
    held_back: bool = False


def _words(core):
    try:
        return shlex.split(core)
    except ValueError:
        return None


def machine_format(family, core):
    """Whether the command asks for a machine format (or a watch) of its tool: then the agent or a
    script parses what it prints, and ctx must deliver it byte for byte."""
    words = _words(core)
    if words is None:
        return True
    flags = MACHINE_FLAGS.get(family, ())
    for w in words:
        if w == "--":
            break
        if any(w == f or (f.startswith("--") and w.startswith(f + "=")) or (f.endswith(":") and w.startswith(f))
               for f in flags):
            return True
        if family == "git" and w.startswith("--pretty=") and w[9:] not in ("oneline", "short", "medium", "full",
                                                                           "fuller", "reference"):
            return True
    return False


def reaches_model(sig):
    """Whether what the main command prints is what the model receives: every other statement of
    the line is quiet (an echo, a cd, `|| true`) or the same tool, and nothing after it in its
    pipeline but slicers (`| head -40`) — not `| xargs …`, `| while read …`, `| python parse.py`."""
    segs = sig.segments or ()
    main_seen = False
    in_main_pipe = False
    for seg in segs:
        words = _words(seg.core) or [""]
        first = words[0] if words else ""
        piped = seg.op in ("|", "|&")
        if not main_seen and seg.family == sig.family and seg.subcommand == sig.subcommand:
            main_seen, in_main_pipe = True, True
            continue
        if piped and in_main_pipe:
            if first not in _SLICER_WORDS:
                return False
            continue
        in_main_pipe = False
        if seg.family == sig.family or first in _QUIET_WORDS or not seg.core:
            continue
        return False
    return True


def reach_block(sig):
    """Why the output of a REACH_FAMILIES command must reach the model as printed, or None."""
    main = next((g for g in sig.segments if g.family == sig.family), sig)
    if machine_format(sig.family, main.core):
        return "%s: a machine format was asked for" % sig.family
    if not reaches_model(sig):
        return "%s: its output is not what reaches the model" % sig.family
    return None


def _script_words(script):
    return {w for w in script.lower().replace(":", " ").replace("-", " ").replace("_", " ").replace(".", " ")
            .replace("/", " ").split()}


def _watch_flag(family, words):
    """Whether `words` (one command's, shlex-split) carry one of its family's watch flags; an
    explicit off (`--watch=false`) does not count."""
    flags = WATCH_FLAGS.get(family, ())
    for w in words:
        name, eq, value = w.partition("=")
        if name in flags and not (eq and value.lower() in ("false", "0", "no", "off")):
            return True
    return False


def never_exits(sig):
    """Why this command line may run until it is killed (a server, a watcher, a shell `&`), or None.

    Judged on every statement of the line, not only the main one: ctx run wraps the whole line, so
    `npm run build && npm run dev` must pass as surely as `npm run dev`."""
    if "&" in (_words(sig.core) or ()):
        # the job outlives the shell ctx run waits for: what it prints later misses the digest
        return "runs a job in the shell's background (&)"
    for seg in sig.segments or (sig,):
        seg_words = _words(seg.core) or []
        if seg.family == "npm-script" and _script_words(seg.subcommand) & NEVER_EXIT_SCRIPT_WORDS:
            return "script %s serves or watches: it does not exit" % seg.subcommand
        if seg.subcommand in WATCH_SUBCOMMANDS.get(seg.family, ()):
            return "%s %s watches: it does not exit" % (seg.family, seg.subcommand)
        if _watch_flag(seg.family, seg_words):
            return "%s watches or listens: it does not exit" % seg.family
    return None


def is_ctx_command(command, launcher):
    head = command.lstrip().split(None, 2)
    return bool(head) and (head[0] in ("ctx", launcher) and len(head) > 1 and head[1] in ("run", "get", "search"))


def decide_bash(command, tool_input, sig, *, launcher, permission, mode="auto", families=REWRITE_FAMILIES,
                stand_down=False):
    """-> Decision for one PreToolUse Bash call.

    `permission` is the permission mirror's Verdict on the ORIGINAL command; `mode` the user's
    `rewrite_permission` setting: "auto" rewrites only what the harness would have run unasked,
    "allow" rewrites every digestible command and allows it (the user's explicit choice to let ctx
    decide), "off" never rewrites.
    """
    if stand_down:
        return Decision("pass", why="stood down for this signature")
    if is_ctx_command(command, launcher):
        return Decision("pass", why="already a ctx command")
    if tool_input.get("run_in_background"):
        # The harness polls a background task's output file; wrapping it would
        # hide that file's growth behind our capture.
        return Decision("pass", why="background task")
    if sig is None or sig.family not in families:
        return Decision("pass", why="family %s not digested" % (sig.family if sig else "unknown"))
    if sig.family in REWRITE_SUBCOMMANDS and sig.subcommand not in REWRITE_SUBCOMMANDS[sig.family]:
        return Decision("pass", why="%s %s not digested" % (sig.family, sig.subcommand or "(no subcommand)"))
    if sig.family in PASS_SUBCOMMANDS and sig.subcommand in PASS_SUBCOMMANDS[sig.family]:
        return Decision("pass", why="%s %s not digested" % (sig.family, sig.subcommand))
    never = never_exits(sig)
    if never is not None:
        return Decision("pass", why=never)
    if sig.family in REACH_FAMILIES:
        why = reach_block(sig)
        if why is not None:
            return Decision("pass", why=why)
    if mode == "off":
        return Decision("pass", why="rewrites are off (rewrite_permission=off)", held_back=True)
    if permission.kind == "deny":
        return Decision("pass", why="permission: %s; the harness's own deny applies" % permission.reason,
                        held_back=True)
    if permission.kind != "allow" and mode != "allow":
        # The harness would ask someone (or refuse) about the original: let it, about the
        # original.  A digest lost is better than a command refused or run unasked.
        return Decision("pass", why="permission: %s; left to the harness" % permission.reason, held_back=True)
    new = "%s run -- %s" % (shlex.quote(launcher), shlex.quote(command))
    why = "%s output digested by ctx run" % sig.family
    return Decision("rewrite", command=new, permission="allow", why=why)
