"""A small bash lexer for the safety plane (stdlib only, never raises except `Overflow`).

The safety checks must see what bash will see: quote removal (`'.e'nv`, `.\\env`,
`$'\\x2eenv'`), command and process substitutions (`$(cat .env)`, `<(cat .env)`),
redirects (`< .env`, `> ~/.zshrc`) and heredocs. A word is kept as a list of *parts* so
the analyser can tell literal text from unquoted glob characters and from expansions
whose value is unknown:

    (LIT, text, None)      literal text; QLIT marks text that came from quotes/escapes
    (GLOB, text, None)     an unquoted `*`, `?` or `[...]`
    (BRACE, ch, None)      an unquoted `{`, `,` or `}` (brace expansion is done later)
    (TILDE, user, None)    an unquoted `~` / `~user` at the start of a word
    (DYN, name, info)      `$name`, `${name}`, `${name:-default}`: info = (quoted, default)
    (SUB, None, tokens)    `$(...)`, backticks or `<(...)`: tokens of the inner command

Tokens are ``("w", parts)``, ``("op", text)`` and redirects
``["r", op, fd, target_parts, heredoc_body, heredoc_quoted, heredoc_delim, heredoc_subs]``
(a list: a heredoc body is filled in when the lexer reaches the end of its line; the subs
are the SUB parts an unquoted body expands). A DYN part's third field is
``(quoted, default_parts_or_None)``.

Work is capped: more than `MAX_TOKENS` tokens or `MAX_DEPTH` nested substitutions raise
`Overflow`, which the caller turns into a conservative decision.
"""

from __future__ import annotations

import re

from reflex.errors import CtxError

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from reflex.safety.model import Part, Token

LIT, QLIT, GLOB, BRACE, TILDE, DYN, SUB = range(7)

MAX_DEPTH = 12
MAX_TOKENS = 20000


class Overflow(CtxError):
    """The command is too large or too deeply nested to analyse within budget."""


class Budget:
    __slots__ = ("tokens",)

    def __init__(self) -> None:
        self.tokens = 0

    def spend(self, n: int = 1) -> None:
        self.tokens += n
        if self.tokens > MAX_TOKENS:
            raise Overflow("too many tokens")


_PLAIN = re.compile(r"[^\s|&;<>()'\"\\$`*?\[{},~]+")
_DQ_PLAIN = re.compile(r'[^\\$`"]+')
_HD_PLAIN = re.compile(r"[^\\$`]+")
_TILDE = re.compile(r"~([A-Za-z0-9_.\-]*)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FD = re.compile(r"[0-9]+(?=[<>])")
_OP = re.compile(r";;&|;;|;&|;|&&|&>>|&>|&|\|\||\|&|\||<<<|<<-|<<|<>|<&|<|>>|>&|>\||>|\(|\)")
_BRACKET = re.compile(r"\[!?\]?[^\]\s|&;<>()'\"]*\]")
_PARAM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!\-])")
_ANSI = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
                "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}

REDIRECT_OPS = frozenset({"<", ">", ">>", ">|", "<>", "<<", "<<-", "<<<", "<&", ">&", "&>", "&>>"})
_WORD_END = frozenset(" \t\n\r\f\v|&;<>()")


def lex(s: str, budget: Budget | None = None, depth: int = 0) -> list[Token]:
    """Tokens of the whole string `s` (see module docstring)."""
    toks, _ = _lex(s, 0, depth, budget or Budget(), False)
    return toks


def _lex(s: str, i: int, depth: int, budget: Budget, in_paren: bool) -> tuple[list[Token], int]:
    if depth > MAX_DEPTH:
        raise Overflow("nesting too deep")
    n = len(s)
    toks: list[Token] = []
    pending: list[list[Any]] = []  # heredoc redirect tokens waiting for their body
    while i < n:
        c = s[i]
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "\n":
            toks.append(("op", "\n"))
            i += 1
            if pending:
                i = _heredoc_bodies(s, i, pending, depth, budget)
                pending = []
            continue
        if c == "#":
            j = s.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "\\" and s.startswith("\n", i + 1):
            i += 2
            continue
        budget.spend()
        if c in "|&;()" or (c in "<>" and not s.startswith("(", i + 1)):
            if c == ")" and in_paren:
                if pending:
                    _heredoc_bodies(s, n, pending, depth, budget)
                return toks, i + 1
            op = _OP.match(s, i).group()  # type: ignore[union-attr]  # every character of "|&;()<>" starts an operator
            i += len(op)
            if op in REDIRECT_OPS:
                i = _redirect(s, i, op, None, toks, pending, depth, budget)
            else:
                toks.append(("op", op))
            continue
        m = _FD.match(s, i)
        if m and not s.startswith("(", m.end() + 1):
            op = _OP.match(s, m.end()).group()  # type: ignore[union-attr]  # _FD ends before a "<" or ">"
            i = _redirect(s, m.end() + len(op), op, int(m.group()[:6]), toks, pending, depth, budget)
            continue
        parts, i = _word(s, i, depth, budget)
        toks.append(("w", parts))
    if pending:
        _heredoc_bodies(s, n, pending, depth, budget)
    return toks, i


