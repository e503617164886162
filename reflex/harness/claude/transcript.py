"""Claude Code transcript -> Events (see docs/claude-code-hooks.md §2).

A transcript is one JSON record per line (or, as the hooks' `logs/chat.json` copies hold it,
one JSON array of those records): `assistant` records carry `tool_use` items, `user` records
carry the matching `tool_result` items (paired by id, possibly out of order), human prompts,
and compaction summaries (`isCompactSummary`); `system` records mark compaction boundaries
(`compact_boundary`).  The transcript keeps the command as the model wrote it and the tool
result as the model received it.

Translation (in file order, one session per file):

    session start (model of the first assistant message)              -> session_start
    tool_use Bash                                                     -> command, plus an edit
                                                                         when the command writes files
    tool_result of a Bash call                                        -> result (ran, exit code,
                                                                         the harness's cut or timeout, a
                                                                         background command's output
                                                                         file); a ctx
                                                                         digest in it also gives a run,
                                                                         a `ctx get/search` a retrieval
    tool_use Edit / Write / MultiEdit / NotebookEdit                  -> edit
    tool_use Read / Grep / Glob                                       -> read
    tool_use Task / Agent                                             -> see "Subagents" below
    a background command reported finished (a task notification,
      BashOutput/TaskOutput with status completed/failed/killed,
      KillBash/KillShell)                                             -> task_end
    a human prompt, an AskUserQuestion answer                         -> prompt
    compact_boundary / isCompactSummary / `/compact`                  -> compaction;  `/clear` -> session_start
    end of file                                                       -> session_end

The harness's cut is read off what the model received: the markers Claude Code leaves where
it cut (`... [N characters truncated] ...` in the middle of failed output over ~10k
characters, `... [N lines truncated] ...` after the first 30k characters of output, a
`<persisted-output>` preview of output moved to a file), wherever they are in the text.

Subagents.  A subagent's own calls are not the session's calls, but what it edits is a change
the session must count (the live worktree hash sees it).  Older transcripts hold the
subagent's records in the same file (`isSidechain`): each edit tool call and each
file-writing or state-changing command in them is an edit at its place in the file.  Newer
ones keep them in `<session>/subagents/agent-<agentId>.jsonl` next to the transcript: read
when present, their edits are edits when the Task returns.  A Task with neither is an edit of
unknown paths when it returns (it may have changed anything), unless it is one of the
read-only built-in agents (Explore, Plan).

A line that is not JSON is skipped, but what can still be read from it is kept,
conservatively: a tool call whose input was cut off counts as a possible worktree change (an
edit), and a result whose body was cut off still completes its call.  Never raises on content.
"""

from __future__ import annotations

import json
import os
import re

from reflex.arc.events import EDIT_TOOLS, Event, file_writes
from reflex.harness.calls import CallLog, parse_digest, read_recording, recording_stem

__all__ = ["events_from_lines", "events_from_records", "parse_digest", "read_transcript"]

SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
SEARCH_TOOLS = frozenset({"Read", "Grep", "Glob", "NotebookRead", "LS"})
BG_OUTPUT_TOOLS = frozenset({"BashOutput", "TaskOutput"})
BG_KILL_TOOLS = frozenset({"KillBash", "KillShell"})
# Built-in agents that only look (their tool sets leave out the edit tools).
READ_ONLY_AGENTS = frozenset({"Explore", "Plan", "statusline-setup", "claude-code-guide"})
_BG_DONE = frozenset({"completed", "failed", "killed", "error", "cancelled"})

_EXIT = re.compile(r"^\s*Exit code (-?\d+)")
# Results of calls that never ran: rejected or interrupted by the user, refused by the harness,
# or denied by a hook (ctx's own safety denials start with "ctx safety: blocked").
_NEVER_RAN = ("<tool_use_error>", "The user doesn't want to proceed", "[Request interrupted by user",
              "User rejected", "Permission to use Bash has been denied", "ctx safety: blocked")
