"""Scripted model servers for the real Codex, Copilot (OpenAI Responses API), Gemini (Gemini API),
Qwen Code, OpenCode and Droid (Chat Completions) CLIs, offline on 127.0.0.1.  stdlib only.

The "model" is a policy: given the tool outputs the model has received so far in this
conversation (rebuilt from each request, so a retried request gets the same answer), it returns
the next shell command, or None to finish with a final text.  `@read PATH` asks for the CLI's own
file-reading tool instead (Gemini `read_file`, Copilot `view`).  Every request body is recorded:
that is the ground truth for what reached the model.

Requests without tools (titles, routing, next-speaker checks) never reach the policy.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Policy = Callable[[list[str]], "str | None"]


def scripted(commands: Sequence[str]) -> Policy:
    """A fixed list of commands, then the final answer."""
    def policy(outputs: list[str]) -> str | None:
        return commands[len(outputs)] if len(outputs) < len(commands) else None
    return policy


@dataclass
class Recorded:
    path: str
    body: Any
    t: float


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class ScriptedAPI:
    """Base: a threaded HTTP server that records requests; subclasses answer them."""

    max_steps = 12

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.requests: list[Recorded] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                api._record(self.path, None)
                api.on_get(self)

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                enc = (self.headers.get("Content-Encoding") or "").lower()
                if enc == "gzip":
                    raw = gzip.decompress(raw)
                elif enc:
                    api.errors.append("unsupported request encoding %s" % enc)
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_raw": raw[:2000].decode("utf-8", "replace")}
                api._record(self.path, body)
                try:
                    api.on_post(self, body)
                except Exception as e:  # noqa: BLE001 - a bug here must show in the test, not hang it
                    api.errors.append("%s: %r" % (self.path, e))
                    api.send(self, 500, "application/json", b'{"error":{"message":"scripted server error"}}')

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def __enter__(self) -> "ScriptedAPI":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _record(self, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append(Recorded(path, body, time.time()))

    @staticmethod
    def send(handler: BaseHTTPRequestHandler, code: int, ctype: str, data: bytes) -> None:
        handler.send_response(code)
        handler.send_header("Content-Type", ctype)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def next_command(self, outputs: list[str]) -> str | None:
        if len(outputs) >= self.max_steps:
            return None
        try:
            return self.policy(outputs)
        except Exception as e:  # noqa: BLE001
            self.errors.append("policy: %r" % e)
            return None

    # subclasses
    def on_get(self, handler: BaseHTTPRequestHandler) -> None:
        self.send(handler, 404, "application/json", b'{"error":{"message":"not found"}}')

    def on_post(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        raise NotImplementedError

    def tool_outputs(self) -> list[str]:
        """What the model received from each tool call, in order (from the last main request)."""
        raise NotImplementedError


class ResponsesAPI(ScriptedAPI):
    """OpenAI Responses API (POST /v1/responses, SSE): Codex's `exec_command {cmd}` and Copilot's
    `bash {command, description}`."""

    @property
    def base_url(self) -> str:
        return "http://127.0.0.1:%d/v1" % self.port

    def on_get(self, handler: BaseHTTPRequestHandler) -> None:
        if "/models" in handler.path:
            self.send(handler, 200, "application/json", b'{"object":"list","data":[],"models":[]}')
        else:
            super().on_get(handler)

    @staticmethod
    def outputs_of(body: Any) -> list[str]:
        outs = []
        for item in (body or {}).get("input") or []:
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                out = item.get("output")
                if isinstance(out, list):  # content items
                    out = "".join(p.get("text", "") for p in out if isinstance(p, dict))
                outs.append(out if isinstance(out, str) else json.dumps(out))
        return outs

    def tool_outputs(self) -> list[str]:
        main = [r.body for r in self.requests if isinstance(r.body, dict) and r.body.get("tools")]
        return self.outputs_of(main[-1]) if main else []

    def on_post(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        if not handler.path.split("?")[0].endswith("/responses") or not isinstance(body, dict):
            self.send(handler, 404, "application/json", b'{"error":{"message":"unsupported"}}')
            return
        n = len(self.requests)
        rid = "resp_%d" % n
        names = [t.get("name") or t.get("type") for t in body.get("tools") or [] if isinstance(t, dict)]
        command = self.next_command(self.outputs_of(body)) if names else None
        if command is not None and command.startswith("@read ") and "view" not in names:
            command = None  # no file-reading tool (Codex): the script ends
        if command is not None:
            call_id = "call_%d" % len(self.outputs_of(body))
            if command.startswith("@read ") and "view" in names:
                name, args = "view", {"path": command[len("@read "):]}
            elif "exec_command" in names:
                # login=false: a login shell would reset PATH from /etc/profile and lose the test venv
                name, args = "exec_command", {"cmd": command, "login": False}
            elif "bash" in names:
                name, args = "bash", {"command": command, "description": "run a command"}
            else:
                name, args = "shell_command", {"command": command}
            item = {"type": "function_call", "id": "fc_%s_%d" % (call_id, n), "call_id": call_id, "name": name,
                    "arguments": json.dumps(args), "status": "completed"}
            added = item
        else:
            text = "done" if names else "ok"
            item = {"type": "message", "role": "assistant", "id": "msg_%d" % n, "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
            added = dict(item, content=[])
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": body.get("model", "mock"),
                "output": [], "status": "in_progress"}
        events = [{"type": "response.created", "response": base},
                  {"type": "response.output_item.added", "output_index": 0, "item": added}]
        if item["type"] == "message":
            events.append({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                           "item_id": item["id"], "delta": item["content"][0]["text"]})
        events += [{"type": "response.output_item.done", "output_index": 0, "item": item},
                   {"type": "response.completed", "response": dict(
                       base, status="completed", output=[item],
                       usage={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                              "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens_details": {"reasoning_tokens": 0}})}]
        data = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(dict(e, sequence_number=i)))
                       for i, e in enumerate(events)).encode()
        self.send(handler, 200, "text/event-stream", data)


class GeminiAPI(ScriptedAPI):
    """Gemini API (v1beta): streamGenerateContent (SSE) drives the script; generateContent answers
    the CLI's side queries (routing, next speaker) with what their JSON schema asks for."""

    USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}

    @property
    def base_url(self) -> str:
        return "http://127.0.0.1:%d" % self.port

    def on_get(self, handler: BaseHTTPRequestHandler) -> None:
        if "/models" in handler.path:
            self.send(handler, 200, "application/json", b'{"models":[]}')
        else:
            super().on_get(handler)

    @staticmethod
    def outputs_of(body: Any) -> list[str]:
        outs = []
        for content in (body or {}).get("contents") or []:
            for part in content.get("parts") or []:
                fr = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(fr, dict):
                    resp = fr.get("response") or {}
                    text = resp.get("output") if isinstance(resp.get("output"), str) else \
                        resp.get("error") if isinstance(resp.get("error"), str) else json.dumps(resp)
                    outs.append(text)
        return outs

    def tool_outputs(self) -> list[str]:
        main = [r.body for r in self.requests if "streamGenerateContent" in r.path and isinstance(r.body, dict)]
        return self.outputs_of(main[-1]) if main else []

    def _candidate(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": self.USAGE, "modelVersion": "mock"}

    def on_post(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        path = handler.path.split("?")[0]
        if path.endswith(":countTokens"):
            self.send(handler, 200, "application/json", b'{"totalTokens":10}')
            return
        if path.endswith(":generateContent"):
            cfg = body.get("generationConfig") or {} if isinstance(body, dict) else {}
            schema = json.dumps(cfg.get("responseJsonSchema") or cfg.get("responseSchema") or {})
            if "complexity_score" in schema:
                text = json.dumps({"complexity_reasoning": "scripted", "complexity_score": 10})
            elif "next_speaker" in schema:
                text = json.dumps({"reasoning": "scripted", "next_speaker": "user"})
            elif "model_choice" in schema:
                text = json.dumps({"reasoning": "scripted", "model_choice": "flash"})
            else:
                text = "{}" if schema != "{}" else "ok"
            self.send(handler, 200, "application/json", json.dumps(self._candidate([{"text": text}])).encode())
            return
        if path.endswith(":streamGenerateContent"):
            outputs = self.outputs_of(body)
            command = self.next_command(outputs)
            if command is not None and command.startswith("@read "):
                parts = [{"functionCall": {"name": "read_file", "args": {"file_path": command[len("@read "):]}}}]
            elif command is not None:
                parts = [{"functionCall": {"name": "run_shell_command",
                                           "args": {"command": command, "description": "run a command"}}}]
            else:
                parts = [{"text": "done"}]
            data = b"data: " + json.dumps(self._candidate(parts)).encode() + b"\r\n\r\n"
            self.send(handler, 200, "text/event-stream", data)
            return
        self.send(handler, 404, "application/json", b'{"error":{"code":404,"message":"unsupported"}}')


class ChatCompletionsAPI(ScriptedAPI):
    """OpenAI Chat Completions (POST /v1/chat/completions, SSE or not): Qwen Code's
    `run_shell_command`, OpenCode's `bash` and Droid's `Execute`.  Requests without tools (titles)
    get a short text.  `@read PATH` calls the CLI's file reader with PATH made absolute under
    `root` (Qwen `read_file`, OpenCode `read`, Droid `Read`)."""

    SHELL_TOOLS = ("run_shell_command", "bash", "Execute")
    READ_TOOLS = ("read_file", "read", "Read")
    PATH_PARAMS = ("file_path", "absolute_path", "filePath", "path")

    def __init__(self, policy: Policy, root: str | None = None) -> None:
        super().__init__(policy)
        self.root = root

    @property
    def base_url(self) -> str:
        return "http://127.0.0.1:%d/v1" % self.port

    def on_get(self, handler: BaseHTTPRequestHandler) -> None:
        if "/models" in handler.path:
            self.send(handler, 200, "application/json", b'{"object":"list","data":[{"id":"mock-model","object":"model"}]}')
        else:
            super().on_get(handler)

    @staticmethod
    def outputs_of(body: Any) -> list[str]:
        outs = []
        for m in (body or {}).get("messages") or []:
            if isinstance(m, dict) and m.get("role") == "tool":
                content = m.get("content")
                if isinstance(content, list):
                    content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
                outs.append(content if isinstance(content, str) else json.dumps(content))
        return outs

    def tool_outputs(self) -> list[str]:
        main = [r.body for r in self.requests if isinstance(r.body, dict) and r.body.get("tools")]
        return self.outputs_of(main[-1]) if main else []

    def _call(self, command: str, tools: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        if command.startswith("@read "):
            name = next((n for n in self.READ_TOOLS if n in tools), None)
            if name is None:
                return None
            props = ((tools[name].get("parameters") or {}).get("properties") or {})
            key = next((k for k in self.PATH_PARAMS if k in props), "file_path")
            path = command[len("@read "):]
            if self.root and not path.startswith("/"):
                path = "%s/%s" % (self.root.rstrip("/"), path)
            return name, {key: path}
        name = next((n for n in self.SHELL_TOOLS if n in tools), None)
        if name is None:
            return None
        if name == "Execute":  # Droid's schema requires a sentence-cased summary of 3-8 words
            args = {"command": command, "summary": "Run a shell command now"}
            props = ((tools[name].get("parameters") or {}).get("properties") or {})
            if "riskLevel" in props:  # under --auto, the model rates each command (as a model would: tests are low)
                args.update(riskLevelReason="Runs the project's commands without changing anything.", riskLevel="low")
            return name, args
        return name, {"command": command, "description": "run a command"}

    def on_post(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        if not handler.path.split("?")[0].endswith("/chat/completions") or not isinstance(body, dict):
            self.send(handler, 404, "application/json", b'{"error":{"message":"unsupported"}}')
            return
        n = len(self.requests)
        tools = {t["function"]["name"]: t["function"] for t in body.get("tools") or []
                 if isinstance(t, dict) and isinstance(t.get("function"), dict) and t["function"].get("name")}
        outputs = self.outputs_of(body)
        command = self.next_command(outputs) if tools else None
        call = self._call(command, tools) if command is not None else None
        if call is not None:
            delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": "call_%d" % len(outputs), "type": "function",
                 "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}
            finish = "tool_calls"
        else:
            delta, finish = {"role": "assistant", "content": "done" if tools else "ok"}, "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        base = {"id": "chatcmpl-%d" % n, "created": int(time.time()), "model": body.get("model", "mock-model")}
        if not body.get("stream"):
            message = dict(delta)
            for tc in message.get("tool_calls") or []:
                tc.pop("index", None)
            data = dict(base, object="chat.completion", usage=usage,
                        choices=[{"index": 0, "message": message, "finish_reason": finish}])
            self.send(handler, 200, "application/json", json.dumps(data).encode())
            return
        chunks = [dict(base, object="chat.completion.chunk", choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
                  dict(base, object="chat.completion.chunk", choices=[{"index": 0, "delta": {}, "finish_reason": finish}]),
                  dict(base, object="chat.completion.chunk", choices=[], usage=usage)]
        data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
        self.send(handler, 200, "text/event-stream", data)
