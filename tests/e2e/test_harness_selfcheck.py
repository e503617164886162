"""Self-check of the e2e infrastructure, with no ctx code: the real Claude Code CLI, a throwaway
hook written here, and the scripted model server.

The expectations below are the hook-protocol behaviours ctx is designed around (see README.md);
if a CLI upgrade changes one of them, this file is where it shows first.
"""

from __future__ import annotations

import json
import shlex
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_harness import ClaudeEnv, hook_group, write_settings
from tests.support.scripted_model import (
    DeterministicPolicy,
    FinalText,
    ScriptedCommands,
    ScriptedModelServer,
    ToolUse,
)

pytestmark = pytest.mark.e2e

REWRITTEN_OUTPUT = "rewritten-by-hook"
DENY_REASON = "selfcheck denies this: use the approved command instead"
FAILURE_NOTE = "selfcheck-failure-note"

# A command hook: appends its stdin payload to the log named in argv[1], then answers.
HOOK_SOURCE = f"""
import json, sys
payload = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(payload) + "\\n")
event = payload["hook_event_name"]
command = payload.get("tool_input", {{}}).get("command", "")
answer = None
if event == "PreToolUse" and "REWRITE_ME" in command:
    updated = dict(payload["tool_input"], command="echo {REWRITTEN_OUTPUT}")
    answer = {{"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": updated}}
elif event == "PreToolUse" and "DENY_ME" in command:
    answer = {{"hookEventName": "PreToolUse", "permissionDecision": "deny",
               "permissionDecisionReason": {DENY_REASON!r}}}
elif event == "PostToolUseFailure":
    answer = {{"hookEventName": "PostToolUseFailure", "additionalContext": {FAILURE_NOTE!r}}}
if answer is not None:
    print(json.dumps({{"hookSpecificOutput": answer}}))
"""

SLOW_HOOK_SOURCE = """
import json, sys, time
payload = json.load(sys.stdin)
time.sleep(8)
updated = dict(payload["tool_input"], command="echo slow-hook-rewrite")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                          "updatedInput": updated}}))
"""


def _python_hook(tmp_path: Path, name: str, source: str, *args: Path) -> dict[str, Any]:
    script = tmp_path / name
    script.write_text(source)
    command = " ".join(shlex.quote(str(p)) for p in (sys.executable, script, *args))
    return {"type": "command", "command": command}


def _payloads(log: Path) -> list[dict[str, Any]]:
    return (
        [json.loads(line) for line in log.read_text().splitlines()]
        if log.exists()
        else []
    )


# ------------------------------------------------------------------------------------------
# The model server on its own (no CLI): protocol shape, side requests, policies
# ------------------------------------------------------------------------------------------


def _post(url: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read()


def _sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def _main_body(messages: list[dict[str, Any]], stream: bool = True) -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 100,
        "stream": stream,
        "tools": [{"name": "Bash"}],
        "messages": messages,
    }


def _tool_result_turn(
    tool_use_id: str, text: str, is_error: bool = False
) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": tool_use_id, "name": "Bash", "input": {}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_use_id,
                    "content": text,
                    "is_error": is_error,
                }
            ],
        },
    ]


