"""The values a signature is made of: Signature and its typed parts.

A Signature says what a shell command *is* for every later decision: its
family, its canonical core (wrappers and presentation removed) and the hash
of that core in its effective working directory, the presentation that was
stripped (decorations: each one says what the agent was looking for), the
scope it selects, the files it reads and writes, and one Signature per
segment of a chain.  All values are frozen, hashable and JSON-able; the JSON
field names are a contract (`ctx signature --json`, ledgers, evaluations).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Decoration:
    """One stripped piece of presentation: a slicer (`tail 20`), a display flag
    (`tb long`, `verbose 2`) or a presentation redirect (`redirect 2>&1`)."""
    kind: str
    value: str = ""
    flags: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"kind": self.kind, "value": self.value, "flags": list(self.flags)}


@dataclass(frozen=True, slots=True)
class ScopeItem:
    """One selector of what a command runs: kind is path (file, directory,
    package or node id), keyword (-k), marker (-m/--only), name (-run, -t,
    --tests, a cargo filter), skip, exitfirst (-x, --maxfail, -failfast),
    last-failed, package or target."""
    kind: str
    value: str = ""

    def to_json(self) -> dict:
        return {"kind": self.kind, "value": self.value}


@dataclass(frozen=True, slots=True)
class FileRef:
    """A file a command reads or writes; `lines` is the line range when the
    command names one: "10-40", "80-" (to the end), "last:20", "bytes:1-100"."""
    path: str
    lines: str = ""

    def to_json(self) -> dict:
        return {"path": self.path, "lines": self.lines}


@dataclass(frozen=True, slots=True)
class Signature:
    family: str
    core: str
    core_hash: str
    raw: str
    decorations: tuple[Decoration, ...] = ()
    scope: tuple[ScopeItem, ...] = ()
    reads: tuple[FileRef, ...] = ()
    writes: tuple[FileRef, ...] = ()
    segments: tuple["Signature", ...] = ()
    cwd: str | None = None
    wrapper_route: tuple[str, ...] = ()
    # Extra fields (not in the original contract, stable from here on):
    subcommand: str = ""            # git/cargo/npm... subcommand or script name
    unscoped: str = ""              # core with the main command's scope removed
    wrappers: tuple[str, ...] = ()  # stripped wrappers as written: "timeout 60", "uv run"
    env: tuple[str, ...] = ()       # stripped environment assignments: "CI=1"
    op: str = ""                    # for a segment: the operator before it (&&, ||, ;, |, &)
    parser: str = "tree-sitter"     # tree-sitter | shlex | raw: which reading produced this

    def to_json(self) -> dict:
        return {
            "family": self.family,
            "core": self.core,
            "core_hash": self.core_hash,
            "raw": self.raw,
            "decorations": [d.to_json() for d in self.decorations],
            "scope": [s.to_json() for s in self.scope],
            "reads": [r.to_json() for r in self.reads],
            "writes": [w.to_json() for w in self.writes],
            "segments": [s.to_json() for s in self.segments],
            "cwd": self.cwd,
            "wrapper_route": list(self.wrapper_route),
            "subcommand": self.subcommand,
            "unscoped": self.unscoped,
            "wrappers": list(self.wrappers),
            "env": list(self.env),
            "op": self.op,
            "parser": self.parser,
        }


def core_hash(cwd: str | None, core: str) -> str:
    """Stable across processes and Python versions (no `hash()`): blake2b of
    the effective cwd and the core, 16 hex digits."""
    data = ((cwd or "") + "\x00" + core).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=8).hexdigest()
