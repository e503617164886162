"""Issue 29 through the real shim and daemon, in the configuration most users run: no Bash rule
in any settings file (so ctx may not rewrite), the tool's real output.

- `git status` with no allow rule: the rewrite is held back (the harness decides) and the post
  hook replaces the successful output with the digest; the digest's handle returns the bytes.
- `grep -rn` over a project with a `.env`: the safety plane sends one plain search through
  `ctx run --` (which digests it; a pipeline or anything else keeps `ctx run --raw --`), the same
  answer with the daemon up or down, and the secret value never reaches the output.
"""

import json
import os
import shlex
import subprocess

from tests.conftest import ctx_cmd, pre_bash, run_hook


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
                                   GIT_COMMITTER_EMAIL="t@e")).stdout


def _busy_repo(root):
    repo = root / "app"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for i in range(40):
        (repo / "src" / f"module_{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial")
    for i in range(0, 40, 2):
        (repo / "src" / f"module_{i}.py").write_text(f"def f{i}():\n    return {i} + 1\n")
    (repo / "notes").mkdir()
    for i in range(150):
        (repo / "notes" / f"draft_{i:03d}_with_a_longer_name.md").write_text("x\n")
    _git(repo, "config", "status.showUntrackedFiles", "all")
    return repo


def _post(command, stdout, cwd, tool_use_id):
    return {"session_id": "sess-1", "hook_event_name": "PostToolUse", "cwd": cwd, "tool_name": "Bash",
            "tool_input": {"command": command, "description": "d"}, "tool_use_id": tool_use_id,
            "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False},
            "permission_mode": "default", "transcript_path": "/tmp/t.jsonl"}


def test_git_status_without_rules_is_digested_after_it_ran(tmp_path, paths, running_daemon):
    repo = _busy_repo(tmp_path)
    raw = _git(repo, "status")
    rc, out, _err, _ = run_hook(pre_bash("git status", cwd=str(repo), tool_use_id="toolu_gs"), timeout=30)
    assert rc == 0
    assert not out or "updatedInput" not in json.loads(out).get("hookSpecificOutput", {})
    rc, out, _err, _ = run_hook(_post("git status", raw, str(repo), "toolu_gs"), timeout=30)
    assert rc == 0 and out
    text = json.loads(out)["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    assert text.startswith("[ctx] ") and len(text) < len(raw)
    handle = text.split(" | ")[5].split()[0]
    got = subprocess.run(ctx_cmd() + ["get", handle], capture_output=True, text=True, timeout=30)
    assert got.returncode == 0
    assert "notes/draft_149_with_a_longer_name.md" in got.stdout


def _project_with_secret(root):
    proj = root / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / ".env").write_text("API_TOKEN=tok_live_5f1d2a9c8b7e6d4f3a2b1c0d\n")
    for i in range(120):
        (proj / "src" / f"m{i}.py").write_text(f"# needle in module {i}\nx = 'needle {i}'\n")
    (proj / "src" / "config.py").write_text("TOKEN = 'tok_live_5f1d2a9c8b7e6d4f3a2b1c0d'  # needle\n")
    return proj


def _answer(out):
    return json.loads(out)["hookSpecificOutput"]


def test_a_recursive_grep_is_digested_when_the_daemon_is_up(tmp_path, paths, running_daemon):
    proj = _project_with_secret(tmp_path)
    rc, out, _err, _ = run_hook(pre_bash("grep -rn needle .", cwd=str(proj), tool_use_id="toolu_g1"), timeout=30)
    assert rc == 0 and out
    hso = _answer(out)
    argv = shlex.split(hso["updatedInput"]["command"])
    assert argv[1:3] == ["run", "--"] and argv[3] == "grep -rn needle ."
    assert hso["permissionDecision"] == "allow"  # a read-only command, as without ctx
    env = dict(os.environ, CLAUDE_SESSION_ID="sess-1")
    p = subprocess.run(ctx_cmd() + ["run", "--", "grep -rn needle ."], cwd=proj, capture_output=True, text=True,
                       timeout=60, env=env)
    assert p.returncode == 0
    assert "tok_live_5f1d2a9c8b7e6d4f3a2b1c0d" not in p.stdout
    raw = subprocess.run(["grep", "-rn", "needle", "."], cwd=proj, capture_output=True, text=True).stdout
    assert p.stdout.startswith("[ctx] ") and len(p.stdout) < len(raw)


def test_the_same_grep_with_the_daemon_down_gets_the_same_answer(tmp_path, paths):
    proj = _project_with_secret(tmp_path)
    # No daemon: the shim answers on its own (and starts one for the next call).
    rc, out, _err, _ = run_hook(pre_bash("grep -rn needle .", cwd=str(proj), tool_use_id="toolu_g2"), timeout=30)
    assert rc == 0 and out
    hso = _answer(out)
    argv = shlex.split(hso["updatedInput"]["command"])
    assert argv[1:3] == ["run", "--"] and argv[3] == "grep -rn needle ."
    assert hso["permissionDecision"] == "allow"


def test_a_search_in_a_pipeline_keeps_the_whole_output_form(tmp_path, paths, running_daemon):
    proj = _project_with_secret(tmp_path)
    rc, out, _err, _ = run_hook(pre_bash("grep -rn needle . | sort", cwd=str(proj), tool_use_id="toolu_g3"),
                                timeout=30)
    assert rc == 0 and out
    argv = shlex.split(_answer(out)["updatedInput"]["command"])
    assert argv[1:4] == ["run", "--raw", "--"]
