"""`ctx hook claude` against the real daemon: every bad-input case, and the dispatch."""

import json

import pytest

from reflex.harness.claude.payload import MAX_PAYLOAD

from tests.conftest import ledger_rows, pre_bash, run_hook

BAD_INPUTS = {
    "empty": (b"", "empty"),
    "whitespace": (b"  \n\t", "empty"),
    "not_json": (b"{this is not json", "not_json"),
    "not_object": (b"[1, 2, 3]", "not_object"),
    "not_utf8": (b'{"session_id": "\xff\xfe"}', "not_utf8"),
    "binary": (bytes(range(256)) * 4, "not_utf8"),
    "missing_fields": (b'{"tool_name": "Bash"}', "invalid"),
    "wrong_types": (b'{"session_id": 5, "hook_event_name": []}', "invalid"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_is_recorded_and_answered_with_nothing(paths, running_daemon, name):
    data, code = BAD_INPUTS[name]
    rc, out, err, _ = run_hook(data)
    assert rc == 0
    assert out == b"", "nothing on stdout that Claude Code could misread"
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "malformed" in lines[0] and code in lines[0]
    rows = ledger_rows(paths, "SELECT * FROM events WHERE kind='malformed'")
    assert len(rows) == 1 and json.loads(rows[0]["data"])["code"] == code


def test_huge_payload_is_capped_and_recorded(paths, running_daemon):
    data = b'{"session_id":"s","hook_event_name":"PostToolUse","x":"' + b"a" * (MAX_PAYLOAD + 100) + b'"}'
    rc, out, err, _ = run_hook(data, timeout=30)
    assert rc == 0 and out == b""
    assert b"too_large" in err
    rows = ledger_rows(paths, "SELECT * FROM events WHERE kind='malformed'")
    assert json.loads(rows[0]["data"])["code"] == "too_large"


def test_bom_is_stripped(paths, running_daemon):
    payload = b"\xef\xbb\xbf" + json.dumps({"session_id": "s-bom", "hook_event_name": "SessionStart",
                                            "source": "startup"}).encode()
    rc, out, err, _ = run_hook(payload)
    assert rc == 0 and out == b"" and err == b""
    rows = ledger_rows(paths, "SELECT * FROM events WHERE session_id='s-bom'")
    assert rows[0]["hook_event"] == "SessionStart" and rows[0]["kind"] == "hook"


def test_unknown_event_recorded_and_answered_with_nothing(paths, running_daemon):
    rc, out, err, _ = run_hook({"session_id": "s-u", "hook_event_name": "FutureEvent2099", "new_field": 1})
    assert rc == 0 and out == b"" and err == b""
    rows = ledger_rows(paths, "SELECT * FROM events WHERE session_id='s-u'")
    assert rows[0]["hook_event"] == "FutureEvent2099"
    assert json.loads(rows[0]["data"])["unknown_event"] is True


def test_unknown_fields_are_tolerated(paths, running_daemon):
    p = pre_bash("ls -la", session="s-x")
    p["some_field_from_2027"] = {"nested": True}
    rc, out, err, _ = run_hook(p)
    assert rc == 0 and err == b""
    rows = ledger_rows(paths, "SELECT * FROM events WHERE session_id='s-x'")
    assert rows[0]["kind"] == "hook" and rows[0]["decision"] == "pass"


def test_post_events_record_exit_codes_and_rewrite_verification(paths, running_daemon, user_allows_bash):
    sess = "s-post"
    rc, out, _, _ = run_hook(pre_bash("pytest -q", session=sess, tool_use_id="tu-9", cwd=str(paths.home)))
    answer = json.loads(out)
    rewritten = answer["hookSpecificOutput"]["updatedInput"]["command"]
    ok = {"session_id": sess, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "tu-9",
          "tool_input": {"command": rewritten}, "tool_response": {"stdout": "1 passed", "stderr": "",
                                                                  "interrupted": False}}
    fail = {"session_id": sess, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_use_id": "tu-10", "tool_input": {"command": "false"}, "error": "Exit code 3\nboom",
            "is_interrupt": False}
    for p in (ok, fail):
        rc, out, err, _ = run_hook(p)
        assert rc == 0 and out == b"" and err == b""
    rows = ledger_rows(paths, "SELECT * FROM events WHERE session_id=? ORDER BY seq", (sess,))
    assert [r["hook_event"] for r in rows] == ["PreToolUse", "PostToolUse", "PostToolUseFailure"]
    assert [r["seq"] for r in rows] == [1, 2, 3]
    assert rows[1]["exit_code"] == 0 and rows[1]["rewrite_applied"] == 1
    assert rows[1]["command"] == "pytest -q", "post events carry the command as the model wrote it"
    assert rows[2]["exit_code"] == 3


def test_rewrite_not_applied_is_detected(paths, running_daemon, user_allows_bash):
    sess = "s-na"
    run_hook(pre_bash("pytest tests/", session=sess, tool_use_id="tu-1", cwd=str(paths.home)))
    run_hook({"session_id": sess, "hook_event_name": "PostToolUse", "tool_name": "Bash",
              "tool_use_id": "tu-1", "tool_input": {"command": "pytest tests/"},
              "tool_response": {"stdout": "", "stderr": "", "interrupted": False}})
    rows = ledger_rows(paths, "SELECT * FROM events WHERE session_id=? ORDER BY seq", (sess,))
    assert rows[1]["rewrite_applied"] == 0


def test_a_failing_commands_output_reaches_the_ledger_redacted(paths, running_daemon):
    # The ledger keeps the head of a failure's text (stats, replay) and is exported and shared:
    # a key the command printed is redacted there as in a digest.
    key = "AKIA" + "Q3EGPOWZ7XKJ4LMN"
    fail = {"session_id": "s-leak", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_use_id": "tu-leak", "tool_input": {"command": "./deploy.sh"},
            "error": "Exit code 1\nusing AWS_ACCESS_KEY_ID=%s\ndeploy failed" % key, "is_interrupt": False}
    rc, _, _, _ = run_hook(fail)
    assert rc == 0
    rows = ledger_rows(paths, "SELECT data FROM events WHERE session_id='s-leak'")
    assert len(rows) == 1
    error = json.loads(rows[0]["data"])["error"]
    assert key not in error and "deploy failed" in error and "REDACTED" in error
