"""ctx in the REAL Google Gemini CLI (npm @google/gemini-cli, pinned), offline, driven by a scripted
Gemini API model: digest, densified re-run, followable hint, secret deny, harness-labelled ledger."""

from __future__ import annotations

import pytest

from tests.e2e.harness_session import check_loop, kill_daemon, run_session

pytestmark = pytest.mark.e2e


@pytest.fixture
def tmp(tmp_path):
    yield tmp_path
    kill_daemon(tmp_path / "ctxhome")


def test_gemini_session_through_ctx(tmp):
    check_loop(run_session("gemini", tmp))
