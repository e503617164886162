"""`ctx install` / `ctx uninstall`: idempotent, non-destructive merges into settings.json."""

import json
import os
import subprocess
import sys

from reflex import install as inst

from tests.conftest import _kill_daemons_of, ctx_cmd

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
    assert matchers["PostToolUse"].split("|") == ["Bash", "Read", "Grep"] and matchers["PostToolUseFailure"] == "Bash"
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


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=30,
                   env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x.invalid",
                            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@x.invalid"))


def test_http_project_scope_keeps_the_token_out_of_the_committable_file(paths, tmp_path):
    """Issue 31 item 1: the token goes to the personal settings.local.json (0600), never to
    the settings.json the installer calls committable; its backups are 0600 and denied."""
    import glob as globmod
    import stat as stat_mod
    project = tmp_path / "proj"
    project.mkdir()
    _git(project, "init", "-q")
    run = lambda *a: subprocess.run(ctx_cmd() + list(a), cwd=project, capture_output=True, text=True, timeout=60)
    p = run("install", "--scope", "project")
    assert p.returncode == 0 and "can be committed" in p.stdout, p.stderr
    for _ in range(2):      # the second install backs up a file that holds the token
        p = run("install", "--scope", "project", "--transport", "http", "--port", "47124")
        assert p.returncode == 0, p.stderr
        assert "can be committed" not in p.stdout and "do not commit" in p.stdout, p.stdout
    token = open(paths.http_token).read().strip()
    shared = project / ".claude" / "settings.json"
    local = project / ".claude" / "settings.local.json"
    assert token not in shared.read_text()
    assert token in local.read_text()
    assert stat_mod.S_IMODE(os.stat(local).st_mode) == 0o600
    local.write_text(local.read_text().replace('"timeout": 5', '"timeout": 6'))   # a change: the next install backs up
    os.chmod(local, 0o644)
    p = run("install", "--scope", "project", "--transport", "http", "--port", "47124")
    assert p.returncode == 0, p.stderr
    backups = globmod.glob(str(local) + ".ctx-backup-*")
    assert backups and all(token in open(b).read() for b in backups)
    assert all(stat_mod.S_IMODE(os.stat(b).st_mode) == 0o600 for b in backups)
    assert stat_mod.S_IMODE(os.stat(local).st_mode) == 0o600
    # The backup is denied like the file, by the shim's own code (the daemon runs the same).
    from reflex.shim import fallback
    for tool, tool_input in (("Bash", {"command": "cat .claude/%s" % os.path.basename(backups[0])}),
                             ("Read", {"file_path": backups[0]}),
                             ("Bash", {"command": "cat .claude/settings.local.json"})):
        payload = json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "cwd": str(project),
                              "tool_name": tool, "tool_input": tool_input, "tool_use_id": "t"}).encode()
        answer, _, _ = fallback.decide("claude", payload, False)
        assert b'"deny"' in answer and b"ctx doctor" in answer, (tool_input, answer)
    # A Grep over the project skips the token files and their backups.
    from reflex.safety import plane
    cfg = load(paths.config)
    policy = plane.SafetyPolicy(str(project), os.path.expanduser("~"), ctx_home=paths.home,
                                token_files=cfg["installed_settings"])
    v = plane.assess_tool("Grep", {"pattern": "Bearer", "path": "."}, str(project), policy)
    assert "!**/.claude/settings.local.json.ctx-*" in v.tool_input["glob"].split()
    # Uninstalling the project scope removes the hooks from both files.
    p = run("uninstall", "--scope", "project")
    assert p.returncode == 0, p.stderr
    assert "hooks" not in load(local) and "hooks" not in load(shared)


def test_http_settings_file_and_its_backup_are_made_private(paths, tmp_path):
    s = tmp_path / "settings.json"
    s.write_text(json.dumps(OTHER))
    os.chmod(s, 0o644)
    for _ in range(2):
        p = ctx("install", "--settings", str(s), "--transport", "http", "--port", "47125")
        assert p.returncode == 0, p.stderr
    os.chmod(s, 0o644)
    before = set(os.listdir(tmp_path))
    p = ctx("install", "--settings", str(s), "--transport", "http", "--port", "47126")   # our entries change
    assert p.returncode == 0 and "backup:" in p.stdout, p.stdout
    token = open(paths.http_token).read().strip()
    new_backups = [str(tmp_path / n) for n in set(os.listdir(tmp_path)) - before if ".ctx-backup-" in n]
    assert len(new_backups) == 1 and token in open(new_backups[0]).read()
    backups = [str(tmp_path / n) for n in os.listdir(tmp_path) if ".ctx-backup-" in n]
    assert {os.stat(b).st_mode & 0o777 for b in backups} == {0o600}
    assert os.stat(s).st_mode & 0o777 == 0o600