# Where Claude Code cut what the model received (anywhere in the text: the middle cut of a
# failed command sits halfway through it).  The leading "... " is optional: a redacting copy
# (the CC0 archive's `secret=[REDACTED] [4718 characters truncated] ...`) can swallow it.
_TRUNCATED = re.compile(r"<persisted-output>|^Output too large|"
                        r"(?:\.\.\. )?\[\d+ (?:lines?|characters?) truncated\] \.\.\.(?=\s|$)", re.M)
_BG_OUTPUT = re.compile(r"Output is being written to: (\S+)")
# The harness stopped the command: what it printed is where it was killed, not a cut view.
_TIMED_OUT = re.compile(r"^Command timed out after ", re.M)
_NOTIFICATION = re.compile(r"<task-notification>(.*?)(?:</task-notification>|$)", re.S)
_SALVAGE_USE = re.compile(r'"type":"tool_use","id":"(toolu_[A-Za-z0-9_]+)","name":"([A-Za-z_]+)"')
_SALVAGE_RESULT = re.compile(r'"tool_use_id":"(toolu_[A-Za-z0-9_]+)"')
_SALVAGE_PATH = re.compile(r'"(?:file_path|notebook_path)":"([^"\\]*)"')


def _loads(line: str):
    try:
        return json.loads(line)
    except ValueError:
        pass
    try:
        # Raw control characters inside strings (seen in real transcripts) are not fatal.
        return json.loads(line, strict=False)
    except ValueError:
        return None


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for c in content:
            if isinstance(c, dict) and isinstance(c.get("text"), str):
                parts.append(c["text"])
            elif isinstance(c, str):
                parts.append(c)
        return "\n".join(parts)
    return ""


def _read_paths(name: str, inp: dict) -> tuple[str, ...]:
    path = inp.get("file_path") or inp.get("notebook_path") or inp.get("path")
    if not isinstance(path, str) or not path:
        return ()
    if name == "Read":
        off, lim = inp.get("offset"), inp.get("limit")
        if isinstance(off, int) and isinstance(lim, int) and lim > 0:
            return ("%s:%d-%d" % (path, off, off + lim - 1),)
    return (path,)


def _tag(text: str, name: str) -> str | None:
    m = re.search(r"<%s>\s*(.*?)\s*</%s>" % (name, name), text, re.S)
    return m.group(1) if m else None


