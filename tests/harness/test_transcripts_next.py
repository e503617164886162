"""`ctx replay` over Qwen Code's and Droid's own session files (records as Qwen 0.24.4 and Droid
0.225.2 wrote them in the e2e sessions, shortened)."""

from __future__ import annotations

import json

from reflex.analysis.replay import detect_format, load, replay

QWEN = [
    {"uuid": "1", "sessionId": "q1", "type": "user", "cwd": "/ws", "timestamp": "t",
     "message": {"role": "user", "parts": [{"text": "make the tests pass"}]}},
    {"uuid": "2", "sessionId": "q1", "type": "system", "cwd": "/ws", "subtype": "ui_telemetry", "systemPayload": {}},
    {"uuid": "3", "sessionId": "q1", "type": "assistant", "cwd": "/ws", "timestamp": "t",
     "message": {"role": "model", "parts": [{"functionCall": {"id": "call_0", "name": "run_shell_command",
                                                              "args": {"command": "pytest -q"}}}]}},
    {"uuid": "4", "sessionId": "q1", "type": "tool_result", "cwd": "/ws", "timestamp": "t",
     "message": {"role": "user", "parts": [{"functionResponse": {"id": "call_0", "name": "run_shell_command", "response": {
         "error": "Command: pytest -q\nDirectory: (root)\nOutput: F.\nFAILED test_a.py::test_x - assert 1 == 2\n"
                  "1 failed, 1 passed in 0.1s\nError: (none)\nExit Code: 1\nSignal: (none)\nProcess Group PGID: 9"}}}]}},
    {"uuid": "5", "sessionId": "q1", "type": "assistant", "cwd": "/ws", "timestamp": "t",
     "message": {"role": "model", "parts": [{"functionCall": {"id": "call_1", "name": "run_shell_command",
                                                              "args": {"command": "cat .env"}}}]}},
    {"uuid": "6", "sessionId": "q1", "type": "tool_result", "cwd": "/ws", "timestamp": "t",
     "message": {"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "run_shell_command",
                                                                 "response": {"error": "ctx safety: blocked"}}}]}},
    {"uuid": "7", "sessionId": "q1", "type": "assistant", "cwd": "/ws", "timestamp": "t",
     "message": {"role": "model", "parts": [{"functionCall": {"id": "call_2", "name": "read_file",
                                                              "args": {"file_path": "/ws/.env"}}}]}},
]
DROID = [
    {"type": "session_start", "id": "d1", "title": "t", "owner": "o", "version": 2, "cwd": "/ws", "hostId": "h"},
    {"type": "message", "id": "m1", "timestamp": "t", "message": {"role": "user", "content": [],
                                                                  "visibility": "user_only", "hookEventName": "SessionStart"}},
    {"type": "message", "id": "m2", "timestamp": "t", "message": {"role": "user", "content": [
        {"type": "text", "text": "make the tests pass"}]}},
    {"type": "message", "id": "m3", "timestamp": "t", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_0", "name": "Execute", "input": {"command": "pytest -q", "summary": "Run it"}}]}},
    {"type": "message", "id": "m4", "timestamp": "t", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_0", "is_error": True,
         "content": "Error: Command failed (exit code: 1)\nFAILED test_a.py::test_x - assert 1 == 2\n1 failed in 0.1s"}]}},
    {"type": "message", "id": "m5", "timestamp": "t", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_1", "name": "Execute", "input": {"command": "cat .env", "summary": "Read it"}}]}},
    {"type": "message", "id": "m6", "timestamp": "t", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_1", "is_error": True, "content": "Error: ctx safety: blocked"}]}},
]


def _write(tmp_path, name, records):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_qwen_and_droid_session_files_replay_like_claude_transcripts(tmp_path):
    for name, records, fmt, sid in (("q1.jsonl", QWEN, "qwen", "q1"), ("d1.jsonl", DROID, "droid", "d1")):
        path = _write(tmp_path, name, records)
        assert detect_format(path) == fmt
        sessions = load(path)
        assert list(sessions) == [sid]
        events = sessions[sid]
        commands = [e for e in events if e.kind == "command"]
        assert [(e.command, e.cwd) for e in commands] == [("pytest -q", "/ws"), ("cat .env", "/ws")], events
        results = [e for e in events if e.kind == "result"]
        assert results and results[0].exit_code == 1, results
        report = replay(sessions)
        decisions = {d["command"]: d["decision"] for d in report["decisions"]}
        assert decisions == {"pytest -q": "rewrite", "cat .env": "deny"}, report["decisions"]
    qwen_read = [e for e in load(tmp_path / "q1.jsonl")["q1"] if e.kind == "read"]
    assert qwen_read and qwen_read[0].paths == ("/ws/.env",)  # read_file became Claude's Read
