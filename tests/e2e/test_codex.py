"""ctx in the REAL OpenAI Codex CLI (npm @openai/codex, pinned), offline, driven by a scripted
Responses API model: digest, densified re-run, followable hint, secret deny, harness-labelled ledger."""

from __future__ import annotations

import pytest

from tests.e2e.harness_session import check_loop, kill_daemon, run_session

pytestmark = pytest.mark.e2e


@pytest.fixture
def tmp(tmp_path):
    yield tmp_path
    kill_daemon(tmp_path / "ctxhome")


def test_codex_session_through_ctx(tmp):
    check_loop(run_session("codex", tmp))
