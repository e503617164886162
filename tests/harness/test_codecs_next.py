"""The Qwen, Droid, OpenCode and Cursor codecs against payloads recorded from Qwen Code 0.24.4,
Factory Droid 0.225.2 and ctx's own OpenCode plugin in OpenCode 1.18.33, and Cursor payloads
written to its documented hook schema (no Cursor client runs here)."""

from __future__ import annotations

import json

from reflex.harness import cursor, droid, opencode, qwen
from reflex.harness.model import (OTHER, POST_SHELL, POST_SHELL_FAILED, PRE_FILE, PRE_SHELL, SESSION_START, Decision,
                                  degrade, to_claude)

# Recorded (paths shortened): Qwen 0.24.4 in `-p --yolo` mode.
QWEN_PRE = {"session_id": "8f10c541", "transcript_path": "/h/.qwen/projects/ws/chats/8f10c541.jsonl", "cwd": "/ws",
            "hook_event_name": "PreToolUse", "timestamp": "2026-11-30T23:15:40.436Z", "permission_mode": "yolo",
            "prompt_id": "8f10c541########0", "tool_name": "run_shell_command",
            "tool_input": {"command": "echo hello && ls", "description": "run the tests"},
            "tool_use_id": "toolu_1796080540435_duu0zovwk", "tool_call_id": "call_1"}
QWEN_POST = dict(QWEN_PRE, hook_event_name="PostToolUse", tool_response={
    "llmContent": "Command: echo hello && ls\nDirectory: (root)\nOutput: hello\na.txt\nError: (none)\nExit Code: 0\n"
                  "Signal: (none)\nProcess Group PGID: (none)", "returnDisplay": "hello\na.txt"})
# Recorded: Droid 0.225.2, `droid exec --skip-permissions-unsafe`.
DROID_PRE = {"session_id": "a9553c99", "transcript_path": "/h/.factory/sessions/ws/a9553c99.jsonl", "cwd": "/ws",
             "permission_mode": "auto-low", "hook_event_name": "PreToolUse", "tool_name": "Execute",
             "tool_input": {"command": "echo hello && ls", "description": "run the tests"}}
DROID_POST = dict(DROID_PRE, hook_event_name="PostToolUse", tool_response="hello\na.txt\n\n\n[Process exited with code 0]")
# What ctx's plugin sends from OpenCode 1.18.33's tool.execute.before/after (input + output merged).
OPENCODE_BEFORE = {"hook_event_name": "tool.execute.before", "session_id": "ses_dd13e7083ffe", "call_id": "call_2",
                   "tool": "bash", "args": {"command": "echo hello && ls", "description": "run the tests"}, "cwd": "/ws"}
OPENCODE_AFTER = dict(OPENCODE_BEFORE, hook_event_name="tool.execute.after", output="hello\na.txt\n", exit=0)
# Cursor's documented preToolUse / postToolUse payloads.
CURSOR_PRE = {"conversation_id": "conv-1", "generation_id": "gen-1", "model": "gpt-5", "hook_event_name": "preToolUse",
              "cursor_version": "2.1.0", "workspace_roots": ["/ws"], "tool_name": "Shell",
              "tool_input": {"command": "pytest -q"}, "tool_use_id": "tu_1", "cwd": "/ws",
              "transcript_path": "/h/.cursor/t.jsonl"}
CURSOR_POST = dict(CURSOR_PRE, hook_event_name="postToolUse", tool_output="1 failed, 2 passed", duration_ms=812)


def test_qwen_payloads():
    pre = qwen.decode(QWEN_PRE)
    assert (pre.kind, pre.session_id, pre.call_id, pre.command, pre.permission_mode) == (
        PRE_SHELL, "8f10c541", "toolu_1796080540435_duu0zovwk", "echo hello && ls", "yolo")
    post = qwen.decode(QWEN_POST)
    assert (post.kind, post.output, post.exit_code, post.call_id) == (POST_SHELL, "hello\na.txt", 0, pre.call_id)
    failed = qwen.decode(dict(QWEN_POST, tool_response={"llmContent": "Command: pytest -q\nDirectory: (root)\n"
                                                                      "Output: 1 failed\nError: (none)\nExit Code: 1\n"
                                                                      "Signal: (none)\nProcess Group PGID: 42"}))
    assert (failed.kind, failed.output, failed.exit_code) == (POST_SHELL_FAILED, "1 failed", 1)
    assert to_claude(failed)["error"] == "Exit code 1\n1 failed"
    read = qwen.decode(dict(QWEN_PRE, tool_name="read_file", tool_input={"file_path": "/ws/.env"}))
    assert (read.kind, to_claude(read)["tool_name"]) == (PRE_FILE, "Read")
    assert qwen.decode(dict(QWEN_PRE, tool_name="web_fetch", tool_input={})).kind == OTHER


def test_qwen_cannot_rewrite_denies_and_replaces_output_with_continue_false():
    pre, post = qwen.decode(QWEN_PRE), qwen.decode(QWEN_POST)
    rewrite = degrade(Decision("rewrite", reason="ctx: digest", command="ctx run -- pytest -q", allow=True), qwen.CAPS)
    assert rewrite.action == "deny" and "ctx run -- pytest -q" in rewrite.reason
    deny = json.loads(qwen.encode(Decision("deny", reason="secret"), pre))
    assert deny == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "secret"}}
    # The only answer that replaces a Qwen tool result (updatedToolOutput and decision:block are ignored).
    assert json.loads(qwen.encode(Decision("replace_output", output="DIGEST"), post)) == {
        "continue": False, "stopReason": "DIGEST"}
    assert qwen.encode(Decision(), pre) == b""


