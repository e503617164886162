"""One simple command -> View: unwrap, dispatch to the tool's analyzer, redirects.

Redirects: `2>&1`, `>&2`, `N>/dev/null`, `&>/dev/null` are presentation
(Decoration kind "redirect"); `> file`, `>> file`, `< file`, `<<< word` and
heredocs are identity and stay in the core, and a heredoc's body is part of
the command's identity (two heredoc rewrites of one file with different
bodies are different commands that write the same file).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from reflex.signature import files, gitcmd, runners, tools
from reflex.signature.model import Decoration, FileRef
from reflex.signature.syntax import Command, Heredoc, Word
from reflex.signature.view import View
from reflex.signature.wrappers import SHELLS, unwrap

_ASSIGNLIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_PM = frozenset({"npm", "pnpm", "yarn", "bun"})
_DISPATCH = {
    "pytest": lambda v, n, a: runners.pytest(v, a),
    "py.test": lambda v, n, a: runners.pytest(v, a),
    "go": lambda v, n, a: runners.go(v, a),
    "cargo": lambda v, n, a: runners.cargo(v, a),
    "jest": lambda v, n, a: runners.jest(v, a),
    "vitest": lambda v, n, a: runners.vitest(v, a),
    "tsc": runners.tsc, "vue-tsc": runners.tsc, "tsgo": runners.tsc,
    "ruff": lambda v, n, a: runners.ruff(v, a),
    "mypy": runners.mypy, "dmypy": runners.mypy,
    "eslint": lambda v, n, a: runners.eslint(v, a),
    "make": runners.make, "gmake": runners.make,
    "mix": lambda v, n, a: runners.mix(v, a),
    "gradle": runners.gradle, "gradlew": runners.gradle,
    "mvn": runners.maven, "mvnw": runners.maven,
    "node": lambda v, n, a: runners.node(v, a),
    "rspec": lambda v, n, a: runners.rspec(v, a),
    "ruby": lambda v, n, a: runners.ruby(v, a),
    "rake": runners.rake_or_rails, "rails": runners.rake_or_rails,
    "phpunit": runners.phpunit,
    "java": lambda v, n, a: runners.java(v, a),
    "gotestsum": lambda v, n, a: runners.gotestsum(v, a),
    "prove": lambda v, n, a: runners.prove(v, a),
    "ctest": lambda v, n, a: runners.ctest(v, a),
    "esbuild": lambda v, n, a: runners.esbuild(v, a),
    "webpack": lambda v, n, a: runners.webpack(v, a),
    "webpack-cli": lambda v, n, a: runners.webpack(v, a),
    "vite": lambda v, n, a: runners.vite(v, a),
    "cmake": lambda v, n, a: runners.cmake(v, a),
    "ninja": lambda v, n, a: runners.ninja(v, a),
    "git": lambda v, n, a: gitcmd.git(v, a),
    "deno": lambda v, n, a: runners.deno(v, a),
    "playwright": lambda v, n, a: runners.playwright(v, a),
    **{pm: (lambda v, n, a: runners.package_script(v, n, a)) for pm in _PM},
}
_DISPATCH.update({  # issue 13: linters
    "flake8": lambda v, n, a: runners.flake8(v, a),
    "pylint": lambda v, n, a: runners.pylint(v, a),
    "shellcheck": lambda v, n, a: runners.shellcheck(v, a),
    "pyright": runners.pyright, "basedpyright": runners.pyright,
    "biome": lambda v, n, a: runners.biome(v, a),
})
TRIVIAL = frozenset({"echo", "printf", "true", "false", ":", "sleep", "export", "set", "unset", "shopt",
                     "clear", "wait", "exit", "return", "declare", "local", "readonly", "typeset", "ulimit",
                     "trap", "popd", "hash", "alias", "unalias", "setopt"})
_ENV_FILES = ("activate", "activate.sh", "activate.bash", "activate.zsh", ".env", ".envrc", ".bashrc",
              ".zshrc", ".profile", ".bash_profile", ".zprofile", ".zshenv", "env.sh", "env")
_OTHER_KNOWN = frozenset({"ls", "echo", "cat", "env", "node", "deno", "bash", "sh", "zsh", "printf", "which",
                          "xargs", "awk", "sort", "uniq", "wc", "cut", "tr", "jq", "diff", "sed", "black",
                          "isort", "prettier", "flake8", "pylint", "uv", "poetry", "pdm", "npx", "pnpm",
                          "yarn", "bun", "bunx", "timeout", "nice", "tee", "find", "curl", "gh", "pip", "pip3",
                          "apt-get", "apt", "tree", "golangci-lint"})


def known(name: str) -> bool:
    return (name in _DISPATCH or name in files.READERS or name in files.SEARCHERS
            or name in files.FORMATTERS or name in _OTHER_KNOWN)


# How `bash -c CODE` is parsed: chain.build, handed in by chain.py (which imports this module;
# importing it back would make the two a cycle).
NestedBuild = Callable[[str, "str | None", int, dict], Any]


def analyze(cmd: Command, depth: int = 0, cwd: str | None = None, build: NestedBuild | None = None) -> View:
    v = View()
    if cmd.opaque is not None:
        v.words = [cmd.opaque]
        for inner in cmd.inner:
            iv = analyze(inner, depth + 1, build=build)
            v.reads += iv.reads
            v.writes += iv.writes
            v.routes += [r for r in iv.routes if r not in v.routes]
        _redirects(v, cmd.redirs)
        v.unscoped = list(v.words)
        return v
    v.env = [a.value for a in cmd.assigns]
    words, prefix, code = unwrap(v, cmd.words, known)
    v.argv = words
    v.name = words[0].value if words else ""
    if code is not None:
        if depth < 3 and build is not None:
            # bash -c CODE: the code is parsed as a command line of its own.
            info: dict = {}
            _adopt(v, build(code, cwd, depth + 1, info), info)
        else:
            v.words = [w.text for w in cmd.words]
    elif not words:
        v.words = [a.text for a in cmd.assigns] if not prefix else []
        v.trivial = not any(not isinstance(r, Heredoc) and r.op in (">", ">>", "&>", "&>>", ">|")
                            for r in cmd.redirs)
    else:
        _dispatch(v, words)
    if prefix:
        v.words = prefix + v.words
        if v.unscoped is not None:
            v.unscoped = prefix + v.unscoped
    if words and words[0].literal and v.words and v.words[0] == words[0].text and _ASSIGNLIKE.match(words[0].value):
        # a command named like an assignment (`"a"=x`) must stay quoted to stay a command
        v.words[0] = "'" + words[0].value.replace("'", "'\"'\"'") + "'"
    if v.unscoped is None:
        v.unscoped = list(v.words)
    n_words = len(v.words)
    _redirects(v, cmd.redirs)
    v.unscoped += v.words[n_words:]
    if v.trivial and (v.writes or prefix):
        v.trivial = False
    return v


def _adopt(v: View, sig, info: dict) -> None:
    """Take over the signature of the code inside `bash -c '…'`."""
    v.nested = sig
    v.family, v.subcommand, v.cwd = sig.family, sig.subcommand, sig.cwd
    v.trivial = info.get("trivial", False)
    v.cd = info.get("cd")
    single = info.get("view")
    if single is not None:   # so `bash -c 'tail -5'` at the end of a pipeline is still a slicer
        v.name, v.argv = single.name, single.argv
    v.words = [sig.core] if sig.core else []
    v.unscoped = [sig.unscoped] if sig.unscoped else []
    v.scope = list(sig.scope)
    v.decorations += sig.decorations
    v.reads += sig.reads
    v.writes += sig.writes
    v.routes += [r for r in sig.wrapper_route if r not in v.routes]
    v.wrappers += sig.wrappers
    v.env += sig.env


def _dispatch(v: View, words: list[Word]) -> None:
    name = words[0].value
    args = words[1:]
    fn = _DISPATCH.get(name)
    if fn is None and name.endswith(("/gradlew", "/mvnw", "bin/rails", "bin/rspec", "bin/rake",
                                              "bin/phpunit")):
        fn = _DISPATCH[name.rsplit("/", 1)[1]]   # ./gradlew stays ./gradlew: it is the project's wrapper
    if fn is not None:
        fn(v, words[0].text, args)
        if not v.words:
            v.words = [w.text for w in words]
        if v.family == "other":
            tools.classify(v, name, [a.value for a in args])
        return
    v.words = [w.text for w in words]
    if name in tools.LISTERS or name in ("gh", "pip", "pip3", "uv", "apt-get", "apt", "golangci-lint", "python",
                                         "python3"):
        tools.classify(v, name, [a.value for a in args])
        if v.family != "other":
            return
    if name in files.READERS and files.reader(v, name, args):
        return
    if name in files.SEARCHERS:
        files.search(v, name, args)
        return
    if files.writer(v, name, args):
        return
    if name in ("cd", "pushd"):
        target = next((a.value for a in args if not a.value.startswith("-") or a.value == "-"), "~")
        v.cd = target
        return
    if name in TRIVIAL:
        v.trivial = True
        return
    if name in ("source", "."):
        target = args[0].value if args else ""
        v.reads.append(FileRef(target)) if target else None
        if target.rsplit("/", 1)[-1] in _ENV_FILES or target.endswith("/activate"):
            v.trivial = True
            v.wrappers.append(" ".join(w.text for w in words))
        else:
            v.executes = target
            v.routes.append("script")
        return
    if name in SHELLS:
        script = next((a.value for a in args if not a.value.startswith(("-", "+"))), None)
        if script:
            v.executes = script
            v.reads.append(FileRef(script))
            v.routes.append("script")
        return
    if "/" in name:
        v.executes = name   # chain.py calls it a script route if the chain wrote it first
        if name.endswith((".sh", ".bash", ".zsh")):
            v.routes.append("script")


def _redirects(v: View, redirs: list) -> None:
    for r in redirs:
        if isinstance(r, Heredoc):
            q = f"'{r.delim}'" if r.quoted else r.delim
            v.words.append(f"{r.op}{q}")
            v.heredocs.append(r.body + r.delim)
            continue
        target = r.target.value if r.target is not None else ""
        ttext = r.target.text if r.target is not None else ""
        op = r.op
        if op in (">&", "<&") and (target.isdigit() or target == "-") or (op == ">" and target.startswith("&")):
            v.decorations.append(Decoration("redirect", f"{r.fd}{op}{target}"))
        elif target in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"):
            v.decorations.append(Decoration("redirect", f"{r.fd}{op}{target}"))
        elif op in (">", ">>", "&>", "&>>", ">|", ">&"):
            v.writes.append(FileRef(target))
            v.words.append(_redirect_text(r.fd, op, ttext))
        elif op in ("<", "<>"):
            v.reads.append(FileRef(target))
            v.words.append(_redirect_text(r.fd, op, ttext))
        else:
            v.words.append(_redirect_text(r.fd, op, ttext))


def _redirect_text(fd: str, op: str, target: str) -> str:
    # `> #x` would start a comment; `>#x` does not
    return f"{fd}{op}{target}" if target.startswith("#") else f"{fd}{op} {target}"
