"""A whole command line -> Signature: segments, cwd, slicers, the main command.

Rules, in order:
1. Every simple command is a segment with its own signature; a `cd DIR`
   (or `pushd`) moves the cwd of the segments after it, a subshell's `cd`
   does not leak out, and `git -C`, `make -C`, `npm --prefix` move their own.
2. Statements are split on `&&`, `||`, `;`, `&` and newlines; a statement is
   a pipeline.  Trailing stdout filters of a pipeline (`| tail -5`,
   `| grep -E "(tests|failures)"`) are presentation: dropped from the core,
   kept as decorations.  `|&` is `2>&1 |`.
3. Statements that only set up or report (echo/printf without a file
   write, `true`, `sleep`, `export`, `source .venv/bin/activate`, `|| echo
   "not found"`) are dropped from the core when anything else remains, and
   leading `cd` statements are folded into the cwd.  So `cd a && pytest -q
   2>&1 | tail -5; echo "exit $?"` has core `pytest` in cwd `a`.
4. The main segment is the first one of a test/lint/build family (pytest …
   maven); failing that, the first real command of the last remaining
   statement.  family, subcommand, scope and cwd are the main segment's;
   core is the remaining statements rendered canonically, joined by their
   operators; core_hash hashes (main cwd, core).
"""

from __future__ import annotations

import posixpath

from reflex.signature.command import analyze
from reflex.signature.files import SLICERS, slicer
from reflex.signature.model import Decoration, FileRef, Signature, core_hash
from reflex.signature.syntax import POP, PUSH, parses_cleanly, read

STABILIZE_CHARS = 8 * 1024    # beyond this a fallback core is kept as is (time budget)
RUNNER_FAMILIES = frozenset({"pytest", "go-test", "cargo-test", "jest", "vitest", "npm-script", "tsc", "ruff",
                             "mypy", "eslint", "make", "mix", "gradle", "maven"})
_FEEDERS = frozenset({"echo", "printf", "cat", "yes"})


class _Seg:
    __slots__ = ("view", "op", "cwd", "source", "slice")

    def __init__(self, view, op, cwd, source):
        self.view, self.op, self.cwd, self.source = view, op, cwd, source
        self.slice = None   # the Decoration when this segment is a trailing slicer


def join_cwd(base: str | None, target: str) -> str:
    if target in ("", "~") or target.startswith(("/", "~", "$")) or base is None:
        return posixpath.normpath(target) if target.startswith("/") else (target or "~")
    if target == "-":
        return base
    return posixpath.normpath(posixpath.join(base, target))


def build(text, cwd: str | None = None, depth: int = 0, info: dict | None = None) -> Signature:
    """info, if given, receives "trivial" (nothing but set-up/report statements)
    and "cd" (the whole line is one cd): what `bash -c CODE` needs to know."""
    sig = _build(text, cwd, depth, info)
    if depth == 0 and len(text) <= STABILIZE_CHARS and (
            sig.parser != "tree-sitter" or (sig.core != sig.raw and not parses_cleanly(sig.core))):
        sig = _stabilize(sig, cwd)
    return sig


def _stabilize(sig: Signature, cwd) -> Signature:
    """Make core a fixed point (signature(core).core == core) when it came from a
    fallback reading or renders into text tree-sitter cannot read: re-read the
    core until it stops changing.  Only broken input takes this path."""
    from dataclasses import replace
    core, unscoped = sig.core, sig.unscoped
    for _ in range(4):
        again = _build(core, cwd, 0)
        if again.core == core:
            break
        core, unscoped = again.core, again.unscoped
    if core == sig.core:
        return sig
    return replace(sig, core=core, unscoped=unscoped, core_hash=core_hash(sig.cwd, core))


