"""What one simple command amounts to, before the chain is assembled.

A View is the working record each tool analyzer fills in: the canonical
tokens of its core, the scope tokens it selected, the presentation it
stripped, the files it touches.  chain.py turns Views into Signatures.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class View:
    family: str = "other"
    subcommand: str = ""
    words: list = field(default_factory=list)      # canonical core tokens (rendered)
    unscoped: list | None = None                   # core tokens minus scope tokens; None: same as words
    decorations: list = field(default_factory=list)
    scope: list = field(default_factory=list)
    reads: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    routes: list = field(default_factory=list)     # wrapper_route entries
    wrappers: list = field(default_factory=list)   # stripped wrappers as written
    env: list = field(default_factory=list)        # stripped NAME=value
    chdir: str | None = None                       # a -C DIR the tool itself applies
    heredocs: list = field(default_factory=list)   # rendered heredoc bodies (body + delimiter)
    nested: object = None                          # chain result of `bash -c CODE`
    trivial: bool = False                          # status echo, env setup: dropped from a chain's core
    cd: str | None = None                          # target of a cd/pushd
    executes: str | None = None                    # a script file this command runs
    argv: list = field(default_factory=list)       # [Word] after unwrapping (slicers need them)
    name: str = ""                                 # the tool name after unwrapping
    cwd: str | None = None                         # set by a nested `bash -c 'cd x && …'`
