"""List every re-run in recorded Claude Code transcripts, with what the model saw, for labelling by hand.

A labeller decides whether each re-run was starved by reading what the model had in front of it;
this prints exactly that: the earlier call(s) it repeats, the text of their tool results (what
the model received: head and tail, with the harness's own truncation marker when there is one),
everything that happened in between (edits, subagents, user turns, other commands) and the
model's own words just before the re-run.  It never runs ctx's detectors: labels must be written
before anyone looks at what the detector says.

What counts as a re-run here is deliberately broader than any detector's "same core": a later
Bash call whose first working command names the same program and the same non-flag words as an
earlier one (wrappers, `cd`, env assignments, redirections and trailing pipes dropped), or reads
the same file (cat/head/tail/less/grep/wc/sed/awk of one path), or has the same
reflex.signature core.  A labeller can say "not a re-run" (label `other`); a candidate the
finder never lists can never be labelled, so it errs on the side of listing.

Usage: python tests/support/rerun_candidates.py TRANSCRIPT... [--json] [--width N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from reflex.harness.calls import read_recording  # noqa: E402

_WRAPPERS = {"npx", "bunx", "pnpx", "time", "nice", "nohup", "command", "exec", "sudo"}
_TWO_WORD = {("uv", "run"), ("poetry", "run"), ("pnpm", "exec"), ("yarn", "exec"), ("bun", "x"), ("pipenv", "run")}
_READERS = {"cat", "head", "tail", "less", "more", "wc", "bat", "nl"}
_SEARCHERS = {"grep", "rg", "egrep", "fgrep", "ag"}
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")


def load_records(path) -> list[dict]:
    """A transcript as records: JSONL, or a JSON array (the hooks' logs/chat.json copy)."""
    text = read_recording(path).decode("utf-8", "replace")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            obj = json.loads(stripped)
            return [r for r in obj if isinstance(r, dict)]
        except ValueError:
            pass
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line, strict=False)
        except ValueError:
            continue
        if isinstance(r, dict):
            out.append(r)
    return out


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment)
    except ValueError:
        return segment.split()


def _work_segments(command: str) -> list[list[str]]:
    """The simple commands of a line that do work (no cd/export/echo/sleep), pipes cut off."""
    out = []
    for part in _SPLIT.split(command):
        part = part.split("|", 1)[0].strip()
        if not part:
            continue
        w = [x for x in _words(part) if not re.match(r"^\d*[<>]", x) and x not in (">", ">>", "<")]
        while w and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w[0]):
            w = w[1:]
        while w:
            if w[0] in _WRAPPERS:
                w = w[1:]
            elif len(w) > 1 and (w[0], w[1]) in _TWO_WORD:
                w = w[2:]
            elif w[0] == "timeout" and len(w) > 1:
                w = w[2:]
            else:
                break
        if not w or w[0] in ("cd", "export", "echo", "sleep", "set", "source", ".", "pushd", "popd", "true"):
            continue
        out.append(w)
    return out


def broad_key(command: str) -> tuple | None:
    segs = _work_segments(command)
    if not segs:
        return None
    w = segs[0]
    prog = os.path.basename(w[0])
    args = [x for x in w[1:] if not x.startswith("-")]
    if prog in _READERS and args:
        return ("read", args[-1])
    if prog in ("sed", "awk") and len(args) >= 2:
        return ("read", args[-1])
    if prog in _SEARCHERS and len(args) >= 2:
        return ("search", args[0], tuple(args[1:]))
    return (prog,) + tuple(a for a in args if not re.fullmatch(r"\d+", a))[:6]


def _short(text: str, n: int) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= n else t[: n - 1] + "…"


_MARK = re.compile(r"\.\.\. \[\d+ (?:lines|characters) truncated\] \.\.\.|<persisted-output>|Output too large")


def _view(text: str, width: int) -> str:
    m = _MARK.search(text)
    mark = (" [HARNESS CUT: %s]" % m.group(0)) if m else ""
    if len(text) <= 2 * width:
        body = text
    else:
        body = text[:width] + "\n   ⋯ (%d chars not shown here) ⋯\n" % (len(text) - 2 * width) + text[-width:]
    return "(%d chars%s)\n%s" % (len(text), mark, "\n".join("      | " + ln for ln in body.splitlines()[:80]))


