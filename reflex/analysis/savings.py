"""Savings evidence: for every tool result of a recorded Claude Code session, what the model
received and what ctx would have delivered instead (`ctx replay --savings FILE…`).

    from reflex.analysis import savings
    calls = savings.session_savings(savings.read_records("session.json.gz"))
    report = savings.report({"dev": [...paths], "heldout": [...paths]})
    print(savings.render_text(report))

One CallSaving per tool result, in file order: its tool (`mcp__github__get_issue` counts as
`mcp:github`), its program (a Bash command's family and subcommand, falling back to its first
word: `git commit`, `pytest`, `gh`, `grep`; else the tool), the o200k tokens of the text the
model received (`received`, exact), and what ctx would have delivered (`delivered`, exact
tokens; None when ctx would not act on that call) with the reason.

What ctx would deliver is what the live path computes:

* Bash: reflex.arc.decide.decide_bash on the command as the model wrote it, the harness's own
  permission taken as allowing (a recorded session does not keep the user's rules); on a
  rewrite, reflex.digest.build_digest of the output at the normal density.  The output is the
  received text less the `Exit code N` line the harness puts first; the harness would put that
  same line before the digest, so it is counted in both.  The digest itself passes a small
  output through (cleaned: the count can differ from the received text by a few tokens either
  way), so a rewritten call can deliver about what it received; `larger` counts the calls where
  ctx would have delivered more than the harness did.
* Read: reflex.arc.reads.ReadMemo, one per context (the main agent and each subagent), told
  about every edit (the edit tools, Bash commands that write files) and every compaction.  When
  that module is absent, every Read is "not handled".
* Grep: reflex.harness.claude.grep_result.digest (what the post hook calls) on the tool's
  structured output the transcript records (`toolUseResult`), against the received tokens.
* Everything else: not acted on (ctx has no path for it).

The baseline is the received text, already the harness's own cut (Claude Code keeps ~30k
characters of Bash output); a call whose text shows the cut is flagged `cut`: the live ctx
would have digested the whole output, which the transcript does not hold.  Images in a result
are not text and are not counted.  A damaged (non-JSON) line is skipped.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from reflex import tokens
from reflex.arc.events import EDIT_TOOLS, abs_path, file_writes
from reflex.harness.calls import read_recording
from reflex.harness.claude.permissions import Verdict
# The transcript reader's own parsing, so these calls are the ones the fold replays.
from reflex.harness.claude.transcript import _EXIT, _NEVER_RAN, _TRUNCATED, _array_records, _loads, _text_of

__all__ = ["CallSaving", "Tally", "read_records", "session_savings", "program_of", "tool_of",
           "read_memo_class", "tally", "report", "render_text", "session_files"]

# A recorded session does not keep the user's permission rules: every command is taken as one
# the harness would have run unasked (the best case for rewrites; `decide_bash` still passes
# background tasks and families ctx does not digest).
ALLOWED = Verdict("allow", "replay: the harness's own permission taken as given")
# Families that name a kind of command, not a program: the first word says more.
GENERIC_FAMILIES = frozenset({"other", "search", "file-read", "listing", "pkg-install", "trivial", "view",
                              "redirect", ""})
_COMPACTION_TEXT = "This session is being continued from a previous conversation"
SESSION_SUFFIXES = (".json.gz", ".jsonl.gz", ".jsonl", ".json")


@dataclass(frozen=True)
class CallSaving:
    seq: int                 # the result's position among the session's tool results
    tool: str                # Bash, Read, Grep, mcp:github, ...
    program: str             # Bash: "git commit", "pytest", "gh"; else the tool
    received: int            # o200k tokens of the text the model received
    delivered: int | None    # o200k tokens ctx would have delivered; None: not acted on
    why: str
    sidechain: bool = False  # a subagent's call
    cut: bool = False        # the harness had cut what the model received
    passthrough: bool = False  # acted on, but the digest passed the output through whole
    exit_code: int | None = None  # a rewritten Bash call's exit code, as the digest was told it

    @property
    def acted(self) -> bool:
        return self.delivered is not None


def read_records(path: str | os.PathLike[str]) -> list[Any]:
    """The records of a transcript file (JSONL or one JSON array, gzipped or not); a line that
    is not JSON is left out."""
    text = read_recording(path).decode("utf-8", "replace")
    records = _array_records(text)
    if records is None:
        records = [_loads(line) for line in text.split("\n") if line.strip()]
    return [r for r in records if isinstance(r, dict)]


def read_memo_class() -> Callable[[], Any] | None:
    """reflex.arc.reads.ReadMemo when that module exists, else None (Read: not handled)."""
    try:
        from reflex.arc.reads import ReadMemo  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return ReadMemo  # type: ignore[no-any-return]


def tool_of(name: str) -> str:
    """`mcp__github__get_issue` -> `mcp:github`; other tools keep their name."""
    if name.startswith("mcp__"):
        server = name[5:].split("__", 1)[0]
        return "mcp:" + (server or "?")
    return name


def program_of(command: str, cwd: str | None = None) -> str:
    """The main program of a command: its family and subcommand, or its first word when the
    family only names a kind of command (`grep`, `ls`, `gh`)."""
    from reflex.signature import signature
    sig = signature(command, cwd)
    return _program(sig, command)


def _program(sig: Any, command: str) -> str:
    name = str(sig.family or "")
    if name in GENERIC_FAMILIES:
        words = (sig.core or command).split()
        name = os.path.basename(words[0]) if words else "?"
    sub = str(sig.subcommand or "")
    if sub and not name.endswith(sub):
        name = "%s %s" % (name, sub)
    return name


@dataclass
class _Call:
    name: str
    input: dict[str, Any]
    cwd: str | None
    context: str
    sidechain: bool


class _Session:
    """The walk over one session's records (see session_savings)."""

    def __init__(self, memo_class: Callable[[], Any] | None):
        self.memo_class = memo_class
        self.memos: dict[str, Any] = {}
        self.calls: dict[str, _Call] = {}
        self.context_of: dict[str, str] = {}   # record uuid -> its context ("main" or a subagent's root)
        self.out: list[CallSaving] = []

    def memo(self, context: str) -> Any:
        if self.memo_class is None:
            return None
        if context not in self.memos:
            self.memos[context] = self.memo_class()
        return self.memos[context]

    def compacted(self, context: str) -> None:
        memo = self.memo(context)
        if memo is not None:
            memo.compacted()

    def edited(self, paths: Iterable[str]) -> None:
        # A file edited in any context is changed for every context that read it.
        for path in paths:
            for memo in self.memos.values():
                memo.edited(path)

    def context(self, r: dict[str, Any]) -> str:
        uid, parent = r.get("uuid"), r.get("parentUuid")
        if not r.get("isSidechain"):
            ctx = "main"
        elif isinstance(parent, str) and parent in self.context_of and self.context_of[parent] != "main":
            ctx = self.context_of[parent]
        else:
            ctx = "agent:%s" % (uid if isinstance(uid, str) else len(self.context_of))
        if isinstance(uid, str):
            self.context_of[uid] = ctx
        return ctx

    def record(self, r: dict[str, Any], cwd: str | None) -> None:
        context = self.context(r)
        typ = r.get("type")
        msg = r.get("message")
        msg = msg if isinstance(msg, dict) else {}
        if typ == "system":
            if r.get("subtype") == "compact_boundary":
                self.compacted(context)
            return
        content = msg.get("content")
        if typ == "assistant":
            for item in content if isinstance(content, list) else ():
                if isinstance(item, dict) and item.get("type") == "tool_use":
                    tid, name, inp = item.get("id"), item.get("name"), item.get("input")
                    if isinstance(tid, str) and isinstance(name, str):
                        self.calls[tid] = _Call(name, inp if isinstance(inp, dict) else {}, cwd, context,
                                                bool(r.get("isSidechain")))
            return
        if typ != "user":
            return
        if r.get("isCompactSummary"):
            self.compacted(context)
            return
        if isinstance(content, str):
            if (content.lstrip().startswith(_COMPACTION_TEXT) or "<command-name>/compact" in content
                    or "<command-name>/clear" in content):
                self.compacted(context)
            return
        items = content if isinstance(content, list) else ()
        results = [item for item in items if isinstance(item, dict) and item.get("type") == "tool_result"]
        # The tool's structured output (Grep's mode and content) is recorded beside a lone result.
        structured = r.get("toolUseResult") if len(results) == 1 else None
        for item in items:
            if isinstance(item, dict) and item.get("type") == "tool_result":
                self.result(item, structured)
            elif isinstance(item, dict) and item.get("type") == "text" and \
                    str(item.get("text") or "").lstrip().startswith(_COMPACTION_TEXT):
                self.compacted(context)

    def result(self, item: dict[str, Any], structured: Any = None) -> None:
        tid = item.get("tool_use_id")
        call = self.calls.pop(tid, None) if isinstance(tid, str) else None
        text = _text_of(item.get("content"))
        received = tokens.count(text)
        seq = len(self.out)
        if call is None:
            self.out.append(CallSaving(seq, "unknown", "unknown", received, None, "no tool call for this result"))
            return
        tool = tool_of(call.name)
        if call.name == "Bash":
            saving = self.bash(seq, call, text, received, bool(item.get("is_error")))
        elif call.name == "Read":
            saving = self.read(seq, call, text, received)
        elif call.name == "Grep":
            saving = self.grep(seq, call, received, structured, bool(item.get("is_error")))
        else:
            saving = CallSaving(seq, tool, tool, received, None, "ctx has no path for %s" % tool)
        if call.name in EDIT_TOOLS:
            path = call.input.get("file_path") or call.input.get("notebook_path")
            if isinstance(path, str) and path:
                self.edited((abs_path(path, call.cwd),))
        self.out.append(dataclasses.replace(saving, sidechain=call.sidechain))

    def bash(self, seq: int, call: _Call, text: str, received: int, is_error: bool) -> CallSaving:
        from reflex.arc.decide import decide_bash
        from reflex.signature import signature
        command = call.input.get("command")
        if not isinstance(command, str):
            return CallSaving(seq, "Bash", "?", received, None, "no command")
        sig = signature(command, call.cwd)
        program = _program(sig, command)
        writes = file_writes(sig)
        if writes:
            self.edited(abs_path(p, call.cwd) for p in writes)
        cut = bool(_TRUNCATED.search(text))
        if any(m in text[:400] for m in _NEVER_RAN):
            return CallSaving(seq, "Bash", program, received, None, "never ran", cut=cut)
        decision = decide_bash(command, call.input, sig, launcher="ctx", permission=ALLOWED, mode="auto")
        if decision.action != "rewrite":
            return CallSaving(seq, "Bash", program, received, None, decision.why, cut=cut)
        m = _EXIT.match(text)
        exit_code = int(m.group(1)) if m else (None if is_error else 0)
        # The harness's `Exit code N` line is not the command's output; it would precede the digest too.
        prefix, output = "", text
        if m:
            end = text.find("\n", m.end())
            prefix, output = (text, "") if end < 0 else (text[:end + 1], text[end + 1:])
        from reflex.blobs import blob_id, handle_of
        from reflex.digest import build_digest
        raw = output.encode("utf-8", "surrogatepass")
        digest = build_digest(raw, family=sig.family, exit_code=exit_code, command=command,
                              handle=handle_of(blob_id(raw)), density="normal", cwd=call.cwd)
        delivered = tokens.count(prefix + digest.text) if prefix else digest.tokens
        why = "passed through by the digest" if digest.passthrough else decision.why
        return CallSaving(seq, "Bash", program, received, delivered, why, cut=cut, passthrough=digest.passthrough,
                          exit_code=exit_code)

    def grep(self, seq: int, call: _Call, received: int, structured: Any, is_error: bool) -> CallSaving:
        """What the Grep post hook would deliver: the function it calls, on the tool's structured
        output as recorded, against what the model received."""
        if is_error or not isinstance(structured, dict):
            return CallSaving(seq, "Grep", "Grep", received, None, "no structured result")
        try:
            from reflex.harness.claude import grep_result
        except ImportError:  # a tree without the Grep post hook (the bench's baseline)
            return CallSaving(seq, "Grep", "Grep", received, None, "not handled")
        g = grep_result.digest(call.input, structured, cwd=call.cwd, received_tokens=received)
        if g is None:
            return CallSaving(seq, "Grep", "Grep", received, None, "result delivered whole")
        return CallSaving(seq, "Grep", "Grep", received, g.digest.tokens, "result digested")

    def read(self, seq: int, call: _Call, text: str, received: int) -> CallSaving:
        path = call.input.get("file_path")
        if self.memo_class is None:
            return CallSaving(seq, "Read", "Read", received, None, "not handled")
        if not isinstance(path, str) or not path:
            return CallSaving(seq, "Read", "Read", received, None, "no path")
        from blake3 import blake3
        offset, limit = call.input.get("offset"), call.input.get("limit")
        # The memo decides on the file's text, as the live hook does (tool_response.file.content):
        # the received text less the harness's line numbers and what it put after them.
        numbered, tail = _numbered_lines(text)
        content = "\n".join(line for _, line in numbered) if numbered else text
        answer = self.memo(call.context).answer(
            path=abs_path(path, call.cwd), content_hash=blake3(text.encode("utf-8", "surrogatepass")).hexdigest(),
            offset=offset if isinstance(offset, int) else None, limit=limit if isinstance(limit, int) else None,
            text=content, seq=seq)
        if answer is None:
            return CallSaving(seq, "Read", "Read", received, None, "read delivered whole")
        if getattr(answer, "kind", "pointer") == "outline":
            # What the model would get: the first lines as the harness numbered them, whatever it
            # put after them, and ctx's note as the harness delivers additional context.
            shown = "\n".join(number + line for number, line in numbered[:answer.shown_lines])
            delivered = tokens.count(shown + "\n" + tail) + tokens.count(_CONTEXT_LEAD + answer.note)
            return CallSaving(seq, "Read", "Read", received, delivered, "large read outlined")
        pointer = getattr(answer, "content", answer)  # a memo that answers with a bare string
        return CallSaving(seq, "Read", "Read", received, tokens.count(pointer), "answered by the read memo")


