"""Other harnesses' own session files, as Claude Code transcript records, for `ctx replay`.

Replay reads Claude Code transcripts (reflex.harness.claude.transcript); a harness whose session
file holds the same facts (each shell call's command and what the model got back) is translated
record by record into that shape, and its file tools into Claude's Read/Write/Edit, so the one
reader builds the events.  Formats verified on the CLIs' own files from the e2e sessions:

    qwen   ~/.qwen/projects/<project>/chats/<session>.jsonl (the payload's transcript_path):
           {type: user|assistant|tool_result, sessionId, cwd, timestamp, message: {role,
           parts: [{text} | {functionCall: {id, name, args}} | {functionResponse: {id, name,
           response: {output | error}}}]}}; a shell result is Qwen's `Command:/Output:/Exit Code:`
           text (reflex.harness.qwen.parse_output)
    droid  ~/.factory/sessions/<encoded cwd>/<session>.jsonl: a `session_start` record {id, cwd},
           then `message` records {id, timestamp, message: {role, content: [Claude-shaped text,
           tool_use, tool_result blocks]}}; a failed shell result reads
           "Error: Command failed (exit code: N)\\n<output>"

Codex rollouts, Gemini chat recordings and Copilot session events are read by
reflex.harness.recordings (the registry of every harness reader); OpenCode's database is not read
yet: its sessions replay from ctx's ledger (`--format events`).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from reflex.arc.events import Event

FORMATS = ("qwen", "droid")
_DROID_FAILED = re.compile(r"^Error: Command failed \(exit code: (-?\d+)\)\n?")


def detect(first_line: bytes) -> str | None:
    """The format of a session file from its first line, or None for none of these."""
    if b'"type":"session_start"' in first_line.replace(b" ", b"") and b'"hostId"' in first_line:
        return "droid"
    if b'"sessionId"' in first_line and b'"parts"' in first_line:
        return "qwen"
    return None


def read(path: str, fmt: str) -> list[Event]:
    from reflex.harness.calls import read_recording
    from reflex.harness.claude.transcript import _loads, events_from_records
    lines = read_recording(path).decode("utf-8", "replace").split("\n")
    records = [r for r in (_loads(line.strip()) for line in lines if line.strip()) if isinstance(r, dict)]
    translated = qwen_records(records) if fmt == "qwen" else droid_records(records)
    from reflex.harness.calls import recording_stem
    stem = recording_stem(path)
    return events_from_records(translated, session_id=_session_of(translated) or stem)


def _session_of(records: list[dict[str, Any]]) -> str | None:
    return next((r["sessionId"] for r in records if isinstance(r.get("sessionId"), str)), None)


def _claude_tool(name: str, args: dict[str, Any], shell_tool: str,
                 file_tools: dict[str, tuple[str, dict[str, str]]]) -> tuple[str, dict[str, Any]]:
    if name == shell_tool:
        return "Bash", dict(args)
    from reflex.harness.model import file_tool
    mapped = file_tool(name, args, file_tools)
    return mapped if mapped is not None else (name, dict(args))


def _shell_result(tool_use_id: str, output: str, exit_code: int | None) -> dict[str, Any]:
    """Claude Code's tool_result for a shell call: a failure reads "Exit code N\\n<output>"."""
    failed = exit_code not in (0, None)
    text = ("Exit code %d\n%s" % (exit_code, output)) if failed else output
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": failed}


def qwen_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from reflex.harness import qwen
    out: list[dict[str, Any]] = []
    shells: set[str] = set()
    for r in records:
        msg = r.get("message") if isinstance(r.get("message"), dict) else {}
        parts = msg.get("parts") if isinstance(msg.get("parts"), list) else []
        base = {"sessionId": r.get("sessionId"), "cwd": r.get("cwd"), "timestamp": r.get("timestamp")}
        content: list[dict[str, Any]] = []
        for p in parts:
            if not isinstance(p, dict):
                continue
            call, response = p.get("functionCall"), p.get("functionResponse")
            if isinstance(call, dict) and isinstance(call.get("id"), str) and isinstance(call.get("name"), str):
                name, args = _claude_tool(call["name"], call.get("args") if isinstance(call.get("args"), dict) else {},
                                          qwen.CAPS.shell_tool, qwen.FILE_TOOLS)
                if name == "Bash":
                    shells.add(call["id"])
                content.append({"type": "tool_use", "id": call["id"], "name": name, "input": args})
            elif isinstance(response, dict) and isinstance(response.get("id"), str):
                body = response.get("response") if isinstance(response.get("response"), dict) else {}
                text = body.get("output") if isinstance(body.get("output"), str) else \
                    body.get("error") if isinstance(body.get("error"), str) else json.dumps(body)
                if response["id"] in shells and text.startswith("Command: "):
                    output, exit_code = qwen.parse_output(text)
                    content.append(_shell_result(response["id"], output, exit_code))
                else:
                    # ctx's own answers (a digest, a denial) replace Qwen's result text: kept as is
                    content.append({"type": "tool_result", "tool_use_id": response["id"], "content": text,
                                    "is_error": "error" in body})
            elif isinstance(p.get("text"), str) and r.get("type") == "user":
                content.append({"type": "text", "text": p["text"]})
        if content:
            role = "assistant" if r.get("type") == "assistant" else "user"
            out.append(dict(base, type=role, message={"role": role, "content": content}))
    return out


def droid_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from reflex.harness import droid
    out: list[dict[str, Any]] = []
    session, cwd = None, None
    shells: set[str] = set()
    for r in records:
        if r.get("type") == "session_start":
            session, cwd = r.get("id"), r.get("cwd")
            continue
        msg = r.get("message") if isinstance(r.get("message"), dict) else {}
        if r.get("type") != "message" or msg.get("visibility") == "user_only":
            continue  # hook bookkeeping, not the conversation
        content: list[dict[str, Any]] = []
        for item in msg.get("content") or ():
            if not isinstance(item, dict):
                continue
            if item.get("type") == "tool_use" and isinstance(item.get("name"), str):
                name, args = _claude_tool(item["name"], item.get("input") if isinstance(item.get("input"), dict) else {},
                                          droid.CAPS.shell_tool, droid.FILE_TOOLS)
                if name == "Bash":
                    shells.add(str(item.get("id")))
                content.append(dict(item, name=name, input=args))
            elif item.get("type") == "tool_result" and str(item.get("tool_use_id")) in shells:
                text = item.get("content") if isinstance(item.get("content"), str) else ""
                m = _DROID_FAILED.match(text)
                output, exit_code = droid.parse_output(text[m.end():] if m else text)
                content.append(_shell_result(str(item["tool_use_id"]), output,
                                             int(m.group(1)) if m else exit_code if exit_code is not None else 0))
            else:
                content.append(item)
        if content:
            role = msg.get("role") if msg.get("role") in ("user", "assistant") else "user"
            out.append({"type": role, "sessionId": session, "cwd": cwd, "timestamp": r.get("timestamp"),
                        "message": {"role": role, "content": content}})
    return out
