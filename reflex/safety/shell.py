"""The shell walker of the safety plane: what a command line reads, writes and deletes.

`Scan.command(text, cwd)` lexes a command line (reflex.safety.lex), walks it the way bash
would run it — pipelines, `;`/`&&` lists, subshells, `cd` (so `cd ~/.ssh && cat id_rsa` is
resolved), simple variable assignments (`f=.env; cat $f`), `for x in ...`, command and
process substitutions, heredocs — and hands every simple command to its handler in
reflex.safety.cmds. The first effect that breaks a rule becomes a `Finding`; rendering
it into a user-facing denial is reflex.safety.plane's job.

Unknown values (an unset variable, `$(some command)`) are treated like a glob that may
match anything: a read is denied only when such a pattern can name a secret and names
nothing neutral (`cat $DIR/.env` yes, `cat $FILE` no); a write is judged by the part of
the path that is known (`rm -rf ~/$X` is outside the root, `rm -rf $X` is not known to be).

Targets are judged by what they resolve to (reflex.safety.disk): a read of a path whose
real path is a secret (`notes.txt -> .env`) is a read of that secret, and a glob with a
known directory is expanded the way bash would (`dotglob` / `GLOBIGNORE` / zsh `(D)` make
`*` match dotfiles) and every match is judged.

Recursive reads (`grep -r`, `rg`, `git grep`, `find -exec cat`, `xargs` over a listing, a
`**` glob) are not denied: a search of the project is a normal thing to do. They are
*tree reads*, recorded in `Scan.trees`; the caller sends such a command through
`ctx run --raw`, which removes the values of the secret files it finds from the output
(reflex.safety.secrets). That only works when the reader's output reaches the capture as
lines: a tree read whose output is piped into a program that transforms it (`| base64`),
redirected to a file, or captured by a substitution is denied (`Finding.kind == "tree"`).
"""

from __future__ import annotations

import re

from reflex.safety import lex as L
from reflex.safety.cmds import handle, run_simple
from reflex.safety.disk import Disk
from reflex.safety.model import Finding
from reflex.safety.paths import (
    _bracket,
    basename_kind,
    glob_regex,
    is_device_sink,
    is_outside,
    is_token_file,
    normalize,
    pattern_is_secret,
    secret_kind,
)
from reflex.safety.words import command_name
from reflex.safety.words import (
    FROM_OUTPUT,
    MAX_VARIANTS,
    Arg,
    expand_braces,
    listing_dir,
    merge_pieces,
    path_candidates,
    secret_words,
    static_text,
    sub_value,
)

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from reflex.safety.argv import Stdin
    from reflex.safety.model import Allowed, Ctx, Part, Piece, Token, Variant

    # The walk of one token stream: [tokens, start of the current simple command, captured?,
    # index of the last diversion (None: not computed yet)].
    Frame = list[Any]

MAX_NEST = 10          # nested shells/substitutions walked before giving up (Overflow)

RESERVED_SKIP = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                           "!", "{", "}", "esac", "coproc"})


# zsh glob qualifiers that include dotfiles: `*(D)`, `**/*(.D)`.
_ZSH_DOTS = re.compile(r"[*?\]]\([^()\s]*D[^()\s]*\)")


