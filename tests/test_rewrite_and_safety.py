"""PreToolUse decisions through the real shim and daemon: the pytest rewrite and the secret deny."""

import json
import os

import pytest

from .conftest import ledger_rows, pre_bash, run_hook


def answer_of(out):
    assert out, "expected a hook answer on stdout"
    obj = json.loads(out)
    return obj["hookSpecificOutput"]


@pytest.mark.parametrize("command", [
    "pytest -q",
    "python -m pytest tests/test_x.py -x",
    "uv run pytest -k parse",
    "python3 -m pytest",
    "cd sub && pytest -q 2>&1 | tail -20",
])
def test_pytest_is_rewritten_with_full_tool_input(paths, running_daemon, command):
    payload = pre_bash(command, cwd=str(paths.home))
    payload["tool_input"]["run_in_background"] = False
    rc, out, err, _ = run_hook(payload)
    assert rc == 0
    hso = answer_of(out)
    assert hso["hookEventName"] == "PreToolUse"
    assert hso["permissionDecision"] in ("allow", "ask")
    updated = hso["updatedInput"]
    # the FULL original tool_input, only `command` changed
    assert {k: v for k, v in updated.items() if k != "command"} == \
        {k: v for k, v in payload["tool_input"].items() if k != "command"}
    import shlex
    argv = shlex.split(updated["command"])
    assert os.path.basename(argv[0]) == "ctx" and argv[1:3] == ["run", "--"]
    assert argv[3] == command, "ctx run receives the original command verbatim"


def test_allow_only_when_the_users_rules_allow(paths, running_daemon, tmp_path):
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(pytest:*)"], "deny": ["Bash(python -m pytest --deny-me:*)"]}}))
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(project))
    _, out, _, _ = run_hook(pre_bash("pytest -q", cwd=str(project)), env=env)
    assert answer_of(out)["permissionDecision"] == "allow"
    _, out, _, _ = run_hook(pre_bash("python -m pytest -q", cwd=str(project)), env=env)
    assert answer_of(out)["permissionDecision"] == "ask", "no rule allows it: the user is asked"
    _, out, _, _ = run_hook(pre_bash("python -m pytest --deny-me x", cwd=str(project)), env=env)
    assert out == b"", "a deny rule matches: no rewrite, Claude Code's own deny applies"


@pytest.mark.parametrize("command", ["ls -la", "git status", "npm install", "cat README.md"])
def test_other_commands_pass_through(paths, running_daemon, command):
    rc, out, err, _ = run_hook(pre_bash(command, cwd=str(paths.home)))
    assert rc == 0 and out == b"" and err == b""


def test_background_pytest_passes_through(paths, running_daemon):
    p = pre_bash("pytest -q", cwd=str(paths.home))
    p["tool_input"]["run_in_background"] = True
    _, out, _, _ = run_hook(p)
    assert out == b""


@pytest.mark.parametrize("command", ["cat .env", "head -3 .env", "cat ~/.ssh/id_rsa", "less server.pem"])
def test_secret_reads_are_denied_with_remediation(paths, running_daemon, tmp_path, command):
    rc, out, err, _ = run_hook(pre_bash(command, cwd=str(tmp_path)))
    assert rc == 0
    hso = answer_of(out)
    assert hso["permissionDecision"] == "deny"
    reason = hso["permissionDecisionReason"]
    assert len(reason) > 40 and "secret" in reason.lower()
    rows = ledger_rows(paths, "SELECT decision FROM events WHERE kind='hook'")
    assert rows[-1]["decision"] == "deny"


def test_safety_deny_is_identical_with_daemon_down(paths, daemon, tmp_path):
    payload = pre_bash("head -3 .env", cwd=str(tmp_path))
    daemon.start()
    _, up, _, _ = run_hook(payload)
    daemon.kill9()
    _, down, _, _ = run_hook(payload)
    assert up == down and json.loads(down)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_safety_allow_list_is_the_same_with_the_daemon_up_or_down(paths, daemon, tmp_path):
    """`safety_allow` in ctx's config is honoured identically by the daemon and the shim."""
    from reflex import config
    config.save(paths.config, dict(config.DEFAULTS, safety_allow=[str(tmp_path / "fixtures" / "*.pem")]))
    allowed = pre_bash("cat fixtures/test-cert.pem", cwd=str(tmp_path))
    denied = pre_bash("cat other.pem", cwd=str(tmp_path))
    daemon.start()
    up = [run_hook(p)[1] for p in (allowed, denied)]
    daemon.kill9()
    down = [run_hook(p)[1] for p in (allowed, denied)]
    assert up == down
    assert up[0] == b"" and json.loads(up[1])["hookSpecificOutput"]["permissionDecision"] == "deny"
