"""Words after expansion, for the safety plane (stdlib only).

An `Arg` is one shell word after bash-like expansion, kept as *variants*: tuples of pieces
("lit", text) | ("glob", `*`/`?`/`[...]`) | ("any", "") — "any" is a value the analysis
cannot know (an unset variable, `$(some command)`). A word has several variants when brace
expansion (`.{e,x}nv`), a for-loop variable or an array gives it several values. Also here:
the command-name normalization (`/usr/bin/python3.11` -> python), assignment detection,
the paths a word may name (`x=PATH`, `@PATH`, `rev:PATH`), and the known output of simple
substitutions (`$(echo .env)`).
"""

from __future__ import annotations

from reflex.safety import lex as L
from reflex.safety.paths import basename_kind

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Literal

    from reflex.safety.model import Part, Piece, Token, Variant

MAX_VARIANTS = 32      # brace/variable alternatives considered per word

# The value of `$(some command)` or of `read VAR`: unknown, and printed by a program, so it
# can be any file name at all (`cat $(printf '.%s' env)`). Kept apart from an unknown
# variable (("any", "")) because the walker treats a read of it as a read of anything.
FROM_OUTPUT: Piece = ("any", "$(")



class Arg:
    """One word after expansion: its variants (tuples of ("lit"|"glob"|"any", text))."""

    __slots__ = ("dyn", "listing", "static", "variants")

    def __init__(self, variants: list[Variant], dyn: bool = False) -> None:
        self.variants = variants
        self.dyn = dyn
        # names printed by a listing (`$(find DIR)`): that DIR, or None (unknown); False: not a listing
        self.listing: str | None | Literal[False] = False
        self.static: str | None = None
        if len(variants) == 1:
            v = variants[0]
            if not v:
                self.static = ""
            elif len(v) == 1 and v[0][0] == "lit":
                self.static = v[0][1]

    @classmethod
    def of(cls, text: str) -> Arg:
        return cls([(("lit", text),)])

    def from_output(self) -> bool:
        """True when some value of this word was printed by a program (see FROM_OUTPUT)."""
        return any(FROM_OUTPUT in v for v in self.variants)

    def text(self) -> str:
        v: Variant = self.variants[0] if self.variants else ()
        return "".join(t if k != "any" else "*" for k, t in v)


def command_name(word: str) -> str:
    """Normalized command name: basename, lower case, version suffix dropped."""
    name = word.rsplit("/", 1)[-1].lower()
    for base in ("python", "pypy", "perl", "ruby", "node", "php", "lua", "bash", "zsh", "pip"):
        if name.startswith(base) and len(name) > len(base) and all(c in "0123456789." for c in name[len(base):]):
            return base
    return name


def is_assignment(parts: Sequence[Part]) -> bool:
    if not parts or parts[0][0] != L.LIT:
        return False
    head: str = parts[0][1]
    eq = head.find("=")
    if eq <= 0:
        return False
    name = head[:eq].rstrip("+")
    if "[" in name:
        name = name[:name.find("[")]
    return name.isidentifier() and name.isascii()


def static_text(v: Variant) -> str | None:
    """The text of a variant made of literal text only, else None."""
    if not v:
        return ""
    if len(v) == 1 and v[0][0] == "lit":
        return v[0][1]
    return None


def merge_pieces(pieces: Iterable[Piece] | Iterable[list[str]]) -> Variant:
    """Join adjacent literal pieces and drop empty ones (one canonical form per variant)."""
    out: list[Piece] = []
    for k, t in pieces:
        if k == "lit" and out and out[-1][0] == "lit":
            out[-1] = ("lit", out[-1][1] + t)
        elif k == "lit" and not t:
            continue
        else:
            out.append((k, t))
    return tuple(out)