# How Claude Code numbers a Read result's lines: `     1→` (older) or `1\t` (2.1.x).
_LINE_NUMBER = re.compile(r"^( *\d+(?:\u2192|\t))")
# How Claude Code 2.1.332 delivers a PostToolUse hook's additionalContext (seen on the real CLI).
_CONTEXT_LEAD = "PostToolUse:Read hook additional context: "


def _numbered_lines(text: str) -> tuple[list[tuple[str, str]], str]:
    """A Read result -> ([(line number prefix, line)], what follows the numbered lines), or
    ([], text) when it does not start with a numbered line."""
    out: list[tuple[str, str]] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = _LINE_NUMBER.match(line)
        if m is None:
            return out, "\n".join(lines[i:]) if out else text
        out.append((m.group(1), line[m.end():]))
    return out, ""


def session_savings(records: Iterable[Any], *, memo_class: Callable[[], Any] | None | bool = True) -> list[CallSaving]:
    """One CallSaving per tool result of one session (its records, in file order).

    `memo_class`: the read memo to use (True: reflex.arc.reads.ReadMemo when it exists; None or
    False: Read not handled)."""
    memo = read_memo_class() if memo_class is True else (memo_class or None)
    s = _Session(memo)
    cwd: str | None = None
    for r in records:
        if not isinstance(r, dict):
            continue
        if isinstance(r.get("cwd"), str):
            cwd = r["cwd"]
        s.record(r, cwd)
    return s.out


