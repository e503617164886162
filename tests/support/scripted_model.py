"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code CLI offline.

The CLI is pointed at this server with ANTHROPIC_BASE_URL. Each request that carries `tools` comes
from the main agent loop; the server rebuilds the conversation state from that request's `messages`
(every tool_result the CLI sent back so far) and asks a *policy* what the "model" does next: run a
Bash command (ToolUse) or stop (FinalText). Side requests without `tools` (session titles,
summaries...) get a short text answer and never reach the policy.

Because the state is recomputed from each request rather than kept as a cursor, a retried request
gets the same answer and side requests cannot advance the script.

Every request body is recorded verbatim (thread-safe): it is the ground truth for what reached the
model, after all of the harness's own truncation and hook processing.

The "model" is a simulation of an agent; the CLI, the hooks, the shell and the commands are real.
stdlib only, so it runs wherever the tests run.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

MODEL_ECHO_FALLBACK = "claude-scripted-e2e"
SIDE_ANSWER = "Scripted session"


# --------------------------------------------------------------------------------------------
# What the model has seen, and what it can do
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolResultSeen:
    """One tool_result block as the model received it.

    `context` holds the text the CLI placed next to the result before the model's next turn,
    e.g. a hook's additionalContext, which 2.1.332 sends as a separate `role: "system"` message
    ("PostToolUse:Bash hook additional context: ...") rather than inside the tool_result.
    """

    tool_use_id: str
    text: str
    is_error: bool
    context: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelState:
    """The conversation as of one main-agent request."""

    prompt: str
    tool_results: tuple[ToolResultSeen, ...]
    request: dict[str, Any]

    @property
    def step(self) -> int:
        """Number of tool calls already answered: 0 on the first request."""
        return len(self.tool_results)

    @property
    def last(self) -> ToolResultSeen | None:
        return self.tool_results[-1] if self.tool_results else None


@dataclass(frozen=True)
class ToolUse:
    """The model calls the Bash tool. `extra` adds Bash input fields such as `timeout`.

    With `name` set to another tool (Grep, Read, ...), `extra` is that tool's whole input and
    `command` only labels the step."""

    command: str
    description: str = "scripted command"
    extra: dict[str, Any] = field(default_factory=dict)
    name: str = "Bash"

    def tool_input(self) -> dict[str, Any]:
        if self.name != "Bash":
            return dict(self.extra)
        return {"command": self.command, "description": self.description, **self.extra}


@dataclass(frozen=True)
class FinalText:
    """The model ends its turn with a text answer (stop_reason end_turn)."""

    text: str = "Done."


Action = ToolUse | FinalText
Policy = Callable[[ModelState], Action]


class ScriptedCommands:
    """A fixed list of Bash commands, one per turn, then a final text answer."""

    def __init__(
        self, commands: Sequence[str | ToolUse], final_text: str = "Done."
    ) -> None:
        self.actions = [c if isinstance(c, ToolUse) else ToolUse(c) for c in commands]
        self.final_text = final_text

    def __call__(self, state: ModelState) -> Action:
        if state.step < len(self.actions):
            return self.actions[state.step]
        return FinalText(self.final_text)


class DeterministicPolicy:
    """Base for policies that choose the next command from the last tool_result.

    Subclasses implement `first(state)` and `after(state, last)`. A hard step limit ends the run
    with a FinalText so a policy that never converges cannot loop the CLI forever.

    Example, an agent that re-runs with `| tail -50` until it sees the summary line::

        class TailUntilSummary(DeterministicPolicy):
            def first(self, state):
                return ToolUse("pytest -q")
            def after(self, state, last):
                if "short test summary" in last.text:
                    return FinalText("found it")
                return ToolUse("pytest -q 2>&1 | tail -50")
    """

    max_steps = 12

    def first(self, state: ModelState) -> Action:
        raise NotImplementedError

    def after(self, state: ModelState, last: ToolResultSeen) -> Action:
        raise NotImplementedError

    def __call__(self, state: ModelState) -> Action:
        if state.step >= self.max_steps:
            return FinalText(f"[policy stopped after {self.max_steps} steps]")
        if state.last is None:
            return self.first(state)
        return self.after(state, state.last)


