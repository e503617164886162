"""Every hook answer ctx can produce, validated against the official Claude Agent SDK's types;
the settings ctx install writes, checked by a third-party hooks-config linter.

The SDK's TypedDicts (claude_agent_sdk.types) are the authoritative Python description of the
hook output schema.  Each answer is checked two ways: pydantic validates it against the
TypedDict, and every key must be declared there (TypedDicts would otherwise let a misspelled
field through, and Claude Code ignores unknown fields silently).
"""

import json
import shutil
import subprocess
import sys
import typing

import pytest

types = pytest.importorskip("claude_agent_sdk.types", reason="the e2e extra (claude-agent-sdk) is not installed")

from reflex import install
from reflex.harness.claude import answers as claude_answers  # noqa: E402

from tests.conftest import pre_bash, run_hook  # noqa: E402

SPECIFIC = {
    "PreToolUse": types.PreToolUseHookSpecificOutput,
    "PostToolUse": types.PostToolUseHookSpecificOutput,
    "PostToolUseFailure": types.PostToolUseFailureHookSpecificOutput,
    "SessionStart": types.SessionStartHookSpecificOutput,
}


def wire_name(key):
    return {"continue_": "continue", "async_": "async"}.get(key, key)


def check_value(value, tp, path):
    origin = typing.get_origin(tp)
    if tp is typing.Any:
        return
    if origin is typing.Literal:
        assert value in typing.get_args(tp), "%s: %r not in %r" % (path, value, typing.get_args(tp))
    elif origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if isinstance(value, dict) and "hookEventName" in value:
            return  # the hookSpecificOutput union is dispatched on hookEventName below
        assert any(_fits(value, t) for t in typing.get_args(tp)), "%s: %r fits no %r" % (path, value, tp)
    elif origin is dict:
        assert isinstance(value, dict), path
    elif origin is list:
        assert isinstance(value, list), path
    elif isinstance(tp, type):
        assert isinstance(value, tp) and not (tp is int and isinstance(value, bool)), \
            "%s: %r is not %s" % (path, value, tp.__name__)


def _fits(value, tp):
    try:
        check_value(value, tp, "")
        return True
    except AssertionError:
        return False


def check_typed(obj, td, path="$"):
    """Keys declared, required keys present, values of the declared types (Python 3.11 typing)."""
    hints = typing.get_type_hints(td)
    declared = {wire_name(k): k for k in hints}
    assert isinstance(obj, dict), path
    for key, value in obj.items():
        assert key in declared, "%s.%s is not a field of %s" % (path, key, td.__name__)
        check_value(value, hints[declared[key]], "%s.%s" % (path, key))
    for req in getattr(td, "__required_keys__", ()):
        assert wire_name(req) in obj, "%s: required %s missing" % (path, req)


def check_answer(answer):
    check_typed(answer, types.SyncHookJSONOutput)
    hso = answer.get("hookSpecificOutput")
    if hso is not None:
        check_typed(hso, SPECIFIC[hso["hookEventName"]], "$.hookSpecificOutput")


def test_library_answers_conform():
    tool_input = {"command": "pytest -q", "description": "d", "timeout": 1000, "run_in_background": False}
    for answer in (claude_answers.deny("ctx safety: blocked"),
                   claude_answers.rewrite(tool_input, "ctx run -- 'pytest -q'", "allow", "why"),
                   claude_answers.rewrite(tool_input, "ctx run -- 'pytest -q'", "ask", "why"),
                   claude_answers.rewrite(tool_input, "ctx run -- 'pytest -q'", None, "why"),
                   claude_answers.context("PostToolUse", "note"),
                   claude_answers.context("PostToolUseFailure", "note"),
                   claude_answers.context("SessionStart", "note")):
        check_answer(answer)


def test_misspelled_field_is_caught():
    with pytest.raises(AssertionError):
        check_answer({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecison": "deny"}})


@pytest.mark.parametrize("command", ["pytest -q", "cat .env", "head -3 ~/.ssh/id_rsa", "ls", "go test ./..."])
def test_daemon_answers_conform(paths, running_daemon, command):
    rc, out, err, _ = run_hook(pre_bash(command, cwd=str(paths.home)))
    assert rc == 0
    if out:
        check_answer(json.loads(out))


def test_shim_fallback_answers_conform(paths):
    rc, out, err, _ = run_hook(pre_bash("cat .env", cwd=str(paths.home)))  # no daemon running
    assert rc == 0 and out
    check_answer(json.loads(out))


def _linter():
    exe = shutil.which("claude-hooks-check") or shutil.which("claude-hooks-check", path=sys.prefix + "/bin")
    if not exe:
        pytest.skip("claude-hooks-check is not installed (pip install claude-hooks-check)")
    return exe


def _lint(path):
    p = subprocess.run([_linter(), str(path)], capture_output=True, text=True)
    lines = [line.strip() for line in p.stdout.splitlines()]
    errors = [line for line in lines if line.startswith("error")]
    warnings = [line for line in lines if line.startswith("warning")]
    return p.returncode, errors, warnings


def test_installed_settings_pass_the_hooks_linter(tmp_path, paths):
    settings = tmp_path / "settings.json"
    install.install(paths, str(settings), launcher="/opt/ctx/bin/ctx")
    rc, errors, warnings = _lint(settings)
    assert errors == [] and rc == 0
    # The linter (0.1.0) predates PostToolUseFailure; the real CLI fires it (tests/e2e prove it).
    assert all("W020" in w and "PostToolUseFailure" in w for w in warnings), warnings


def test_http_settings_only_trip_the_linters_outdated_type_list(tmp_path, paths):
    settings = tmp_path / "settings.json"
    install.install(paths, str(settings), launcher="/opt/ctx/bin/ctx", transport="http", port=47311)
    rc, errors, warnings = _lint(settings)
    # claude-hooks-check 0.1.0 knows only `command` hooks; `type: "http"` is a documented handler
    # type since Claude Code 2.1.63 and the real CLI accepts it (tests/e2e/test_harness_selfcheck).
    assert errors and all("E103" in e and "'http'" in e for e in errors), errors
