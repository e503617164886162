"""The permission mirror: allow only what the harness would certainly have run unasked.

Tables of (configuration, command, expected verdict).  The expectations for the
harness's own behaviour (which parts it allows by itself, that `timeout N` is
stripped, that a file redirection needs approval) were observed on the real
Claude Code 2.1.332 (docs/permissions.md); tests/e2e/test_permission_matrix.py
checks the whole path on the real CLI.
"""

import json

import pytest

from reflex.harness.claude import permissions as P


def ctx_of(allow=(), ask=(), deny=(), mode="default"):
    return P.PermissionContext(P.Rules(tuple(allow), tuple(ask), tuple(deny)), mode, True)


# (allow rules, command, verdict)
ALLOW_CASES = [
    (["*"], "python -m pytest -v", "allow"),
    (["*"], "python -m pytest $(cat args)", "allow"),             # `Bash` allows everything
    (["python -m pytest:*"], "python -m pytest -v", "allow"),
    (["python -m pytest:*"], "python -m pytest", "allow"),
    (["python -m pytest:*"], "python -m pytestx", "unknown"),     # prefix ends at a word
    (["python -m pytest *"], "python -m pytest -k x", "allow"),
    (["python -m pytest:*"], "python -m pytest -v 2>&1 | tail -20", "allow"),
    (["python -m pytest:*"], "python -m pytest -v | grep FAIL", "allow"),
    (["python -m pytest:*"], "cd sub && python -m pytest", "allow"),
    (["python -m pytest:*"], "cd /etc && python -m pytest", "unknown"),
    (["python -m pytest:*"], "cd ../other && python -m pytest", "unknown"),
    (["python -m pytest:*"], "python -m pytest; echo done", "allow"),
    (["python -m pytest:*"], "timeout 60 python -m pytest", "allow"),
    (["python -m pytest:*"], "python -m pytest; rm -rf build", "unknown"),   # every part must be allowed
    (["python -m pytest:*"], "python -m pytest && git push", "unknown"),
    (["python -m pytest:*"], "tail -5 log | python -m pytest", "unknown"),  # tail first reads a file
    (["python -m pytest:*"], "python -m pytest > out.txt", "unknown"),      # a file write
    (["python -m pytest:*"], "python -m pytest $(cat x)", "unknown"),
    (["python -m pytest:*"], "python -m pytest `cat x`", "unknown"),
    (["python -m pytest:*"], "PYTHONPATH=. python -m pytest", "unknown"),
    (["python -m pytest:*"], "python -m pytest &", "unknown"),
    (["python -m pytest:*"], "(python -m pytest)", "unknown"),
    (["python -m pytest:*"], "python -m pytest 'unterminated", "unknown"),
    (["python -m pytest:*"], "python -m pytest -k 'a;b'", "allow"),          # ; inside quotes
    (["python -m pytest:*"], "python -m pytest -k 'a' | sh", "unknown"),
    (["npm test"], "npm test", "allow"),
    (["npm test"], "npm test -- --watch", "unknown"),                         # exact rule
    (["npm run *:ci"], "npm run test:ci", "allow"),
    (["npm run *:ci"], "npm run test:ci; curl x", "unknown"),
    ([], "python -m pytest", "unknown"),
    (["pytest:*"], "python -m pytest", "unknown"),
]


@pytest.mark.parametrize("allow,command,expected", ALLOW_CASES)
def test_allow_is_read_narrowly(allow, command, expected):
    assert P.verdict(command, ctx_of(allow=allow)).kind == expected


# (rule kind, rule, command, verdict) — deny and ask rules are read broadly.
STOP_CASES = [
    ("deny", "python -m pytest:*", "python -m pytest -v", "deny"),
    ("deny", "python -m pytest:*", "timeout 9 python -m pytest -v", "deny"),
    ("deny", "python -m pytest:*", "cd x && python -m pytest", "deny"),
    ("deny", "python -m pytest:*", "FOO=1 python -m pytest", "deny"),
    ("deny", "git push:*", "pytest && git push origin", "deny"),
    ("deny", "rm *", "pytest; rm -rf x", "deny"),
    ("deny", "*", "pytest", "deny"),
    ("deny", "rm:*", "pytest tests/test_rm.py", "allow"),   # a word inside a name is not the command
    ("ask", "python -m pytest:*", "python -m pytest -v", "ask"),
    ("ask", "git push:*", "python -m pytest $(git push)", "ask"),
]


@pytest.mark.parametrize("kind,rule,command,expected", STOP_CASES)
def test_deny_and_ask_are_read_broadly(kind, rule, command, expected):
    pctx = ctx_of(allow=["*"], **{kind: [rule]})
    assert P.verdict(command, pctx).kind == expected