# -- aggregation ------------------------------------------------------------------------------

@dataclass
class Tally:
    calls: int = 0
    received: int = 0
    acted_calls: int = 0
    acted_received: int = 0     # what the harness delivered for the calls ctx acts on
    delivered: int = 0          # what ctx would have delivered for them
    larger: int = 0             # acted-on calls where ctx would have delivered more
    passed_through: int = 0     # received tokens of acted-on calls the digest passed through whole

    def add(self, c: CallSaving) -> None:
        self.calls += 1
        self.received += c.received
        if c.delivered is not None:
            self.acted_calls += 1
            self.acted_received += c.received
            self.delivered += c.delivered
            self.larger += c.delivered > c.received
            self.passed_through += c.received if c.passthrough else 0

    @property
    def ratio(self) -> float | None:
        """Delivered / received over the acted-on calls."""
        return self.delivered / self.acted_received if self.acted_received else None

    def as_dict(self, total: int) -> dict[str, Any]:
        return {"calls": self.calls, "received": self.received,
                "share": round(self.received / total, 4) if total else None,
                "acted_calls": self.acted_calls, "acted_received": self.acted_received,
                "acted_share": round(self.acted_received / self.received, 4) if self.received else None,
                "delivered": self.delivered,
                "ratio": round(self.ratio, 4) if self.ratio is not None else None, "larger": self.larger,
                "passed_through": self.passed_through}