def _redirect(s: str, i: int, op: str, fd: int | None, toks: list[Token], pending: list[list[Any]], depth: int,
              budget: Budget) -> int:
    n = len(s)
    while i < n and s[i] in " \t":
        i += 1
    if i >= n or s[i] in "\n|&;()" or (s[i] in "<>" and not s.startswith("(", i + 1)):
        toks.append(["r", op, fd, None, None, False, None, ()])
        return i
    start = i
    parts, i = _word(s, i, depth, budget)
    tok: list[Any] = ["r", op, fd, parts, None, False, None, ()]
    if op in ("<<", "<<-"):
        raw = s[start:i]
        tok[3] = None
        tok[5] = any(q in raw for q in "'\"\\")
        tok[6] = "".join(p[1] if p[0] != TILDE else "~" + p[1] for p in parts if p[0] in (LIT, QLIT, BRACE, TILDE))
        pending.append(tok)
    toks.append(tok)
    return i


def _heredoc_bodies(s: str, i: int, pending: list[list[Any]], depth: int, budget: Budget) -> int:
    """Read the bodies of the heredocs opened on the line that just ended."""
    n = len(s)
    for tok in pending:
        delim = tok[6] or ""
        strip_tabs = tok[1] == "<<-"
        lines_start = i
        end = n
        nxt = n
        while i < n:
            j = s.find("\n", i)
            line_end = n if j < 0 else j
            line = s[i:line_end]
            if strip_tabs:
                line = line.lstrip("\t")
            if line == delim:
                end = i
                nxt = n if j < 0 else j + 1
                break
            i = n if j < 0 else j + 1
        else:
            end = n
            nxt = n
        body = s[lines_start:end]
        tok[4] = body
        if not tok[5] and ("$" in body or "`" in body):
            # An unquoted heredoc expands substitutions before the command reads it.
            parts: list[Part] = []
            _dq(body, 0, parts, depth, budget, _HD_PLAIN, None)
            tok[7] = tuple(p for p in parts if p[0] == SUB)
        i = nxt
    return i


def _word(s: str, i: int, depth: int, budget: Budget) -> tuple[list[Part], int]:
    """Lex one word starting at `i`; returns (parts, index after the word)."""
    n = len(s)
    parts: list[Part] = []
    while i < n:
        c = s[i]
        if c in _WORD_END:
            if c in "<>" and s.startswith("(", i + 1):
                toks, i = _lex(s, i + 2, depth + 1, budget, True)
                parts.append((SUB, None, toks))
                continue
            break
        m = _PLAIN.match(s, i)
        if m:
            parts.append((LIT, m.group(), None))
            i = m.end()
            continue
        if c == "'":
            j = s.find("'", i + 1)
            if j < 0:
                j = n
            parts.append((QLIT, s[i + 1:j], None))
            i = j + 1
        elif c == '"':
            i = _dq(s, i + 1, parts, depth, budget, _DQ_PLAIN, '"')
        elif c == "\\":
            if i + 1 < n:
                if s[i + 1] != "\n":
                    parts.append((QLIT, s[i + 1], None))
                i += 2
            else:
                i += 1
        elif c == "$":
            i = _dollar(s, i, parts, depth, budget, False)
        elif c == "`":
            i = _backtick(s, i, parts, depth, budget)
        elif c in "*?":
            parts.append((GLOB, c, None))
            i += 1
        elif c == "[":
            m = _BRACKET.match(s, i)
            if m and m.end() - i > 2:
                parts.append((GLOB, m.group(), None))
                i = m.end()
            else:
                parts.append((LIT, "[", None))
                i += 1
        elif c in "{},":
            parts.append((BRACE, c, None))
            i += 1
        elif c == "~":
            if not parts or (len(parts) == 1 and parts[0][0] == LIT and parts[0][1].endswith("=")):
                tm = _TILDE.match(s, i)
                assert tm is not None  # _TILDE matches any "~"
                end = tm.end()
                if end >= n or s[end] == "/" or s[end] in _WORD_END or s[end] == ":":
                    parts.append((TILDE, tm.group(1), None))
                    i = end
                    continue
            parts.append((LIT, "~", None))
            i += 1
        else:  # pragma: no cover - every character class is handled above
            parts.append((LIT, c, None))
            i += 1
    return parts, i


def _dq(s: str, i: int, parts: list[Part], depth: int, budget: Budget, plain: re.Pattern[str],
        end: str | None) -> int:
    """Double-quoted text from `i` (or a whole unquoted heredoc body when end is None)."""
    n = len(s)
    while i < n:
        c = s[i]
        if c == end:
            return i + 1
        if c == "\\":
            nx = s[i + 1:i + 2]
            if nx and nx in "$`\"\\\n" and (end is not None or nx != '"'):
                if nx != "\n":
                    parts.append((QLIT, nx, None))
                i += 2
            else:
                parts.append((QLIT, "\\", None))
                i += 1
        elif c == "$":
            i = _dollar(s, i, parts, depth, budget, True)
        elif c == "`":
            i = _backtick(s, i, parts, depth, budget)
        else:
            m = plain.match(s, i)
            if m:
                parts.append((QLIT, m.group(), None))
                i = m.end()
            else:
                parts.append((QLIT, c, None))
                i += 1
    return n


