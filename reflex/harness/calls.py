"""A recorded session's tool calls -> reflex.arc Events: the one builder every transcript
reader uses (Claude Code's transcripts, Codex rollouts, Gemini chat recordings, Copilot
session events).

A reader knows its harness's file shape and tool names; it hands this builder what each call
was, in neutral terms:

    b = CallLog(session_id)
    b.emit("session_start", model=...)
    b.shell_call(call_id, command, cwd)                 # the command as the model wrote it
    b.shell_result(call_id, text, exit_code=..., ran=..., truncated=...)
    b.file_edit(call_id, tool, paths, cwd)              # a file tool that changes files
    b.file_read(call_id, tool, paths, cwd)              # a file tool that only reads
    b.emit("prompt") / b.emit("session_end")

and the builder does what does not depend on the harness: a command that writes files is also
an edit; the text the model received is read for a ctx digest (a `run`) or a `ctx get/search`
answer (a `retrieval`).  `text` is what the model received, after the harness's own cut:
`truncated` says whether the harness cut it (each reader knows its harness's markers).
"""

from __future__ import annotations

import gzip
import os
import re

from reflex.address import parse_hint
from reflex.arc.events import Event, ctx_retrieval, file_writes, handle_of

def read_recording(path) -> bytes:
    """A recorded session file's bytes, gunzipped when it is gzip (`session.json.gz`): every
    reader opens its file through this, so a stored recording replays compressed."""
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def recording_stem(path) -> str:
    """The file name of a recording without its extensions (`a.jsonl`, `a.json.gz` -> `a`)."""
    name = os.path.basename(os.fspath(path))
    if name.endswith(".gz"):
        name = name[:-3]
    return os.path.splitext(name)[0]


_HEADER = re.compile(r"^\[ctx\] (?P<label>[^|]+?) \| (?P<density>[a-z-]+)(?: \((?P<reason>[^)]*)\))?"
                     r" \| exit (?P<exit>-?\d+|unknown)(?P<rest>.*?)(?P<handle>r:[0-9a-f]{12})(?P<tail>.*)$")


def _census_id(rest: str) -> str:
    """The first test id of a census line `FAIL file::test[p1] [p2] (line N) message`."""
    cut = rest.find(" (line ")
    ident = rest[:cut] if cut > 0 else rest.split(" ", 1)[0]
    return re.sub(r"\] \[.*$", "]", ident)


def parse_digest(text: str) -> dict | None:
    """The run a ctx digest printed (its header line and hints), or None.  The header may sit
    below a harness's own preamble (Codex's `Output:`, Gemini's `Output: `)."""
    if "[ctx] " not in text:
        return None
    header = None
    hints: list[str] = []
    failed: list[str] = []
    for line in text.splitlines():
        if header is None and "[ctx] " in line[:16]:
            header = _HEADER.match(line[line.index("[ctx] "):])
        elif line.startswith("FAIL "):
            failed.append(_census_id(line[5:]))
        if "ctx get " in line:
            h = parse_hint(line)
            if h is not None:
                hints.append(str(h.address))
    if header is None:
        return None
    tests = tuple(dict.fromkeys([t for t in failed if t] + [a.split("#", 1)[1] for a in hints if "#" in a]))
    exit_text = header["exit"]
    return {"handle": header["handle"], "density": header["density"], "reason": header["reason"],
            "exit_code": int(exit_text) if exit_text != "unknown" else None, "hints": tuple(hints),
            "failed_ids": tests, "truncated": "truncated" in header["tail"]}


class CallLog:
    """Events of one session, built call by call (see the module docstring)."""

    def __init__(self, session_id: str):
        self.session_id = session_id
        self.events: list[Event] = []
        self.calls: dict[str, tuple[str, str | None, str | None]] = {}   # id -> (tool, command, cwd)

    def emit(self, kind: str, **kw) -> None:
        self.events.append(Event(kind, seq=len(self.events), session_id=self.session_id, **kw))

    def shell_call(self, tid: str, command: str, cwd: str | None, *, tool: str = "Bash",
                   background: bool = False) -> None:
        """The agent issued `command`; a command that writes files is also an edit."""
        self.calls[tid] = ("Bash", command, cwd)
        self.emit("command", tool_use_id=tid, tool_name=tool, command=command, cwd=cwd, background=background)
        if not background and ctx_retrieval(command) is None:
            from reflex.signature import signature
            writes = file_writes(signature(command, cwd))
            if writes:
                self.emit("edit", tool_use_id=tid, tool_name=tool, paths=writes, cwd=cwd)

    def shell_result(self, tid: str, text: str, *, exit_code: int | None, ran: bool, truncated: bool,
                     paths: tuple[str, ...] = (), timed_out: bool = False, is_error: bool = False) -> None:
        """The call `tid` finished and the model received `text`."""
        call = self.calls.get(tid)
        if call is None or call[0] != "Bash":
            return
        _, command, cwd = call
        retrieval = ctx_retrieval(command)
        if retrieval is not None and ran:
            op, arg = retrieval
            miss = is_error or text.lstrip().startswith(("miss", "[ctx] miss"))
            self.emit("retrieval", tool_use_id=tid, command=command, cwd=cwd,
                      address=arg if op == "get" else None, pattern=arg if op == "search" else None,
                      handle=handle_of(arg) if op == "get" else None, result="miss" if miss else "know")
        elif ran:
            digest = parse_digest(text)
            if digest is not None:
                self.emit("run", tool_use_id=tid, command=command, cwd=cwd, **digest)
        self.emit("result", tool_use_id=tid, tool_name="Bash", exit_code=exit_code if ran else None,
                  ran=ran, truncated=truncated, paths=paths, cwd=cwd,
                  reason="timed out" if ran and timed_out else None)

    def file_edit(self, tid: str | None, tool: str, paths: tuple[str, ...], cwd: str | None) -> None:
        if tid is not None:
            self.calls[tid] = (tool, None, cwd)
        self.emit("edit", tool_use_id=tid, tool_name=tool, cwd=cwd, paths=tuple(p for p in paths if p))

    def file_read(self, tid: str | None, tool: str, paths: tuple[str, ...], cwd: str | None) -> None:
        if tid is not None:
            self.calls[tid] = (tool, None, cwd)
        self.emit("read", tool_use_id=tid, tool_name=tool, cwd=cwd, paths=tuple(p for p in paths if p))