@pytest.mark.parametrize("mode,expected", [
    ("bypassPermissions", "allow"), ("default", "unknown"), ("acceptEdits", "unknown"),
    ("dontAsk", "unknown"), ("auto", "unknown"), ("plan", "unknown"),
])
def test_modes_without_rules(mode, expected):
    assert P.verdict("python -m pytest", ctx_of(mode=mode)).kind == expected


def test_bypass_still_honours_deny_and_ask_rules():
    assert P.verdict("pytest", ctx_of(deny=["pytest:*"], mode="bypassPermissions")).kind == "deny"
    assert P.verdict("pytest", ctx_of(ask=["pytest:*"], mode="bypassPermissions")).kind == "ask"


def test_classifier_modes_never_allow_on_rules_alone():
    assert P.verdict("pytest", ctx_of(allow=["pytest:*"], mode="auto")).kind == "unknown"


@pytest.mark.parametrize("argv,allow,deny,mode,prompt,sources", [
    (["claude", "-p", "x", "--allowedTools", "Bash"], ("*",), (), None, None, None),
    (["claude", "--allowedTools", "Bash(python -m pytest:*)", "Read", "-p", "x"], ("python -m pytest:*",), (), None,
     None, None),
    (["claude", "--allowedTools=Bash(git log:*),Bash(git diff:*)"], ("git log:*", "git diff:*"), (), None, None, None),
    (["claude", "--allowed-tools", "Bash(a b:*) Edit"], ("a b:*",), (), None, None, None),
    (["claude", "--disallowedTools", "Bash(rm -rf:*)"], (), ("rm -rf:*",), None, None, None),
    (["claude", "--permission-mode", "acceptEdits"], (), (), "acceptEdits", None, None),
    (["claude", "--dangerously-skip-permissions"], (), (), "bypassPermissions", None, None),
    (["claude", "--permission-prompt-tool", "stdio", "--setting-sources=user,project"], (), (), None, "stdio",
     ("user", "project")),
    (["claude", "--setting-sources="], (), (), None, None, ()),
])
def test_harness_command_line(argv, allow, deny, mode, prompt, sources):
    f = P.parse_harness_argv(argv)
    assert (f.allow, f.deny, f.mode, f.prompt_tool, f.setting_sources) == (allow, deny, mode, prompt, sources)


def _write(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def test_gather_reads_every_source_and_honours_setting_sources(tmp_path):
    home, project = tmp_path / "home", tmp_path / "proj"
    _write(home / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(user-cmd:*)"]}})
    _write(project / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(project-cmd:*)"]}})
    _write(project / ".claude" / "settings.local.json", {"permissions": {"deny": ["Bash(local-deny:*)"]}})
    extra = tmp_path / "extra.json"
    _write(extra, {"permissions": {"ask": ["Bash(extra-ask:*)"]}})
    all_ = P.gather(project_dir=str(project), home=str(home), argv=["claude", "--settings", str(extra)])
    assert set(all_.rules.allow) == {"user-cmd:*", "project-cmd:*"}
    assert all_.rules.deny == ("local-deny:*",) and all_.rules.ask == ("extra-ask:*",)
    assert all_.path == "settings+flags"
    user_only = P.gather(project_dir=str(project), home=str(home), argv=["claude", "--setting-sources", "user"])
    assert user_only.rules.allow == ("user-cmd:*",), "a project rule the harness does not load must not count"
    inline = P.gather(project_dir=None, home=str(home),
                      argv=["claude", "--setting-sources=", "--settings", '{"permissions":{"allow":["Bash"]}}'])
    assert inline.rules.allow == ("*",)
    unknown = P.gather(project_dir=str(project), home=str(home))
    assert unknown.path == "settings only" and not unknown.flags_known


def test_config_dir_replaces_the_user_settings_directory(tmp_path):
    cfg = tmp_path / "cfg"
    _write(cfg / "settings.json", {"permissions": {"allow": ["Bash"]}})
    _write(tmp_path / "home" / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(x:*)"]}})
    pctx = P.gather(project_dir=None, home=str(tmp_path / "home"), config_dir=str(cfg))
    assert pctx.rules.allow == ("*",)


def test_payload_mode_wins_over_flags_and_files(tmp_path):
    _write(tmp_path / ".claude" / "settings.json", {"permissions": {"defaultMode": "acceptEdits"}})
    pctx = P.gather(project_dir=None, home=str(tmp_path), payload_mode="bypassPermissions",
                    argv=["claude", "--permission-mode", "plan"])
    assert pctx.mode == "bypassPermissions"
    assert P.gather(project_dir=None, home=str(tmp_path)).mode == "acceptEdits"


@pytest.mark.parametrize("bad", ["not json", "[]", '{"permissions": "x"}', '{"permissions": {"allow": "Bash"}}',
                                 '{"permissions": {"allow": [1, null, "Bash("]}}'])
def test_malformed_settings_grant_nothing(tmp_path, bad):
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(bad)
    pctx = P.gather(project_dir=None, home=str(tmp_path))
    assert P.verdict("pytest", pctx).kind == "unknown"