def test_model_server_speaks_the_messages_protocol() -> None:
    with ScriptedModelServer(
        ScriptedCommands(["echo one"], final_text="all done")
    ) as server:
        first = [{"role": "user", "content": "go"}]
        status, ctype, raw = _post(
            server.url + "/v1/messages?beta=true", _main_body(first)
        )
        assert status == 200 and ctype == "text/event-stream"
        events = _sse(raw)
        assert [name for name, _ in events] == [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
        assert events[1][1]["content_block"]["name"] == "Bash"
        assert (
            json.loads(events[2][1]["delta"]["partial_json"])["command"] == "echo one"
        )
        assert events[4][1]["delta"]["stop_reason"] == "tool_use"

        # A side request (no tools) gets text and does not advance the script.
        status, _, raw = _post(
            server.url + "/v1/messages",
            {"model": "m", "max_tokens": 10, "messages": first},
        )
        assert status == 200 and json.loads(raw)["content"][0]["type"] == "text"

        # Non-streamed main request after one tool_result: the script is finished.
        status, ctype, raw = _post(
            server.url + "/v1/messages",
            _main_body(first + _tool_result_turn("t0", "one"), stream=False),
        )
        answer = json.loads(raw)
        assert status == 200 and ctype == "application/json"
        assert (
            answer["stop_reason"] == "end_turn"
            and answer["content"][0]["text"] == "all done"
        )

        status, _, raw = _post(
            server.url + "/v1/messages/count_tokens", {"messages": first}
        )
        assert status == 200 and json.loads(raw)["input_tokens"] > 0
        status, ctype, raw = _post(server.url + "/v1/models", {})
        assert status == 404 and json.loads(raw)["type"] == "error"

        kinds = [r.kind for r in server.requests]
        assert kinds == ["main", "side", "main", "count_tokens", "other"]
        assert server.errors == []


def test_deterministic_policy_reads_the_last_tool_result() -> None:
    class TailUntilSummary(DeterministicPolicy):
        max_steps = 3

        def first(self, state):
            return ToolUse("pytest -q")

        def after(self, state, last):
            if "short test summary" in last.text:
                return FinalText("found the summary")
            return ToolUse("pytest -q 2>&1 | tail -50")

    policy = TailUntilSummary()
    with ScriptedModelServer(policy) as server:
        url = server.url + "/v1/messages"
        base = [{"role": "user", "content": "fix the tests"}]
        turns = [
            (base, "pytest -q"),
            (
                base + _tool_result_turn("t0", "....[truncated]"),
                "pytest -q 2>&1 | tail -50",
            ),
            (
                base
                + _tool_result_turn("t0", "x")
                + _tool_result_turn("t1", "== short test summary =="),
                None,
            ),
        ]
        for messages, expected_command in turns:
            answer = json.loads(_post(url, _main_body(messages, stream=False))[2])
            block = answer["content"][0]
            if expected_command is None:
                assert block == {"type": "text", "text": "found the summary"}
            else:
                assert block["input"]["command"] == expected_command
        many = base + [
            m for i in range(3) for m in _tool_result_turn(f"t{i}", "nothing")
        ]
        capped = json.loads(_post(url, _main_body(many, stream=False))[2])
        assert (
            capped["stop_reason"] == "end_turn"
            and "stopped after 3 steps" in capped["content"][0]["text"]
        )


# ------------------------------------------------------------------------------------------
# The real CLI
# ------------------------------------------------------------------------------------------


def test_command_hook_sees_every_event_and_shapes_what_the_model_sees(
    claude_env: ClaudeEnv, tmp_path: Path
) -> None:
    log = tmp_path / "hook-payloads.jsonl"
    hook = _python_hook(tmp_path, "record_hook.py", HOOK_SOURCE, log)
    settings = write_settings(
        tmp_path / "settings.json",
        {
            "PreToolUse": [hook_group([hook], matcher="Bash")],
            "PostToolUse": [hook_group([hook], matcher="Bash")],
            "PostToolUseFailure": [hook_group([hook], matcher="Bash")],
        },
    )
    commands = [
        "echo hello",
        "sh -c 'echo failing; exit 3'",
        "echo REWRITE_ME",
        "echo DENY_ME",
    ]
    run = claude_env.run(
        "Run the scripted commands.",
        settings_path=settings,
        policy=ScriptedCommands(commands),
    )

    assert run.returncode == 0, run.describe()
    assert claude_env.model_server.errors == []
    assert run.result is not None and run.result.get("subtype") == "success", (
        run.describe()
    )

    # What the model saw (ground truth from the model server), one tool_result per command.
    seen = run.tool_results
    ids = [use["id"] for use in run.tool_uses]
    assert [r.tool_use_id for r in seen] == ids and len(ids) == 4, run.describe()
    hello, failing, rewritten, denied = seen
    assert (hello.text, hello.is_error) == ("hello", False)
    assert (
        failing.is_error
        and failing.text.startswith("Exit code 3")
        and "failing" in failing.text
    )
    assert FAILURE_NOTE in "\n".join(
        failing.context
    )  # additionalContext travels beside the result
    assert (rewritten.text, rewritten.is_error) == (REWRITTEN_OUTPUT, False)
    assert (
        denied.is_error and denied.text == f"PreToolUse:Bash hook error: {DENY_REASON}"
    )

    # What the hook saw.
    payloads = _payloads(log)
    by_event: dict[str, list[dict[str, Any]]] = {}
    for p in payloads:
        by_event.setdefault(p["hook_event_name"], []).append(p)
    assert [p["tool_use_id"] for p in by_event["PreToolUse"]] == ids
    assert [p["tool_input"]["command"] for p in by_event["PreToolUse"]] == commands
    post = by_event["PostToolUse"]
    assert [p["tool_use_id"] for p in post] == [ids[0], ids[2]]
    assert (
        post[1]["tool_input"]["command"] == f"echo {REWRITTEN_OUTPUT}"
    )  # the rewritten input, not the original
    assert post[1]["tool_response"]["stdout"].strip() == REWRITTEN_OUTPUT
    (failure,) = by_event["PostToolUseFailure"]
    assert failure["tool_use_id"] == ids[1]
    assert failure["error"].startswith("Exit code 3")
    assert set(by_event) == {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
    }  # nothing for the denied call

    # Session identity and transcript agree across hooks, stream-json and the files on disk.
    assert {p["session_id"] for p in payloads} == {run.session_id}
    assert run.transcript_path is not None and run.transcript_path.is_file()
    assert {p["transcript_path"] for p in payloads} == {str(run.transcript_path)}
    assert run.transcript_path.is_relative_to(claude_env.home)
    transcript_results = [
        block["tool_use_id"]
        for record in run.transcript()
        if record.get("type") == "user"
        and isinstance(record.get("message", {}).get("content"), list)
        for block in record["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert transcript_results == ids
    # The transcript keeps the model's original command; only the hook saw the rewrite.
    transcript_commands = [
        block["input"]["command"]
        for record in run.transcript()
        if record.get("type") == "assistant"
        for block in record["message"]["content"]
        if block.get("type") == "tool_use"
    ]
    assert transcript_commands == commands


class _HookEndpoint:
    """A local HTTP hook target: records each POST, rewrites commands containing HTTP_REWRITE."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], dict[str, Any]]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                payload = json.loads(
                    self.rfile.read(int(self.headers["Content-Length"]))
                )
                endpoint.received.append((dict(self.headers), payload))
                answer = b""
                command = payload.get("tool_input", {}).get("command", "")
                if (
                    payload["hook_event_name"] == "PreToolUse"
                    and "HTTP_REWRITE" in command
                ):
                    updated = dict(
                        payload["tool_input"], command="echo rewritten-over-http"
                    )
                    answer = json.dumps(
                        {
                            "hookSpecificOutput": {
                                "hookEventName": "PreToolUse",
                                "permissionDecision": "allow",
                                "updatedInput": updated,
                            }
                        }
                    ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def hook_endpoint() -> Iterator[_HookEndpoint]:
    endpoint = _HookEndpoint()
    yield endpoint
    endpoint.close()


def test_http_hook_rewrites_and_interpolates_only_allowed_env(
    claude_env: ClaudeEnv, tmp_path: Path, hook_endpoint: _HookEndpoint
) -> None:
    hook = {
        "type": "http",
        "url": hook_endpoint.url,
        "headers": {
            "Authorization": "Bearer $SELFCHECK_TOKEN",
            "X-Not-Allowed": "$SELFCHECK_OTHER",
        },
        "allowedEnvVars": ["SELFCHECK_TOKEN"],
    }
    settings = write_settings(
        tmp_path / "settings.json",
        {
            "PreToolUse": [hook_group([hook], matcher="Bash")],
            "PostToolUseFailure": [hook_group([hook], matcher="Bash")],
        },
    )
    run = claude_env.run(
        "Run the scripted commands.",
        settings_path=settings,
        policy=ScriptedCommands(["echo HTTP_REWRITE", "sh -c 'exit 5'"]),
        env_extra={"SELFCHECK_TOKEN": "t0ken", "SELFCHECK_OTHER": "must-not-leak"},
    )
    assert run.returncode == 0, run.describe()
    rewritten, failed = run.tool_results
    assert (rewritten.text, rewritten.is_error) == ("rewritten-over-http", False)
    assert failed.is_error and failed.text.startswith("Exit code 5")

    events = [
        (p["hook_event_name"], p["tool_use_id"]) for _, p in hook_endpoint.received
    ]
    ids = [use["id"] for use in run.tool_uses]
    assert events == [
        ("PreToolUse", ids[0]),
        ("PreToolUse", ids[1]),
        ("PostToolUseFailure", ids[1]),
    ]
    headers = {k.lower(): v for k, v in hook_endpoint.received[0][0].items()}
    assert headers["authorization"] == "Bearer t0ken"
    assert (
        headers.get("x-not-allowed", "") == ""
    )  # not in allowedEnvVars: interpolated as empty


def test_hook_timeout_is_honoured_and_fails_open(
    claude_env: ClaudeEnv, tmp_path: Path
) -> None:
    hook = _python_hook(tmp_path, "slow_hook.py", SLOW_HOOK_SOURCE) | {"timeout": 1}
    settings = write_settings(
        tmp_path / "settings.json", {"PreToolUse": [hook_group([hook], matcher="Bash")]}
    )
    run = claude_env.run(
        "Run it.",
        settings_path=settings,
        policy=ScriptedCommands(["echo original-ran"]),
    )
    assert run.returncode == 0, run.describe()
    # The 1 s timeout cut the 8 s hook short, and its late rewrite was discarded: the original ran.
    # Measured from the first model request, so the CLI's own start-up (seconds on a loaded
    # machine) does not count against the hook.
    t = run.timings
    assert t["result_s"] is not None and t["result_s"] - t["first_request_s"] < 7, run.describe()
    (result,) = run.tool_results
    assert (result.text, result.is_error) == ("original-ran", False)
    cancelled = [
        r["attachment"]
        for r in run.transcript()
        if r.get("type") == "attachment"
        and r["attachment"].get("type") == "hook_cancelled"
    ]
    assert (
        cancelled
        and cancelled[0]["timedOut"] is True
        and cancelled[0]["timeoutMs"] == 1000
    )