def tally(calls: Iterable[CallSaving], key: Callable[[CallSaving], str] | None = None) -> dict[str, Tally]:
    """{key: Tally}, the largest received first; without `key`, one entry "total"."""
    out: dict[str, Tally] = {}
    for c in calls:
        out.setdefault(key(c) if key else "total", Tally()).add(c)
    return dict(sorted(out.items(), key=lambda kv: (-kv[1].received, kv[0])))


def session_files(path: str) -> list[str]:
    """A session file, or the session files of a directory (sorted)."""
    if not os.path.isdir(path):
        return [path]
    return sorted(os.path.join(path, n) for n in os.listdir(path)
                  if n.endswith(SESSION_SUFFIXES) and os.path.isfile(os.path.join(path, n)))


def _summary(calls: list[CallSaving]) -> dict[str, Any]:
    total = tally(calls)["total"] if calls else Tally()
    n = total.received
    return {"total": total.as_dict(n),
            "by_tool": {k: t.as_dict(n) for k, t in tally(calls, lambda c: c.tool).items()},
            "by_program": {k: t.as_dict(n) for k, t in tally(calls, lambda c: c.program).items()}}


def report(groups: dict[str, list[str]], *, memo_class: Callable[[], Any] | None | bool = True) -> dict[str, Any]:
    """The savings of every session file of every group ({group: [paths]}), per group and in all:
    tallies by tool and by program, each session's total and calls, and the received tokens of
    the Bash, Read and Grep calls by why ctx did or did not act on them."""
    memo = read_memo_class() if memo_class is True else (memo_class or None)
    everything: list[CallSaving] = []
    out_groups: dict[str, Any] = {}
    sessions: list[dict[str, Any]] = []
    for group, paths in groups.items():
        calls_of_group: list[CallSaving] = []
        for path in paths:
            calls = session_savings(read_records(path), memo_class=memo)
            calls_of_group += calls
            sessions.append({"group": group, "path": path, **_summary(calls)["total"],
                             "calls": [dataclasses.asdict(c) for c in calls]})
        everything += calls_of_group
        out_groups[group] = {"sessions": len(paths), **_summary(calls_of_group)}
    reasons: dict[str, int] = {}
    for c in everything:
        if c.tool in ("Bash", "Read", "Grep"):
            key = "%s: %s" % (c.tool, _reason_class(c.why))
            reasons[key] = reasons.get(key, 0) + c.received
    return {"read_handled": memo is not None, "groups": out_groups, "sessions": sessions,
            "all": {"sessions": len(sessions), **_summary(everything)},
            "cut_calls": sum(c.cut for c in everything),
            "why_tokens": dict(sorted(reasons.items(), key=lambda kv: -kv[1]))}


