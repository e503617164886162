"""`ctx signature` (reflex/commands/signature_cmd.py) through click's CliRunner."""

import json

from click.testing import CliRunner

from reflex.commands.signature_cmd import signature_cmd


def run(*args):
    result = CliRunner().invoke(signature_cmd, list(args))
    return result


def test_argv_after_double_dash_is_requoted():
    r = run("--json", "--", "pytest", "-k", "a and b", "-q", "tests/")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["family"] == "pytest"
    assert d["core"] == "pytest -k 'a and b' tests/"
    assert {"kind": "keyword", "value": "a and b"} in d["scope"]


def test_one_quoted_argument_is_the_command_line():
    r = run("--json", "--cwd", "/repo", "cd a && pytest -x 2>&1 | tail -5")
    d = json.loads(r.output)
    assert (d["family"], d["core"], d["cwd"]) == ("pytest", "pytest -x", "/repo/a")
    assert [s["core"] for s in d["segments"]] == ["cd a", "pytest -x", "tail -5"]
    for key in ("family", "core", "core_hash", "raw", "decorations", "scope", "reads", "writes", "segments", "cwd"):
        assert key in d


def test_text_output():
    r = run("--", "sed", "-n", "10,40p", "src/app.py")
    assert r.exit_code == 0
    assert "family    file-read" in r.output
    assert "reads     src/app.py:10-40" in r.output


def test_compare_json():
    r = run("--compare", "mix test 2>&1 | tail -5", 'mix test 2>&1 | grep -E "(tests|failures)"', "--json")
    d = json.loads(r.output)
    assert d["same_core"] is True and d["same_raw"] is False
    assert d["a_narrower_than_b"] is False and d["b_narrower_than_a"] is False
    assert d["a"]["core"] == d["b"]["core"] == "mix test"
    r = run("--compare", "pytest tests/a.py::test_x -q", "pytest -q", "--json")
    d = json.loads(r.output)
    assert d["same_core"] is False and d["a_narrower_than_b"] is True and d["b_narrower_than_a"] is False


def test_compare_text_and_usage_error():
    r = run("--compare", "pytest -q", "pytest -v")
    assert r.exit_code == 0 and "same_core         yes" in r.output
    r = run("--compare", "pytest")
    assert r.exit_code == 2 and "exactly two" in r.output


def test_command_is_required():
    assert run().exit_code == 2