# --------------------------------------------------------------------------------------------
# Reading requests
# --------------------------------------------------------------------------------------------


def content_text(content: Any) -> str:
    """Flatten a message or tool_result `content` (string or list of blocks) to its text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(block.get("text", ""))
    return "\n".join(parts)


def tool_results_in(body: dict[str, Any]) -> list[ToolResultSeen]:
    """All tool_result blocks of a request, in conversation order, with the context after each."""
    seen: list[ToolResultSeen] = []
    pending_context: list[str] = []
    current: dict[str, Any] | None = (
        None  # the last tool_result, still collecting context
    )

    def flush() -> None:
        nonlocal current
        if current is not None:
            seen.append(ToolResultSeen(**current, context=tuple(pending_context)))
        current = None
        pending_context.clear()

    for message in body.get("messages", []):
        role, content = message.get("role"), message.get("content")
        if role == "assistant":
            flush()
            continue
        blocks = (
            content
            if isinstance(content, list)
            else [{"type": "text", "text": content or ""}]
        )
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                flush()
                current = {
                    "tool_use_id": block.get("tool_use_id", ""),
                    "text": content_text(block.get("content")),
                    "is_error": bool(block.get("is_error", False)),
                }
            elif (
                block.get("type") == "text"
                and current is not None
                and block.get("text")
            ):
                pending_context.append(block["text"])
    flush()
    return seen


def first_prompt(body: dict[str, Any]) -> str:
    """The last text block of the first user message.

    The CLI prepends system-reminder blocks to the first user message; the user's prompt is the
    final text block.
    """
    for message in body.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            texts = [
                b.get("text", "")
                for b in content or []
                if isinstance(b, dict) and b.get("type") == "text"
            ]
            return texts[-1] if texts else ""
    return ""


def is_main_agent(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    body: dict[str, Any] | None
    kind: str  # "main", "side", "count_tokens" or "other"
    received_at: float = field(
        default_factory=time.monotonic
    )  # time.monotonic() on arrival


# --------------------------------------------------------------------------------------------
# Building answers
# --------------------------------------------------------------------------------------------


def _usage(body: dict[str, Any]) -> dict[str, int]:
    approx_input = max(1, len(json.dumps(body.get("messages", []))) // 4)
    return {
        "input_tokens": approx_input,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _content_block(action: Action, tool_use_id: str) -> dict[str, Any]:
    if isinstance(action, ToolUse):
        return {
            "type": "tool_use",
            "id": tool_use_id,
            "name": action.name,
            "input": action.tool_input(),
        }
    return {"type": "text", "text": action.text}


def message_json(
    action: Action, *, message_id: str, tool_use_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """A complete non-streaming Messages API response."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or MODEL_ECHO_FALLBACK,
        "content": [_content_block(action, tool_use_id)],
        "stop_reason": "tool_use" if isinstance(action, ToolUse) else "end_turn",
        "stop_sequence": None,
        "usage": _usage(body),
    }


