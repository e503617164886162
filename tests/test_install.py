"""`ctx install` / `ctx uninstall`: idempotent, non-destructive merges into settings.json."""

import json
import os
import subprocess
import sys

from reflex import install as inst

from tests.conftest import ctx_cmd

OTHER = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/other-hook",
                                                      "timeout": 3}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def ctx(*args):
    return subprocess.run(ctx_cmd() + list(args), capture_output=True, text=True, timeout=60)


def load(p):
    with open(p) as f:
        return json.load(f)


def our_handlers(settings):
    return [(ev, h) for ev, groups in settings.get("hooks", {}).items() for g in groups
            for h in g.get("hooks", []) if inst.is_ours(h)]


def test_install_is_idempotent_and_keeps_other_hooks(tmp_path, paths):
    s = tmp_path / "settings.json"
    s.write_text(json.dumps(OTHER))
    for _ in range(3):
        p = ctx("install", "--settings", str(s))
        assert p.returncode == 0, p.stderr
    data = load(s)
    ours = our_handlers(data)
    assert sorted(ev for ev, _ in ours) == sorted(inst.EVENTS), "exactly one entry per event"
    assert data["permissions"] == OTHER["permissions"]
    assert data["hooks"]["Stop"] == OTHER["hooks"]["Stop"]
    assert OTHER["hooks"]["PreToolUse"][0] in data["hooks"]["PreToolUse"]
    for ev, h in ours:
        assert 1 <= h["timeout"] <= 10, "timeouts are seconds, and small"
    matchers = {ev: g.get("matcher") for ev, groups in data["hooks"].items() for g in groups
                if any(inst.is_ours(h) for h in g["hooks"])}
    assert "Bash" in matchers["PreToolUse"].split("|")
    assert matchers["PostToolUse"] == matchers["PostToolUseFailure"] == "Bash"
    backups = [f for f in os.listdir(tmp_path) if ".ctx-backup-" in f]
    assert len(backups) == 1, "backed up once: the later runs changed nothing"
    launcher = ours[0][1]["command"].split()[0]
    assert os.access(launcher, os.X_OK)


def test_uninstall_restores_the_original(tmp_path, paths):
    s = tmp_path / "settings.json"
    s.write_text(json.dumps(OTHER))
    ctx("install", "--settings", str(s))
    p = ctx("uninstall", "--settings", str(s))
    assert p.returncode == 0, p.stderr
    assert load(s) == OTHER


def test_invalid_json_is_refused_and_left_alone(tmp_path, paths):
    s = tmp_path / "settings.json"
    s.write_text("{ not json")
    p = ctx("install", "--settings", str(s))
    assert p.returncode == 1 and "not valid JSON" in p.stderr
    assert s.read_text() == "{ not json"


def test_dry_run_changes_nothing(tmp_path, paths):
    s = tmp_path / "settings.json"
    s.write_text(json.dumps(OTHER))
    p = ctx("install", "--settings", str(s), "--dry-run")
    assert p.returncode == 0 and json.loads(p.stdout)["hooks"]["SessionStart"]
    assert load(s) == OTHER


def test_http_transport_entries(tmp_path, paths):
    s = tmp_path / "settings.json"
    p = ctx("install", "--settings", str(s), "--transport", "http", "--port", "47123")
    assert p.returncode == 0, p.stderr
    data = load(s)
    pre = [h for _, h in our_handlers(data) if h["type"] == "http"]
    assert pre and all(h["url"] == "http://127.0.0.1:47123/hook/claude" for h in pre)
    token = open(paths.http_token).read().strip()
    assert all(h["headers"]["Authorization"] == "Bearer " + token for h in pre)
    assert os.stat(paths.http_token).st_mode & 0o777 == 0o600
    session_start = data["hooks"]["SessionStart"][0]["hooks"][0]
    assert session_start["type"] == "command", "SessionStart starts the daemon, so it stays a command hook"


def test_project_scope_names_no_per_user_path_and_degrades_for_teammates_without_ctx(paths, tmp_path):
    import shutil
    project = tmp_path / "proj"
    project.mkdir()
    p = subprocess.run(ctx_cmd() + ["install", "--scope", "project"], cwd=project, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    text = (project / ".claude" / "settings.json").read_text()
    assert str(paths.home) not in text and str(tmp_path) not in text, "no per-user path in a committed file"
    data = json.loads(text)
    commands = {h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]}
    assert len(commands) == 1
    command = commands.pop()
    payload = json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "cwd": str(project),
                          "tool_name": "Bash", "tool_input": {"command": "cat .env"}, "tool_use_id": "t"})
    (project / ".env").write_text("K=v\n")
    # A teammate who has ctx on PATH: the hook answers (here: the safety deny).
    venv_bin = os.path.dirname(sys.executable)
    with_ctx = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, text=True, timeout=30,
                              env=dict(os.environ, PATH=venv_bin + os.pathsep + "/usr/bin:/bin"))
    assert with_ctx.returncode == 0 and '"deny"' in with_ctx.stdout, with_ctx.stderr
    # A teammate without ctx: exit 0, nothing on stdout, nothing on stderr.
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh",):
        os.symlink(shutil.which(tool), bare / tool)
    without = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, text=True, timeout=30,
                             env={"PATH": str(bare), "HOME": str(tmp_path)})
    assert (without.returncode, without.stdout, without.stderr) == (0, "", "")
    # Uninstall recognises the portable entries.
    p = subprocess.run(ctx_cmd() + ["uninstall", "--scope", "project"], cwd=project, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and "hooks" not in json.loads((project / ".claude" / "settings.json").read_text())
