"""Reading a shell command into a flat stream of simple commands and operators.

The rest of the signature code never sees a parse tree: it sees a list whose
items are `Command`s, operator strings (`&&`, `||`, `;`, `|`, `|&`, `&`) and
the subshell markers `PUSH`/`POP` (a `cd` inside `( … )` does not leak out).
Flattening the tree this way also absorbs tree-sitter-bash's quirks: it binds
`a && b | c` as `(a && b) | c`, puts a redirect written after the last
command of a pipeline on the whole pipeline, and hangs `&& next` written on a
heredoc's first line inside the heredoc node.  Bash attaches those redirects
to the last command and runs the text in order, and so does this stream.

Three readings, best first, chosen per command:
1. tree-sitter-bash (heredocs, `$( )`, `[[ ]]`, quoting exactly);
2. `shlex` with punctuation_chars, when the tree has errors;
3. none (`read` returns None): the caller keeps the raw string.
Work is capped so no input takes long: shapes tree-sitter is quadratic on
are not given to it (`_risky`), the parse has a time budget, the walk a node
budget, shlex a size budget, and a reading with more than MAX_COMMANDS simple
commands is kept raw.
"""

from __future__ import annotations

import re
import shlex
import threading
import time
from dataclasses import dataclass, field
from typing import NamedTuple

PUSH = "("
POP = ")"
OPS = frozenset({"&&", "||", ";", "|", "|&", "&"})
_REDIRECT_NODES = ("file_redirect", "herestring_redirect", "heredoc_redirect")

# Budgets (see module docstring).  Small inputs are parsed directly: the
# progress callback that makes a parse cancellable triples its cost.  Error
# recovery on runs of pipes is quadratic (2 KB of `x|` takes 25 ms), so those
# always get the cancellable parse.
DIRECT_PARSE_BYTES = 2048
DIRECT_PARSE_PIPES = 32
MAX_PARSE_BYTES = 512 * 1024
PARSE_BUDGET_S = 0.006
MAX_NODES = 6000
MAX_SHLEX_CHARS = 4096
MAX_COMMANDS = 200        # more simple commands than any agent writes: keep the raw string


class Word(NamedTuple):
    """One shell word: `value` is its text with quoting removed (best effort
    when it holds expansions), `text` its canonical rendering: a literal word
    is re-quoted with shlex.quote, anything holding an expansion, a glob or a
    leading `~` is kept verbatim so its meaning survives."""
    value: str
    text: str
    literal: bool = True


_SAFE = re.compile(r"[\w@%+=:,./-][\w@%+=:,./#-]*", re.ASCII)   # '#' starts a comment only at a word start


def quote(s: str) -> str:
    """shlex.quote, but a value holding single quotes and nothing special to
    double quotes is written "like this" rather than 'like'"'"'this'."""
    if not s:
        return "''"
    if _SAFE.fullmatch(s) or ("~" in s and _SAFE.fullmatch(s.replace("~", "_"))
                              and s[0] != "~" and ":~" not in s and "=~" not in s):
        return s   # a `~` is only expanded at a word's start (or after : and = in assignments)
    if "'" not in s:
        return "'" + s + "'"
    if not any(c in s for c in '"$`\\!'):
        return '"' + s + '"'
    return "'" + s.replace("'", "'\"'\"'") + "'"


def lit(value: str) -> Word:
    return Word(value, quote(value), True)


@dataclass(slots=True)
class Redirect:
    fd: str           # "" for the default descriptor
    op: str           # > >> < &> &>> >& <& >| <<<
    target: Word | None


@dataclass(slots=True)
class Heredoc:
    op: str           # << or <<-
    delim: str
    quoted: bool
    body: str         # text between the line after the operator and the delimiter


