"""Recorded sessions of Codex, Gemini and Copilot -> reflex.arc Events, for `ctx replay`.

Each harness keeps its own record of a session; each reader below knows one shape and hands
the calls to the shared builder (reflex.harness.calls), so the fold sees the same events it
sees from a Claude Code transcript or from the ledger.

    Codex CLI    ~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl  (read_codex_rollout)
                 {"type": session_meta | turn_context | response_item | event_msg | compacted,
                  "payload": {...}}; shell calls are `function_call` (exec_command {cmd},
                 shell {command: argv}) or `local_shell_call`, answered by
                 `function_call_output` (`Process exited with code N` / `Exit code: N`, or
                 older JSON {"output", "metadata": {"exit_code"}}); edits are `apply_patch`
                 (`*** Update File: PATH` lines).
    Gemini CLI   ~/.gemini/tmp/<project>/chats/session-<ts>-<id8>.jsonl (read_gemini_chat)
                 one record per message (a message may be written again as it completes:
                 the last version wins; `$set` lines patch metadata), or an older single JSON
                 object {"sessionId", "messages": [...]}; `gemini` messages carry `toolCalls`
                 [{id, name, args, result: [{functionResponse: {response: {output|error}}}],
                 status}]; the project root is the chat directory's `../.project_root`.
    Copilot CLI  ~/.copilot/session-state/<id>/events.jsonl            (read_copilot_events)
                 {"type": session.start | user.message | tool.execution_start |
                  tool.execution_complete | ..., "data": {...}}.

What the model received is read off each harness's own wrapping, and so is each harness's own
cut (its `truncated` marker): Codex `Warning: truncated output` / `…N tokens truncated…`,
Gemini `Output too large. Showing first …`, Copilot `Output too large to read at once`.
A harness's hook denial (`Command blocked by PreToolUse hook`, `Tool execution blocked`,
`Denied by preToolUse hook`) is a call that never ran.  Never raises on content: a line that
is not JSON, or a record of an unknown shape, is skipped.
"""

from __future__ import annotations

import json
import os
import re
import shlex

from reflex.arc.events import Event
from reflex.harness.calls import CallLog, read_recording

HARNESSES = ("codex", "gemini", "copilot")   # read here; Qwen and Droid: reflex.harness.transcripts

# Hook denials and refusals: the call never ran (ctx's own denials say "ctx safety: blocked").
_NEVER_RAN = ("Command blocked by PreToolUse hook", "Tool execution blocked", "Denied by preToolUse hook",
              "ctx safety: blocked", "exec command rejected by user", "rejected by user",
              "User cancelled", "Request cancelled", "was cancelled")
_CODEX_EXIT = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)", re.M)
_CODEX_CUT = re.compile(r"^Warning: truncated output|…\d+ tokens truncated…|\[\.\.\. omitted \d+ of \d+ lines \.\.\.\]",
                        re.M)
_GEMINI_EXIT = re.compile(r"^Exit Code: (-?\d+)", re.M)
_GEMINI_CUT = re.compile(r"^Output too large\. Showing |\[\d+ (?:lines|characters) truncated\]|CONTENT TRUNCATED", re.M)
_COPILOT_EXIT = re.compile(r"<shellId: \S+ completed with exit code (-?\d+)>")
_COPILOT_CUT = re.compile(r"^Output too large to read at once", re.M)

# File tools of each harness: those that change files, those that only read.
_EDIT_TOOLS = {"codex": frozenset({"apply_patch"}),
               "gemini": frozenset({"replace", "write_file", "edit", "smart_edit"}),
               "copilot": frozenset({"edit", "create", "str_replace", "str_replace_editor", "write", "apply_patch"})}
_READ_TOOLS = {"codex": frozenset({"read_file", "list_dir", "grep_files", "view_image"}),
               "gemini": frozenset({"read_file", "read_many_files", "glob", "search_file_content", "grep",
                                    "list_directory"}),
               "copilot": frozenset({"view", "grep", "glob", "read"})}
_PATCH_PATHS = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)


def _loads(line: str):
    try:
        return json.loads(line, strict=False)
    except ValueError:
        return None


def _records(path) -> list[dict]:
    text = read_recording(path).decode("utf-8", "replace")
    out = []
    for line in text.split("\n"):
        r = _loads(line) if line.strip() else None
        if isinstance(r, dict):
            out.append(r)
    return out


def _never_ran(text: str) -> bool:
    head = text[:400]
    return any(m in head for m in _NEVER_RAN)