def path_candidates(s: str, dyn: bool) -> list[str]:
    """Path strings a word may name: itself, `x=PATH`, `@PATH`, `host:PATH`/`PATH:dst`."""
    out = [s]
    if "=" in s and not s.startswith("="):
        out.append(s.split("=", 1)[1])
    for c in list(out):
        if len(c) > 1 and c[0] in "@<":
            out.append(c[1:])
    for c in list(out):
        if ":" in c and "://" not in c:
            a, _, b = c.partition(":")
            out.append(a)
            out.append(b)
    if dyn and any(ch.isspace() for ch in s):
        out.extend(s.split())
    if len(out) > 1:
        out.append(out.pop(0))   # prefer the path inside `x=PATH` / `rev:PATH` as the target
    return out


def sub_value(toks: Sequence[Token]) -> str | None:
    """The output of `$(echo WORDS)` / `$(printf FMT ARGS)` when it is literal, else None."""
    words = []
    for t in toks:
        if t[0] != "w":
            return None
        lit = L.literal(t[1])
        if lit is None:
            return None
        words.append(lit)
    if not words:
        return None
    name = command_name(words[0])
    args = words[1:]
    if name == "echo":
        while args and args[0] in ("-n", "-e", "-E"):
            args = args[1:]
        return " ".join(args)
    if name == "printf" and args:
        fmt = args[0]
        if "%" not in fmt and "\\" not in fmt:
            return fmt
        if fmt == "%s":
            return "".join(args[1:])
    return None


# Programs whose output is a list of file names.
LISTERS = frozenset({"find", "fd", "fdfind", "ls", "tree", "locate"})


def listing_dir(toks: Sequence[Token]) -> str | None | Literal[False]:
    """For `$(find DIR ...)`, `$(git ls-files)`, `$(grep -rl KEY DIR)`, `$(rg --files)`: the
    directory the listed names come from ("" for the cwd, None when unknown); False when the
    substitution does not print file names."""
    words = [L.literal(t[1]) if t[0] == "w" else None for t in toks if t[0] != "r"]
    if not words or words[0] is None:
        return False
    name = command_name(words[0])
    rest = [w for w in words[1:]]
    if name == "git":
        return "" if any(w in ("ls-files", "ls-tree", "diff") for w in rest if w) else False
    if name in ("grep", "rg", "ag"):
        if not any(w and (w in ("-l", "--files", "--files-with-matches", "-L") or
                          (w.startswith("-") and not w.startswith("--") and "l" in w)) for w in rest):
            return False
        return ""
    if name not in LISTERS:
        return False
    for w in rest:
        if w is None:
            return None
        if w.startswith("-"):
            if name == "find":
                break
            continue
        return w
    return ""


def secret_words(toks: Sequence[Token]) -> list[str]:
    """Literal words of a substitution's command that name secret files (at most 4)."""
    out = []
    for t in toks:
        if t[0] == "w":
            lit = L.literal(t[1])
            if lit and basename_kind(lit.rstrip("*").rsplit("/", 1)[-1]):
                out.append(lit.rstrip("*"))
                if len(out) == 4:
                    break
    return out


def expand_braces(parts: list[Part], depth: int) -> list[list[Part]]:
    """Brace-expand a word's parts (`.{e,x}nv`); `{a..b}` becomes an unknown value."""
    if depth > 6:
        return [parts]
    for i, p in enumerate(parts):
        if p[0] != L.BRACE or p[1] != "{":
            continue
        level = 0
        commas = []
        close: int | None = None
        for j in range(i + 1, len(parts)):
            q = parts[j]
            if q[0] != L.BRACE:
                continue
            if q[1] == "{":
                level += 1
            elif q[1] == "}":
                if level == 0:
                    close = j
                    break
                level -= 1
            elif level == 0:
                commas.append(j)
        if close is None:
            return [parts]
        if not commas:
            inner = L.literal(parts[i + 1:close])
            if inner and ".." in inner:
                return expand_braces(parts[:i] + [(L.DYN, "", (False, None))] + parts[close + 1:], depth + 1)
            continue
        out: list[list[Part]] = []
        bounds = [i] + commas + [close]
        for a, b in zip(bounds, bounds[1:]):
            for alt in expand_braces(parts[:i] + parts[a + 1:b] + parts[close + 1:], depth + 1):
                out.append(alt)
                if len(out) >= MAX_VARIANTS:
                    return out
        return out
    return [parts]