def _dollar(s: str, i: int, parts: list[Part], depth: int, budget: Budget, quoted: bool) -> int:
    n = len(s)
    nx = s[i + 1:i + 2]
    if nx == "(":
        if s.startswith("((", i + 1):
            j = _match_close(s, i + 3, "(", ")", 2)
            parts.append((DYN, "", (quoted, None)))
            return j
        toks, j = _lex(s, i + 2, depth + 1, budget, True)
        parts.append((SUB, None, toks))
        return j
    if nx == "{":
        j = _match_close(s, i + 2, "{", "}", 1)
        inner = s[i + 2:j - 1] if s[j - 1:j] == "}" else s[i + 2:j]
        _param(inner, parts, depth, budget, quoted)
        return j
    if nx == "'" and not quoted:
        j = i + 2
        while j < n and s[j] != "'":
            j += 2 if s[j] == "\\" else 1
        parts.append((QLIT, _ansi_c(s[i + 2:min(j, n)]), None))
        return j + 1
    if nx == '"' and not quoted:
        return _dq(s, i + 2, parts, depth, budget, _DQ_PLAIN, '"')
    m = _NAME.match(s, i + 1)
    if m:
        parts.append((DYN, m.group(), (quoted, None)))
        return m.end()
    if nx and nx in "@*#?$!-0123456789":
        parts.append((DYN, nx, (quoted, None)))
        return i + 2
    parts.append((QLIT if quoted else LIT, "$", None))
    return i + 1


def _param(inner: str, parts: list[Part], depth: int, budget: Budget, quoted: bool) -> None:
    m = _PARAM.match(inner)
    if m and (m.end() == len(inner) or (inner[m.end()] == "[" and inner.endswith("]"))):
        parts.append((DYN, m.group(), (quoted, None)))   # ${x} or an element of array x
        return
    if m:
        rest = inner[m.end():]
        for op in (":-", ":=", "-", "="):
            if rest.startswith(op):
                dparts, _ = _word_all(rest[len(op):], depth, budget)
                parts.append((DYN, m.group(), (quoted, dparts)))
                return
    # Anything else (${#x}, ${x/a/b}, ${!x}) has an unknowable value, but any substitution
    # inside it still runs.
    if "$" in inner or "`" in inner:
        sub: list[Part] = []
        _dq(inner, 0, sub, depth, budget, _HD_PLAIN, None)
        parts.extend(p for p in sub if p[0] == SUB)
    parts.append((DYN, "", (quoted, None)))


def _word_all(text: str, depth: int, budget: Budget) -> tuple[list[Part], int]:
    """Parts of `text` lexed as one word that may contain blanks (a ${x:-default})."""
    parts: list[Part] = []
    i = 0
    n = len(text)
    while i < n:
        p, j = _word(text, i, depth, budget)
        parts.extend(p)
        if j < n:
            parts.append((QLIT, text[j], None))
            j += 1
        i = j
    return parts, n


def _backtick(s: str, i: int, parts: list[Part], depth: int, budget: Budget) -> int:
    n = len(s)
    j = i + 1
    buf = []
    while j < n and s[j] != "`":
        if s[j] == "\\" and j + 1 < n and s[j + 1] in "`\\$":
            buf.append(s[j + 1])
            j += 2
        else:
            buf.append(s[j])
            j += 1
    toks, _ = _lex("".join(buf), 0, depth + 1, budget, False)
    parts.append((SUB, None, toks))
    return j + 1


def _match_close(s: str, i: int, open_ch: str, close_ch: str, count: int) -> int:
    """Index just past the `count` closing characters that balance the ones already open."""
    n = len(s)
    level = count
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and open_ch == "{":
            j = s.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == open_ch:
            level += 1
        elif c == close_ch:
            level -= 1
            if level <= 0:
                return i + 1
        i += 1
    return n


def _ansi_c(body: str) -> str:
    def repl(m: re.Match[str]) -> str:
        e = m.group(1)
        h = e[0]
        try:
            if h == "x":
                return chr(int(e[1:], 16))
            if h in "uU":
                return chr(min(int(e[1:], 16), 0x10FFFF))
            if h in "01234567":
                return chr(int(e, 8) & 0xFF)
        except ValueError:
            return e
        if h == "c":
            return chr(ord(e[1]) & 0x1F)
        return _ANSI_SIMPLE.get(e, "\\" + e)

    return _ANSI.sub(repl, body)


def literal(parts: Sequence[Part]) -> str | None:
    """The value of a word made only of literal parts, else None."""
    out = []
    for kind, text, _ in parts:
        if kind in (LIT, QLIT, BRACE):
            out.append(text)
        else:
            return None
    return "".join(out)


def plain_literal(parts: Sequence[Part]) -> str | None:
    """The text of a word of unquoted literal parts only (reserved words), else None."""
    if len(parts) == 1 and parts[0][0] in (LIT, BRACE):
        text: str = parts[0][1]
        return text
    return None