class _Builder(CallLog):
    def __init__(self, session_id: str, subagent_dir: str | None = None):
        super().__init__(session_id)
        self.cwd: str | None = None
        self.subagent_dir = subagent_dir
        self.open_tasks: dict[str, dict] = {}      # Task tool_use_id -> {"type", "observed"}
        self.bg_ids: dict[str, str] = {}           # harness background id (bash_1) -> tool_use_id
        self.bg_done: set[str] = set()

    # -- tool calls ------------------------------------------------------------------------
    def tool_use(self, item: dict, cwd: str | None) -> None:
        tid, name, inp = item.get("id"), item.get("name"), item.get("input")
        if not isinstance(tid, str) or not isinstance(name, str) or tid in self.calls:
            return
        inp = inp if isinstance(inp, dict) else {}
        if name == "Bash":
            command = inp.get("command")
            if not isinstance(command, str):
                return
            self.shell_call(tid, command, cwd, background=bool(inp.get("run_in_background")))
        elif name in EDIT_TOOLS:
            path = inp.get("file_path") or inp.get("notebook_path")
            self.file_edit(tid, name, (path,) if isinstance(path, str) else (), cwd)
        elif name in SUBAGENT_TOOLS:
            self.calls[tid] = (name, None, cwd)
            kind = inp.get("subagent_type")
            self.open_tasks[tid] = {"type": kind if isinstance(kind, str) else None, "observed": False}
        elif name in BG_KILL_TOOLS:
            self.calls[tid] = (name, None, cwd)
            sid = inp.get("shell_id") or inp.get("bash_id") or inp.get("task_id")
            if isinstance(sid, str):
                self._bg_end(self.bg_ids.get(sid), (), cwd)
        elif name in SEARCH_TOOLS:
            self.file_read(tid, name, _read_paths(name, inp), cwd)
        else:
            self.calls[tid] = (name, None, cwd)

    # -- subagents and background tasks ------------------------------------------------------
    def sidechain(self, record: dict, cwd: str | None) -> None:
        """A subagent's record: its edits are the session's changes; its calls are its own."""
        for t in self.open_tasks.values():
            t["observed"] = True
        msg = record.get("message") if isinstance(record.get("message"), dict) else {}
        if record.get("type") != "assistant":
            return
        for item in msg.get("content") or ():
            if isinstance(item, dict) and item.get("type") == "tool_use":
                self._subagent_call(item, cwd)

    def _subagent_call(self, item: dict, cwd: str | None) -> None:
        name, inp = item.get("name"), item.get("input")
        inp = inp if isinstance(inp, dict) else {}
        tid = item.get("id") if isinstance(item.get("id"), str) else None
        if name in EDIT_TOOLS:
            path = inp.get("file_path") or inp.get("notebook_path")
            self.emit("edit", tool_use_id=tid, tool_name=name, cwd=cwd,
                      paths=(path,) if isinstance(path, str) and path else ())
        elif name == "Bash" and isinstance(inp.get("command"), str):
            from reflex.arc.detectors.rerun import mutation
            from reflex.signature import signature
            sig = signature(inp["command"], cwd)
            writes = file_writes(sig)
            mut = mutation(sig)
            if writes or (mut and mut[1]):
                self.emit("edit", tool_use_id=tid, tool_name="Bash", cwd=cwd, paths=writes if not mut else ())

    def task_result(self, tid: str, record: dict, cwd: str | None) -> None:
        """A Task returned: its subagent's edits, from its own file, or assume it changed anything."""
        task = self.open_tasks.pop(tid, None)
        if task is None:
            return
        extra = record.get("toolUseResult") if isinstance(record.get("toolUseResult"), dict) else {}
        agent_id = extra.get("agentId")
        if isinstance(agent_id, str) and self.subagent_dir:
            recs = _subagent_records(os.path.join(self.subagent_dir, "agent-%s.jsonl" % agent_id))
            if recs is not None:
                for r in recs:
                    if r.get("type") == "assistant" and isinstance(r.get("message"), dict):
                        for item in r["message"].get("content") or ():
                            if isinstance(item, dict) and item.get("type") == "tool_use":
                                self._subagent_call(item, r.get("cwd") if isinstance(r.get("cwd"), str) else cwd)
                return
        kind = task["type"] or extra.get("agentType")
        if task["observed"] or kind in READ_ONLY_AGENTS:
            return
        self.emit("edit", tool_use_id=tid, tool_name="Task", cwd=cwd)

    def _bg_end(self, tid: str | None, paths, cwd: str | None) -> None:
        if tid is None or tid in self.bg_done:
            return
        self.bg_done.add(tid)
        self.emit("task_end", tool_use_id=tid, cwd=cwd, paths=tuple(p for p in paths if p))

    def notification(self, text: str, cwd: str | None) -> bool:
        """A task notification (not a user turn): -> True when the text was one."""
        found = False
        for m in _NOTIFICATION.finditer(text):
            found = True
            body = m.group(1)
            status = (_tag(body, "status") or "").strip().lower()
            tid = _tag(body, "tool-use-id") or self.bg_ids.get(_tag(body, "task-id") or "")
            out = _tag(body, "output-file")
            if status in _BG_DONE or not status:
                self._bg_end(tid, (out,) if out else (), cwd)
        return found

    def tool_result(self, item: dict, record: dict) -> None:
        tid = item.get("tool_use_id")
        call = self.calls.get(tid) if isinstance(tid, str) else None
        if call is None:
            return
        tool, command, cwd = call
        if tool == "AskUserQuestion":
            self.emit("prompt", tool_use_id=tid, tool_name=tool)
            return
        if tool in SUBAGENT_TOOLS:
            self.task_result(tid, record, cwd)
            return
        extra = record.get("toolUseResult")
        if tool in BG_OUTPUT_TOOLS:
            if isinstance(extra, dict) and str(extra.get("status") or "").lower() in _BG_DONE:
                shell = extra.get("shellId") or extra.get("bash_id") or extra.get("task_id")
                self._bg_end(self.bg_ids.get(shell) if isinstance(shell, str) else None, (), cwd)
            return
        if tool != "Bash":
            return
        text = _text_of(item.get("content"))
        is_error = bool(item.get("is_error"))
        ran = not any(m in text[:400] for m in _NEVER_RAN)
        m = _EXIT.match(text)
        exit_code = int(m.group(1)) if m else (None if is_error else 0)
        truncated = bool(_TRUNCATED.search(text)) or (
            isinstance(extra, dict) and bool(extra.get("persistedOutputPath")))
        bg_paths: tuple[str, ...] = ()
        if isinstance(extra, dict) and isinstance(extra.get("backgroundTaskId"), str):
            self.bg_ids[extra["backgroundTaskId"]] = tid
        if text.startswith("Command running in background"):
            bm = re.search(r"with ID: (\S+?)\.?(?:\s|$)", text)
            if bm:
                self.bg_ids.setdefault(bm.group(1), tid)
            out = _BG_OUTPUT.search(text)
            if out:
                bg_paths = (out.group(1),)
        self.shell_result(tid, text, exit_code=exit_code, ran=ran, truncated=truncated, paths=bg_paths,
                          timed_out=bool(_TIMED_OUT.search(text)), is_error=is_error)

    # -- damaged lines ---------------------------------------------------------------------
    def salvage(self, line: str, cwd: str | None) -> None:
        for m in _SALVAGE_USE.finditer(line):
            tid, name = m.group(1), m.group(2)
            if tid in self.calls:
                continue
            if name in EDIT_TOOLS or name in SUBAGENT_TOOLS or name == "Bash":
                # Its input is cut off: a change we cannot rule out.
                self.calls[tid] = (name, None, cwd)
                p = _SALVAGE_PATH.search(line, m.end())
                self.emit("edit", tool_use_id=tid, tool_name=name, cwd=cwd,
                          paths=(p.group(1),) if p and name != "Bash" else ())
            else:
                self.calls[tid] = (name, None, cwd)
        if '"tool_result"' in line:
            for m in _SALVAGE_RESULT.finditer(line):
                tid = m.group(1)
                call = self.calls.get(tid)
                if call is not None and call[0] == "Bash":
                    self.emit("result", tool_use_id=tid, tool_name="Bash", ran=True)
                    self.calls[tid] = ("done", None, None)
        elif '"type":"user"' in line and '"isMeta":true' not in line:
            self.emit("prompt")


