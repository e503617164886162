"""The safety plane's shared vocabulary: a broken rule (Finding) and the shell state that
flows along a command list (Ctx).  A leaf: the walker (shell.py) and the command handlers
(argv, cmds, files, readers, nested) all import it, and it imports nothing of theirs, so the
handlers never need the walker's module (they reach it through the `Scan` they are given).
Stdlib only.

Also the names of the shapes that flow between the lexer, the walker and the handlers (for
annotations only: see the TYPE_CHECKING block).
"""

from __future__ import annotations

# Annotation-only imports and names: the safety plane runs in the shim when the daemon is down
# (reflex.STDLIB_ONLY), where importing typing would cost milliseconds per hook; mypy reads
# the block as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    # One piece of a lexed word: (LIT | QLIT | GLOB | BRACE | TILDE | DYN | SUB, text, extra);
    # the text is None for SUB and the extra depends on the kind (reflex.safety.lex).
    Part = tuple[int, Any, Any]
    Word = list[Part]
    # ("w", parts) | ("op", text) | ["r", op, fd, target parts, heredoc body, quoted, delimiter,
    # heredoc subs]: a sequence whose first item names its kind (reflex.safety.lex).
    Token = Sequence[Any]
    # One value of a word after expansion: pieces ("lit" | "glob" | "any", text) (reflex.safety.words).
    Piece = tuple[str, str]
    Variant = tuple[Piece, ...]
    # The previous stage of a pipeline: its words and its redirects.
    Stage = tuple[list[Word], list[Token]]
    # The policy's allow list, compiled: does it allow this path (or pattern)?
    Allowed = Callable[[str], bool]


class Finding:
    """One broken rule: rule id, target path (or pattern), the word as written, verb, kind."""

    __slots__ = ("kind", "rule", "shown", "target", "verb")

    def __init__(self, rule: str, target: str, shown: str, verb: str, kind: str) -> None:
        self.rule = rule
        self.target = target
        self.shown = shown
        self.verb = verb
        self.kind = kind


class Ctx:
    """Shell state that flows along a command list: working directory and known variables."""

    __slots__ = ("cwd", "vars")

    def __init__(self, cwd: str | None, variables: dict[str, list[Variant]]) -> None:
        self.cwd = cwd
        self.vars = variables

    def copy(self) -> Ctx:
        return Ctx(self.cwd, dict(self.vars))
