"""The hot path imports only the standard library: checked in a bare interpreter.

Every module the hook shim and the agent-facing commands import (reflex.STDLIB_ONLY, the one list
of them) is imported under `python -S -I`: no
site-packages, no user site, no environment, no current directory on sys.path.  A third-party
import anywhere on that path fails here with the module's name, instead of being swallowed at
run time by the shim's fallback (which would silently cost the safety plane whenever the
daemon is down).  The agent-facing commands are then run end to end the same way.
"""

import os
import subprocess
import sys

import pytest

import reflex

from tests.conftest import REPO

HOT = sorted(name for name, _path in reflex.stdlib_only_modules())

PROBE = """
import sys
sys.path.insert(0, %r)
before = set(sys.modules)
import importlib
importlib.import_module(%r)
new = set(sys.modules) - before
foreign = sorted(m for m in new if m.split('.')[0] not in sys.stdlib_module_names and m.split('.')[0] != 'reflex')
print('\\n'.join(foreign))
"""


def _bare(code, **kw):
    return subprocess.run([sys.executable, "-S", "-I", "-c", code], capture_output=True, text=True, timeout=60, **kw)


@pytest.mark.parametrize("module", HOT)
def test_hot_module_imports_only_the_standard_library(module):
    p = _bare(PROBE % (REPO, module))
    assert p.returncode == 0, "%s does not import in a bare interpreter:\n%s" % (module, p.stderr[-2000:])
    assert p.stdout.split() == [], "%s pulls in non-stdlib modules: %s" % (module, p.stdout.split())


def test_the_hot_path_is_covered():
    # The agent-facing commands import nothing outside STDLIB_ONLY: what `ctx hook claude` and
    # `ctx run` load in a bare interpreter is a subset of the checked list.
    code = ("import sys; sys.path.insert(0, %r); before = set(sys.modules)\n"
            "import reflex.entry, reflex.shim.hook, reflex.shim.run, reflex.shim.retrieve, reflex.shim.fallback\n"
            "print('\\n'.join(sorted(m for m in set(sys.modules) - before if m.startswith('reflex'))))" % REPO)
    p = _bare(code)
    assert p.returncode == 0, p.stderr[-2000:]
    loaded = set(p.stdout.split())
    assert loaded - set(HOT) == set(), "hot-path modules missing from reflex.STDLIB_ONLY: %s" % sorted(loaded - set(HOT))


def test_site_packages_are_really_hidden():
    # The probe itself must be able to fail: a third-party package the venv has is not importable.
    p = _bare("import sys; sys.path.insert(0, %r); import click" % REPO)
    assert p.returncode != 0 and "ModuleNotFoundError" in p.stderr


@pytest.mark.parametrize("argv", [["hook", "claude"], ["hook", "codex"], ["hook", "gemini"],
                                  ["hook", "copilot", "preToolUse"], ["get", "--help"], ["search", "--help"], ["run", "--", "true"]])
def test_agent_facing_commands_run_in_a_bare_interpreter(argv, tmp_path):
    code = "import sys; sys.path.insert(0, %r); sys.argv = ['ctx'] + %r; from reflex.entry import main; " \
           "sys.exit(main())" % (REPO, argv)
    env = {"CTX_HOME": str(tmp_path / "ctxhome"), "HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    # -I ignores the environment for Python itself, but the command still reads CTX_HOME/HOME.
    p = subprocess.run([sys.executable, "-S", "-c", code], input=b"{}", capture_output=True, timeout=60, env=env)
    assert b"ModuleNotFoundError" not in p.stderr and b"Traceback" not in p.stderr, p.stderr.decode()[-2000:]
