"""PreToolUse decisions through the real shim and daemon: the pytest rewrite and the secret deny."""

import json
import os

import pytest

from tests.conftest import ledger_rows, pre_bash, run_hook


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
def test_pytest_is_rewritten_with_full_tool_input(paths, running_daemon, user_allows_bash, command):
    payload = pre_bash(command, cwd=str(paths.home))
    payload["tool_input"]["run_in_background"] = False
    rc, out, err, _ = run_hook(payload)
    assert rc == 0
    hso = answer_of(out)
    assert hso["hookEventName"] == "PreToolUse"
    assert hso["permissionDecision"] == "allow"
    updated = hso["updatedInput"]
    # the FULL original tool_input, only `command` changed
    assert {k: v for k, v in updated.items() if k != "command"} == \
        {k: v for k, v in payload["tool_input"].items() if k != "command"}
    import shlex
    argv = shlex.split(updated["command"])
    assert os.path.basename(argv[0]) == "ctx" and argv[1:3] == ["run", "--"]
    assert argv[3] == command, "ctx run receives the original command verbatim"


def test_rewrite_only_where_the_harness_would_run_the_command_unasked(paths, running_daemon, tmp_path):
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(pytest:*)"], "deny": ["Bash(python -m pytest --deny-me:*)"],
                         "ask": ["Bash(pytest --ask-me:*)"]}}))
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(project))
    _, out, _, _ = run_hook(pre_bash("pytest -q", cwd=str(project), tool_use_id="t1"), env=env)
    assert answer_of(out)["permissionDecision"] == "allow"
    # No rule allows these: the harness would ask (a refusal in headless runs), so ctx leaves
    # the command untouched and the harness decides about the original.
    for i, command in enumerate(["python -m pytest -q", "python -m pytest --deny-me x", "pytest --ask-me",
                                 "pytest -q; rm -rf build"]):
        _, out, _, _ = run_hook(pre_bash(command, cwd=str(project), tool_use_id="t%d" % (i + 2)), env=env)
        assert out == b"", command
    rows = ledger_rows(paths, "SELECT decision, data FROM events WHERE hook_event='PreToolUse' ORDER BY id")
    verdicts = [json.loads(r["data"])["permission"]["verdict"] for r in rows]
    assert verdicts == ["allow", "unknown", "deny", "ask", "unknown"]
    assert [r["decision"] for r in rows] == ["rewrite"] + ["pass"] * 4
    assert all(json.loads(r["data"]).get("rewrite_held_back") for r in rows[1:])


def test_held_back_command_that_ran_gets_its_digest_from_the_post_hook(paths, running_daemon, tmp_path):
    """An SDK permission callback (or a person) allowed what no rule did: the post hook digests."""
    import subprocess
    import sys
    (tmp_path / "test_m.py").write_text("".join("def test_%d():\n    pass\n" % i for i in range(60)) + "".join(
        "def test_bad_%d():\n    assert %d == 0\n" % (i, i) for i in range(1, 4)))
    real = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_m.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert real.returncode == 1
    output = real.stdout
    run_hook(pre_bash("python -m pytest -v", cwd=str(tmp_path), tool_use_id="tu-h"))
    post = {"session_id": "sess-1", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_use_id": "tu-h", "cwd": str(tmp_path), "tool_input": {"command": "python -m pytest -v"},
            "error": "Exit code 1\n" + output, "is_interrupt": False}
    _, out, _, _ = run_hook(post)
    context = answer_of(out)["additionalContext"]
    assert context.startswith("[ctx] pytest")
    assert all("test_bad_%d" % i in context for i in range(1, 4))
    handle = context.split("| r:")[1].split()[0]
    from tests.conftest import ctx_cmd
    got = subprocess.run(ctx_cmd() + ["get", "r:" + handle], capture_output=True, text=True, timeout=30)
    assert got.returncode == 0 and "test_bad_3" in got.stdout
    # A success replaces the output with Bash's output shape.
    run_hook(pre_bash("python -m pytest -v", cwd=str(tmp_path), tool_use_id="tu-ok"))
    (tmp_path / "test_m.py").write_text("".join("def test_%d():\n    pass\n" % i for i in range(60)))
    green = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_m.py"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout
    ok = dict(post, hook_event_name="PostToolUse", tool_use_id="tu-ok", error=None,
              tool_response={"stdout": green, "stderr": "", "interrupted": False})
    _, out, _, _ = run_hook(ok)
    replaced = answer_of(out)["updatedToolOutput"]
    assert set(replaced) == {"stdout", "stderr", "interrupted", "isImage"} and replaced["stdout"].startswith("[ctx]")


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