def _build(text, cwd: str | None = None, depth: int = 0, info: dict | None = None) -> Signature:
    raw = " ".join(text.split())
    stream, reading = read(text)
    if stream is None:
        return Signature(family="other", core=raw, core_hash=core_hash(cwd, raw), raw=raw, cwd=cwd,
                         unscoped=raw, parser="raw")
    segs = _segments(stream, cwd, depth)
    trailing_bg = bool(stream) and stream[-1] == "&"
    statements = _statements(segs)
    if not statements:
        return Signature(family="other", core="", core_hash=core_hash(cwd, ""), raw=raw, cwd=cwd, parser=reading)
    kept = [st for st in statements if not all(s.view.trivial for s in _body(st))]
    if info is not None:
        info["trivial"] = not kept
        body = _body(statements[0])
        if len(statements) == 1 and len(body) == 1 and body[0].view.cd is not None:
            info["cd"] = body[0].view.cd
        if len(segs) == 1:
            info["view"] = segs[0].view
    kept = kept or statements
    kept = [st for st in kept if any(s.view.words for s in _body(st))] or kept[:1]
    while (len(kept) > 1 and len(_body(kept[0])) == 1 and kept[0][0].view.cd is not None
           and not kept[0][0].view.writes):
        kept = kept[1:]
    _main_st, main = _main(kept)
    background = _backgrounded(statements, trailing_bg)
    core = _render(kept, None, background)
    unscoped = _render(kept, main, background)
    decorations, reads, writes, routes, wrappers, env = [], [], [], [], [], []
    written: set = set()
    kept_ids = {id(s) for st in kept for s in st}
    for s in segs:
        v = s.view
        if id(s) in kept_ids:
            decorations += v.decorations
            if s.slice is not None:
                decorations.append(s.slice)
        for r in v.reads:
            if r not in reads:
                reads.append(r)
        if v.executes and posixpath.normpath(v.executes) in written and "script" not in v.routes:
            v.routes.append("script")
        for w in v.writes:
            written.add(posixpath.normpath(w.path) if w.path else w.path)
            if w not in writes:
                writes.append(w)
        routes += [r for r in v.routes if r not in routes]
        wrappers += [w for w in v.wrappers if w not in wrappers]
        env += [e for e in v.env if e not in env]
    _ranged_cat(main, segs, reads)
    mv = main.view
    return Signature(
        family=mv.family, core=core, core_hash=core_hash(main.cwd, core), raw=raw,
        decorations=tuple(decorations), scope=tuple(mv.scope), reads=tuple(reads), writes=tuple(writes),
        segments=tuple(_segment_signatures(segs, reading)), cwd=main.cwd, wrapper_route=tuple(routes),
        subcommand=mv.subcommand, unscoped=unscoped, wrappers=tuple(wrappers), env=tuple(env),
        parser=reading)


def _segments(stream: list, cwd, depth: int) -> list:
    segs: list = []
    stack: list = []
    cur, op = cwd, ""
    for x in stream:
        if x is PUSH:
            stack.append(cur)
            continue
        if x is POP:
            cur = stack.pop() if stack else cur
            continue
        if isinstance(x, str):
            op = x
            continue
        v = analyze(x, depth, cur, build)
        here = v.cwd if v.cwd is not None else cur
        if v.chdir is not None:
            here = join_cwd(here, v.chdir)
        segs.append(_Seg(v, op, here, x.source))
        if op == "|&" and len(segs) > 1:
            segs[-2].view.decorations.append(Decoration("redirect", "2>&1"))
        if v.cd is not None and op not in ("|", "|&"):
            cur = join_cwd(cur, v.cd)
        op = ""
    return segs


def _statements(segs: list) -> list:
    statements: list = []
    for s in segs:
        if statements and s.op in ("|", "|&"):
            statements[-1].append(s)
        else:
            statements.append([s])
    for st in statements:
        for s in reversed(st[1:]):
            last = s.view
            if (last.name in SLICERS and last.family in ("other", "search", "file-read") and not last.writes
                    and not last.heredocs and not last.reads):
                s.slice = slicer(last.name, last.argv[1:])
                continue
            break
    return statements


