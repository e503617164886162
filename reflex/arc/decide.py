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
                              "make", "cmake-build", "ninja", "cargo-build", "go-build", "go-vet", "gradle"})
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
                       "gradle": frozenset({"compileJava", "compileTestJava", "compileKotlin", "compileTestKotlin",
                                            "classes", "testClasses", "test", "integrationTest", "check",
                                            "assemble", "build"})}  # not bootRun, run, dependencies
# Build tools whose targets can also run a server, a watcher or a shell: these targets pass untouched
# (every other target, the default one included, is a build or a check whose output is sniffed).
PASS_SUBCOMMANDS = {"make": frozenset({"run", "serve", "server", "dev", "watch", "start", "shell", "repl", "console",
                                       "up", "logs", "tail", "docs-serve", "debug", "menuconfig", "nconfig",
                                       "xconfig", "gconfig"})}


@dataclass(frozen=True)
class Decision:
    action: str                 # "pass" | "rewrite"
    command: str | None = None  # the rewritten command
    permission: str | None = None  # permissionDecision to send with a rewrite
    why: str = ""
    # Set when a digestible command passes through only to keep the harness's permission
    # decision its own: the post hook can still deliver the digest (see daemon/claude.py).
    held_back: bool = False


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