def test_droid_payloads_and_answers():
    pre, post = droid.decode(DROID_PRE), droid.decode(DROID_POST)
    assert (pre.kind, pre.session_id, pre.call_id, pre.tool_input) == (PRE_SHELL, "a9553c99", None,
                                                                        {"description": "run the tests"})
    assert (post.kind, post.output, post.exit_code) == (POST_SHELL, "hello\na.txt", 0)
    failed = droid.decode(dict(DROID_POST, tool_response="E   assert 1 == 2\n\n[Process exited with code 1]"))
    assert (failed.kind, failed.exit_code) == (POST_SHELL_FAILED, 1)
    # a rewrite carries "allow" only when ctx's mirror found Droid runs the command unasked
    asked = json.loads(droid.encode(Decision("rewrite", command="ctx run -- x", allow=False), pre))
    assert asked == {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                            "updatedInput": {"description": "run the tests", "command": "ctx run -- x"}}}
    unasked = json.loads(droid.encode(Decision("rewrite", reason="r", command="ctx run -- x", allow=True), pre))
    assert unasked["hookSpecificOutput"]["permissionDecision"] == "allow"
    # no Droid answer replaces output: a digest can only be context, which ctx holds back (more tokens)
    assert degrade(Decision("replace_output", output="D"), droid.CAPS) == Decision("none", context="D")
    read = droid.decode(dict(DROID_PRE, tool_name="Read", tool_input={"file_path": ".env"}))
    assert (read.kind, read.tool_input) == (PRE_FILE, {"file_path": ".env"})


def test_opencode_plugin_payloads_and_answers():
    before, after = opencode.decode(OPENCODE_BEFORE), opencode.decode(OPENCODE_AFTER)
    assert (before.kind, before.session_id, before.call_id, before.command) == (
        PRE_SHELL, "ses_dd13e7083ffe", "call_2", "echo hello && ls")
    assert (after.kind, after.output, after.exit_code, after.call_id) == (POST_SHELL, "hello\na.txt\n", 0, "call_2")
    assert opencode.decode(dict(OPENCODE_AFTER, exit=2)).kind == POST_SHELL_FAILED
    assert opencode.decode(dict(OPENCODE_BEFORE, args={"command": "ls", "workdir": "sub"})).cwd == "/ws/sub"
    read = opencode.decode(dict(OPENCODE_BEFORE, tool="read", args={"filePath": "/ws/.env"}))
    assert (read.kind, read.tool_name, read.tool_input) == (PRE_FILE, "Read", {"file_path": "/ws/.env"})
    assert opencode.decode({"hook_event_name": "session.created", "session_id": "ses_1"}).kind == SESSION_START
    assert json.loads(opencode.encode(Decision("deny", reason="secret"), before)) == {"deny": "secret"}
    assert json.loads(opencode.encode(Decision("rewrite", command="ctx run -- x"), before)) == {
        "args": {"description": "run the tests", "command": "ctx run -- x"}}
    assert json.loads(opencode.encode(Decision("replace_output", output="D"), after)) == {"output": "D"}
    assert opencode.encode(Decision(), before) == b""


def test_cursor_documented_payloads_and_answers():
    pre, post = cursor.decode(CURSOR_PRE), cursor.decode(CURSOR_POST)
    assert (pre.kind, pre.session_id, pre.call_id, pre.command, pre.cwd) == (PRE_SHELL, "conv-1", "tu_1", "pytest -q",
                                                                               "/ws")
    assert (post.kind, post.output, post.exit_code) == (POST_SHELL, "1 failed, 2 passed", None)
    deny = json.loads(cursor.encode(Decision("deny", reason="secret"), pre))
    assert deny["permission"] == "deny" and deny["agent_message"] == "secret"
    assert json.loads(cursor.encode(Decision("rewrite", command="ctx run -- x", allow=True), pre)) == {
        "updated_input": {"command": "ctx run -- x"}, "permission": "allow"}
    assert json.loads(cursor.encode(Decision("none", context="c"), post)) == {"additional_context": "c"}
    assert cursor.encode(Decision(), pre) == b"{}"  # never empty: failClosed blocks an empty answer
    legacy = cursor.decode({"conversation_id": "conv-1", "hook_event_name": "beforeShellExecution",
                            "command": "cat .env", "cwd": "/ws", "workspace_roots": ["/ws"]})
    assert (legacy.kind, legacy.command) == (PRE_SHELL, "cat .env")
    read = cursor.decode({"conversation_id": "conv-1", "hook_event_name": "beforeReadFile", "file_path": "/ws/.env"})
    assert (read.kind, to_claude(read)["tool_input"]) == (PRE_FILE, {"file_path": "/ws/.env"})
    no_cwd = cursor.decode({k: v for k, v in CURSOR_PRE.items() if k != "cwd"})
    assert no_cwd.cwd == "/ws"  # the first workspace root


def test_the_shim_lets_fail_closed_hosts_be_with_their_own_no_opinion_answer():
    from reflex.harness import codecs
    from reflex.shim import hook
    for name in codecs.NAMES:
        codec = codecs.get(name)
        expected = getattr(codec, "NO_OPINION", b"")
        assert hook._NO_OPINION.get(name, b"") == expected, name
        # a host that blocks on a failed hook answers something on every path, or (OpenCode) its
        # plugin treats an empty answer as "let it be"
        if not codec.CAPS.fail_open:
            assert expected or name == "opencode", name
