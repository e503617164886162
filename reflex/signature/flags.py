"""A declarative option walker shared by the tool analyzers.

Each tool declares which of its options are presentation (stripped into a
Decoration), which select scope (kept in the core, listed in the scope, left
out of the unscoped core) and which take a value (so the value is not
mistaken for a positional).  Unknown options are identity: kept as written.
Bundled short flags (`-xvs`) are split when every letter is known, so
`pytest -xvs` and `pytest -x -v -s` have the same core.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reflex.signature.model import Decoration, ScopeItem
from reflex.signature.syntax import Word

_EMPTY: dict = {}


@dataclass(frozen=True)
class Spec:
    valued: frozenset = frozenset()        # identity options taking a value
    display: dict = field(default_factory=dict)          # bare flag -> (kind, value)
    display_valued: dict = field(default_factory=dict)   # option -> kind; value = its argument
    scope_flags: dict = field(default_factory=dict)      # bare flag -> scope kind
    scope_valued: dict = field(default_factory=dict)     # option -> scope kind
    attached: dict = field(default_factory=dict)         # "-r" -> (kind, "display"|"scope") for -rA
    bundle: str = ""                       # letters of value-less short flags
    positional: str | None = "path"        # scope kind of positionals; None: identity
    single_dash_long: bool = False         # go style: -run=X
    stop_at_dd: bool = True                # stop at `--`, leave the rest to the caller
    optional_bool: frozenset = frozenset()  # flags that may take true/false next (tsc --pretty false)


@dataclass(slots=True)
class Parsed:
    kept: list = field(default_factory=list)        # rendered tokens kept in the core
    unscoped: list = field(default_factory=list)    # kept minus scope tokens
    decorations: list = field(default_factory=list)
    scope: list = field(default_factory=list)
    positionals: list = field(default_factory=list)  # [Word]
    rest: list | None = None                         # words after `--` (None: no `--`)


def _keep(p: Parsed, text: str, scoped: bool) -> None:
    p.kept.append(text)
    if not scoped:
        p.unscoped.append(text)


def _split_bundle(v: str) -> list[str]:
    runs, body = [], v[1:]
    i = 0
    while i < len(body):
        j = i
        while j < len(body) and body[j] == body[i]:
            j += 1
        runs.append("-" + body[i:j])
        i = j
    return runs


def _flag(p: Parsed, spec: Spec, name: str, text: str | None = None, value: str = "") -> bool:
    """Handle a flag without a separate value; True if it was known."""
    d = spec.display.get(name)
    if d is not None:
        p.decorations.append(Decoration(d[0], value or d[1]))
        return True
    k = spec.scope_flags.get(name)
    if k is not None:
        p.scope.append(ScopeItem(k, value))
        _keep(p, text or name, True)
        return True
    return False


def walk(words: list, spec: Spec) -> Parsed:
    p = Parsed()
    n = len(words)
    i = 0
    while i < n:
        w: Word = words[i]
        v = w.value
        i += 1
        if v == "--" and spec.stop_at_dd:
            p.rest = list(words[i:])
            break
        if len(v) < 2 or v[0] != "-":
            if spec.positional:
                p.scope.append(ScopeItem(spec.positional, v))
                _keep(p, w.text, True)
            else:
                _keep(p, w.text, False)
            p.positionals.append(w)
            continue
        if v.startswith("--") or spec.single_dash_long:
            name, eq, val = v.partition("=")
        else:
            name, eq, val = v, "", ""
        if not eq and _flag(p, spec, name):
            if name in spec.optional_bool and i < n and words[i].value in ("true", "false"):
                p.decorations[-1] = Decoration(p.decorations[-1].kind, words[i].value)
                i += 1
            continue
        kind = spec.display_valued.get(name)
        if kind is not None:
            if eq:
                p.decorations.append(Decoration(kind, val))
            elif i < n:
                p.decorations.append(Decoration(kind, words[i].value))
                i += 1
            continue
        kind = spec.scope_valued.get(name)
        if kind is not None:
            if eq:
                p.scope.append(ScopeItem(kind, val))
                _keep(p, w.text, True)
            elif i < n:
                p.scope.append(ScopeItem(kind, words[i].value))
                _keep(p, w.text, True)
                _keep(p, words[i].text, True)
                i += 1
            else:
                _keep(p, w.text, False)
            continue
        if name in spec.valued:
            _keep(p, w.text, False)
            if not eq and i < n:
                _keep(p, words[i].text, False)
                i += 1
            continue
        handled = False
        for pre, (kind, role) in spec.attached.items() if v[1] != "-" else ():
            if v.startswith(pre) and len(v) > len(pre):
                if role == "display":
                    p.decorations.append(Decoration(kind, v[len(pre):]))
                else:
                    p.scope.append(ScopeItem(kind, v[len(pre):]))
                    _keep(p, w.text, True)
                handled = True
                break
        if handled:
            continue
        if spec.bundle and len(v) > 2 and v[1] != "-" and all(c in spec.bundle for c in v[1:]):
            for part in _split_bundle(v):
                if not _flag(p, spec, part):
                    _keep(p, part, False)
            continue
        if eq and _flag(p, spec, name, w.text, val):
            continue
        _keep(p, w.text, False)
    return p
