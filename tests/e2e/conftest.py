"""Fixtures for tests that drive the real Claude Code CLI (see README.md in this directory).

Every test collected under tests/e2e gets the `e2e` marker, so `pytest -m "not e2e"` skips them.
If claude-agent-sdk (which bundles the CLI) is not installed, `claude_env` skips the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.claude_harness import ClaudeEnv, claude_binary, kill_daemon_of, make_scratch_repo
from tests.support.scripted_model import ScriptedModelServer

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    # A subdirectory conftest still sees the whole session's items: mark only ours.
    for item in items:
        if _HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModelServer]:
    """A started model server with an empty script; set `.policy` (or pass policy= to run)."""
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def claude_env(tmp_path: Path, scripted_model: ScriptedModelServer) -> ClaudeEnv:
    """A scratch git repo + throwaway HOME wired to `scripted_model`. Skips if the CLI is missing."""
    claude_binary()
    return ClaudeEnv(
        repo=make_scratch_repo(tmp_path / "repo"),
        home=tmp_path / "home",
        model_server=scripted_model,
    )


@pytest.fixture
def ctx_home(tmp_path: Path) -> Iterator[Path]:
    """A CTX_HOME for one session with ctx; the daemon its hooks started is killed afterwards."""
    home = tmp_path / "ctxhome"
    yield home
    kill_daemon_of(home)
