"""What code a figure was measured on: the git tree hash of reflex/ as it is on disk.

`code_tree` equals `git rev-parse HEAD:reflex` when reflex/ is committed and clean; with local
changes it is the hash the tree WOULD have if committed (computed through a throwaway index, so
nothing in the repository changes).  Every benchmark JSON and the report carry it, and the
report refuses figures stamped with another tree.
"""

import os
import subprocess
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _git(*args, env=None):
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, env=env, timeout=60)


def code_tree():
    """-> tree hash of reflex/ on disk, or None outside a git checkout."""
    clean = _git("status", "--porcelain", "--", "reflex")
    if clean.returncode != 0:
        return None
    if not clean.stdout.strip():
        head = _git("rev-parse", "HEAD:reflex")
        if head.returncode == 0:
            return head.stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, "index"))
        if _git("read-tree", "HEAD", env=env).returncode != 0:
            return None
        if _git("add", "-A", "--", "reflex", env=env).returncode != 0:
            return None
        tree = _git("write-tree", "--prefix=reflex/", env=env)
        return tree.stdout.strip() or None if tree.returncode == 0 else None


def stamp():
    return {"code_tree": code_tree(), "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