def _argv_command(argv) -> str | None:
    """The shell text of an argv a harness ran (`bash -lc TEXT` -> TEXT)."""
    if isinstance(argv, str):
        return argv
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return None
    if len(argv) >= 3 and os.path.basename(argv[0]) in ("bash", "sh", "zsh") and argv[-2] in ("-c", "-lc", "-ic"):
        return argv[-1]
    return shlex.join(argv)


def _join(cwd: str | None, sub) -> str | None:
    if not isinstance(sub, str) or not sub:
        return cwd
    return sub if sub.startswith("/") or not cwd else os.path.normpath(os.path.join(cwd, sub))


def _path_arg(args: dict) -> tuple[str, ...]:
    for key in ("file_path", "path", "absolute_path", "notebook_path"):
        v = args.get(key)
        if isinstance(v, str) and v:
            return (v,)
    return ()


def _file_call(b: CallLog, harness: str, cid: str, name, args: dict, cwd: str | None) -> None:
    """A harness's own file tool: an edit, a read, or nothing the fold needs."""
    paths = tuple(_join(cwd, p) or p for p in _path_arg(args))
    if name in _EDIT_TOOLS[harness]:
        b.file_edit(cid, str(name), paths, cwd)
    elif name in _READ_TOOLS[harness]:
        b.file_read(cid, str(name), paths, cwd)


# -- Codex ---------------------------------------------------------------------------------------
SHELL_TOOLS_CODEX = frozenset({"exec_command", "shell", "shell_command", "container.exec", "local_shell"})


def _codex_output(raw) -> tuple[str, int | None]:
    """(text the model received, exit code) of a function_call_output."""
    text = raw if isinstance(raw, str) else json.dumps(raw) if raw is not None else ""
    if text.startswith("{"):
        obj = _loads(text)
        if isinstance(obj, dict) and isinstance(obj.get("output"), str):
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            code = meta.get("exit_code")
            return obj["output"], code if isinstance(code, int) else None
    m = _CODEX_EXIT.search(text[:600])
    return text, int(m.group(1)) if m else None


def read_codex_rollout(path) -> list[Event]:
    records = _records(path)
    sid, cwd, model = "", None, None
    for r in records:
        p = r.get("payload") if isinstance(r.get("payload"), dict) else {}
        if r.get("type") == "session_meta":
            sid = str(p.get("id") or p.get("session_id") or sid)
            cwd = p.get("cwd") if isinstance(p.get("cwd"), str) else cwd
        elif r.get("type") == "turn_context" and model is None and isinstance(p.get("model"), str):
            model = p["model"]
    b = CallLog(sid or os.path.splitext(os.path.basename(os.fspath(path)))[0])
    b.emit("session_start", model=model)
    for r in records:
        typ = r.get("type")
        p = r.get("payload") if isinstance(r.get("payload"), dict) else {}
        if typ == "turn_context" and isinstance(p.get("cwd"), str):
            cwd = p["cwd"]
        elif typ == "compacted":
            b.emit("compaction")
        elif typ == "response_item":
            _codex_item(b, p, cwd)
    b.emit("session_end")
    return b.events


def _codex_item(b: CallLog, p: dict, cwd: str | None) -> None:
    kind, call_id = p.get("type"), p.get("call_id")
    if kind == "message" and p.get("role") == "user":
        texts = [c.get("text") for c in p.get("content") or () if isinstance(c, dict)]
        if any(isinstance(t, str) and t.strip() and not t.lstrip().startswith("<") for t in texts):
            b.emit("prompt")
        return
    if not isinstance(call_id, str):
        return
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        name = p.get("name") or ("local_shell" if kind == "local_shell_call" else None)
        if kind == "local_shell_call":
            action = p.get("action") if isinstance(p.get("action"), dict) else {}
            args = {"command": action.get("command"), "workdir": action.get("working_directory")}
        elif kind == "custom_tool_call":
            args = {"input": p.get("input")}
        else:
            args = _loads(p.get("arguments")) if isinstance(p.get("arguments"), str) else p.get("arguments")
            args = args if isinstance(args, dict) else {}
        if name in SHELL_TOOLS_CODEX:
            command = args.get("cmd") if isinstance(args.get("cmd"), str) else _argv_command(args.get("command"))
            if command:
                b.shell_call(call_id, command, _join(cwd, args.get("workdir")), tool=str(name))
        elif name in _EDIT_TOOLS["codex"]:
            patch = args.get("input") if isinstance(args.get("input"), str) else ""
            paths = tuple(_join(cwd, m.group(1) or m.group(2)) or "" for m in _PATCH_PATHS.finditer(patch))
            b.file_edit(call_id, "apply_patch", paths, cwd)
        else:
            _file_call(b, "codex", call_id, name, args, cwd)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        text, code = _codex_output(p.get("output"))
        ran = not _never_ran(text)
        b.shell_result(call_id, text, exit_code=code if code is not None else (0 if ran else None), ran=ran,
                       truncated=bool(_CODEX_CUT.search(text)), timed_out="timed out" in text[:300].lower())


