"""ctx in the REAL Codex, Gemini and Copilot CLIs (npm @openai/codex, @google/gemini-cli,
@github/copilot, pinned), offline, each driven by a scripted model for its own API (Responses API
for Codex and Copilot, Gemini API for Gemini): digest, densified re-run, followable hint, secret
deny, harness-labelled ledger.  The session itself is tests/e2e/harness_session.py."""

from __future__ import annotations

import pytest

from tests.e2e.harness_session import check_loop, kill_daemon, run_session

pytestmark = pytest.mark.e2e


@pytest.fixture
def tmp(tmp_path):
    yield tmp_path
    kill_daemon(tmp_path / "ctxhome")


@pytest.mark.parametrize("harness", ["codex", "gemini", "copilot", "qwen", "opencode", "droid"])
def test_session_through_ctx(harness, tmp):
    check_loop(run_session(harness, tmp))
