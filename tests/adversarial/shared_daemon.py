"""One real daemon for a whole table of cases (a module-scoped fixture).

Starting a daemon costs seconds on a loaded machine; a table of twenty cases that each
only run commands through it and read what it recorded does not need twenty.  The
daemon and its CTX_HOME are real and private to the module; each call passes the
environment explicitly (the per-test CTX_HOME from conftest stays untouched).  Tests
that measure the daemon itself (its memory) keep their own.
"""

import os

import pytest

from ..conftest import DaemonProc, TIKTOKEN_DIR, _kill_strays


class Shared:
    def __init__(self, home):
        from reflex import paths as paths_mod
        self.home = home
        self.paths = paths_mod.resolve({"CTX_HOME": home})
        self.daemon = DaemonProc(self.paths)

    def env(self, **extra):
        env = dict(os.environ, CTX_HOME=self.home, **extra)
        if TIKTOKEN_DIR:
            env["TIKTOKEN_CACHE_DIR"] = os.path.abspath(TIKTOKEN_DIR)
        return env


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    root = tmp_path_factory.mktemp("shared")
    (root / "home").mkdir()
    world = Shared(str(root / "ctxhome"))
    extra = {"CTX_HOME": world.home, "HOME": str(root / "home")}
    if TIKTOKEN_DIR:
        extra["TIKTOKEN_CACHE_DIR"] = os.path.abspath(TIKTOKEN_DIR)
    try:
        world.daemon.start(extra_env=extra)
        yield world
    finally:
        world.daemon.kill9()
        _kill_strays(world.paths)
