"""The permission-neutral invariant on the real Codex, Gemini, Copilot and Droid CLIs: in a mode where the
harness does NOT run every command unasked, the same tool calls run with ctx installed as without
it.  ctx must not rewrite there (a Codex rewrite carries an allow that would skip the harness's
own decision), and where a command ran, the harness's decision was its own.

Each harness runs in the headless modes real users use that keep approvals:
- codex exec with `approval_policy="on-request"` (commands run in Codex's sandbox; `codex exec`'s
  default policy is "never ask", which Codex reports as bypassPermissions, where ctx may rewrite),
  and `codex exec -s read-only` (never asks, but every command runs in a read-only sandbox);
- gemini -p in its default approval mode with `--allowed-tools run_shell_command(pytest)`, and in
  `--approval-mode auto_edit` with no shell command allowed;
- copilot -p --allow-tool 'shell(pytest)' (pytest allowed, nothing else), and copilot -p with no
  tool allowed at all;
- droid exec --auto medium (Droid's own risk rating decides; no one to ask, so it refuses above it).
Not here: Qwen `-p` outside YOLO offers no shell tool at all, and OpenCode judges the rewritten
command itself (ctx always rewrites there; docs/harnesses.md).
(YOLO modes, where ctx does rewrite, are the sessions of test_harness_sessions.py.)
"""

from __future__ import annotations

import pytest

from tests.support.agent_clis import argv_for, cli_binary
from tests.support.agent_sessions import events, kill_daemon, run_session, sessions, wait_for

pytestmark = pytest.mark.e2e

SCRIPT = ["pytest -q", "echo MARK-$((40+2))"]


def _policy(outputs):
    return SCRIPT[len(outputs)] if len(outputs) < len(SCRIPT) else None


def _ran(outputs):
    """Which scripted commands really ran, from what the model received."""
    seen = outputs + [""] * (len(SCRIPT) - len(outputs))
    return ["4 failed" in seen[0], "MARK-42" in seen[1]]


MODES = [("codex", "on-request"), ("codex", "read-only"), ("gemini", "default+pytest"),
         ("gemini", "auto_edit"), ("copilot", "allow-pytest"), ("copilot", "nothing-allowed"), ("droid", "auto-medium")]
# Gemini -p in auto_edit does not offer its shell tool at all (the model's call answers "Tool
# not found"), so no hook fires: the invariant is only that nothing runs either way.
NO_SHELL_TOOL = {("gemini", "auto_edit")}


def _argv(name, mode, repo):
    binary = cli_binary(name)
    full = argv_for(name, binary, repo, "make the tests pass")
    if name == "codex":
        full = [a for a in full if a != "--dangerously-bypass-approvals-and-sandbox"]
        extra = ["-c", 'approval_policy="on-request"'] if mode == "on-request" else ["-s", "read-only"]
        return full[:2] + extra + full[2:]
    if name == "gemini":
        base = [a for a in full if a not in ("--approval-mode", "yolo")]
        return base + (["--allowed-tools", "run_shell_command(pytest)"] if mode == "default+pytest"
                       else ["--approval-mode", "auto_edit"])
    if name == "droid":
        i = full.index("--skip-permissions-unsafe")
        return full[:i] + ["--auto", "medium"] + full[i + 1:]
    if mode == "allow-pytest":
        return [a if a != "--allow-all-tools" else "--allow-tool=shell(pytest)" for a in full]
    return [a for a in full if a != "--allow-all-tools"]


@pytest.mark.parametrize(("name", "mode"), MODES, ids=["%s-%s" % m for m in MODES])
def test_same_calls_run_with_and_without_ctx(name, mode, tmp_path):
    arms = {}
    for with_ctx in (False, True):
        d = tmp_path / ("ctx" if with_ctx else "raw")
        d.mkdir()
        try:
            s = run_session(name, d, _policy, with_ctx=with_ctx, argv_override=_argv(name, mode, d / "repo"))
        finally:
            kill_daemon(d / "ctxhome")
        arms[with_ctx] = s
    raw, ctx = arms[False], arms[True]
    assert _ran(raw.outputs) == _ran(ctx.outputs), (raw.describe(), ctx.describe())
    # ctx saw the calls and left the decision to the harness: no rewrite in this mode
    sess = [x for x in sessions(ctx.ctx_home) if x["harness"] == name]
    assert sess, ctx.describe()
    if (name, mode) not in NO_SHELL_TOOL:
        assert wait_for(lambda: any(e["hook_event"] == "PreToolUse"
                                    for e in events(ctx.ctx_home, sess[0]["session_id"])))
    pre = [e for e in events(ctx.ctx_home, sess[0]["session_id"]) if e["hook_event"] == "PreToolUse"]
    assert (pre or (name, mode) in NO_SHELL_TOOL) and all(e["decision"] != "rewrite" for e in pre), [
        dict(e) for e in pre]
    if name in ("gemini", "copilot") and _ran(raw.outputs)[0]:  # Codex and Droid cannot replace output
        # pytest ran under the harness's own permission: its post hook delivered ctx's digest
        assert "[ctx] pytest" in ctx.outputs[0] and "4 failed" in ctx.outputs[0], ctx.describe()
        assert "[ctx] pytest" not in raw.outputs[0]