def timeline(records: list[dict]) -> list[dict]:
    """Main-thread steps in order: bash calls with their results, other tools, prompts, model text."""
    steps: list[dict] = []
    by_id: dict[str, dict] = {}
    for r in records:
        if r.get("isSidechain"):
            continue
        msg = r.get("message") if isinstance(r.get("message"), dict) else {}
        typ = r.get("type")
        if typ == "assistant":
            for it in msg.get("content") or ():
                if not isinstance(it, dict):
                    continue
                if it.get("type") == "text" and it.get("text", "").strip():
                    steps.append({"kind": "say", "text": it["text"]})
                elif it.get("type") == "thinking" and it.get("thinking", "").strip():
                    steps.append({"kind": "think", "text": it["thinking"]})
                elif it.get("type") == "tool_use":
                    inp = it.get("input") if isinstance(it.get("input"), dict) else {}
                    step = {"kind": "tool", "name": it.get("name"), "id": it.get("id"), "input": inp,
                            "cwd": r.get("cwd"), "result": None, "is_error": None}
                    steps.append(step)
                    by_id[it.get("id")] = step
        elif typ == "user":
            content = msg.get("content")
            if isinstance(content, str):
                if not r.get("isMeta"):
                    steps.append({"kind": "prompt", "text": content})
                continue
            for it in content or ():
                if not isinstance(it, dict):
                    continue
                if it.get("type") == "tool_result" and it.get("tool_use_id") in by_id:
                    s = by_id[it["tool_use_id"]]
                    s["result"] = _text(it.get("content"))
                    s["is_error"] = bool(it.get("is_error"))
                elif it.get("type") == "text" and not r.get("isMeta"):
                    steps.append({"kind": "prompt", "text": it.get("text", "")})
        elif typ == "system" and r.get("subtype") == "compact_boundary":
            steps.append({"kind": "compaction"})
    return steps


def candidates(path) -> list[dict]:
    from reflex.signature import signature
    steps = timeline(load_records(path))
    out = []
    seen_key: dict = {}
    seen_core: dict = {}
    for i, s in enumerate(steps):
        if s["kind"] != "tool" or s["name"] != "Bash" or not isinstance(s["input"].get("command"), str):
            continue
        cmd = s["input"]["command"]
        key = broad_key(cmd)
        core = signature(cmd, s["cwd"]).core_hash
        prior = None
        for j in (seen_key.get(key) if key else None, seen_core.get(core)):
            if j is not None and (prior is None or j > prior):
                prior = j
        if prior is not None:
            out.append({"index": i, "prior": prior, "steps": steps})
        if key:
            seen_key[key] = i
        seen_core[core] = i
    return out


def render(path, cands, width: int) -> str:
    lines = []
    name = os.path.basename(path)
    for n, c in enumerate(cands, 1):
        steps, i, p = c["steps"], c["index"], c["prior"]
        cur, pri = steps[i], steps[p]
        lines.append("=" * 100)
        lines.append("#%d %s %s" % (n, name, cur["id"]))
        lines.append("PRIOR  [%s] $ %s" % (pri["id"], _short(pri["input"].get("command"), 400)))
        lines.append("   result%s %s" % (" (error)" if pri["is_error"] else "", _view(pri["result"] or "", width)))
        between = steps[p + 1:i]
        tools = [b for b in between if b["kind"] == "tool"]
        edits = sorted({os.path.basename(str(b["input"].get("file_path") or b["input"].get("notebook_path") or ""))
                        for b in tools if b["name"] in ("Edit", "Write", "MultiEdit", "NotebookEdit")})
        lines.append("   BETWEEN (%d steps: %d edit(s) %s, %d subagent(s), %d user turn(s), %d other command(s)%s):" % (
            len(between), sum(b["name"] in ("Edit", "Write", "MultiEdit", "NotebookEdit") for b in tools),
            ",".join(edits)[:200], sum(b["name"] in ("Task", "Agent") for b in tools),
            sum(b["kind"] == "prompt" for b in between), sum(b["name"] == "Bash" for b in tools),
            "; compaction" if any(b["kind"] == "compaction" for b in between) else ""))
        if len(between) > 14:
            lines.append("     … %d earlier steps …" % (len(between) - 14))
        for b in between[-14:]:
            if b["kind"] == "tool":
                inp = b["input"]
                if b["name"] == "Bash":
                    desc = "$ " + _short(inp.get("command"), 160) + ("  [bg]" if inp.get("run_in_background") else "")
                    desc += "  -> %d chars%s" % (len(b["result"] or ""), " ERR" if b["is_error"] else "")
                elif b["name"] in ("Task", "Agent"):
                    desc = "subagent %s: %s" % (inp.get("subagent_type"), _short(inp.get("description") or inp.get("prompt"), 100))
                else:
                    desc = _short(inp.get("file_path") or inp.get("path") or inp.get("pattern") or
                                  json.dumps(inp)[:100], 120)
                lines.append("     - %s %s" % (b["name"], desc))
            elif b["kind"] in ("say", "think"):
                lines.append("     . %s: %s" % (b["kind"], _short(b["text"], 220)))
            elif b["kind"] == "prompt":
                lines.append("     > USER: %s" % _short(b["text"], 200))
            else:
                lines.append("     ! %s" % b["kind"])
        lines.append("RERUN  [%s] $ %s" % (cur["id"], _short(cur["input"].get("command"), 400)))
        lines.append("   result%s %s" % (" (error)" if cur["is_error"] else "", _view(cur["result"] or "", min(width, 300))))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--json", action="store_true", help="one line per candidate: transcript, tool_use_id, command")
    ap.add_argument("--width", type=int, default=700, help="characters of each result's head and tail shown")
    args = ap.parse_args(argv)
    for path in args.paths:
        cands = candidates(path)
        if args.json:
            for c in cands:
                s = c["steps"][c["index"]]
                print(json.dumps({"transcript": os.path.basename(path), "tool_use_id": s["id"],
                                  "command": s["input"].get("command")}))
        else:
            print(render(path, cands, args.width))
    return 0


if __name__ == "__main__":
    sys.exit(main())
