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

# The tree before issue 17 (the starvation detector as the issue found it).
ISSUE17_BASE = "e7cdb23"


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
        yield tmp
    except (OSError, subprocess.SubprocessError, tarfile.TarError):
        yield None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def env(root: str) -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = root + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e