# -- Gemini --------------------------------------------------------------------------------------
SHELL_TOOLS_GEMINI = frozenset({"run_shell_command"})


def _gemini_messages(path) -> tuple[dict, list[dict]]:
    """(session metadata, messages in order, each at its last version)."""
    text = read_recording(path).decode("utf-8", "replace")
    whole = _loads(text) if text.lstrip().startswith("{") and "\n{" not in text.strip() else None
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        return whole, [m for m in whole["messages"] if isinstance(m, dict)]
    meta: dict = {}
    order: list[str] = []
    latest: dict[str, dict] = {}
    for line in text.split("\n"):
        r = _loads(line) if line.strip() else None
        if not isinstance(r, dict):
            continue
        if isinstance(r.get("$set"), dict):
            patch = r["$set"]
            for m in patch.get("messages") or ():
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    if m["id"] not in latest:
                        order.append(m["id"])
                    latest[m["id"]] = m
            meta.update({k: v for k, v in patch.items() if k != "messages"})
        elif "type" in r and isinstance(r.get("id"), str):
            if r["id"] not in latest:
                order.append(r["id"])
            latest[r["id"]] = r
        elif "sessionId" in r:
            meta.update(r)
    return meta, [latest[i] for i in order]


def _gemini_root(path, messages: list[dict]) -> str | None:
    marker = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(os.fspath(path)))), ".project_root")
    try:
        with open(marker, encoding="utf-8") as f:
            root = f.read().strip()
        if root.startswith("/"):
            return root
    except OSError:
        pass
    for m in messages:
        for part in m.get("content") or () if isinstance(m.get("content"), list) else ():
            t = part.get("text") if isinstance(part, dict) else None
            if isinstance(t, str) and "Workspace Directories" in t:
                found = re.search(r"Workspace Directories:\*\*\s*\n\s*- (/\S+)", t)
                if found:
                    return found.group(1)
    return None


def _gemini_response(call: dict) -> tuple[str, bool]:
    """(text the model received, whether it is an error answer) of a tool call."""
    for item in call.get("result") or () if isinstance(call.get("result"), list) else ():
        resp = (item.get("functionResponse") or {}).get("response") if isinstance(item, dict) else None
        if isinstance(resp, dict):
            if isinstance(resp.get("error"), str):
                return resp["error"], True
            if isinstance(resp.get("output"), str):
                return resp["output"], False
    display = call.get("resultDisplay")
    return (display if isinstance(display, str) else ""), call.get("status") == "error"


def read_gemini_chat(path) -> list[Event]:
    meta, messages = _gemini_messages(path)
    root = _gemini_root(path, messages)
    model = next((m["model"] for m in messages if m.get("type") == "gemini" and isinstance(m.get("model"), str)), None)
    b = CallLog(str(meta.get("sessionId") or os.path.splitext(os.path.basename(os.fspath(path)))[0]))
    b.emit("session_start", model=model)
    for m in messages:
        typ = m.get("type")
        if typ == "user":
            parts = m.get("content") if isinstance(m.get("content"), list) else [m.get("content")]
            texts = [p.get("text") if isinstance(p, dict) else p for p in parts]
            if any(isinstance(t, str) and t.strip() and not t.lstrip().startswith("<session_context>") for t in texts):
                b.emit("prompt")
        elif typ == "gemini":
            for call in m.get("toolCalls") or ():
                if isinstance(call, dict):
                    _gemini_call(b, call, root)
    b.emit("session_end")
    return b.events


def _gemini_call(b: CallLog, call: dict, root: str | None) -> None:
    cid, name = call.get("id"), call.get("name")
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    if not isinstance(cid, str) or cid in b.calls:
        return
    if name in SHELL_TOOLS_GEMINI and isinstance(args.get("command"), str):
        b.shell_call(cid, args["command"], _join(root, args.get("dir_path") or args.get("directory")),
                     tool="run_shell_command")
        text, is_error = _gemini_response(call)
        ran = not is_error and call.get("status") != "cancelled" and not _never_ran(text)
        m = _GEMINI_EXIT.search(text)
        b.shell_result(cid, text, exit_code=int(m.group(1)) if m else 0, ran=ran,
                       truncated=bool(_GEMINI_CUT.search(text)), is_error=is_error,
                       timed_out="timed out" in text[:300].lower())
    else:
        _file_call(b, "gemini", cid, name, args, root)


