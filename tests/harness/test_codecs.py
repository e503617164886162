"""Each codec against payload shapes recorded from the real CLIs (Codex 0.171.0, Gemini 0.61.0,
Copilot 1.0.102), and the degrade ladder."""

from __future__ import annotations

import json

from reflex.harness import codex, copilot, gemini
from reflex.harness.model import (POST_SHELL, POST_SHELL_FAILED, PRE_SHELL, SESSION_END, SESSION_START,
                                  Capabilities, Decision, degrade, from_claude, to_claude)
from reflex.harness.claude import answers as claude_answers

CODEX_PRE = {"session_id": "s1", "turn_id": "t", "transcript_path": "/h/.codex/sessions/r.jsonl", "cwd": "/w",
             "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "bypassPermissions",
             "tool_name": "Bash", "tool_input": {"command": "pytest -q"}, "tool_use_id": "call_1"}
GEMINI_AFTER = {"session_id": "g1", "cwd": "/w", "hook_event_name": "AfterTool", "timestamp": "x",
                "tool_name": "run_shell_command", "tool_input": {"command": "exit 3", "description": "d"},
                "tool_response": {"llmContent": "<untrusted_context>\nOutput: out\nerr\nExit Code: 3\n"
                                                "Process Group PGID: 13996\n</untrusted_context>",
                                  "returnDisplay": "out\nerr"}}
COPILOT_POST = {"sessionId": "c1", "timestamp": 1, "cwd": "/w", "toolName": "bash",
                "toolArgs": {"command": "pytest -q", "description": "d"},
                "toolResult": {"resultType": "success", "textResultForLlm": "1 failed\n<shellId: 0 completed with exit code 1>"}}


def test_codex_pre_decodes_and_translates_to_the_claude_shape():
    ev = codex.decode(CODEX_PRE)
    assert (ev.kind, ev.session_id, ev.call_id, ev.command, ev.permission_mode) == (
        PRE_SHELL, "s1", "call_1", "pytest -q", "bypassPermissions")
    obj = to_claude(ev)
    assert obj["hook_event_name"] == "PreToolUse" and obj["tool_name"] == "Bash"
    assert obj["tool_input"] == {"command": "pytest -q"} and obj["tool_use_id"] == "call_1"


def test_codex_post_has_output_but_no_exit_code():
    ev = codex.decode(dict(CODEX_PRE, hook_event_name="PostToolUse", tool_response="out\n"))
    assert (ev.kind, ev.output, ev.exit_code) == (POST_SHELL, "out\n", None)
    assert not codex.CAPS.post_sees_exit_code


def test_codex_rewrite_without_allow_degrades_to_a_deny_naming_the_command():
    d = from_claude(claude_answers.rewrite({"command": "grep -r x ."}, "ctx run --raw -- 'grep -r x .'", None, "why"))
    assert d.action == "rewrite" and not d.allow
    fitted = degrade(d, codex.CAPS)
    assert fitted.action == "deny" and "ctx run --raw" in fitted.reason
    # Gemini and Copilot take a rewrite without an allow
    assert degrade(d, gemini.CAPS).action == "rewrite" and degrade(d, copilot.CAPS).action == "rewrite"