@dataclass(slots=True)
class Command:
    words: list = field(default_factory=list)     # [Word]
    assigns: list = field(default_factory=list)   # [Word] leading NAME=value
    redirs: list = field(default_factory=list)    # [Redirect | Heredoc] in source order
    opaque: str | None = None                     # a compound statement, kept as text
    inner: list = field(default_factory=list)     # simple commands inside an opaque one
    source: str = ""                              # the command's own text, as written


# ---------------------------------------------------------------- tree-sitter

_local = threading.local()   # a tree-sitter Parser is not thread-safe


def _parser():
    p = getattr(_local, "parser", None)
    if p is None:
        try:
            import tree_sitter
            import tree_sitter_bash
            p = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        except Exception:  # missing or broken wheel: shlex is the reading then
            p = False
        _local.parser = p
    return p


_HEREDOC_OP = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_.-]*)\1")
RISKY_PIPES = 64
RISKY_PARENS = 128
RISKY_REDIRECTS = 256
RISKY_OUTSIDE_HEREDOCS = 32 * 1024


def _risky(text: str) -> bool:
    """Shapes tree-sitter-bash recovers from in quadratic time (long runs of
    `|`, of `(` or `)`), counted outside heredoc bodies (markdown tables and
    Python in a heredoc are harmless)."""
    if (len(text) <= RISKY_OUTSIDE_HEREDOCS and text.count("|") <= RISKY_PIPES
            and text.count("(") <= RISKY_PARENS and text.count(")") <= RISKY_PARENS
            and text.count(">") + text.count("<") <= RISKY_REDIRECTS):
        return False
    kept, pos = [], 0
    for _ in range(32):
        m = _HEREDOC_OP.search(text, pos)
        if not m:
            break
        nl = text.find("\n", m.end())
        if nl < 0:
            break
        end = re.compile(r"^\t*" + re.escape(m.group(2)) + r"$", re.M).search(text, nl + 1)
        kept.append(text[pos:nl])
        pos = end.end() if end else len(text)
    kept.append(text[pos:])
    rest = "".join(kept)
    return (len(rest) > RISKY_OUTSIDE_HEREDOCS or rest.count("|") > RISKY_PIPES
            or rest.count("(") > RISKY_PARENS or rest.count(")") > RISKY_PARENS
            or rest.count(">") + rest.count("<") > RISKY_REDIRECTS)


# tree-sitter-bash 0.25 crashes the process (SIGSEGV) on some non-ASCII code
# points (e.g. `{` followed by U+FBF4D); 400k random ASCII inputs never did.
# Bash treats every byte >= 0x80 as a word character, so the parser is given
# the text with each such byte replaced by `a`: same byte offsets, same
# structure, and the walker slices words out of the original bytes.
_ASCII_ONLY = bytes.maketrans(bytes(range(128, 256)), b"a" * 128)


def _parse_tree(src: bytes):
    parser = _parser()
    if not parser:
        return None
    if not src.isascii():
        src = src.translate(_ASCII_ONLY)
    if len(src) <= DIRECT_PARSE_BYTES and src.count(b"|") <= DIRECT_PARSE_PIPES:
        return parser.parse(src)
    n = len(src)
    deadline = time.perf_counter() + PARSE_BUDGET_S

    def read(offset, _point):
        return src[offset:offset + 4096] if offset < n else b""

    def progress(_state, _has_error=None):
        return time.perf_counter() > deadline   # True cancels the parse

    try:
        return parser.parse(read, progress_callback=progress)
    except ValueError:   # cancelled
        parser.reset()
        return None


_BARE_ESC = re.compile(r"\\(\n|.)", re.S)
_DQ_ESC = re.compile(r'\\([\\$"`\n])')
_GLOBBY = re.compile(r"[*?\[]")


def _unescape_bare(s: str) -> str:
    return _BARE_ESC.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), s) if "\\" in s else s


def _unescape_dq(s: str) -> str:
    return _DQ_ESC.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), s) if "\\" in s else s