def _reason_class(why: str) -> str:
    """A reason without its command-specific part, to add up tokens by reason."""
    if why.startswith("family ") and why.endswith(" not digested"):
        return "family not digested"
    if why.endswith(" output digested by ctx run"):
        return "digested"
    return why


# -- text -------------------------------------------------------------------------------------

def _ratio(t: dict[str, Any]) -> str:
    return "%.2f×" % t["ratio"] if t["ratio"] is not None else "-"


def _table(title: str, rows: dict[str, Any], limit: int) -> list[str]:
    lines = ["%-34s %6s %9s %6s %9s %9s %7s" % (title, "calls", "received", "share", "acted on", "delivered",
                                                 "ratio")]
    items = list(rows.items())
    for name, t in items[:limit]:
        lines.append("%-34s %6d %9d %5.1f%% %9d %9d %7s" % (
            name[:34], t["calls"], t["received"], 100 * (t["share"] or 0), t["acted_received"], t["delivered"],
            _ratio(t)))
    if len(items) > limit:
        rest = items[limit:]
        lines.append("%-34s %6d %9d" % ("(%d more)" % len(rest), sum(t["calls"] for _, t in rest),
                                         sum(t["received"] for _, t in rest)))
    return lines


def _total_line(t: dict[str, Any]) -> str:
    acted = t["acted_share"] or 0
    return ("acts on %.1f%% of tool-result tokens (%d of %d; %d of them passed through whole); delivers %s "
            "of what the harness delivered for those calls (%d tokens); %d calls larger than received" % (
                100 * acted, t["acted_received"], t["received"], t["passed_through"], _ratio(t), t["delivered"],
                t["larger"]))


def render_text(rep: dict[str, Any], *, programs: int = 25) -> str:
    out: list[str] = []
    scopes = list(rep["groups"].items())
    if len(scopes) > 1:
        scopes.append(("all", rep["all"]))
    for name, g in scopes:
        out.append("== %s: %d sessions, %d tool results, %d tokens received (o200k) ==" % (
            name, g["sessions"], g["total"]["calls"], g["total"]["received"]))
        out += _table("tool", g["by_tool"], 20)
        out.append("")
        out += _table("program", g["by_program"], programs)
        out.append("")
        out.append(_total_line(g["total"]))
        out.append("")
    if rep["why_tokens"]:
        out.append("Bash, Read and Grep tokens received, by what ctx would do:")
        out += ["  %9d  %s" % (n, why) for why, n in list(rep["why_tokens"].items())[:10]]
        out.append("")
    if not rep["read_handled"]:
        out.append("Read: not handled (reflex.arc.reads is not in this tree)")
    if rep["cut_calls"]:
        out.append("%d Bash results were already cut by the harness: ctx would have digested the whole "
                   "output, counted here on the cut text" % rep["cut_calls"])
    return "\n".join(out) + "\n"
