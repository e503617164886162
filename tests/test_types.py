"""The type-checked packages stay clean under mypy (configuration: [tool.mypy] in pyproject.toml).

Which packages are checked, and how, is said in docs/architecture.md ("Types").  mypy comes
with the `test` extra; without it this test skips and says so, it never passes silently.
The cache lives under the test's tmp directory, so every run is a cold run (about 15 s here)
and no stale cache can hide an error.
"""

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

CHECKED = ["reflex/safety", "reflex/daemon", "reflex/worktree", "reflex/digest", "reflex/protocol.py",
           "reflex/errors.py"]


def test_checked_packages_pass_mypy(tmp_path):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed: pip install -e '.[test]' (CI installs it)")
    env = dict(os.environ, MYPY_FORCE_COLOR="0")
    env.pop("MYPYPATH", None)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", os.path.join(REPO, "pyproject.toml"),
         "--cache-dir", str(tmp_path / "mypy-cache"), "--no-pretty", *CHECKED],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, "mypy found problems:\n" + proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout, proc.stdout + proc.stderr
