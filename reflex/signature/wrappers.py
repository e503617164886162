"""Wrappers: the words in front of a command that do not change what it is.

`uv run`, `poetry run`, `npx`, `timeout 60`, `nice`, `env X=1`, `command`,
`exec`, `python -m pytest`, `/abs/path/to/pytest`, `bash -c '…'` are peeled
off so the core names the tool itself.  Each one is recorded as written
(`View.wrappers`); the ones that route around a rewrite are also named in
`View.routes` (wrapper_route): "env", "command", "exec", "abs-path",
"python -m", "bash -c" ("script" is decided in command.py).  `sudo` is not a
wrapper: privileges change results, so it stays in the core as a prefix.
"""

from __future__ import annotations

import re

from reflex.signature.syntax import Word, lit
from reflex.signature.view import View

PY_MODULES = frozenset({"pytest", "py.test", "mypy", "ruff", "black", "isort", "flake8", "pylint", "tsc"})
_PYTHON = re.compile(r"(python|pypy)(\d+(\.\d+)?)?$|py$")
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})

# wrapper -> options that take a value (everything else starting with - is a bare flag)
_SIMPLE = {
    "nohup": frozenset(), "builtin": frozenset(), "time": frozenset(), "unbuffer": frozenset(),
    "chronic": frozenset(), "caffeinate": frozenset({"-t", "-w"}),
    "nice": frozenset({"-n", "--adjustment"}), "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}), "xvfb-run": frozenset({"-n", "-s", "-f", "-e", "-p", "-w"}),
    "exec": frozenset({"-a"}), "command": frozenset(),
}
_RUNNERS = {   # `<tool> run …` style environment runners -> options that take a value
    ("uv", "run"): frozenset({"--with", "--with-editable", "--with-requirements", "--python", "-p", "--project",
                              "--extra", "--group", "--package", "--env-file", "--index-url",
                              "--extra-index-url", "--index", "--only-group", "--no-group", "--prerelease",
                              "--resolution", "-C", "--config-setting", "--cache-dir", "--config-file",
                              "--exclude-newer", "--module", "--directory", "--default-index"}),
    ("uv", "tool"): frozenset({"--from", "--with", "--python", "-p"}),
    ("poetry", "run"): frozenset({"-C", "--directory", "-P", "--project"}),
    ("pdm", "run"): frozenset({"-p", "--project", "--venv"}),
    ("pipenv", "run"): frozenset(),
    ("hatch", "run"): frozenset(),
    ("rye", "run"): frozenset(),
    ("pixi", "run"): frozenset({"-e", "--environment", "--manifest-path"}),
    ("conda", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
    ("mamba", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
    ("micromamba", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
    ("pnpm", "exec"): frozenset({"-C", "--dir", "--filter", "-F"}),
    ("pnpm", "dlx"): frozenset({"--package"}),
    ("yarn", "exec"): frozenset(),
    ("yarn", "dlx"): frozenset({"-p", "--package"}),
    ("npm", "exec"): frozenset({"--package", "-p", "-w", "--workspace"}),
    ("bun", "x"): frozenset(),
    ("bundle", "exec"): frozenset({"--gemfile"}),
}
_X = {"npx": frozenset({"-p", "--package", "-c", "--call"}), "bunx": frozenset({"-p", "--package"}),
      "uvx": frozenset({"--from", "--with", "--python", "-p"}), "pipx": frozenset()}
_PM_BINS = frozenset({"jest", "vitest", "tsc", "vue-tsc", "eslint", "prettier", "mocha", "playwright",
                      "ts-node", "tsx", "biome", "esbuild", "webpack", "webpack-cli", "vite"})
_TIMEOUT_VALUED = frozenset({"-s", "--signal", "-k", "--kill-after"})
_PY_VALUED = frozenset({"-X", "-W", "-Q"})


def _skip_opts(words: list[Word], i: int, valued) -> int:
    """Index of the first non-option word from i, skipping options and their values."""
    while i < len(words):
        x = words[i].value
        if x == "--":
            return i + 1
        if not x.startswith("-") or x == "-":
            return i
        name = x.partition("=")[0]
        i += 2 if (name in valued and "=" not in x) else 1
    return i


def _text(words: list[Word]) -> str:
    return " ".join(w.text for w in words)


def unwrap(v: View, words: list[Word], known) -> tuple[list[Word], list[str], str | None]:
    """Peel wrappers off words. -> (remaining words, kept prefix tokens, nested code
    for `bash -c`).  `known` tells whether a bare tool name is one we analyze
    (an absolute path is only peeled for those)."""
    prefix: list[str] = []
    for _ in range(12):
        if not words:
            break
        name = words[0].value
        base = name.rsplit("/", 1)[-1] if "/" in name else name
        if "/" in name and base and known(base) and base not in ("gradlew", "mvnw"):
            v.routes.append("abs-path")
            v.wrappers.append(name)
            words = [lit(base)] + words[1:]
            name = base
        if name == "env":
            i = 1
            while i < len(words):
                x = words[i].value
                if x in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string") and i + 1 < len(words):
                    if x in ("-C", "--chdir"):
                        v.chdir = words[i + 1].value
                    i += 2
                elif x.startswith("-") or x == "--":
                    i += 1
                elif "=" in x and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", x):
                    v.env.append(x)
                    i += 1
                else:
                    break
            if i >= len(words):
                break   # bare `env`: prints the environment
            v.routes.append("env")
            v.wrappers.append(_text(words[:i]))
            words = words[i:]
            continue
        if name == "command" and len(words) > 1 and words[1].value in ("-v", "-V"):
            break
        if name in _SIMPLE or name == "/usr/bin/time":
            i = _skip_opts(words, 1, _SIMPLE.get(name, frozenset({"-f", "-o", "--format", "--output"})))
            if name == "time" and i < len(words) and words[i].value == "-p":
                i += 1
            if i >= len(words):
                break
            if name in ("command", "exec"):
                v.routes.append(name)
            v.wrappers.append(_text(words[:i]))
            words = words[i:]
            continue
        if name == "timeout":
            i = _skip_opts(words, 1, _TIMEOUT_VALUED)
            if i + 1 >= len(words):
                break
            v.wrappers.append(_text(words[:i + 1]))
            words = words[i + 1:]
            continue
        if name == "sudo":
            i = _skip_opts(words, 1, frozenset({"-u", "--user", "-g", "--group", "-C", "-D", "-h", "-p",
                                                "-r", "-t", "-U", "-T"}))
            if i >= len(words):
                break   # `sudo -k`, `sudo -v`: sudo itself is the command
            prefix += [w.text for w in words[:i]]
            words = words[i:]
            continue
        if len(words) > 1 and (name, words[1].value) in _RUNNERS:
            valued = _RUNNERS[(name, words[1].value)]
            start = 2
            if (name, words[1].value) == ("uv", "tool"):
                if len(words) < 3 or words[2].value != "run":
                    break
                start = 3
            i = _skip_opts(words, start, valued)
            for j in range(start, i):
                if words[j].value in ("--directory", "-C") and name in ("uv", "poetry") and j + 1 < i:
                    v.chdir = words[j + 1].value
            if i >= len(words):
                break
            if name == "hatch" and ":" in words[i].value and i + 1 < len(words):
                i += 1
            v.wrappers.append(_text(words[:i]))
            words = words[i:]
            continue
        if name in ("pnpm", "yarn") and len(words) > 1 and words[1].value in _PM_BINS:
            # `yarn jest …` runs the package's jest binary (no such script in practice)
            v.wrappers.append(name)
            words = words[1:]
            continue
        if name in _X:
            i = _skip_opts(words, 1, _X[name])
            for j in range(1, i):
                if words[j].value in ("-c", "--call") and j + 1 < len(words):
                    v.wrappers.append(_text(words[:j + 2]))
                    return words[j + 2:], prefix, words[j + 1].value
            if i >= len(words):
                break
            v.wrappers.append(_text(words[:i]))
            words = words[i:]
            continue
        if _PYTHON.match(base):
            # `python [opts] -m MOD`: -m is itself an option, find it explicitly.
            # Only then is the interpreter's path dropped (.venv/bin/python -m pytest
            # is pytest; .venv/bin/python script.py stays what it is).
            j = 1
            while j < len(words) and words[j].value.startswith("-") and words[j].value != "-m":
                j += 2 if words[j].value in _PY_VALUED else 1
            if j + 1 < len(words) and words[j].value == "-m" and words[j + 1].value in PY_MODULES:
                v.routes.append("python -m")
                v.wrappers.append(_text(words[:j + 1]))
                mod = words[j + 1].value
                words = [lit("pytest" if mod == "py.test" else mod)] + words[j + 2:]
                continue
            break
        if name in SHELLS:
            i = 1
            code_at = None
            while i < len(words):
                x = words[i].value
                if x in ("-o", "+o", "-O", "+O") and i + 1 < len(words):
                    i += 2
                    continue
                if x.startswith("-") and len(x) > 1 and not x.startswith("--") and "c" in x[1:]:
                    code_at = i + 1
                    break
                if x.startswith("-") or x.startswith("+"):
                    i += 1
                    continue
                break
            if code_at is not None and code_at < len(words):
                v.routes.append("bash -c")
                v.wrappers.append(_text(words[:code_at]))
                return words[code_at + 1:], prefix, words[code_at].value
            break
        break
    return words, prefix, None
