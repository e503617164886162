"""The package's import graph: no cycles, and each package imports only what its `__init__` says.

Read from the source (AST), counting imports inside functions and under TYPE_CHECKING too: a
lazy import hides a cycle from the interpreter, not from a reader.
"""

import ast
import os

from tests.conftest import REPO

PKG = os.path.join(REPO, "reflex")


def _modules():
    mods = {}
    for d, dirs, files in os.walk(PKG):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(d, f)
                name = os.path.relpath(p, REPO)[:-3].replace(os.sep, ".")
                if name.endswith(".__init__"):
                    name = name[: -len(".__init__")]
                mods[name] = p
    return mods


def _imports(mods):
    graph = {}
    for name, path in mods.items():
        is_pkg = path.endswith("__init__.py")
        targets = set()
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            found = []
            if isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg else 0)]
                    base = ".".join(parts + ([node.module] if node.module else []))
                found = [base + "." + a.name if base + "." + a.name in mods else base for a in node.names]
            for t in found:
                while t not in mods and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t in mods and t != name:
                    targets.add(t)
        graph[name] = targets
    return graph


GRAPH = _imports(_modules())


def _cycles(graph):
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read():
    # The check must be able to fail: known edges are seen, lazy ones included.
    assert "reflex.safety.shell" in GRAPH["reflex.safety.plane"]
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


# What each package may not import (its __init__ says why).
FORBIDDEN = {
    "reflex.shim": ("reflex.daemon", "reflex.analysis", "reflex.arc", "reflex.digest.render", "reflex.ledger", "reflex.cli", "reflex.commands"),
    "reflex.safety": ("reflex.shim", "reflex.daemon", "reflex.harness", "reflex.arc", "reflex.analysis", "reflex.digest", "reflex.ledger"),
    "reflex.arc": ("reflex.daemon", "reflex.harness", "reflex.analysis", "reflex.shim", "reflex.cli", "reflex.commands"),
    "reflex.harness": ("reflex.analysis", "reflex.cli", "reflex.commands"),
    "reflex.digest": ("reflex.daemon", "reflex.harness", "reflex.analysis", "reflex.arc", "reflex.shim", "reflex.ledger"),
    "reflex.signature": ("reflex.daemon", "reflex.harness", "reflex.analysis", "reflex.arc", "reflex.shim", "reflex.ledger", "reflex.digest"),
    "reflex.ledger": ("reflex.daemon", "reflex.harness", "reflex.analysis", "reflex.shim", "reflex.cli", "reflex.commands"),
    "reflex.worktree": ("reflex.daemon", "reflex.harness", "reflex.analysis", "reflex.arc", "reflex.shim", "reflex.ledger", "reflex.digest"),
    "reflex.daemon": ("reflex.analysis", "reflex.cli", "reflex.commands"),
    "reflex.analysis": ("reflex.daemon", "reflex.shim", "reflex.cli", "reflex.commands"),
}


def _within(mod, pkg):
    return mod == pkg or mod.startswith(pkg + ".")


def test_packages_import_only_what_they_may():
    bad = []
    for mod, targets in sorted(GRAPH.items()):
        for pkg, forbidden in FORBIDDEN.items():
            if _within(mod, pkg):
                bad += ["%s -> %s" % (mod, t) for t in sorted(targets) if any(_within(t, f) for f in forbidden)]
    assert bad == []


def _imported_names(path):
    names = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module} | {node.module + "." + a.name for a in node.names}
    return names


def _py_files(top):
    for d, dirs, files in os.walk(os.path.join(REPO, top)):
        dirs[:] = [x for x in dirs if x not in ("__pycache__", "fixtures", "corpus", "out")]
        yield from (os.path.join(d, f) for f in files if f.endswith(".py"))


def test_tests_and_evals_share_only_tests_support():
    # Tests never import evals; evals import only tests.support (what both sides share).
    bad = [(p, n) for p in _py_files("tests") for n in _imported_names(p) if n == "evals" or n.startswith("evals.")]
    bad += [(p, n) for p in _py_files("evals") for n in _imported_names(p)
            if (n == "tests" or n.startswith("tests.")) and not (n == "tests.support" or n.startswith("tests.support."))]
    assert bad == []
