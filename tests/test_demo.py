"""`ctx demo` as a user runs it: a real daemon, the real shim, the recorded Claude Code session.

Issue 30 item 4: the demo from a wheel without pytest replayed `pytest: command not found` and
exited 0, its addresses pointed into a CTX_HOME it had deleted, and its scorecard showed ctx
losing.  These run the installed console script in subprocesses (TMPDIR points the demo's
scratch directory into the test's tmp_path).
"""

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
CTX = VENV_BIN / "ctx"


def _env(tmp_path: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CTX_HOME", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID")}
    env.update(TMPDIR=str(tmp_path), HOME=str(tmp_path / "home"), **extra)
    return env


def _bare_python(root: Path) -> Path:
    """A venv with ctx importable but no pytest command: what `pip install ctx-reflex` gives."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", str(root)], check=True, timeout=60)
    site = Path(subprocess.run([str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # The project's own environment, for ctx and its dependencies (its console scripts, pytest's
    # included, stay in its bin/, which is not on the PATH below).
    (site / "ctx_under_test.pth").write_text("import site; site.addsitedir(%r)\n" % sysconfig.get_paths()["purelib"])
    ctx = root / "bin" / "ctx"
    ctx.write_text("#!%s\nfrom reflex.entry import main\nmain()\n" % (root / "bin" / "python"))
    ctx.chmod(0o755)
    return ctx


def test_demo_without_pytest_says_what_is_missing_and_fails(tmp_path):
    ctx = _bare_python(tmp_path / "bare")
    # No pyenv shims either: a shim would find another Python's pytest.
    env = _env(tmp_path, PATH=os.pathsep.join([str(ctx.parent), "/usr/bin", "/bin"]))
    p = subprocess.run([str(ctx), "demo"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 1, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "pytest" in p.stderr and "-m pip install pytest" in p.stderr, p.stderr
    assert "Nothing was started" in p.stderr, p.stderr
    assert not (tmp_path / ("ctx-demo-%d" % os.getuid())).exists(), "no scratch project, no daemon"


def test_demo_shows_ctx_saving_and_its_addresses_resolve_afterwards(tmp_path):
    env = _env(tmp_path)
    p = subprocess.run([str(CTX), "demo"], capture_output=True, text=True, env=env, timeout=300)
    log = p.stdout
    assert p.returncode == 0, (log[-3000:], p.stderr[-2000:])
    assert "| FAIL test_calc.py::" in log, log        # .ci/run's wheel block greps this
    # The session's own `ctx get` of the digest's address returned the failing lines.
    assert re.search(r"\| E\s+assert 1 == 1\.5", log), log
    net = re.search(r"digest net (-?[\d,]+)", log)
    assert net and int(net.group(1).replace(",", "")) > 0, log
    assert "0 retries after a deny" in log and "friction" not in log, log
    assert "Next: `ctx install`" in log, log

    kept = re.search(r"`CTX_HOME=(\S+) ctx get (r:[0-9a-f]{12})`", log)
    assert kept, log
    home, handle = kept.groups()
    assert Path(home).is_relative_to(tmp_path), home
    env_home = dict(env, CTX_HOME=home)
    try:
        got = subprocess.run([str(CTX), "get", handle], capture_output=True, text=True, env=env_home, timeout=60)
        assert got.returncode == 0, got.stderr
        assert "50 passed" in got.stdout, got.stdout[-2000:]
    finally:
        subprocess.run([str(CTX), "daemon", "stop"], capture_output=True, env=env_home, timeout=60)


def test_demo_clean_removes_its_home(tmp_path):
    env = _env(tmp_path)
    p = subprocess.run([str(CTX), "demo", "--clean"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, (p.stdout[-3000:], p.stderr[-2000:])
    assert "no longer resolve" in p.stdout
    assert not (tmp_path / ("ctx-demo-%d" % os.getuid())).exists()
