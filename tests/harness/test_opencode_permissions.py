"""OpenCode's permission neutrality (issue 30, item 6): ctx rewrites a bash call only where
OpenCode's own permission config allows the rewritten command as it allows the original.

The table tests run the mirror (reflex.harness.opencode) against the rules OpenCode 1.18.33
applies; the e2e test runs the real OpenCode CLI (npm opencode-ai, pinned in
tests/support/agent_clis.py), offline against a scripted model, with and without ctx, under
`"bash": {"*": "ask", "<python> -m pytest*": "allow"}`: the same calls must run in both.
"""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from reflex.harness import opencode

LAUNCHER = "/home/u/.venv/bin/ctx"


def _rewritten(command: str) -> str:
    return "%s run -- %s" % (shlex.quote(LAUNCHER), shlex.quote(command))


@pytest.mark.parametrize(("text", "pattern", "expected"), [
    ("pytest -q", "pytest*", True),
    ("pytest", "pytest *", True),            # a trailing " *" also matches the bare command
    ("pytest -q", "pytest *", True),
    ("pytestx", "pytest *", False),
    ("python -m pytest -q", "python -m pytest*", True),
    ("python3 -m pytest", "python -m pytest*", False),
    ("git push", "git ?ush", True),
    ("a.b", "a?b", True),
    ("a+b", "a.b", False),                   # regex characters are literal
    ("echo a/b", "echo *", True),            # `*` crosses slashes in bash patterns
    ("line1\nline2", "line1*", True),
])
def test_wildcard_matches_as_opencode(text, pattern, expected):
    assert opencode.wildcard(text, pattern) is expected


@pytest.mark.parametrize(("command", "parts"), [
    ("pytest -q", ["pytest -q"]),
    ("pytest -q 2>&1 | tail -50", ["pytest -q 2>&1", "tail -50"]),
    ("cd sub && pytest; echo done || true", ["cd sub", "pytest", "echo done", "true"]),
    ("pytest -k 'a | b'", ["pytest -k 'a | b'"]),
    ("pytest $(cat args)", None),
    ("pytest `cat args`", None),
    ('pytest "$(cat args)"', None),
    ("(pytest)", None),
    ("pytest &", None),
    ("pytest <<EOF\nx\nEOF", None),
    ("pytest 'unclosed", None),
    ("pytest |", None),
])
def test_command_parts_split_only_where_exact(command, parts):
    assert opencode.command_parts(command) == parts


ISSUE_CONFIG = {"permission": {"bash": {"*": "ask", "python -m pytest*": "allow"}}, "agents": {}}


@pytest.mark.parametrize(("command", "evidence", "kind"), [
    # the issue's configuration: pytest is allowed, its rewrite is not -> no rewrite
    ("python -m pytest -q", ISSUE_CONFIG, "ask"),
    # no permission config at all: OpenCode runs bash unasked, the rewrite too
    ("pytest -q", {"permission": None, "agents": {}}, "allow"),
    ("pytest -q", {"permission": {"bash": "allow"}, "agents": {}}, "allow"),
    ("pytest -q", {"permission": "allow", "agents": {}}, "allow"),
    # a deny on another part: left to OpenCode, which denies
    ("pytest -q && git push", {"permission": {"bash": {"*": "allow", "git push*": "deny"}}, "agents": {}}, "deny"),
    # the rewrite itself denied: never rewritten
    ("pytest -q", {"permission": {"bash": {"*": "allow", "*ctx run*": "deny"}}, "agents": {}}, "ask"),
    # allowed by the config, but one agent asks: the plugin cannot know the agent, so no rewrite
    ("pytest -q", {"permission": {"bash": "allow"}, "agents": {"build": {"bash": {"*": "ask"}}}}, "ask"),
    # a global "*": "ask" covers bash too (a permission name is a pattern)
    ("pytest -q", {"permission": {"*": "ask"}, "agents": {}}, "ask"),
    # last matching rule wins, in config order
    ("pytest -q", {"permission": {"bash": {"pytest*": "allow", "*": "ask"}}, "agents": {}}, "ask"),
    # a file command outside the project: OpenCode's external_directory rule decides
    ("cat /etc/hosts | pytest", {"permission": None, "agents": {}}, "unknown"),
    ("pytest $(cat args)", {"permission": None, "agents": {}}, "unknown"),
    # no evidence (an older plugin): never rewritten
    ("pytest -q", None, "unknown"),
])
def test_rewrite_only_where_both_are_allowed(command, evidence, kind):
    got, why = opencode.rewrite_verdict(command, _rewritten(command), evidence)
    assert got == kind, why


