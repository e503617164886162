"""`ctx digest`: the same engine offline, handle computed from the bytes."""

import json

from blake3 import blake3
from click.testing import CliRunner

from reflex.commands.digest_cmd import digest_cmd
from reflex.digest import MIN_BUDGET, build_digest

RAW = (b"=================================== FAILURES ===================================\n"
       b"_________________________________ test_one _________________________________\n\n"
       b"    def test_one():\n>       assert 1 == 2\nE       assert 1 == 2\n\ntests/test_x.py:2: AssertionError\n"
       b"=========================== short test summary info ============================\n"
       b"FAILED tests/test_x.py::test_one - assert 1 == 2\n" + b"x = 1\n" * 200 +
       b"1 failed, 3 passed in 0.12s\n")


def test_digest_file_matches_the_library(tmp_path):
    path = tmp_path / "out.txt"
    path.write_bytes(RAW)
    r = CliRunner().invoke(digest_cmd, ["--family", "pytest", "--exit-code", "1", str(path)])
    assert r.exit_code == 0, r.output
    handle = "r:" + blake3(RAW).hexdigest()[:12]
    expected = build_digest(RAW, family="pytest", exit_code=1, command="", handle=handle).text
    assert r.output == expected + "\n"
    assert r.output.startswith("[ctx] pytest | normal | exit 1 | 1 failed, 3 passed")


def test_digest_stdin_json():
    r = CliRunner().invoke(digest_cmd, ["-f", "pytest", "--density", "lean", "--json", "-"], input=RAW)
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["density"] == "lean" and data["handle"] == "r:" + blake3(RAW).hexdigest()[:12]
    assert data["facts"]["failures"][0]["id"] == "tests/test_x.py::test_one"
    assert data["tokens"] <= data["budget"]
    for h in data["hints"]:
        assert blake3(RAW[h["span"][0] : h["span"][1]]).hexdigest()[:8] == h["b3"]


def test_budget_below_minimum_is_a_usage_error():
    r = CliRunner().invoke(digest_cmd, ["-f", "pytest", "-b", str(MIN_BUDGET - 1), "-"], input=RAW)
    assert r.exit_code == 2 and "budget" in r.output.lower()
