"""is_narrower(a, b): a runs a strict subset of what b runs.

Both must be the same family in the same cwd with the same core once scope
is removed (`unscoped`): only the selection may differ.  Then a is narrower
when it keeps every restriction of b (each -k/-m/-run/-t/--tests filter,
-x, --lf, package) and either adds one or only selects paths inside b's paths:
a named test of a file (`f.py::test_x` in `f.py`), a file of a directory,
a line of a file (mix `f.exs:42`), a package under `./...` (go).  A command
without paths selects everything in its cwd.  Restrictions are compared as
written: `-k "a and b"` is not recognised as narrower than `-k a`.
"""

from __future__ import annotations

from reflex.signature.model import Signature

_PATHLIKE = frozenset({"path"})


def _norm(p: str) -> str:
    while p.startswith("./"):
        p = p[2:]
    if len(p) > 1:
        p = p.rstrip("/")
    return p


def _contains(outer: str, inner: str, family: str) -> bool:
    o, i = _norm(outer), _norm(inner)
    if o in ("", ".", "...") or o == i:
        return True
    if family in ("jest", "vitest"):   # positionals are path regexes
        return o in i
    if o.endswith("/..."):
        root = o[:-4]
        return i == root or i.startswith(root + "/")
    return i.startswith((o + "/", o + "::", o + ":"))


def is_narrower(a: Signature, b: Signature) -> bool:
    try:
        if a.family != b.family or a.family == "other" or a.cwd != b.cwd or a.unscoped != b.unscoped:
            return False
        pa = [s.value for s in a.scope if s.kind in _PATHLIKE and _norm(s.value) not in ("", ".")]
        pb = [s.value for s in b.scope if s.kind in _PATHLIKE and _norm(s.value) not in ("", ".")]
        fa = {(s.kind, s.value) for s in a.scope if s.kind not in _PATHLIKE}
        fb = {(s.kind, s.value) for s in b.scope if s.kind not in _PATHLIKE}
        if not fb <= fa:
            return False
        if pb:
            if not pa or not all(any(_contains(q, p, a.family) for q in pb) for p in pa):
                return False
        strict = fa != fb or {_norm(p) for p in pa} != {_norm(p) for p in pb}
        return strict
    except Exception:
        return False