def test_codex_answers():
    ev = codex.decode(CODEX_PRE)
    rewrite = json.loads(codex.encode(Decision("rewrite", reason="r", command="ctx run -- 'pytest -q'", allow=True), ev))
    assert rewrite == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                              "updatedInput": {"command": "ctx run -- 'pytest -q'"},
                                              "permissionDecisionReason": "r"}}
    deny = json.loads(codex.encode(Decision("deny", reason="no"), ev))
    assert deny["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert codex.encode(Decision(), ev) == b""


def test_gemini_after_tool_parses_output_and_exit_code():
    ev = gemini.decode(GEMINI_AFTER)
    assert (ev.kind, ev.output, ev.exit_code, ev.call_id) == (POST_SHELL_FAILED, "out\nerr", 3, None)
    assert to_claude(ev)["error"] == "Exit code 3\nout\nerr"
    ok = gemini.decode(dict(GEMINI_AFTER, tool_response={"llmContent": "<untrusted_context>\nOutput: fine\n"
                                                                        "Process Group PGID: 1\n</untrusted_context>"}))
    assert (ok.kind, ok.output, ok.exit_code) == (POST_SHELL, "fine", 0)


def test_gemini_answers_and_output_replacement():
    pre = gemini.decode(dict(GEMINI_AFTER, hook_event_name="BeforeTool", tool_response=None))
    assert pre.kind == PRE_SHELL and pre.tool_input == {"description": "d"}
    assert json.loads(gemini.encode(Decision("deny", reason="no"), pre)) == {"decision": "deny", "reason": "no"}
    assert json.loads(gemini.encode(Decision("rewrite", command="ctx run -- x"), pre)) == {
        "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"description": "d", "command": "ctx run -- x"}}}
    post = gemini.decode(GEMINI_AFTER)
    assert json.loads(gemini.encode(Decision("replace_output", output="DIGEST"), post)) == {"decision": "deny",
                                                                                           "reason": "DIGEST"}
    background = gemini.decode(dict(GEMINI_AFTER, hook_event_name="BeforeTool",
                                    tool_input={"command": "sleep 9", "is_background": True}))
    assert to_claude(background)["tool_input"]["run_in_background"] is True


def test_gemini_sessions():
    assert gemini.decode({"session_id": "g", "hook_event_name": "SessionStart", "source": "startup"}).kind == SESSION_START
    assert gemini.decode({"session_id": "g", "hook_event_name": "SessionEnd", "reason": "exit"}).kind == SESSION_END


def test_copilot_payloads_are_told_apart_by_argument_or_shape():
    post = copilot.decode(COPILOT_POST)
    assert (post.kind, post.output, post.exit_code, post.session_id) == (POST_SHELL_FAILED, "1 failed", 1, "c1")
    pre = {k: v for k, v in COPILOT_POST.items() if k != "toolResult"}
    assert copilot.decode(pre).kind == PRE_SHELL
    assert copilot.decode(pre, "preToolUse").kind == PRE_SHELL
    assert copilot.decode({"sessionId": "c1", "cwd": "/w", "source": "new", "initialPrompt": "x"}).kind == SESSION_START
    assert copilot.decode({"sessionId": "c1", "cwd": "/w", "reason": "complete"}, "sessionEnd").kind == SESSION_END
    as_string = dict(pre, toolArgs=json.dumps({"command": "ls"}))
    assert copilot.decode(as_string).command == "ls"
    other_tool = dict(pre, toolName="sql", toolArgs={"query": "x"})
    assert copilot.decode(other_tool).kind == "other"


def test_file_tools_become_claude_file_tools_for_the_safety_plane():
    view = copilot.decode({"sessionId": "c1", "cwd": "/w", "toolName": "view", "toolArgs": {"path": ".env"}},
                          "preToolUse")
    assert (view.kind, view.tool_name, view.tool_input) == ("pre-file", "Read", {"file_path": ".env"})
    read = gemini.decode({"session_id": "g", "cwd": "/w", "hook_event_name": "BeforeTool", "tool_name": "read_file",
                          "tool_input": {"file_path": ".env"}})
    assert to_claude(read)["tool_name"] == "Read" and to_claude(read)["tool_input"] == {"file_path": ".env"}
    edit = gemini.decode({"session_id": "g", "cwd": "/w", "hook_event_name": "BeforeTool", "tool_name": "replace",
                          "tool_input": {"file_path": "a.py", "old_string": "x", "new_string": "y"}})
    assert to_claude(edit)["tool_name"] == "Edit"
    assert gemini.decode({"session_id": "g", "hook_event_name": "BeforeTool", "tool_name": "web_fetch",
                          "tool_input": {}}).kind == "other"


def test_copilot_answers():
    pre = copilot.decode({k: v for k, v in COPILOT_POST.items() if k != "toolResult"})
    assert json.loads(copilot.encode(Decision("rewrite", command="ctx run -- x", allow=True), pre)) == {
        "permissionDecision": "allow", "modifiedArgs": {"description": "d", "command": "ctx run -- x"}}
    assert json.loads(copilot.encode(Decision("replace_output", output="D"), copilot.decode(COPILOT_POST))) == {
        "modifiedResult": {"resultType": "success", "textResultForLlm": "D"}}
    # Copilot adds no context: context-only decisions say nothing
    assert copilot.encode(degrade(Decision("none", context="hi"), copilot.CAPS), pre) == b""


def test_degrade_ladder_for_a_harness_that_can_only_add_context():
    weak = Capabilities(harness="weak", shell_tool="sh", can_rewrite=False, rewrite_needs_allow=False, can_deny=False,
                        post_sees_output=True, post_sees_exit_code=False, post_replaces_output=False,
                        adds_context=True, stdout_is_json=True, block_exit_code=None, fail_open=True,
                        timeout_unit="s", has_call_id=False, session_end=False)
    d = degrade(Decision("rewrite", reason="ctx: digest", command="ctx run -- pytest", allow=True), weak)
    assert d.action == "none" and "ctx run -- pytest" in d.context
    assert degrade(Decision("replace_output", output="DIGEST"), weak) == Decision("none", context="DIGEST")
    assert degrade(Decision("deny", reason="secret"), weak).context == "secret"