# -- Copilot -------------------------------------------------------------------------------------
SHELL_TOOLS_COPILOT = frozenset({"bash", "shell", "powershell"})


def read_copilot_events(path) -> list[Event]:
    records = _records(path)
    sid, cwd, model = "", None, None
    for r in records:
        d = r.get("data") if isinstance(r.get("data"), dict) else {}
        if r.get("type") == "session.start":
            sid = str(d.get("sessionId") or sid)
            ctx = d.get("context") if isinstance(d.get("context"), dict) else {}
            cwd = ctx.get("cwd") if isinstance(ctx.get("cwd"), str) else cwd
            model = d.get("selectedModel") if isinstance(d.get("selectedModel"), str) else model
            break
    if not sid:
        sid = os.path.basename(os.path.dirname(os.path.abspath(os.fspath(path))))
    b = CallLog(sid)
    b.emit("session_start", model=model)
    for r in records:
        typ = r.get("type")
        d = r.get("data") if isinstance(r.get("data"), dict) else {}
        if typ == "user.message":
            b.emit("prompt")
        elif isinstance(typ, str) and "compaction" in typ and typ.endswith(("complete", "completed")):
            b.emit("compaction")
        elif typ == "tool.execution_start":
            _copilot_start(b, d, cwd)
        elif typ == "tool.execution_complete":
            _copilot_complete(b, d)
    b.emit("session_end")
    return b.events


def _copilot_start(b: CallLog, d: dict, cwd: str | None) -> None:
    cid, name = d.get("toolCallId"), d.get("toolName")
    args = d.get("arguments") if isinstance(d.get("arguments"), dict) else {}
    if not isinstance(cid, str) or cid in b.calls:
        return
    if name in SHELL_TOOLS_COPILOT and isinstance(args.get("command"), str):
        b.shell_call(cid, args["command"], cwd, tool=str(name), background=args.get("mode") == "async")
    elif name == "task":
        b.calls[cid] = ("task", None, cwd)
    else:
        _file_call(b, "copilot", cid, name, args, cwd)


def _copilot_complete(b: CallLog, d: dict) -> None:
    cid = d.get("toolCallId")
    call = b.calls.get(cid) if isinstance(cid, str) else None
    if call is None:
        return
    if call[0] == "task":   # a subagent: it may have changed anything
        b.file_edit(cid, "task", (), call[2])
        return
    result = d.get("result") if isinstance(d.get("result"), dict) else {}
    error = d.get("error") if isinstance(d.get("error"), dict) else {}
    text = result.get("content") if isinstance(result.get("content"), str) else \
        error.get("message") if isinstance(error.get("message"), str) else ""
    shell = d.get("shellExecution") if isinstance(d.get("shellExecution"), dict) else {}
    code = shell.get("exitCode") if isinstance(shell.get("exitCode"), int) else None
    if code is None:
        m = _COPILOT_EXIT.search(text[-200:])
        code = int(m.group(1)) if m else None
    ran = (d.get("success") is True or code is not None) and not _never_ran(text)
    b.shell_result(cid, text, exit_code=code if code is not None else 0, ran=ran,
                   truncated=bool(_COPILOT_CUT.search(text)), is_error=d.get("success") is False,
                   timed_out="timed out" in text[:300].lower())


def _qwen_or_droid(fmt: str):
    def read(path) -> list[Event]:
        from reflex.harness import transcripts
        return transcripts.read(path, fmt)
    return read


# Qwen's and Droid's files hold Claude-shaped facts record by record: reflex.harness.transcripts
# translates them into Claude transcript records instead.
READERS = {"codex": read_codex_rollout, "gemini": read_gemini_chat, "copilot": read_copilot_events,
           "qwen": _qwen_or_droid("qwen"), "droid": _qwen_or_droid("droid")}


def detect(head: bytes) -> str | None:
    """Which harness recorded a session file, from its first bytes (None: not one of these)."""
    from reflex.harness import transcripts
    first = head.split(b"\n", 1)[0]
    other = transcripts.detect(first)
    if other is not None:
        return other
    if b'"session_meta"' in first and b'"payload"' in first:
        return "codex"
    if b'"session.start"' in first and (b'copilot' in first or b'"producer"' in first):
        return "copilot"
    if b'"projectHash"' in head[:2048] and b'"sessionId"' in head[:2048]:
        return "gemini"
    return None
