"""Running a real tool for a test, as an agent's shell would, and bounded: `bash -c`, stdout and
stderr merged, a minimal PATH and a UTF-8 locale, and a file-size limit so that no bug (ours or
the tool's) can fill the disk."""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path

FILE_LIMIT = 8 << 20


def _limit_output() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))


def run(command: str, cwd: Path) -> bytes:
    """What `command` prints in `cwd` (stdout and stderr, merged)."""
    p = subprocess.run(["bash", "-c", command + " 2>&1"], cwd=cwd, capture_output=True, check=False,
                       env={"PATH": "/usr/bin:/bin:/usr/local/bin", "LC_ALL": "C.UTF-8"}, preexec_fn=_limit_output)
    return p.stdout
