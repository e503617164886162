"""Command signatures: what a shell command is, reads, writes and asks to see.

    from reflex.signature import signature, is_narrower, Signature
    sig = signature("cd a && pytest -q 2>&1 | tail -5")
    sig.family, sig.core, sig.cwd          # "pytest", "pytest", "a"

`signature` is pure and never raises, on any input, and caps its work
(pathological input falls back to shlex, then to the raw string).  Map:

    syntax.py    text -> flat stream of simple commands and operators (tree-sitter-bash)
    wrappers.py  uv run / npx / timeout / env / python -m / bash -c … peeled off
    runners.py   pytest, go, cargo, jest, vitest, npm…, tsc, ruff, mypy, eslint, make, mix,
                 gradle, maven: display flags vs scope (and why `pytest -x` is scope)
    files.py     file reads with line ranges, searches, writers, output slicers
    gitcmd.py    git
    command.py   one simple command -> View;  chain.py  the whole line -> Signature
    narrow.py    is_narrower
tree-sitter is imported on the first call, not on import.
"""

from reflex.signature.model import Decoration, FileRef, ScopeItem, Signature, core_hash
from reflex.signature.narrow import is_narrower

__all__ = ["signature", "is_narrower", "Signature", "Decoration", "ScopeItem", "FileRef"]


def _coerce(command) -> str:
    if isinstance(command, str):
        text = command
    elif isinstance(command, (bytes, bytearray, memoryview)):
        return bytes(command).decode("utf-8", "replace")   # never holds surrogates
    elif command is None:
        text = ""
    else:
        try:
            text = str(command)
        except Exception:
            text = repr(type(command))
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:   # lone surrogates: make the text encodable everywhere downstream
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


_MEMO: dict = {}
_MEMO_MAX = 4096
_MEMO_TEXT_MAX = 4096


def signature(command, cwd: str | None = None) -> Signature:
    """-> the Signature of a shell command run in cwd.  Never raises.

    Memoised for ordinary commands: a Signature is immutable and a pure function of
    (command, cwd), and the daemon asks for the same one several times per call (the hook
    decision, the post event, the fold, ctx run).  Long commands are not kept."""
    key = (command, cwd) if isinstance(command, str) and len(command) <= _MEMO_TEXT_MAX and \
        (cwd is None or isinstance(cwd, str)) else None
    if key is not None:
        hit = _MEMO.get(key)
        if hit is not None:
            return hit
    sig = _signature(command, cwd)
    if key is not None:
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        _MEMO[key] = sig
    return sig


def _signature(command, cwd=None):
    text = _coerce(command)
    if cwd is not None and not isinstance(cwd, str):
        cwd = _coerce(cwd)
    try:
        from reflex.signature.chain import build
        return build(text, cwd)
    except Exception:   # a bug must not break a hook: fall back to the raw reading
        raw = " ".join(text.split())
        return Signature(family="other", core=raw, core_hash=core_hash(cwd, raw), raw=raw, cwd=cwd,
                         unscoped=raw, parser="raw")