def _is_prompt_text(text: str) -> bool:
    t = text.lstrip()
    return bool(t) and not t.startswith(("<local-command-", "<command-message>", "Caveat:"))


def _subagent_records(path: str) -> list[dict] | None:
    try:
        data = read_recording(path)
    except OSError:
        return None
    out = []
    for line in data.decode("utf-8", "replace").split("\n"):
        r = _loads(line.strip()) if line.strip() else None
        if isinstance(r, dict):
            out.append(r)
    return out


def events_from_lines(lines, session_id: str | None = None, subagent_dir: str | None = None) -> list[Event]:
    """Events of one transcript given as an iterable of lines."""
    records: list = []
    for line in lines:
        if isinstance(line, bytes):
            line = line.decode("utf-8", "replace")
        line = line.strip()
        if not line:
            continue
        r = _loads(line)
        records.append(r if isinstance(r, dict) else line)
    return events_from_records(records, session_id, subagent_dir)


def events_from_records(records, session_id: str | None = None, subagent_dir: str | None = None) -> list[Event]:
    """Events of one transcript given as its records (dicts; a str is a line that was not JSON)."""
    records = [r for r in records if isinstance(r, (dict, str))]
    sid = session_id
    model = None
    for r in records:
        if not isinstance(r, dict) or r.get("isSidechain"):
            continue
        if sid is None and isinstance(r.get("sessionId"), str):
            sid = r["sessionId"]
        msg = r.get("message")
        if (model is None and r.get("type") == "assistant" and isinstance(msg, dict)
                and isinstance(msg.get("model"), str)):
            model = msg["model"]
    b = _Builder(sid or "", subagent_dir)
    b.emit("session_start", model=model)
    cwd = None
    for r in records:
        if isinstance(r, str):
            b.salvage(r, cwd)
            continue
        if r.get("isSidechain"):
            b.sidechain(r, r.get("cwd") if isinstance(r.get("cwd"), str) else cwd)
            continue
        if isinstance(r.get("cwd"), str):
            cwd = r["cwd"]
        typ = r.get("type")
        msg = r.get("message") if isinstance(r.get("message"), dict) else {}
        if typ == "system":
            if r.get("subtype") == "compact_boundary":
                b.emit("compaction")
            continue
        if typ == "assistant":
            for item in msg.get("content") or ():
                if isinstance(item, dict) and item.get("type") == "tool_use":
                    b.tool_use(item, cwd)
            continue
        if typ != "user":
            continue
        if r.get("isCompactSummary"):
            if not b.events or b.events[-1].kind != "compaction":
                b.emit("compaction")
            continue
        content = msg.get("content")
        if isinstance(content, str):
            if r.get("isMeta") or not _is_prompt_text(content) or b.notification(content, cwd):
                continue
            if "<command-name>/compact" in content:
                b.emit("compaction")
            elif "<command-name>/clear" in content:
                b.emit("session_start", model=model)
            else:
                b.emit("prompt")
            continue
        prompted = False
        for item in content or ():
            if not isinstance(item, dict):
                continue
            if item.get("type") == "tool_result":
                b.tool_result(item, r)
            elif (item.get("type") == "text" and not prompted and not r.get("isMeta")
                    and _is_prompt_text(item.get("text") or "")
                    and not b.notification(item.get("text") or "", cwd)):
                b.emit("prompt")
                prompted = True
    b.emit("session_end")
    return b.events


