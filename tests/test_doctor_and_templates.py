"""`ctx doctor` reports each problem with a fix; hooks/ templates match what `ctx install` writes."""

import json
import os
import subprocess

from reflex import install

from tests.conftest import REPO, ctx_cmd


def doctor(env=None):
    p = subprocess.run(ctx_cmd() + ["doctor", "--json"], capture_output=True, text=True, timeout=60, env=env)
    return p.returncode, {c["name"]: c for c in json.loads(p.stdout)}


def test_doctor_all_ok_then_problems_with_fixes(paths, running_daemon, tmp_path):
    settings = tmp_path / "settings.json"
    subprocess.run(ctx_cmd() + ["install", "--settings", str(settings)], check=True, capture_output=True)
    rc, checks = doctor()
    assert rc == 0, checks
    assert checks["daemon"]["ok"] and checks["tokenizer"]["ok"] and checks["ledger"]["ok"]
    os.chmod(paths.socket, 0o666)
    rc, checks = doctor()
    assert rc == 1 and not checks["socket"]["ok"] and "chmod 600" in checks["socket"]["fix"]
    os.chmod(paths.socket, 0o600)
    data = json.loads(settings.read_text())
    del data["hooks"]["PostToolUseFailure"]
    settings.write_text(json.dumps(data))
    rc, checks = doctor()
    assert rc == 1 and "PostToolUseFailure" in checks["hooks"]["detail"] and "ctx install" in checks["hooks"]["fix"]


def test_doctor_without_daemon_or_tokenizer(paths, tmp_path):
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tmp_path / "empty-cache"), HTTPS_PROXY="http://127.0.0.1:9",
               CTX_TOKENIZER_FILE=str(tmp_path / "no-bundled-file"))
    rc, checks = doctor(env)
    assert rc == 1, "a missing tokenizer is a real fault"
    assert checks["daemon"]["ok"] and "on demand" in checks["daemon"]["detail"], "idle is not a fault"
    assert not checks["tokenizer"]["ok"] and "TIKTOKEN_CACHE_DIR" in checks["tokenizer"]["fix"]


def test_doctor_passes_on_a_fresh_install_with_no_daemon_running(paths, tmp_path):
    p = subprocess.run(ctx_cmd() + ["install", "--settings", str(tmp_path / "settings.json")], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rc, checks = doctor(dict(os.environ))
    assert rc == 0, checks
    assert "on demand" in checks["daemon"]["detail"]


def test_hook_templates_match_install():
    for name, kw in (("command", {}), ("http", {"transport": "http", "port": 47311,
                                                "token": "<token from $CTX_HOME/http-token>"})):
        with open(os.path.join(REPO, "hooks", "claude-settings.%s.json" % name)) as f:
            assert json.load(f) == {"hooks": install.hook_entries("CTX", **kw)}, \
                "regenerate hooks/claude-settings.%s.json from reflex.install.hook_entries" % name


def test_doctor_says_which_permission_path_rewrites_follow(paths, tmp_path):
    from reflex import config, doctor
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    check = doctor._permission_check(paths, cwd=str(project), home=str(tmp_path / "home"))
    assert check.ok and "passed through untouched" in check.detail and "--allowedTools" in check.detail
    (project / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Bash(python -m pytest:*)"]}}')
    check = doctor._permission_check(paths, cwd=str(project), home=str(tmp_path / "home"))
    assert "rewritten to `ctx run` and allowed" in check.detail and "1 allow" in check.detail
    config.save(paths.config, dict(config.DEFAULTS, rewrite_permission="ask"))
    check = doctor._permission_check(paths, cwd=str(project), home=str(tmp_path / "home"))
    assert "obsolete" in check.detail and check.fix


def test_doctor_flags_the_http_token_in_a_tracked_or_shared_file(paths, tmp_path):
    """Issue 31 item 1: a settings file holding the token that git tracks (the old project
    install wrote it into the committable settings.json), or that others can read."""
    from reflex.doctor import token_exposure_check
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env, timeout=30)
    p = subprocess.run(ctx_cmd() + ["install", "--scope", "project", "--transport", "http", "--port", "47126"],
                       cwd=project, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert token_exposure_check(paths, str(project)).ok     # settings.local.json, 0600, untracked
    token = open(paths.http_token).read().strip()
    shared = project / ".claude" / "settings.json"
    shared.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [{
        "type": "http", "url": "http://127.0.0.1:47126/hook/claude",
        "headers": {"Authorization": "Bearer " + token}}]}]}}))
    os.chmod(shared, 0o600)
    subprocess.run(["git", "add", ".claude/settings.json"], cwd=project, check=True, env=env, timeout=30)
    check = token_exposure_check(paths, str(project))
    assert not check.ok and "tracked by git" in check.detail and "git rm --cached" in check.fix
    subprocess.run(["git", "rm", "-q", "--cached", ".claude/settings.json"], cwd=project, check=True, env=env,
                   timeout=30)
    os.chmod(shared, 0o644)
    check = token_exposure_check(paths, str(project))
    assert not check.ok and "mode 644" in check.detail
    os.chmod(shared, 0o600)
    assert token_exposure_check(paths, str(project)).ok
    # `ctx doctor` runs it (from the project directory).
    shared.unlink()
    p = subprocess.run(ctx_cmd() + ["doctor", "--json"], cwd=project, capture_output=True, text=True, timeout=60)
    assert {c["name"]: c for c in json.loads(p.stdout)}["token files"]["ok"]


def test_doctor_runs_the_installed_hook_and_reports_one_that_answers_nothing(paths, tmp_path):
    """Issue 30 item 1: all 5 events hooked, but the command finds no ctx on the harness's PATH:
    doctor runs it (sh -c, a `cat .env` PreToolUse) and fails, instead of `ok hooks`."""
    project = tmp_path / "proj"
    project.mkdir()
    env = dict(os.environ, PATH="/usr/bin:/bin")
    p = subprocess.run(ctx_cmd() + ["install", "--scope", "project"], cwd=project, capture_output=True,
                       text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    settings = project / ".claude" / "settings.json"
    # What the first project install wrote: ctx from PATH only.
    text = settings.read_text()
    settings.write_text(text.replace(json.dumps(install.PORTABLE_COMMAND)[1:-1],
                                     json.dumps(install.LEGACY_PORTABLE_COMMANDS[0])[1:-1]))
    assert install.LEGACY_PORTABLE_COMMANDS[0] in json.loads(settings.read_text())["hooks"]["PreToolUse"][0][
        "hooks"][0]["command"]

    def doctor_here():
        q = subprocess.run(ctx_cmd() + ["doctor", "--json"], cwd=project, capture_output=True, text=True,
                           timeout=120, env=env)
        return q.returncode, {c["name"]: c for c in json.loads(q.stdout)}
    rc, checks = doctor_here()
    assert checks["hooks"]["ok"], "every event is hooked..."
    probe = checks["hook answers"]
    assert not probe["ok"] and "with nothing" in probe["detail"] and "safety plane" in probe["detail"], probe
    assert rc == 1
    p = subprocess.run(ctx_cmd() + ["install", "--scope", "project"], cwd=project, capture_output=True,
                       text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    rc, checks = doctor_here()
    assert checks["hook answers"]["ok"] and "deny" in checks["hook answers"]["detail"], checks["hook answers"]