def _body(st: list) -> list:
    """A statement without its trailing slicers."""
    return [s for s in st if s.slice is None]


def _main(kept: list):
    for st in kept:
        for s in _body(st):
            if s.view.family in RUNNER_FAMILIES:
                return st, s
    st = kept[-1]
    body = _body(st)
    for i, s in enumerate(body):
        # `echo x | python y.py`, `cat data.csv | python y.py`: the consumer is the command
        if s.view.name in _FEEDERS and i + 1 < len(body):
            continue
        if s.view.words or s.view.nested:
            return st, s
    return st, body[0] if body else st[0]


def _seg_text(s: _Seg, unscoped: bool) -> str:
    words = s.view.unscoped if unscoped else s.view.words
    return " ".join(words)


def _backgrounded(statements: list, trailing_bg: bool) -> set:
    """ids of statements run in the background (`cmd &`): that stays in the core
    even when the statement after the `&` is dropped."""
    out = {id(st) for st, nxt in zip(statements, statements[1:], strict=False) if nxt[0].op == "&"}
    if trailing_bg and statements:
        out.add(id(statements[-1]))
    return out


def _render(kept: list, main, background: set) -> str:
    out: list[str] = []
    pending: list[str] = []
    for i, st in enumerate(kept):
        if i:
            if pending:
                out.append("\n" + "\n".join(pending) + "\n")
                pending = []
            elif id(kept[i - 1]) in background:
                out.append(" ")
            else:
                out.append(f" {st[0].op if st[0].op not in ('', '&') else ';'} ")
        body = _body(st)
        out.append(" | ".join(_seg_text(s, s is main) for s in body))
        if id(st) in background:
            out.append(" &")
        for s in body:
            pending += s.view.heredocs
    if pending:
        out.append("\n" + "\n".join(pending))
    return "".join(out).strip()


def _ranged_cat(main, segs: list, reads: list) -> None:
    """`cat f | head -50` reads lines 1-50 of f: the first slicer names the range
    (also `cat -n`/`nl -ba`, whose numbering keeps line numbers)."""
    v = main.view
    if v.name not in ("cat", "nl") or len(v.reads) != 1 or v.reads[0].lines:
        return
    i = segs.index(main)
    if i + 1 >= len(segs) or segs[i + 1].slice is None or segs[i + 1].op not in ("|", "|&"):
        return
    d = segs[i + 1].slice
    rng = ""
    if d.kind == "head" and d.value.isdigit():
        rng = f"1-{d.value}"
    elif d.kind == "tail" and d.value.isdigit():
        rng = f"last:{d.value}"
    elif d.kind == "tail" and d.value.startswith("+") and d.value[1:].isdigit():
        rng = f"{d.value[1:]}-"
    elif d.kind == "sed" and "-n" in d.flags:
        from reflex.signature.files import sed_ranges
        rng = sed_ranges([d.value])[0]
    if rng:
        old = v.reads[0]
        reads[reads.index(old)] = FileRef(old.path, rng)


def _segment_signatures(segs: list, reading: str) -> list:
    out = []
    for s in segs:
        v = s.view
        if v.nested is not None:
            for j, inner in enumerate(v.nested.segments):
                out.append(inner if j else _replace_op(inner, s.op))
            continue
        core = " ".join(v.words)
        if v.heredocs:
            core += "\n" + "\n".join(v.heredocs)
        out.append(Signature(
            family=v.family, core=core, core_hash=core_hash(s.cwd, core), raw=" ".join(s.source.split()),
            decorations=tuple(v.decorations), scope=tuple(v.scope), reads=tuple(v.reads), writes=tuple(v.writes),
            cwd=s.cwd, wrapper_route=tuple(v.routes), subcommand=v.subcommand, unscoped=" ".join(v.unscoped),
            wrappers=tuple(v.wrappers), env=tuple(v.env), op=s.op, parser=reading))
    return out


def _replace_op(sig: Signature, op: str) -> Signature:
    from dataclasses import replace
    return replace(sig, op=op)
