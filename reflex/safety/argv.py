"""Argument handling shared by the safety plane's command handlers (stdlib only).

The default reading of a command line is conservative: any argument of any command that
names a secret file is a read of it (`head -3 .env`, `base64 .env`, `python x.py .env`),
including the `x=PATH`, `@PATH` and `host:PATH` forms (`dd if=.env`, `curl -d @.env`,
`git show HEAD:.env`) — that is `generic`. A few long options mean the same for every
command: `--env-file` loads, `--key`/`--cert`/`--kubeconfig` use a credential by path
without disclosing it, `--exclude` is a pattern, `--include`/`--glob` is a file filter
(a filter that selects secrets is a read). Also here: option parsing (`opts`), stdin text
(heredocs, here-strings, `echo ... |`), and the string-literal scan for interpreter code.
"""

from __future__ import annotations

import re

from reflex.safety import lex as L
from reflex.safety.paths import basename_kind, glob_regex, pattern_is_secret
from reflex.safety.model import Finding
from reflex.safety.words import Arg, command_name, merge_pieces

# Annotation-only imports and names (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Protocol

    from reflex.safety.model import Allowed, Ctx, Part, Piece, Stage, Token, Variant, Word

    class Walker(Protocol):
        """The walker every handler is given (reflex.safety.shell.Scan): the policy's values,
        what the walk has seen so far, and the checks.  A protocol, so the handlers need not
        import the walker's module, which imports theirs."""

        home: str           # "" when unknown
        root: str | None
        tmp: Sequence[str]
        allowed: Allowed
        ctx_home: str | None
        loaded: str | None
        xtrace: bool
        nest: int
        trees: list[str | None]
        redacting: int
        stdout_moved: bool
        names: set[str]
        wrote: bool

        def command(self, text: str, ctx: Ctx) -> Finding | None: ...
        def dispatch(self, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None: ...
        def subs(self, parts: Sequence[Part], ctx: Ctx) -> Finding | None: ...
        def sub_tokens(self, toks: list[Token], ctx: Ctx) -> Finding | None: ...
        def arg(self, parts: Sequence[Part], ctx: Ctx) -> Arg: ...
        def assign(self, parts: Sequence[Part], ctx: Ctx) -> None: ...
        def env_option(self, name: str, value: object) -> None: ...
        def shell_option(self, name: str) -> None: ...
        def resolve(self, text: str, ctx: Ctx) -> str: ...
        def read(self, arg: Arg, verb: str, ctx: Ctx, rule: str = ..., split: bool = ...,
                 dirs: bool = ...) -> Finding | None: ...
        def read_path(self, text: str, verb: str, ctx: Ctx, rule: str = ..., dirs: bool = ...) -> Finding | None: ...
        def taint(self, text: str, ctx: Ctx, many: bool = ...) -> None: ...
        def real(self, path: str, ctx: Ctx) -> str: ...
        def tree(self, arg: Arg, verb: str, ctx: Ctx, transforms: bool = ..., rule: str = ...) -> Finding | None: ...
        def tree_root(self, root: str | None, shown: str, verb: str, ctx: Ctx, transforms: bool = ...,
                      rule: str = ...) -> Finding | None: ...
        def write(self, arg: Arg, verb: str, ctx: Ctx, delete: bool = ...) -> Finding | None: ...
        def output_diverted(self) -> bool: ...
        def load(self, arg: Arg, ctx: Ctx) -> None: ...

    # A command's handler: (walker, command name, its arguments, shell state, its stdin, how many
    # wrappers deep) -> the first broken rule, or None.
    Handler = Callable[[Walker, str, list[Arg], Ctx, "Stdin", int], Finding | None]
    # An option as `opts` parses it: (flag or None for an operand, its value, the argument itself).
    Opt = tuple[str | None, Arg | None, Arg]

MAX_HOPS = 8


# Variables whose values are never secret, so `echo $HOME` after `source .env` is fine.
COPY_RULE = frozenset("""gzip gunzip bzip2 xz zstd lz4 brotli compress pigz lzma 7z 7za 7zr rar
cpio pax ar""".split())


EXFIL_RULE = frozenset("""nc ncat netcat socat ftp sftp telnet http https xh httpie aws gsutil
rclone gh az gcloud s3cmd mc sendmail mail mutt""".split())


# Long options whose value role is the same for every command.
LONG_ROLES = {
    "--env-file": "load",
    "--exclude": "pattern", "--exclude-dir": "pattern", "--ignore": "pattern",
    "--ignore-pattern": "pattern", "--include": "inglob", "--glob": "inglob", "--iglob": "inglob",
}

for _k in ("--cert", "--key", "--cacert", "--capath", "--certificate", "--private-key",
           "--ca-certificate", "--kubeconfig", "--identity", "--identity-file", "--ssh-key",
           "--tlscert", "--tlskey", "--tlscacert", "--tls-cert", "--tls-key", "--client-cert",
           "--client-key", "--sslkey", "--ssl-key", "--ssl-cert", "--ssl-ca", "--key-file",
           "--cert-file", "--keyfile", "--certfile", "--password-file", "--netrc-file",
           "--proxy-cert", "--proxy-key", "--ssh-key-file"):
    LONG_ROLES[_k] = "key"


# String literals in code, found from every quote (a lookahead: matches overlap), so one
# quote the pairing gets wrong (`''.join(fileinput.input('.git-credentials'))`, an apostrophe
# in a comment, a raw string) cannot hide the literal after it.
_LITERALS = re.compile(r"'(?=((?:[^'\\\n]|\\.){1,2048})')|\"(?=((?:[^\"\\\n]|\\.){1,2048})\")|`(?=([^`\n]{1,2048})`)")


_DQ_LITERALS = re.compile(r"\"(?=((?:[^\"\\\n]|\\.){1,2048})\")")
MAX_LITERALS = 2048      # literals judged per piece of code (each may cost a stat)


_ENV_READERS = ("environ", "process.env", "getenv", "ENV[", "Deno.env", "%ENV")


class Stdin:
    """The text a command reads on stdin, when it is in the command line itself."""

    __slots__ = ("prev", "redirs")

    def __init__(self, redirs: list[Token], prev: Stage | None) -> None:
        self.redirs = redirs
        self.prev = prev

    def text(self) -> str | None:
        for r in reversed(self.redirs):
            if r[1] in ("<<", "<<-") and r[4] is not None:
                body: str = r[4]
                return body
            if r[1] == "<<<" and r[3]:
                return L.literal(r[3])
            if r[1] == "<":
                return None
        if self.prev:
            words, redirs = self.prev
            lits = [L.literal(w) for w in words]
            if lits and lits[0] is not None:
                name = command_name(lits[0])
                if name == "echo":
                    return " ".join(x for x in lits[1:] if x is not None and x not in ("-n", "-e", "-E"))
                if name == "printf" and len(lits) > 1 and lits[1] is not None:
                    return _printf_escapes(lits[1])
                if name == "cat" and len(lits) == 1:
                    return Stdin(redirs, None).text()
        return None

    def from_program(self) -> bool:
        """True when stdin is another program's output or a file: text the analysis lacks."""
        if self.text() is not None:
            return False
        return self.prev is not None or any(
            r[1] == "<" and any(p[0] == L.SUB for p in (r[3] or ())) for r in self.redirs)

    def words(self) -> list[str]:
        """Static non-option operands of the previous pipeline stage (for xargs)."""
        if not self.prev:
            return []
        out = []
        for w in self.prev[0][1:]:
            lit = L.literal(w)
            if lit and not lit.startswith("-"):
                out.append(lit)
        return out[:64]


def _printf_escapes(fmt: str) -> str:
    """printf's backslash escapes, the ones that shape lines (`printf 'all:\\n\\t@cat .env'`)."""
    return fmt.replace("\\\\", "\0").replace("\\n", "\n").replace("\\t", "\t").replace(
        "\\r", "\r").replace("\0", "\\")


def stdin_code(scan: Walker, verb: str, stdin: Stdin, ctx: Ctx, rx: re.Pattern[str] | None = None) -> Finding | None:
    """A program that runs the code it reads on stdin (`printf '...' | awk -f -`): the code
    is judged when the command line holds it, and is unknown (a tree read) when a program
    prints it."""
    text = stdin.text()
    if text:
        return code_scan(scan, text, verb, ctx, rx or _LITERALS)
    return scan.tree_root(None, verb, verb, ctx) if stdin.from_program() else None


def stdin_names(scan: Walker, verb: str, stdin: Stdin, ctx: Ctx, rule: str = "secret-read") -> Finding | None:
    """A program that reads the files named on its stdin (`echo .env | cpio -o`, `tar -T -`,
    `zip -@`, `rsync --files-from=-`): each name in the command line's own text is judged; a
    listing a program prints (`find . | cpio -o`) may name any file under where it looked."""
    text = stdin.text()
    if text is not None:
        for line in text.replace("\0", "\n").splitlines()[:256]:
            for w in (line.strip(),) + tuple(line.split()):
                f = scan.read_path(w, verb, ctx, rule)
                if f:
                    return f
        return None
    if not stdin.from_program():
        return None
    words = [w for w in stdin.words() if not w.startswith("-")]
    for w in words:
        f = scan.read_path(w, verb, ctx, rule)      # `find .env | cpio -o`
        if f:
            return f
    if rule != "secret-read" or scan.output_diverted():
        return None     # an archive of a listing written to a file: a copy of a tree, as `tar cf x.tar .`
    root = None
    if stdin.prev is not None:
        lits = [L.literal(w) for w in stdin.prev[0]]
        if lits and lits[0] is not None and command_name(lits[0]) in ("find", "fd", "fdfind") and words:
            root = scan.resolve(words[0], ctx)
    return scan.tree_root(root if root and root.startswith("/") else ctx.cwd, verb, verb, ctx)


def dump(scan: Walker, verb: str) -> Finding:
    assert scan.loaded is not None  # every caller checks that a secret file was sourced
    return Finding("secret-env-dump", scan.loaded, scan.loaded, verb, "env")


def run_rest(scan: Walker, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    """Dispatch args[0] as a command with args[1:] (after a wrapper)."""
    if not args:
        return None
    head = args[0]
    if head.static is None:
        return generic(scan, "command", args[1:], ctx)
    return scan.dispatch(command_name(head.static), args[1:], ctx, stdin, hops + 1)


def rule_for(name: str) -> str:
    if name in COPY_RULE:
        return "secret-copy"
    if name in EXFIL_RULE:
        return "secret-exfil"
    return "secret-read"


# -- option parsing -------------------------------------------------------------------


def opts(args: Sequence[Arg], short_val: str = "", long_val: frozenset[str] | set[str] = frozenset(),
         stop: bool = False) -> list[Opt]:
    """Parse args into (flag, value Arg|None, arg) triples; operands have flag None."""
    out: list[Opt] = []
    i, n = 0, len(args)
    only = False
    while i < n:
        a = args[i]
        s = a.static
        if only or s is None or len(s) < 2 or s[0] != "-":
            out.append((None, None, a))
            if stop:
                only = True
            i += 1
            continue
        if s == "--":
            only = True
            i += 1
            continue
        if s.startswith("--"):
            flag, eq, val = s.partition("=")
            if eq:
                out.append((flag, Arg.of(val), a))
            elif flag in long_val:
                out.append((flag, args[i + 1] if i + 1 < n else None, a))
                i += 1
            else:
                out.append((flag, None, a))
            i += 1
            continue
        body = s[1:]
        for j, c in enumerate(body):
            if c in short_val:
                rest = body[j + 1:]
                if rest:
                    out.append(("-" + c, Arg.of(rest), a))
                else:
                    out.append(("-" + c, args[i + 1] if i + 1 < n else None, a))
                    i += 1
                break
            out.append(("-" + c, None, a))
        i += 1
    return out


def apply_role(scan: Walker, role: str | None, val: Arg | None, verb: str, ctx: Ctx, rule: str,
               dirs: bool = False) -> Finding | None:
    if val is None or role in ("key", "pattern"):
        return None
    if role == "load":
        scan.load(val, ctx)
        return None
    if role == "inglob":
        return glob_filter(scan, val, verb, ctx, rule)
    if role == "write":
        return scan.write(val, verb, ctx)
    if role == "delete":
        return scan.write(val, verb, ctx, delete=True)
    return scan.read(val, verb, ctx, rule, dirs=dirs)


def glob_filter(scan: Walker, val: Arg, verb: str, ctx: Ctx, rule: str = "secret-read") -> Finding | None:
    """`--include=.env` / `rg -g '*.pem'`: a file filter that selects secrets is a read."""
    s = val.static
    if not s or s.startswith("!"):
        return None
    name = s.rsplit("/", 1)[-1]
    if not any(c in name for c in "*?["):
        kind = basename_kind(name)
    else:
        kind = None
        hit = pattern_is_secret(None, glob_regex(glob_pieces(name)), scan.home, ctx.cwd)
        if hit:
            kind = basename_kind(hit) or "secrets"
    if kind and not scan.allowed(s):
        return Finding(rule, s, s, verb, kind)
    return None


def glob_pieces(text: str) -> Variant:
    """A glob written as a plain string (find -name '*.pem') as pattern pieces."""
    pieces: list[Piece] = []
    buf = ""
    i = 0
    while i < len(text):
        c = text[i]
        if c in "*?":
            if buf:
                pieces.append(("lit", buf))
                buf = ""
            pieces.append(("glob", c))
        elif c == "[" and "]" in text[i + 2:]:
            j = text.index("]", i + 2)
            if buf:
                pieces.append(("lit", buf))
                buf = ""
            pieces.append(("glob", text[i:j + 1]))
            i = j
        elif c == "\\" and i + 1 < len(text):
            buf += text[i + 1]
            i += 1
        else:
            buf += c
        i += 1
    if buf:
        pieces.append(("lit", buf))
    return tuple(pieces)


def chdir(scan: Walker, ctx: Ctx, val: Arg | None) -> Ctx:
    c = ctx.copy()
    if val is None or val.static is None:
        c.cwd = None
    else:
        p = scan.resolve(val.static, ctx)
        c.cwd = p if p.startswith("/") else None
    return c


# -- the default ----------------------------------------------------------------------


DIR_READERS = COPY_RULE | EXFIL_RULE | frozenset({"docker", "podman", "nerdctl"})


# Programs that read files named inside their command text: SQL shells (`readfile('.env')`,
# `.read .env`, `\\i .env`, `LOAD_FILE(...)`, `pg_read_file(...)`), editors run as filters
# (`vim -es -c 'r .env'`, `emacs --eval '(insert-file-contents ".env")'`), debuggers. Every
# word of their arguments is a path they may read.
FILE_FUNCTION_PROGRAMS = frozenset("""sqlite3 sqlite duckdb psql pgcli mysql mariadb mycli
clickhouse clickhouse-local clickhouse-client osqueryi spatialite litecli usql vim vi nvim view
vimdiff ex ed red emacs emacsclient nano gdb lldb""".split())

_WORDS = re.compile(r"[^\s'\"`(),;=<>|&{}\[\]]+")


def generic(scan: Walker, name: str, args: Sequence[Arg], ctx: Ctx, rule: str | None = None) -> Finding | None:
    """Every argument may be a path the command reads; see the module docstring."""
    rule = rule or rule_for(name)
    dirs = name in DIR_READERS
    i, n = 0, len(args)
    only = False
    while i < n:
        a = args[i]
        s = a.static
        f = None
        if only or s is None or s in ("-", "") or s[0] != "-":
            f = operand(scan, name, a, ctx, rule, dirs)
        elif s == "--":
            only = True
        elif s.startswith("--"):
            flag, eq, val = s.partition("=")
            role = LONG_ROLES.get(flag)
            if eq:
                f = apply_role(scan, role, Arg.of(val), name, ctx, rule, dirs)
                if not f and role is None:
                    f = operand(scan, name, Arg.of(val), ctx, rule, dirs)
            elif role and i + 1 < n:
                i += 1
                f = apply_role(scan, role, args[i], name, ctx, rule, dirs)
        elif len(s) > 2:
            f = scan.read(Arg.of(s[2:]), name, ctx, rule, dirs=dirs)
        if f:
            return f
        i += 1
    return None


def operand(scan: Walker, name: str, a: Arg, ctx: Ctx, rule: str, dirs: bool = False) -> Finding | None:
    """An argument of a command that reads its arguments: a path, or text naming paths.

    Code passed as an argument (`sqlite3 db "select readfile('.env')"`, `duckdb -c
    "... read_csv('.env')"`) names its files in string literals; the SQL shells and editors of
    FILE_FUNCTION_PROGRAMS also take bare paths in their commands (`.read .env`, `r .env`)."""
    s = a.static
    f = None
    if s and len(s) > 2 and ("(" in s or name in FILE_FUNCTION_PROGRAMS):
        f = code_scan(scan, s, name, ctx)
        if not f and name in FILE_FUNCTION_PROGRAMS and any(c in s for c in " \t\n;,()"):
            for w in _WORDS.findall(s[:100000])[:256]:
                f = scan.read_path(w, name, ctx, rule)
                if f:
                    break
    return f or scan.read(a, name, ctx, rule, dirs=dirs)


# Options through which a program that otherwise never prints file content reads a file
# and prints what it found there (`date -f .env` echoes every line it cannot parse).
NON_READER_FILES = {
    "date": ("-f", "--file"),
    "du": ("--files0-from",),
    "wc": ("--files0-from",),
    "file": ("-f", "--files-from", "-m", "--magic-file"),
    "man": ("-l", "--local-file"),
    "tree": ("--fromfile",),
    "ls": (),
}


def non_reader_files(scan: Walker, name: str, args: Sequence[Arg], ctx: Ctx) -> Finding | None:
    flags = NON_READER_FILES.get(name)
    if not flags:
        return None
    for flag, val, a in opts(args, "".join(f[1] for f in flags if len(f) == 2),
                             frozenset(f for f in flags if f.startswith("--"))):
        if flag in flags and val is not None:
            f = scan.read(val, name, ctx, split=False)
            if f:
                return f
        elif flag is None and name in ("man", "tree") and any(
                x.static in ("-l", "--local-file", "--fromfile") for x in args):
            f = scan.read(a, name, ctx, split=False)
            if f:
                return f
    return None


def code_scan(scan: Walker, code: str | None, verb: str, ctx: Ctx, rx: re.Pattern[str] = _LITERALS) -> Finding | None:
    """String literals in interpreter code that name secret files are reads of them."""
    if not code:
        return None
    code = code[:100000]
    for n, m in enumerate(rx.finditer(code)):
        if n >= MAX_LITERALS:
            break
        lit = next(g for g in m.groups() if g is not None).replace("\\/", "/")
        if len(lit) > 4096 or not lit.strip():
            continue
        for c in (lit.strip(),) + (tuple(lit.split()) if any(ch.isspace() for ch in lit) else ()):
            f = scan.read_path(c, verb, ctx)
            if f:
                return f
    if any(k in code for k in _ENV_READERS):
        if scan.loaded:
            return dump(scan, verb)
        if "dotenv" in code.lower():
            # `require('dotenv').config(); console.log(process.env.X)` loads ./.env and prints it.
            return scan.read_path(".env", verb, ctx)
    if "dotenv_values" in code or "dotenv.parse" in code:
        return scan.read_path(".env", verb, ctx)
    if _WALKS.search(code):
        # Code that lists a directory tree (os.walk, glob, readdir ...) and may read what it
        # finds: a recursive read, sent through redaction like `grep -r`.
        return scan.tree_root(ctx.cwd, verb, verb, ctx)
    return None


_WALKS = re.compile(r"\b(?:os\.walk|walk\(|glob\(|iglob\(|rglob\(|\.glob\(|listdir|scandir|readdir|"
                    r"Dir\.glob|Dir\[|File\.find|opendir|walkdir|WalkDir|filepath\.Walk|"
                    r"fs\.readdir|readdirSync|Deno\.readDir|globSync)")


def replace_braces(a: Arg, placeholder: list[Variant], token: str = "{}") -> Arg:
    s = a.static
    if s is None or token not in s or not placeholder:
        return a
    pre, _, post = s.partition(token)
    return Arg([merge_pieces(((("lit", pre),) if pre else ()) + p + ((("lit", post),) if post else ()))
                for p in placeholder], dyn=True)


def writes_only(scan: Walker, name: str, args: Sequence[Arg], ctx: Ctx) -> Finding | None:
    for a in args:
        if a.static is not None and a.static.startswith("-"):
            continue
        f = scan.write(a, name, ctx)
        if f:
            return f
    return None
