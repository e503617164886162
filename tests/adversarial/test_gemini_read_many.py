"""Gemini's read_many_files (issue 31 item 8): it reads every file its paths and globs name,
match or hold into the model's context, so a call that would take a secret is denied, the same
bytes with the daemon down (the shim's fallback) and up; ordinary calls get no answer.

Real shim processes (`ctx hook gemini`), a real daemon, a real project on disk.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SECRET = "npm_0123456789abcdefghijklmnop"


def _hook(payload: dict, ctx_home: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, CTX_HOME=str(ctx_home), CTX_HOOK_REPLY_TIMEOUT="10")
    return subprocess.run([sys.executable, "-m", "reflex.entry", "hook", "gemini"], input=json.dumps(payload).encode(),
                          capture_output=True, cwd=cwd, env=env, timeout=60)


def _ctx(ctx_home: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CTX_HOME=str(ctx_home), CTX_SESSION_START_WAIT="0")
    return subprocess.run([sys.executable, "-m", "reflex.entry", *args], capture_output=True, text=True, env=env,
                          timeout=60)


CALLS = [   # (tool_input, denied)
    ({"paths": ["."]}, True),                               # the whole project: .env, .npmrc inside
    ({"paths": ["**/*.json"]}, True),                       # matches .docker/config.json
    ({"paths": ["README.md", "config/.npmrc"]}, True),
    ({"paths": ["src"], "include": ["*"]}, True),           # `*` in the cwd matches .env (dotfiles on)
    ({"paths": ["src/**/*.py"]}, False),
    ({"paths": ["README.md", "src"]}, False),
]


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    for rel, text in {".env": "API_KEY=sk-live-0123456789abcdef\n", "config/.npmrc": "//r/:_authToken=%s\n" % SECRET,
                      ".docker/config.json": '{"auths": {"x": {"auth": "%s"}}}\n' % SECRET,
                      "README.md": "hello\n", "src/app.py": "print(1)\n"}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    (repo / ".git").mkdir()
    return repo


def test_read_many_files_denied_the_same_with_the_daemon_down_and_up(repo, tmp_path):
    ctx_home = tmp_path / "ctxhome"
    payloads = [{"session_id": "s-gemini", "cwd": str(repo), "hook_event_name": "BeforeTool", "timestamp": "t",
                 "tool_name": "read_many_files", "tool_input": tool_input} for tool_input, _ in CALLS]
    try:
        down = [_hook(p, ctx_home, repo) for p in payloads]
        assert _ctx(ctx_home, "daemon", "start").returncode == 0
        up = [_hook(p, ctx_home, repo) for p in payloads]
    finally:
        _ctx(ctx_home, "daemon", "stop")
    for (tool_input, denied), d, u in zip(CALLS, down, up):
        assert d.returncode == 0 and u.returncode == 0, (d.stderr, u.stderr)
        if denied:
            answer = json.loads(d.stdout)
            assert answer["decision"] == "deny", (tool_input, answer)
            assert "read_many_files" in answer["reason"] and "ask the user" in answer["reason"]
            assert SECRET.encode() not in d.stdout and b"sk-live" not in d.stdout
            assert u.stdout == d.stdout, (tool_input, d.stdout, u.stdout)
        else:
            assert b"deny" not in d.stdout and b"deny" not in u.stdout, (tool_input, d.stdout, u.stdout)