SECRET_READ = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "cat .env"}, "tool_use_id": "t"}


def test_project_install_works_for_its_user_with_ctx_not_on_path(paths, tmp_path):
    """Issue 30 item 1: ctx in a venv that is not on PATH (`.venv/bin/ctx install --scope project`),
    a fresh HOME; the installed hook, run as the harness runs it (`bash -c`, a minimal PATH), must
    answer `cat .env` with the safety plane's deny, not exit 0 silently."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".env").write_text("API_KEY=sk-live-0123456789abcdef\n")
    minimal = "/usr/bin:/bin"
    assert subprocess.run(["sh", "-c", "command -v ctx"], env={"PATH": minimal}).returncode != 0, \
        "this test needs a PATH without ctx"
    user_env = dict(os.environ, PATH=minimal)
    p = subprocess.run(ctx_cmd() + ["install", "--scope", "project"], cwd=project, capture_output=True, text=True,
                       timeout=60, env=user_env)
    assert p.returncode == 0, p.stderr
    data = load(project / ".claude" / "settings.json")
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert str(tmp_path) not in command, "no per-user path in a committed file"
    payload = json.dumps(dict(SECRET_READ, cwd=str(project)))
    harness_env = {"PATH": minimal, "HOME": os.environ["HOME"], "CTX_HOME": os.environ["CTX_HOME"],
                   "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", ""), "CTX_HOOK_REPLY_TIMEOUT": "15"}
    answer = subprocess.run(["bash", "-c", command], input=payload, capture_output=True, text=True, timeout=60,
                            cwd=project, env=harness_env)
    assert answer.returncode == 0, answer.stderr
    decision = json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecision"]
    assert decision == "deny", answer.stdout
    assert "checked: they answered `cat .env` with the safety plane's deny" in p.stdout, p.stdout
    # A teammate who installs ctx later, on PATH (pipx, an activated venv), with no launcher of theirs.
    other_home = tmp_path / "teammate"
    other_home.mkdir()
    venv_bin = os.path.dirname(sys.executable)
    try:
        later = subprocess.run(["bash", "-c", command], input=payload, capture_output=True, text=True, timeout=60,
                               cwd=project, env={"PATH": venv_bin + ":" + minimal, "HOME": str(other_home),
                                                 "CTX_HOME": str(other_home / "ctx"), "CTX_HOOK_REPLY_TIMEOUT": "15",
                                                 "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")})
    finally:
        _kill_daemons_of(str(other_home / "ctx"))   # the teammate's hook started their own daemon
    assert '"deny"' in later.stdout, (later.stdout, later.stderr)


def test_the_first_portable_form_is_still_recognised_as_ours(tmp_path, paths):
    s = tmp_path / "settings.json"
    old = {"type": "command", "command": inst.LEGACY_PORTABLE_COMMANDS[0], "timeout": 5}
    s.write_text(json.dumps({"hooks": {ev: [{"hooks": [dict(old)]}] for ev in inst.EVENTS}}))
    p = ctx("install", "--settings", str(s))
    assert p.returncode == 0, p.stderr
    commands = [h["command"] for _, h in our_handlers(load(s))]
    assert len(commands) == len(inst.EVENTS) and inst.LEGACY_PORTABLE_COMMANDS[0] not in commands


def test_project_install_says_loudly_when_its_hooks_cannot_reach_ctx(tmp_path, monkeypatch):
    """Issue 30 item 1: when the installed command cannot find this user's ctx (here CTX_HOME
    written with a literal `~`, which Python expands and a hook's shell does not, and ctx not on
    PATH), install fails with the probe's answer instead of reporting success."""
    home = tmp_path / "home"
    monkeypatch.setenv("CTX_HOME", "~/ctx-home")
    project = tmp_path / "proj"
    project.mkdir()
    p = subprocess.run(ctx_cmd() + ["install", "--scope", "project"], cwd=project, capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, PATH="/usr/bin:/bin", HOME=str(home)))
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "do not work for you" in p.stderr and "with nothing" in p.stderr, p.stderr