class Scan:
    """One analysis run. Holds the policy values and the budget; no other state leaks in."""

    def __init__(self, home: str, root: str | None, tmp_dirs: Sequence[str], allowed: Allowed,
                 ctx_home: str | None = None, token_files: Sequence[str] = ()) -> None:
        self.home = home
        self.root = root
        self.tmp = tmp_dirs
        self.allowed = allowed
        self.ctx_home = ctx_home
        self.token_files = token_files
        self.budget = L.Budget()
        self.loaded: str | None = None      # a secret file sourced into the environment, if any
        self.nest = 0
        self.disk = Disk()
        self.dotglob = False    # `shopt -s dotglob`, GLOBIGNORE, zsh globdots: `*` matches .env
        self.xtrace = False     # `set -x` / `set -v` / `bash -x`: the shell prints what it runs and sources
        self.trees: list[str | None] = []   # roots of recursive reads whose output reaches stdout as lines
        self.redacting = 0      # > 0 inside `ctx run`, which redacts secret values itself
        self.stdout_moved = False  # `exec >file`: everything after writes elsewhere
        self.frames: list[Frame] = []   # [tokens, start of the current simple command, captured?, last diversion]
        self.names: set[str] = set()    # every command dispatched (to tell a read-only command line)
        self.tainted: list[tuple[str, bool]] = []  # paths this command copies or links from a program's output
        self.wrote = False      # any write or delete seen
        self._run_simple = run_simple
        self._handle = handle

    # -- entry points -------------------------------------------------------------------

    def command(self, text: str, ctx: Ctx) -> Finding | None:
        self._enter()
        try:
            if "(" in text and _ZSH_DOTS.search(text):
                self.dotglob = True
            return self.walk(L.lex(text, self.budget, self.nest), ctx)
        finally:
            self.nest -= 1

    def dispatch(self, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
        """Run the handler of command `name` (used by wrappers to reach the wrapped command)."""
        return self._handle(self, name, args, ctx, stdin, hops)

    def _enter(self) -> None:
        self.nest += 1
        if self.nest > MAX_NEST:
            raise L.Overflow("nesting too deep")

    # -- walking token streams ----------------------------------------------------------

    def walk(self, toks: list[Token], ctx: Ctx, captured: bool = False) -> Finding | None:
        frame: Frame = [toks, 0, captured, None]
        self.frames.append(frame)
        try:
            return self._walk(toks, ctx, frame)
        finally:
            self.frames.pop()

    def _walk(self, toks: list[Token], ctx: Ctx, frame: Frame) -> Finding | None:
        run_simple = self._run_simple
        words: list[list[Part]] = []
        redirs: list[Token] = []
        prev: tuple[list[list[Part]], list[Token]] | None = None
        stack: list[str | None] = []
        case_pat = False
        i, n = 0, len(toks)
        while i < n:
            if not words and not redirs:
                frame[1] = i
            t = toks[i]
            typ = t[0]
            if typ == "w":
                if case_pat:
                    f = self.subs(t[1], ctx)
                    if f:
                        return f
                    i += 1
                    continue
                if not words:
                    kw = L.plain_literal(t[1])
                    if kw in RESERVED_SKIP:
                        i += 1
                        continue
                    if kw in ("for", "select"):
                        i, f = self._for(toks, i, ctx)
                        if f:
                            return f
                        continue
                    if kw == "case":
                        if i + 1 < n and toks[i + 1][0] == "w":
                            f = self.subs(toks[i + 1][1], ctx)
                            if f:
                                return f
                        i += 3
                        case_pat = True
                        continue
                    if kw == "function":
                        i += 2
                        if i + 1 < n and toks[i] == ("op", "(") and toks[i + 1] == ("op", ")"):
                            i += 2
                        continue
                    if kw == "[[":
                        i += 1
                        while i < n and not (toks[i][0] == "w" and L.plain_literal(toks[i][1]) == "]]"):
                            if toks[i][0] == "w":
                                f = self.subs(toks[i][1], ctx)
                                if f:
                                    return f
                            i += 1
                        i += 1
                        continue
                words.append(t[1])
            elif typ == "r":
                redirs.append(t)
            else:
                op = t[1]
                if case_pat:
                    if op == ")":
                        case_pat = False
                    i += 1
                    continue
                if op == "(":
                    if words and i + 1 < n and toks[i + 1] == ("op", ")"):
                        words = []          # `name()` opens a function definition
                        i += 2
                        continue
                    if words and (L.literal(words[-1]) or "").endswith("="):
                        i += 1              # array assignment a=(x y): any element may be used
                        values: list[Variant] = []
                        while i < n and toks[i] != ("op", ")"):
                            if toks[i][0] == "w":
                                f = self.subs(toks[i][1], ctx)
                                if f:
                                    return f
                                values.extend(self.arg(toks[i][1], ctx).variants)
                            i += 1
                        name = (L.literal(words.pop()) or "")[:-1].rstrip("+")  # (literal: checked above)
                        if name.isidentifier():
                            ctx.vars[name] = values[:MAX_VARIANTS] or [(("any", ""),)]
                        i += 1
                        continue
                    f = run_simple(self, words, redirs, ctx, prev)
                    if f:
                        return f
                    words, redirs, prev = [], [], None
                    stack.append(ctx.cwd)
                    i += 1
                    continue
                f = run_simple(self, words, redirs, ctx, prev)
                if f:
                    return f
                prev = (words, redirs) if op in ("|", "|&") and (words or redirs) else None
                words, redirs = [], []
                if op == ")" and stack:
                    ctx.cwd = stack.pop()
                elif op in (";;", ";&", ";;&"):
                    case_pat = True
            i += 1
        return run_simple(self, words, redirs, ctx, prev)

    def _for(self, toks: list[Token], i: int, ctx: Ctx) -> tuple[int, Finding | None]:
        """`for NAME in WORDS; do` binds NAME to every word; returns (next index, finding)."""
        n = len(toks)
        j = i + 1
        name = L.literal(toks[j][1]) if j < n and toks[j][0] == "w" else None
        j += 1
        values: list[Variant] = []
        if j < n and toks[j][0] == "w" and L.plain_literal(toks[j][1]) == "in":
            j += 1
            while j < n and toks[j][0] == "w":
                f = self.subs(toks[j][1], ctx)
                if f:
                    return j, f
                values.extend(self.arg(toks[j][1], ctx).variants)
                j += 1
        else:
            while j < n and not (toks[j][0] == "w" and L.plain_literal(toks[j][1]) == "do"):
                j += 1
        if name and name.isidentifier():
            ctx.vars[name] = values[:MAX_VARIANTS] or [(("any", ""),)]
        return j, None

    def subs(self, parts: Sequence[Part], ctx: Ctx) -> Finding | None:
        """Walk the command substitutions inside a word (they run in subshells)."""
        for kind, _, extra in parts:
            if kind == L.SUB:
                self._enter()
                try:
                    f = self.walk(extra, ctx.copy(), captured=True)
                finally:
                    self.nest -= 1
                if f:
                    return f
            elif kind == L.DYN and extra[1]:
                f = self.subs(extra[1], ctx)
                if f:
                    return f
        return None

    def sub_tokens(self, toks: list[Token], ctx: Ctx) -> Finding | None:
        self._enter()
        try:
            return self.walk(toks, ctx.copy(), captured=True)
        finally:
            self.nest -= 1

    # -- expansion ----------------------------------------------------------------------

    def arg(self, parts: Sequence[Part], ctx: Ctx) -> Arg:
        if all(p[0] in (L.LIT, L.QLIT) for p in parts):
            return Arg([(("lit", "".join(p[1] for p in parts)),)])
        dyn = any(p[0] in (L.DYN, L.SUB) for p in parts)
        variants: list[Variant] = []
        for alt in expand_braces(list(parts), 0):
            for v in self._expand(alt, ctx):
                variants.append(v)
                if len(variants) >= MAX_VARIANTS:
                    break
            if len(variants) >= MAX_VARIANTS:
                break
        a = Arg(variants or [()], dyn)
        for p in parts:
            if p[0] == L.SUB:
                d = listing_dir(p[2])
                if d is not False:
                    a.listing = d if d is None else self.resolve(d or ".", ctx)
                    break
        return a

    def _expand(self, parts: Sequence[Part], ctx: Ctx) -> list[Variant]:
        combos: list[list[Piece]] = [[]]
        for kind, text, extra in parts:
            alts: list[Variant]
            if kind in (L.LIT, L.QLIT, L.BRACE):
                alts = [(("lit", text),)]
            elif kind == L.GLOB:
                alts = [(("glob", text),)]
            elif kind == L.TILDE:
                alts = [(("lit", self._tilde(text)),)]
            elif kind == L.SUB:
                val = sub_value(extra)
                if val is not None:
                    alts = [(("lit", val),)]
                else:
                    # `cat $(find . -name .env)`: the output is unknown, but a secret file name
                    # written inside the substitution is a likely part of it.
                    alts = [(("lit", w),) for w in secret_words(extra)]
                    alts.append((FROM_OUTPUT,))
            else:  # DYN
                alts = self._var(text, extra, ctx)
            if len(alts) == 1:
                for c in combos:
                    c.extend(alts[0])
            else:
                combos = [c + list(a) for c in combos for a in alts][:MAX_VARIANTS]
        return [merge_pieces(c) for c in combos]

    def _var(self, name: str, extra: tuple[bool, list[Part] | None] | None, ctx: Ctx) -> list[Variant]:
        if name in ctx.vars:
            return ctx.vars[name]
        if name == "HOME" and self.home:
            return [(("lit", self.home),)]
        if name == "PWD" and ctx.cwd:
            return [(("lit", ctx.cwd),)]
        if name == "CTX_HOME" and self.ctx_home:
            return [(("lit", self.ctx_home),)]
        if extra and extra[1]:
            return self.arg(extra[1], ctx).variants
        return [(("any", ""),)]

    def _tilde(self, user: str) -> str:
        if not user:
            return self.home
        if user == "root":
            return "/root"
        base = self.home.rsplit("/", 1)[0] if self.home and "/" in self.home else "/home"
        return (base or "") + "/" + user

    def assign(self, parts: Sequence[Part], ctx: Ctx) -> None:
        head: str = parts[0][1]
        eq = head.find("=")
        name = head[:eq].rstrip("+")
        if not name.isidentifier():
            return
        self.env_option(name, head[eq + 1:] or len(parts) > 1)
        value = [(L.QLIT if parts[0][0] == L.QLIT else L.LIT, head[eq + 1:], None)] + list(parts[1:])
        ctx.vars[name] = self.arg(value, ctx).variants

    def env_option(self, name: str, value: object) -> None:
        """Variables that change globbing: a non-empty GLOBIGNORE makes `*` match dotfiles, as
        does `dotglob` in BASHOPTS (imported by a bash started with it in its environment)."""
        if (name == "GLOBIGNORE" and value) or (name == "BASHOPTS" and "dotglob" in str(value)):
            self.dotglob = True

    def shell_option(self, name: str) -> None:
        """An option switched on by `shopt -s`, `set -o`, `setopt`, `bash -O`, `zsh -o`."""
        opt = name.lower().replace("_", "").replace("-", "")
        if opt in ("dotglob", "globdots"):
            self.dotglob = True
        elif opt in ("xtrace", "verbose"):
            self.xtrace = True

    # -- checks -------------------------------------------------------------------------

    def resolve(self, text: str, ctx: Ctx) -> str:
        """Absolute normalized path of a literal path, or the relative one if cwd is unknown."""
        if text == "~" or text.startswith("~/"):
            text = self.home + text[1:]
        if text.startswith("/"):
            return normalize(text)
        if ctx.cwd:
            return normalize(ctx.cwd + "/" + text)
        return normalize(text) if text else text

    def read(self, arg: Arg, verb: str, ctx: Ctx, rule: str = "secret-read", split: bool = True,
             dirs: bool = False) -> Finding | None:
        """A read of `arg`: a Finding when it can name a secret file.

        dirs=True for commands that read a directory recursively (grep -r, cp -r, tar, rsync,
        docker -v): for them a directory holding secrets (~/.ssh, ~/.aws, home, /) counts too.
        """
        for v in arg.variants:
            s = static_text(v)
            if s is None:
                f = self._read_pattern(v, verb, ctx, rule, dirs)
            else:
                f = None
                for c in (path_candidates(s, arg.dyn) if split else (s,)):
                    f = self.read_path(c, verb, ctx, rule, dirs)
                    if f:
                        break
            if f:
                return f
        if rule == "secret-read" and (arg.listing is not False or arg.from_output()):
            # `cat $(find . -type f)`, `cat $(printf '.%s' env)`: the names come from a program,
            # so any file may be read (under the listing's directory when there is one).
            root = arg.listing or None
            if root and root.startswith("/"):
                root = self.real(root, ctx)
            return self.tree_root(root if root and root.startswith("/") else None,
                                  arg.text(), verb, ctx)
        return None

    def read_path(self, text: str, verb: str, ctx: Ctx, rule: str = "secret-read", dirs: bool = False) -> Finding | None:
        if not text or text == "-":
            return None
        path = self.resolve(text, ctx)
        kind = self.kind(path)
        if kind == "dir" and not dirs:
            kind = None
        if kind:
            return None if self.allowed(path) else Finding(rule, path, text, verb, kind)
        real = self.real(self.joined(text, ctx), ctx)
        if real != path:
            kind = self.kind(real)
            if kind == "dir" and not dirs:
                return None
            if kind and not self.allowed(real) and not self.allowed(path):
                return Finding(rule, real, text, verb, kind)
        if self.tainted and rule == "secret-read" and self._tainted(path):
            return self.tree_root(None, text, verb, ctx)
        return None

    def kind(self, path: str) -> str | None:
        kind = secret_kind(path, self.home, self.ctx_home)
        if kind is None and self.token_files and is_token_file(path, self.token_files):
            return "token"
        return kind

    def taint(self, text: str, ctx: Ctx, many: bool = False) -> None:
        path = self.resolve(text, ctx)
        if path.startswith("/") and len(self.tainted) < 32:
            self.tainted.append((path, many))

    def _tainted(self, path: str) -> bool:
        for t, many in self.tainted:
            if path == t or (many and path.startswith(t + "/")):
                return True
        return False

    def joined(self, text: str, ctx: Ctx) -> str:
        """The path as the kernel walks it: `..` after a symlink goes up from its target, so
        this is not normalized (`keys/../.aws/credentials` with keys -> ~/.ssh is ~/.aws/...)."""
        if text == "~" or text.startswith("~/"):
            text = self.home + text[1:]
        if text.startswith("/") or not ctx.cwd:
            return text
        return ctx.cwd.rstrip("/") + "/" + text

    def real(self, path: str, ctx: Ctx) -> str:
        """What an absolute path resolves to on disk (see reflex.safety.disk)."""
        if path.startswith("/proc/"):
            # /proc/self is the *command's* process: its cwd is the shell's, its root is /.
            for pre in ("/proc/self/cwd", "/proc/thread-self/cwd"):
                if (path == pre or path.startswith(pre + "/")) and ctx.cwd:
                    return self.disk.real(normalize(ctx.cwd + path[len(pre):]))
            for pre in ("/proc/self/root", "/proc/thread-self/root"):
                if path == pre or path.startswith(pre + "/"):
                    return self.disk.real(normalize("/" + path[len(pre):]))
            return path
        return self.disk.real(path)

    # -- recursive reads ----------------------------------------------------------------

    def tree(self, arg: Arg, verb: str, ctx: Ctx, transforms: bool = False, rule: str = "secret-read") -> Finding | None:
        """A recursive read of `arg` (a directory, or a file when the reader is given one).

        A file is judged like any read; a directory that holds home secrets (~/.ssh, home,
        /) is denied as before; any other directory becomes a tree read, allowed only when
        its output reaches stdout as lines (see the module docstring). `transforms`: the
        reader itself cuts or rewrites what it prints (`grep -o`, `rg --replace`).
        """
        for v in arg.variants:
            s = static_text(v)
            if s is None:
                f = self._read_pattern(v, verb, ctx, rule, True)
                if f:
                    return f
                prefix = ""
                for k, t in v:
                    if k != "lit":
                        break
                    prefix += t
                # Below a known directory, or anywhere: a directory that holds secrets (home, /)
                # is not denied for a part of it nobody named; the census covers its secrets.
                root = self.resolve(prefix.rpartition("/")[0] or "/", ctx) if "/" in prefix else None
                if not root or not root.startswith("/") or secret_kind(root, self.home, self.ctx_home):
                    root = None
                f = self.tree_root(root, prefix or "*", verb, ctx, transforms, rule)
            else:
                if not s or s == "-":
                    continue
                f = self.read_path(s, verb, ctx, rule, dirs=True)
                if f:
                    return f
                path = self.resolve(s, ctx)
                if not path.startswith("/"):
                    f = self.tree_root(None, s, verb, ctx, transforms, rule)
                else:
                    real = self.real(self.joined(s, ctx), ctx)
                    if self.disk.isdir(real) is False:
                        continue            # a file: read_path above judged it
                    f = self.tree_root(real, s, verb, ctx, transforms, rule)
            if f:
                return f
        return None

    def tree_root(self, root: str | None, shown: str, verb: str, ctx: Ctx, transforms: bool = False,
                  rule: str = "secret-read") -> Finding | None:
        """Record a recursive read under `root` (None: unknown), or the Finding that denies it."""
        if root and secret_kind(root, self.home, self.ctx_home) == "dir" and not self.allowed(root):
            return Finding(rule, root, shown, verb, "dir")
        if transforms or self.output_diverted():
            return Finding(rule, root or shown, shown, verb, "tree")
        if self.redacting == 0 and root not in self.trees and len(self.trees) < 32:
            self.trees.append(root)
        return None

    def output_diverted(self) -> bool:
        """True when the current command's output does not reach stdout as whole lines:
        piped into a program that is not a line filter, redirected to a file, captured by a
        command or process substitution (in this walk or any enclosing one), or after
        `exec >file`."""
        if self.stdout_moved:
            return True
        for frame in self.frames:
            if frame[2]:
                return True
            if frame[3] is None:
                frame[3] = _last_diversion(frame[0])
            if frame[1] <= frame[3]:
                return True
        return False

    def _read_pattern(self, v: Variant, verb: str, ctx: Ctx, rule: str, dirs: bool = False) -> Finding | None:
        pieces = [list(p) for p in v]
        if pieces and pieces[0][0] == "lit":
            head = pieces[0][1]
            if head == "~" or head.startswith("~/"):
                head = self.home + head[1:]
            if not head.startswith("/") and ctx.cwd:
                head = ctx.cwd + "/" + head
            if head.startswith("/"):
                d, _, tail = head.rpartition("/")
                head = normalize(d or "/").rstrip("/") + "/" + tail
            pieces[0][1] = head
        elif pieces and pieces[0][0] == "glob" and ctx.cwd:
            pieces.insert(0, ["lit", ctx.cwd.rstrip("/") + "/"])
        shown = "".join(t if k != "any" else "*" for k, t in pieces)
        absolute = bool(pieces) and (pieces[0][0] == "any" or (pieces[0][0] == "lit" and pieces[0][1].startswith("/")))
        # The last path component: pieces after the last literal slash.
        last: list[Piece] = []
        for k, t in reversed(pieces):
            if k == "lit" and "/" in t:
                last.append(("lit", t.rsplit("/", 1)[1]))
                break
            last.append((k, t))
        last.reverse()
        if all(k == "lit" for k, _ in last):
            name = "".join(t for _, t in last)
            kind = basename_kind(name) if name else None
            if kind and not self.allowed(shown):
                return Finding(rule, shown, shown, verb, kind)
        base_src = glob_regex(last) if not any(k == "any" for k, _ in last) else None
        hit = pattern_is_secret(glob_regex(pieces) if absolute else None, base_src, self.home, ctx.cwd, dirs)
        if hit and not self.allowed(shown):
            kind = secret_kind(hit, self.home) or basename_kind(hit.rsplit("/", 1)[-1]) or "key"
            return Finding(rule, shown, shown, verb, kind)
        if absolute and pieces[0][0] == "lit":
            return self._glob_on_disk(pieces, shown, verb, ctx, rule, dirs)
        return None

    def _glob_on_disk(self, pieces: list[list[str]], shown: str, verb: str, ctx: Ctx, rule: str,
                      dirs: bool) -> Finding | None:
        """Judge what the glob names on disk (after the name-based checks found nothing)."""
        comps: list[list[tuple[str, str]]] = [[]]
        for k, t in pieces:
            if k == "any":
                return None
            if k == "lit":
                segs = t.split("/")
                for j, seg in enumerate(segs):
                    if j:
                        comps.append([])
                    if seg:
                        comps[-1].append(("lit", seg))
            else:
                comps[-1].append((k, t))
        comps = [c for c in comps if c]
        parts: list[str | re.Pattern[str]] = []
        for j, c in enumerate(comps):
            if all(k == "lit" for k, _ in c):
                parts.append("".join(t for _, t in c))
                continue
            if any(c[x] == ("glob", "*") and c[x + 1] == ("glob", "*") for x in range(len(c) - 1)):
                # `**`: recursive in zsh and with bash's globstar, so a tree read below here.
                if rule != "secret-read":
                    return None
                # Below the known directories: a glob component before `**` (`src/*/x/**`) is
                # itself unknown, so the tree starts above it.
                known = []
                for p in parts:
                    if not isinstance(p, str):
                        break
                    known.append(p)
                root = "/" + "/".join(known)
                return self.tree_root(self.real(normalize(root), ctx), shown, verb, ctx)
            parts.append(re.compile("".join(
                re.escape(t) if k == "lit" else ".*" if t == "*" else "." if t == "?" else _bracket(t[1:-1])
                for k, t in c) + r"\Z", re.DOTALL))
        matches = self.disk.expand(parts, self.dotglob)
        for m in matches or ():
            f = self.read_path(m, verb, ctx, rule, dirs)
            if f:
                f.shown = shown
                return f
        return None

    def write(self, arg: Arg, verb: str, ctx: Ctx, delete: bool = False) -> Finding | None:
        """A write (or delete) of `arg`: a Finding when it lands outside the root/temp dirs."""
        rule = "delete-outside-root" if delete else "write-outside-root"
        for v in arg.variants:
            s = static_text(v)
            if s is not None:
                if not s:
                    continue
                path = self.resolve(s, ctx)
                if not path.startswith("/") or is_device_sink(path):
                    continue
                self.wrote = True
                out = is_outside(path, self.root, self.home, self.tmp)
                if delete and path in self.tmp:
                    out = True      # removing a shared temp dir itself
                if out and not self.allowed(path):
                    return Finding(rule, path, s, verb, "outside")
                continue
            prefix = ""
            for k, t in v:
                if k != "lit":
                    break
                prefix += t
            known = prefix.rpartition("/")[0] + "/" if "/" in prefix else ""
            if not known:
                if not ctx.cwd:
                    continue
                known = ctx.cwd
            base = self.resolve(known, ctx)
            if not base.startswith("/"):
                continue
            shown = "".join(t if k != "any" else "*" for k, t in v)
            self.wrote = True
            if is_outside(base, self.root, self.home, self.tmp) and not self.allowed(shown):
                target = base.rstrip("/") + "/" + shown[len(known):] if shown.startswith(known) else shown
                return Finding(rule, target, shown, verb, "outside")
        return None

    def load(self, arg: Arg, ctx: Ctx) -> None:
        """`source FILE` / `--env-file FILE`: loading a secret is allowed, remembered."""
        for v in arg.variants:
            s = static_text(v)
            if s is None:
                f = self._read_pattern(v, "source", ctx, "secret-read")
            else:
                f = self.read_path(s, "source", ctx)
            if f and self.loaded is None:
                self.loaded = f.target




# -- where a command's output goes ------------------------------------------------------

_OUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


def _last_diversion(toks: list[Token]) -> int:
    """Index of the last token that diverts output from stdout (-1: none): a redirect to a
    file, or a pipe into a program that is not a line filter. A command is diverted when it
    starts at or before that index (conservative: any later diversion counts)."""
    last = -1
    for i, t in enumerate(toks):
        if t[0] == "r":
            if t[1] not in _OUT_REDIRECTS or t[3] is None:
                continue
            target = L.literal(t[3])
            if target is not None and (target.isdigit() or target == "-" or is_device_sink(target)):
                continue
            last = i
        elif t[0] == "op" and t[1] in ("|", "|&") and not _line_filter(toks, i + 1):
            last = i
    return last


# Programs that pass lines through whole (or drop them): after a recursive read, their output
# still holds every secret value intact, so redaction by value still finds it.
_LINE_FILTERS = frozenset({"head", "tail", "grep", "egrep", "fgrep", "rg", "sort", "uniq", "wc", "cat",
                           "nl", "less", "more", "tac"})


def _line_filter(toks: list[Token], j: int) -> bool:
    words: list[str | None] = []
    while j < len(toks) and toks[j][0] != "op":
        if toks[j][0] == "w":
            words.append(L.literal(toks[j][1]))
        elif toks[j][0] == "r" and toks[j][1] in _OUT_REDIRECTS:
            return False
        j += 1
    if not words or words[0] is None:
        return False
    name = command_name(words[0])
    if name not in _LINE_FILTERS:
        return False
    cut = "c" if name in ("head", "tail") else "o"
    for a in words[1:]:
        if a is None:
            continue
        if a.startswith("--"):
            if a.startswith(("--bytes", "--only-matching", "--replace", "--output", "--color=always",
                             "--colour=always", "--color=force", "--pretty")):
                return False
        elif a.startswith("-") and len(a) > 1 and not a[1:].isdigit():
            letters = a[1:]
            if cut in letters or (name == "rg" and ("r" in letters or "p" in letters)) or \
                    (name == "sort" and "o" in letters):
                return False
    if name == "uniq" and sum(1 for a in words[1:] if a and not a.startswith("-")) > 1:
        return False            # `uniq IN OUT` writes a file
    return True