def read_transcript(path) -> list[Event]:
    """Events of a transcript file (JSONL, or a JSON array of records); the session id is the
    records' sessionId (or the file name).  Subagent files are looked for in
    `<dir>/<session id>/subagents/`."""
    text = read_recording(path).decode("utf-8", "replace")
    records = _array_records(text)
    lines = None if records is not None else text.split("\n")
    sid = None
    for r in (records if records is not None else (_loads(x.strip()) for x in lines[:200] if x.strip())):
        if isinstance(r, dict) and isinstance(r.get("sessionId"), str) and not r.get("isSidechain"):
            sid = r["sessionId"]
            break
    stem = recording_stem(path)
    sub = os.path.join(os.path.dirname(os.fspath(path)), sid or stem, "subagents")
    sub = sub if os.path.isdir(sub) else None
    events = events_from_records(records, subagent_dir=sub) if records is not None else \
        events_from_lines(lines, subagent_dir=sub)
    if events and not events[0].session_id:
        stem = recording_stem(path)
        events = [Event(**{**_fields(e), "session_id": stem}) for e in events]
    return events


def _fields(e: Event) -> dict:
    return {f: getattr(e, f) for f in e.__slots__}


def _array_records(text: str) -> list | None:
    """The records of a transcript stored as one JSON array, or None when it is JSONL."""
    head = text.lstrip()[:1]
    if head != "[":
        return None
    try:
        obj = json.loads(text, strict=False)
    except ValueError:
        return None
    return obj if isinstance(obj, list) else None