_WORDISH = frozenset({"word", "string", "raw_string", "concatenation", "number", "simple_expansion", "expansion",
                      "command_substitution", "ansi_c_string", "translated_string", "arithmetic_expansion"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GAP_WORD = re.compile(r"[A-Za-z0-9_./:=+,@%-]+")
_DELIM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


class _Distrust(Exception):
    """The tree parsed without errors but cannot be right (seen on garbage)."""


MAX_DEPTH = 150   # nesting deeper than this is not an agent's command; keeps clear of the recursion limit


class _Walker:
    __slots__ = ("src", "depth")

    def __init__(self, src: bytes):
        self.src = src
        self.depth = 0

    def text(self, node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    # -- words
    def word(self, node) -> Word:
        t = node.type
        if t == "word" or t == "number":
            raw = self.text(node)
            if raw.startswith("~") or _GLOBBY.search(raw):
                return Word(_unescape_bare(raw), raw, False)
            return lit(_unescape_bare(raw))
        if t == "raw_string":
            return lit(self.text(node)[1:-1])
        if t == "string":
            raw = self.text(node)
            value = _unescape_dq(raw[1:-1])
            for c in node.named_children:
                if c.type != "string_content":
                    return Word(value, raw, False)
            return lit(value)
        if t == "concatenation":
            parts = [self.word(c) for c in node.children]
            value = "".join(p.value for p in parts)
            if all(p.literal for p in parts):
                return lit(value)
            return Word(value, self.text(node), False)
        raw = self.text(node)
        return Word(raw, raw, False)

    # -- statements
    def emit(self, node, out: list) -> None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _Distrust("nesting")
            self._emit(node, out)
        finally:
            self.depth -= 1

    def _emit(self, node, out: list) -> None:
        t = node.type
        if t in ("program", "list", "compound_statement", "pipeline"):
            for c in node.children:
                if c.is_named:
                    if c.type != "comment":
                        self.emit(c, out)
                elif c.type in OPS:
                    out.append(c.type)
        elif t == "command":
            cmd = Command(source=self.text(node))
            conts = self.fill(node, cmd)
            push(out, cmd)
            self.emit_conts(conts, out)
        elif t == "redirected_statement":
            body = node.child_by_field_name("body")
            start = len(out)
            if body is not None:
                self.emit(body, out)
            target = None
            for item in reversed(out[start:]):
                if isinstance(item, Command):
                    target = item
                    break
            if target is None:
                target = Command()
                push(out, target)
            conts = []
            first = True
            for c in node.children:
                if c.type in _REDIRECT_NODES:
                    if first and (body is None or body.type == "command"):
                        start = body.end_byte if body is not None else node.start_byte
                        if c.start_byte > start:
                            self.gap(start, c.start_byte, target)
                    first = False
                    conts.extend(self.redirect(c, target))
            self.emit_conts(conts, out)
        elif t == "subshell":
            out.append(PUSH)
            for c in node.named_children:
                if c.type != "comment":
                    self.emit(c, out)
            out.append(POP)
        elif t == "negated_command":
            for c in node.named_children:
                self.emit(c, out)
        elif t in ("variable_assignment", "variable_assignments"):
            nodes = [node] if t == "variable_assignment" else node.named_children
            cmd = Command(source=self.text(node))
            for n in nodes:
                self.assignment(n, cmd)
            push(out, cmd)
        elif t in ("declaration_command", "unset_command"):
            words = []
            for c in node.children:
                if not c.is_named:
                    words.append(lit(c.type))
                elif c.type == "variable_assignment":
                    raw = self.text(c)
                    words.append(Word(raw, raw, False))
                else:
                    words.append(self.word(c))
            push(out, Command(words=words, source=self.text(node)))
        elif t == "comment":
            return
        else:
            raw = self.text(node)
            cmd = Command(opaque=collapse_lines(raw), source=raw)
            tmp: list = []
            self.inner(node, tmp)
            cmd.inner = [x for x in tmp if isinstance(x, Command)]
            push(out, cmd)

    def gap(self, start: int, end: int, cmd: Command) -> None:
        """tree-sitter drops a lone `-` written just before a heredoc (`python3 -
        <<EOF`); recover words that fall between a command and its redirect."""
        text = self.src[start:end].decode("utf-8", "replace").replace("\\\n", " ")
        for tok in text.split():
            if not _GAP_WORD.fullmatch(tok):
                raise _Distrust(tok)
            cmd.words.append(lit(tok))

    def inner(self, node, out: list) -> None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _Distrust("nesting")
            for c in node.named_children:
                if c.type in ("command", "redirected_statement", "pipeline", "list"):
                    self.emit(c, out)
                else:
                    self.inner(c, out)
        finally:
            self.depth -= 1

    def emit_conts(self, conts, out):
        for x in conts:
            if isinstance(x, str):
                out.append(x)
            else:
                self.emit(x, out)

    def fill(self, node, cmd: Command) -> list:
        conts = []
        for c in node.children:
            ct = c.type
            if ct == "variable_assignment":
                self.assignment(c, cmd)
            elif ct == "command_name":
                kids = c.named_children
                cmd.words.append(self.word(kids[0]) if kids else lit(self.text(c)))
            elif ct in _REDIRECT_NODES:
                conts.extend(self.redirect(c, cmd))
            elif c.is_named and ct != "comment":
                cmd.words.append(self.word(c))
        return conts

    def assignment(self, node, cmd: Command) -> None:
        """NAME=value before a command; tree-sitter also reads `--tb=short` in
        command position as one, which is a word."""
        raw = self.text(node)
        name = raw.partition("=")[0].partition("[")[0].rstrip("+")
        if _NAME.fullmatch(name) and not cmd.words:
            cmd.assigns.append(Word(raw, raw, False))
            return
        parts = [self.word(c) if c.is_named and c.type != "variable_name" else lit(self.text(c))
                 for c in node.children]
        value = "".join(p.value for p in parts)
        cmd.words.append(lit(value) if all(p.literal for p in parts) else Word(value, raw, False))

    def redirect(self, node, cmd: Command) -> list:
        """Attach a redirect to cmd; return what tree-sitter hung inside a heredoc
        node after its first line (operators and statements), to emit next."""
        t = node.type
        if t == "file_redirect":
            fd, op, target = "", "", None
            for c in node.children:
                if c.type == "file_descriptor":
                    fd = self.text(c)
                elif not c.is_named:
                    op += c.type
                elif target is None:
                    target = self.word(c)
            cmd.redirs.append(Redirect(fd, op, target))
            return []
        if t == "herestring_redirect":
            kids = node.named_children
            cmd.redirs.append(Redirect("", "<<<", self.word(kids[0]) if kids else None))
            return []
        op, delim, quoted, body_start, end = "<<", "", False, None, None
        conts: list = []
        line_end = None
        for c in node.children:
            ct = c.type
            if ct in _WORDISH:
                # words after `<<EOF` on its line are the command's arguments
                # (`python3 - <<EOF arg`); tree-sitter sometimes also files body
                # text here, which is not to be trusted.
                if line_end is None or c.start_byte > line_end:
                    raise _Distrust(ct)
                cmd.words.append(self.word(c))
                continue
            if not c.is_named:
                if ct in ("<<", "<<-"):
                    op = ct
                elif ct in OPS:
                    conts.append(ct)
            elif ct == "heredoc_start":
                line_end = self.src.find(b"\n", c.end_byte)
                line_end = len(self.src) if line_end < 0 else line_end
                raw = self.text(c)
                quoted = any(q in raw for q in "'\"\\")
                delim = raw.replace("'", "").replace('"', "").replace("\\", "")
                if not _DELIM.fullmatch(delim):
                    raise _Distrust(delim)
            elif ct == "heredoc_body":
                body_start = c.start_byte
            elif ct == "heredoc_end":
                end = c
            elif ct in ("file_redirect", "herestring_redirect"):
                self.redirect(c, cmd)
            elif ct != "comment":
                conts.append(c)
        body = ""
        if body_start is not None and end is not None:
            body = self.src[body_start:end.start_byte].decode("utf-8", "replace")
        cmd.redirs.append(Heredoc(op, delim, quoted, body))
        return conts


def push(out: list, cmd: Command) -> None:
    """Append a command, separating it from a previous one with `;` when the
    source had only a newline (tree-sitter has no token for it)."""
    for item in reversed(out):
        if item is PUSH or item is POP:
            continue
        if isinstance(item, Command):
            out.append(";")
        break
    out.append(cmd)


_HSPACE = re.compile(r"[ \t]+")


def collapse_lines(s: str) -> str:
    """Whitespace-normalize text whose newlines matter (compound statements)."""
    lines = (_HSPACE.sub(" ", ln).strip() for ln in s.splitlines())
    return "\n".join(ln for ln in lines if ln)


# ---------------------------------------------------------------- shlex

_REDIR_TOKENS = frozenset({">", ">>", "<", ">&", "<&", "&>", "&>>", ">|", "<<", "<<-", "<<<", "<>"})
_PUNCT = set("();<>|&")
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _shlex_stream(text: str) -> list | None:
    lex = shlex.shlex(text, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    try:
        tokens = list(lex)
    except ValueError:   # unbalanced quotes
        return None
    out: list = []
    cmd: Command | None = None
    pending: tuple | None = None
    for tok in tokens:
        if pending is not None:
            cmd.redirs.append(Redirect(pending[0], pending[1], lit(tok)))
            pending = None
            continue
        if tok in OPS:
            out.append(tok)
            cmd = None
        elif tok == "(" or tok == ")":
            out.append(PUSH if tok == "(" else POP)
            cmd = None
        elif tok in _REDIR_TOKENS:
            if cmd is None:
                cmd = Command()
                push(out, cmd)
            fd = ""
            if cmd.words and cmd.words[-1].value.isdigit() and len(cmd.words) > 1:
                fd = cmd.words.pop().value
            pending = (fd, tok)
        elif tok and all(ch in _PUNCT for ch in tok):
            out.append(";")
            cmd = None
        else:
            if cmd is None:
                cmd = Command()
                push(out, cmd)
            if not cmd.words and _ASSIGN.match(tok):
                cmd.assigns.append(lit(tok))
            else:
                cmd.words.append(lit(tok))
    if pending is not None:
        cmd.words.append(lit(pending[1]))
    return out


# ---------------------------------------------------------------- entry

def parses_cleanly(text: str) -> bool:
    """True if tree-sitter reads text without errors (within the budgets)."""
    src = text.encode("utf-8", "replace")
    if len(src) > MAX_PARSE_BYTES or _risky(text):
        return False
    tree = _parse_tree(src)
    return tree is not None and not tree.root_node.has_error


def read(text: str) -> tuple[list | None, str]:
    """-> (stream, reading) where reading is tree-sitter, shlex or raw (stream None)."""
    src = text.encode("utf-8", "replace") if len(text) <= MAX_PARSE_BYTES else b""
    if src and len(src) <= MAX_PARSE_BYTES and not _risky(text):
        tree = _parse_tree(src)
        if tree is not None:
            root = tree.root_node
            if not root.has_error and root.descendant_count <= MAX_NODES:
                out: list = []
                try:
                    _Walker(src).emit(root, out)
                    return (out, "tree-sitter") if _small(out) else (None, "raw")
                except _Distrust:
                    pass
    if len(text) <= MAX_SHLEX_CHARS and sum(map(text.count, "|;&\n")) <= 2 * MAX_COMMANDS:
        out = _shlex_stream(text)
        if out is not None and _small(out):
            return out, "shlex"
    return None, "raw"


def _small(stream: list) -> bool:
    return sum(1 for x in stream if isinstance(x, Command)) <= MAX_COMMANDS