def sse_events(
    action: Action, *, message_id: str, tool_use_id: str, body: dict[str, Any]
) -> list[tuple[str, dict]]:
    """The server-sent events of a streamed answer, in the documented order."""
    usage = _usage(body)
    start = {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or MODEL_ECHO_FALLBACK,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        },
    }
    if isinstance(action, ToolUse):
        block = {"type": "tool_use", "id": tool_use_id, "name": action.name, "input": {}}
        delta = {
            "type": "input_json_delta",
            "partial_json": json.dumps(action.tool_input()),
        }
        stop_reason = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": action.text}
        stop_reason = "end_turn"
    return [
        ("message_start", start),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": delta},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": max(1, len(json.dumps(delta)) // 4)},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def encode_sse(events: list[tuple[str, dict]]) -> bytes:
    return "".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events
    ).encode()


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


class ScriptedModelServer:
    """Serves one policy on 127.0.0.1:<ephemeral port>. Use as a context manager or start()/stop()."""

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy: Policy = policy or ScriptedCommands([])
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._counter = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> Self:
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},  # shutdown() waits up to one poll interval
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    # -- what was received -----------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "main"]

    @property
    def errors(self) -> list[str]:
        """Exceptions raised by the policy (answered with a FinalText so the CLI stops)."""
        with self._lock:
            return list(self._errors)

    def tool_results_seen(self) -> list[ToolResultSeen]:
        """Every tool_result the model received, in order (from the longest main request)."""
        mains = self.main_requests
        if not mains:
            return []
        return max((tool_results_in(r.body or {}) for r in mains), key=len)

    def reset(self, policy: Policy | None = None) -> None:
        with self._lock:
            self._requests.clear()
            self._errors.clear()
            if policy is not None:
                self.policy = policy

    # -- answering -------------------------------------------------------------------------

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _next_ids(self, step: int) -> tuple[str, str]:
        with self._lock:
            self._counter += 1
            n = self._counter
        # tool_use ids derive from the step so a retried request reuses the same id.
        return f"msg_scripted_{n:04d}", f"toolu_scripted_{step:04d}"

    def decide(self, body: dict[str, Any]) -> tuple[Action, int]:
        if not is_main_agent(body):
            return FinalText(SIDE_ANSWER), -1
        state = ModelState(
            prompt=first_prompt(body),
            tool_results=tuple(tool_results_in(body)),
            request=body,
        )
        try:
            action = self.policy(state)
        except Exception as exc:  # noqa: BLE001 -- surfaced via .errors; the CLI must still get an answer
            with self._lock:
                self._errors.append(f"{type(exc).__name__}: {exc}")
            action = FinalText(f"[policy error: {exc}]")
        return action, state.step


def _make_handler(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = (
            60  # a keep-alive connection the CLI abandons must not pin a thread forever
        )

        def log_message(self, *args: Any) -> None:  # keep pytest output clean
            pass

        def _send(self, status: int, payload: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("request-id", "req_scripted")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()

        def _json(self, status: int, obj: Any) -> None:
            self._send(status, json.dumps(obj).encode(), "application/json")

        def _not_found(self, body: dict | None) -> None:
            server._record(RecordedRequest(self.command, self.path, body, "other"))
            self._json(
                404,
                {
                    "type": "error",
                    "error": {
                        "type": "not_found_error",
                        "message": f"no route {self.path}",
                    },
                },
            )

        def _read_body(self) -> dict | None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return None
            try:
                return json.loads(raw)
            except ValueError:
                return {"_unparsed": raw.decode("utf-8", "replace")}

        def do_POST(self) -> None:
            body = self._read_body()
            route = self.path.split("?", 1)[0].rstrip("/")
            if route == "/v1/messages/count_tokens":
                server._record(RecordedRequest("POST", self.path, body, "count_tokens"))
                self._json(200, {"input_tokens": _usage(body or {})["input_tokens"]})
                return
            if route != "/v1/messages" or body is None:
                self._not_found(body)
                return
            server._record(
                RecordedRequest(
                    "POST", self.path, body, "main" if is_main_agent(body) else "side"
                )
            )
            action, step = server.decide(body)
            message_id, tool_use_id = server._next_ids(step)
            if body.get("stream"):
                events = sse_events(
                    action, message_id=message_id, tool_use_id=tool_use_id, body=body
                )
                self._send(200, encode_sse(events), "text/event-stream")
            else:
                self._json(
                    200,
                    message_json(
                        action,
                        message_id=message_id,
                        tool_use_id=tool_use_id,
                        body=body,
                    ),
                )

        def do_GET(self) -> None:
            self._not_found(None)

        def do_HEAD(self) -> None:
            server._record(RecordedRequest("HEAD", self.path, None, "other"))
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_PUT = do_GET
        do_DELETE = do_GET

    return Handler
