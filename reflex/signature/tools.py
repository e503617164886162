"""Tools that are not test runners but whose output ctx digests: gh, package installs, listings, linters.

Called for a simple command no runner claimed (family "other"): sets the family and the
subcommand from the tool's name and its leading words.  Pure, like the rest of the package.

- gh: `gh run view`, `gh pr checks`, … (subcommand: the two leading words, "run view").
- pkg-install: npm/pnpm/yarn/bun install|ci|add (bare `yarn` installs too), pip/pip3 install,
  `python -m pip install`, `uv pip install`, `uv sync`, `uv add`, `cargo fetch`,
  `go mod download|tidy`, `go get`, apt-get/apt install (subcommand: the installing verb).
- listing: ls, tree.
- golangci-lint: `golangci-lint run`.
"""

from __future__ import annotations

from reflex.signature.view import View

_JS_INSTALL = {"npm": frozenset({"install", "i", "in", "ci", "add", "isntall"}),
               "pnpm": frozenset({"install", "i", "add"}),
               "yarn": frozenset({"install", "add"}),
               "bun": frozenset({"install", "i", "add"})}
_APT = frozenset({"apt-get", "apt"})
_PIP = frozenset({"pip", "pip3"})
LISTERS = frozenset({"ls", "tree"})


def _operands(values: list[str]) -> list[str]:
    return [a for a in values if not a.startswith("-")]


def install_verb(name: str, values: list[str]) -> str | None:
    """The installing verb of a package-manager command (`install`, `ci`, `sync`, `mod tidy`…), or None."""
    ops = _operands(values)
    first = ops[0] if ops else ""
    if name in _JS_INSTALL:
        if first in _JS_INSTALL[name]:
            return first
        return "install" if name == "yarn" and not values else None
    if name in _PIP:
        return "install" if first == "install" else None
    if name in ("python", "python3") and values[:2] == ["-m", "pip"]:
        return "install" if _operands(values[2:])[:1] == ["install"] else None
    if name == "uv":
        if ops[:2] == ["pip", "install"]:
            return "pip install"
        return first if first in ("sync", "add") else None
    if name == "cargo":
        return "fetch" if first == "fetch" else None
    if name == "go":
        if ops[:1] == ["mod"] and len(ops) > 1 and ops[1] in ("download", "tidy"):
            return "mod " + ops[1]
        return "get" if first == "get" else None
    if name in _APT:
        return "install" if first == "install" else None
    return None


def classify(v: View, name: str, values: list[str]) -> None:
    """Set v.family (and v.subcommand) for the tools this module knows; others stay "other"."""
    if name == "gh":
        ops = _operands(values)
        v.family = "gh"
        v.subcommand = " ".join(ops[:2])
        return
    verb = install_verb(name, values)
    if verb is not None:
        v.family = "pkg-install"
        v.subcommand = verb
        return
    if name in LISTERS:
        v.family = "listing"
        v.subcommand = name
        return
    if name == "golangci-lint":
        v.family = "golangci-lint"
        v.subcommand = _operands(values)[0] if _operands(values) else ""