def test_everything_allowed_rewrites_where_the_rewrite_is_allowed_too():
    # The user allowed ctx's own rewrites explicitly: both allowed, so ctx may rewrite.
    evidence = {"permission": {"bash": {"*": "ask", "pytest*": "allow", "*/ctx run -- *": "allow"}}, "agents": {}}
    assert opencode.rewrite_verdict("pytest -q", _rewritten("pytest -q"), evidence)[0] == "allow"
    assert opencode.rewrite_verdict("rm -rf x", _rewritten("rm -rf x"), evidence)[0] == "ask"


# -- the real CLI ------------------------------------------------------------------------------

def _session(tmp_path, permission, with_ctx, script):
    """One `opencode run` with `permission` in the project's opencode.json (ctx installed into it
    with `ctx install --harness opencode --settings`, as the README shows)."""
    from tests.support.agent_clis import opencode_config, prepare_home, run_cli
    from tests.support.agent_sessions import api_for, ctx_env, install, make_repo
    from tests.support.api_models import scripted

    repo = make_repo(tmp_path / "repo")
    home = tmp_path / "home"
    home.mkdir()
    ctx_home = tmp_path / "ctxhome"
    with api_for("opencode", scripted(script), repo) as api:
        prepare_home("opencode", home, api.base_url)
        cfg = opencode_config(api.base_url)
        if permission is not None:
            cfg["permission"] = permission
        (repo / "opencode.json").write_text(json.dumps(cfg))
        if with_ctx:
            install("opencode", ctx_home, home, repo)
        run = run_cli("opencode", repo=repo, home=home, api_url=api.base_url, prompt="make the tests pass",
                      env_extra=ctx_env(ctx_home))
        return run, api.tool_outputs(), ctx_home


@pytest.mark.e2e
@pytest.mark.parametrize("config", ["issue", "default"])
def test_real_opencode_runs_the_same_calls_with_and_without_ctx(config, tmp_path):
    from tests.support.agent_sessions import events, kill_daemon, sessions, wait_for

    pytest_cmd = "%s -m pytest -q" % sys.executable
    permission = {"bash": {"*": "ask", "%s -m pytest*" % sys.executable: "allow"}} if config == "issue" else None
    script = [pytest_cmd, "echo MARK-$((40+2))"]
    arms = {}
    for with_ctx in (False, True):
        d = tmp_path / ("ctx" if with_ctx else "raw")
        d.mkdir()
        try:
            arms[with_ctx] = _session(d, permission, with_ctx, script)
        finally:
            kill_daemon(d / "ctxhome")
    (raw_run, raw, _), (ctx_run, out, ctx_home) = arms[False], arms[True]

    def ran(outputs):
        seen = outputs + [""] * (2 - len(outputs))
        return ["4 failed" in seen[0], "MARK-42" in seen[1]]

    describe = "raw:\n%s\n%s\nctx:\n%s\n%s" % (raw_run.describe(), raw, ctx_run.describe(), out)
    # pytest runs in both arms; under the issue's config the echo asks, and `opencode run` rejects it
    assert ran(raw) == [True, config == "default"], describe
    assert ran(out) == ran(raw), describe
    sess = [s for s in sessions(ctx_home) if s["harness"] == "opencode"]
    assert sess, describe
    assert wait_for(lambda: any(e["hook_event"] == "PreToolUse" for e in events(ctx_home, sess[0]["session_id"])))
    pre = [e for e in events(ctx_home, sess[0]["session_id"]) if e["hook_event"] == "PreToolUse"
           and (e["command"] or "").startswith(sys.executable)]
    assert pre, describe
    if config == "issue":
        # not rewritten (the rewrite would have asked, i.e. been rejected); digested after it ran
        assert all(e["decision"] != "rewrite" for e in pre), [dict(e) for e in pre]
    else:
        assert pre[0]["decision"] == "rewrite", [dict(e) for e in pre]
    assert "[ctx] pytest" in out[0] and "4 failed" in out[0], describe
    assert "[ctx] pytest" not in raw[0]
