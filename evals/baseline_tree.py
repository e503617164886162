"""The `reflex` package as it was at an earlier commit, to measure against in the same run.

    with baseline_tree.checkout("e7cdb23") as root:       # None when git cannot give it
        subprocess.run([sys.executable, "-c", CODE], env=baseline_tree.env(root))

`checkout` extracts `reflex/` of that commit (git archive) into a temporary directory;
`env(root)` puts it first on the import path, ahead of this checkout's editable install, so a
subprocess imports the old code with this environment's dependencies.  Benchmarks use it for
their before/after figures: the same machine, the same inputs, the same minute.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Where a module lived before the restructure of issue 11 (new name -> old name).  A baseline
# from before it gets an alias module at each new name, so one benchmark child imports the
# same names from either tree.
RENAMED = {
    "reflex.analysis.compile": "reflex.policy_compile",
    "reflex.analysis.evidence": "reflex.evidence",
    "reflex.analysis.replay": "reflex.replay",
    "reflex.analysis.stats": "reflex.stats",
    "reflex.arc.decide": "reflex.decide",
    "reflex.arc.detectors": "reflex.detectors",
    "reflex.arc.events": "reflex.events",
    "reflex.arc.fold": "reflex.fold",
    "reflex.arc.intents": "reflex.intents",
    "reflex.arc.ledger_events": "reflex.ledger_events",
    "reflex.arc.policy": "reflex.policy",
    "reflex.daemon.control": "reflex.daemon_control",
    "reflex.daemon.retrieval_models": "reflex.retrieval_models",
    "reflex.harness.claude.answers": "reflex.claude_answers",
    "reflex.harness.claude.hooks": "reflex.daemon.claude",
    "reflex.harness.claude.models": "reflex.hookmodels",
    "reflex.harness.claude.payload": "reflex.payload",
    "reflex.harness.claude.permissions": "reflex.permissions",
    "reflex.harness.claude.proc": "reflex.daemon.harness_proc",
    "reflex.harness.claude.transcript": "reflex.transcript",
    "reflex.harness.claude.truncation": "reflex.stats.tokens_delivered",
    "reflex.protocol": "reflex.wire",
    "reflex.safety.argv": "reflex.safety_argv",
    "reflex.safety.cmds": "reflex.safety_cmds",
    "reflex.safety.disk": "reflex.safety_disk",
    "reflex.safety.files": "reflex.safety_files",
    "reflex.safety.lex": "reflex.safety_lex",
    "reflex.safety.nested": "reflex.safety_exec",
    "reflex.safety.paths": "reflex.safety_paths",
    "reflex.safety.pipesplit": "reflex.pipesplit",
    "reflex.safety.plane": "reflex.safety",
    "reflex.safety.readers": "reflex.safety_readers",
    "reflex.safety.secrets": "reflex.secret_values",
    "reflex.safety.shell": "reflex.safety_shell",
    "reflex.safety.words": "reflex.safety_words",
    "reflex.shim.capture": "reflex.capture",
    "reflex.shim.client": "reflex.client",
    "reflex.shim.fallback": "reflex.local_decision",
    "reflex.shim.hook": "reflex.hook",
    "reflex.shim.launcher": "reflex.launcher",
    "reflex.shim.pipetee": "reflex.pipetee",
    "reflex.shim.retrieve": "reflex.retrieve",
    "reflex.shim.run": "reflex.runner",
    "reflex.shim.spool": "reflex.spool",
    "reflex.worktree.ignore": "reflex.worktree_ignore",
    "reflex.worktree.registry": "reflex.worktree",
    "reflex.worktree.root": "reflex.worktree_root",
    "reflex.worktree.tree": "reflex.worktree_tree",
    "reflex.worktree.watch": "reflex.worktree_watch",
}

# The tree before issue 17 (the starvation detector as the issue found it).
ISSUE17_BASE = "e7cdb23"
# The tree before the timeline's /dev/null gate (a redirect to /dev/null alone no longer parsed).
DEV_NULL_GATE_BASE = "521104a"


@contextlib.contextmanager
def checkout(rev: str):
    tmp = tempfile.mkdtemp(prefix="ctx-baseline-")
    try:
        proc = subprocess.run(["git", "-C", REPO, "archive", "--format=tar", rev, "reflex"],
                              capture_output=True, timeout=60)
        if proc.returncode != 0 or not proc.stdout:
            yield None
            return
        with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        _alias_renamed(tmp)
        yield tmp
    except (OSError, subprocess.SubprocessError, tarfile.TarError):
        yield None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _alias_renamed(root: str) -> None:
    """In a tree from before the restructure, make each new module name import the old module."""
    def path_of(name: str) -> str:
        return os.path.join(root, *name.split("."))

    for new, old in RENAMED.items():
        new_path, old_path = path_of(new), path_of(old)
        if os.path.exists(new_path + ".py") or os.path.isdir(new_path):
            continue  # the tree already has the new layout
        if not (os.path.exists(old_path + ".py") or os.path.isdir(old_path)):
            continue
        parts = new.split(".")
        for i in range(2, len(parts)):
            pkg = os.path.join(root, *parts[:i])
            if os.path.exists(pkg + ".py"):
                break  # an old module has the package's name (reflex/safety.py): leave that name alone
            os.makedirs(pkg, exist_ok=True)
            init = os.path.join(pkg, "__init__.py")
            if not os.path.exists(init):
                open(init, "w").close()
        else:
            target = os.path.join(path_of(new), "__init__.py") if os.path.isdir(old_path) else new_path + ".py"
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as f:
                f.write("import importlib, sys\nsys.modules[__name__] = importlib.import_module(%r)\n" % old)


def env(root: str) -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = root + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e
