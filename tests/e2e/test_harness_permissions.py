"""The permission-neutral invariant on the real Codex, Gemini, Copilot and Droid CLIs: in a mode where the
harness does NOT run every command unasked, the same tool calls run with ctx installed as without
it.  ctx must not rewrite there (a Codex rewrite carries an allow that would skip the harness's
own decision), and where a command ran, the harness's decision was its own.

Each harness runs in a headless mode real users use that keeps approvals:
- codex exec with `approval_policy="on-request"` (commands run in Codex's sandbox; `codex exec`'s
  default policy is "never ask", which Codex reports as bypassPermissions, where ctx may rewrite);
- gemini -p in its default approval mode with `--allowed-tools run_shell_command(pytest)`;
- copilot -p --allow-tool 'shell(pytest)' (pytest allowed, nothing else);
- droid exec --auto medium (Droid's own risk rating decides; no one to ask, so it refuses above it).
Not here: Qwen `-p` outside YOLO offers no shell tool at all, and OpenCode judges the rewritten
command itself (ctx always rewrites there; docs/harnesses.md).
"""

from __future__ import annotations

import pytest

from tests.support.agent_clis import argv_for, cli_binary
from tests.e2e.harness_session import events, kill_daemon, run_session, sessions, wait_for

pytestmark = pytest.mark.e2e

SCRIPT = ["pytest -q", "echo MARK-$((40+2))"]


def _policy(outputs):
    return SCRIPT[len(outputs)] if len(outputs) < len(SCRIPT) else None


def _ran(outputs):
    """Which scripted commands really ran, from what the model received."""
    seen = outputs + [""] * (len(SCRIPT) - len(outputs))
    return ["4 failed" in seen[0], "MARK-42" in seen[1]]


def _argv(name, repo):
    binary = cli_binary(name)
    full = argv_for(name, binary, repo, "make the tests pass")
    if name == "codex":
        full = [a for a in full if a != "--dangerously-bypass-approvals-and-sandbox"]
        return full[:2] + ["-c", 'approval_policy="on-request"'] + full[2:]
    if name == "gemini":
        return [a for a in full if a not in ("--approval-mode", "yolo")] + ["--allowed-tools", "run_shell_command(pytest)"]
    if name == "droid":
        i = full.index("--skip-permissions-unsafe")
        return full[:i] + ["--auto", "medium"] + full[i + 1:]
    return [a if a != "--allow-all-tools" else "--allow-tool=shell(pytest)" for a in full]


@pytest.mark.parametrize("name", ["codex", "gemini", "copilot", "droid"])
def test_same_calls_run_with_and_without_ctx(name, tmp_path):
    arms = {}
    for with_ctx in (False, True):
        d = tmp_path / ("ctx" if with_ctx else "raw")
        d.mkdir()
        try:
            s = run_session(name, d, _policy, with_ctx=with_ctx, argv_override=_argv(name, d / "repo"))
        finally:
            kill_daemon(d / "ctxhome")
        arms[with_ctx] = s
    raw, ctx = arms[False], arms[True]
    assert _ran(raw.outputs) == _ran(ctx.outputs), (raw.describe(), ctx.describe())
    # ctx saw the calls and left the decision to the harness: no rewrite in this mode
    sess = [x for x in sessions(ctx.ctx_home) if x["harness"] == name]
    assert sess, ctx.describe()
    assert wait_for(lambda: any(e["hook_event"] == "PreToolUse" for e in events(ctx.ctx_home, sess[0]["session_id"])))
    pre = [e for e in events(ctx.ctx_home, sess[0]["session_id"]) if e["hook_event"] == "PreToolUse"]
    assert pre and all(e["decision"] != "rewrite" for e in pre), [dict(e) for e in pre]
    if name in ("gemini", "copilot") and _ran(raw.outputs)[0]:  # Codex and Droid cannot replace output
        # pytest ran under the harness's own permission: its post hook delivered ctx's digest
        assert "[ctx] pytest" in ctx.outputs[0] and "4 failed" in ctx.outputs[0], ctx.describe()
        assert "[ctx] pytest" not in raw.outputs[0]
