"""kill -9 the daemon repeatedly during a multi-session run: nothing lost, nothing doubled.

A small version of evals/bench_durability.py (both run tests/support/durability.py) (which runs 10,000 events from 8
sessions); the same code path, the real shim library, real daemons on a real
socket, real SIGKILLs.
"""


import pytest


@pytest.mark.slow
def test_random_kills_lose_and_duplicate_nothing(monkeypatch, tmp_path):
    from tests.support.durability import run
    res = run(events=1200, clients=4, seed=3, min_gap=0.4, max_gap=1.0)
    assert res["kills"] >= 1
    assert res["verify_ok"], res["verify_problems"]
    assert res["missing"] == 0 and res["duplicated"] == 0, res
    assert res["remaining_spool"] == 0
    assert res["worst_hook_call_s"] < res["hook_timeout_s"]
