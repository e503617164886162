"""The Bash commands of the real Claude Code sessions in evals/real_sessions (dev and held-out),
each with its record's cwd: what real agents type, for tests and benchmarks of per-command costs."""

import glob
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bash_commands() -> list:
    """[(command, cwd)] in file and record order ("/tmp" where a record names no cwd)."""
    from reflex.harness.calls import read_recording
    out = []
    for f in sorted(glob.glob(os.path.join(REPO, "evals", "real_sessions", "*", "*.json.gz"))):
        for rec in json.loads(read_recording(f)):
            content = (rec.get("message") or {}).get("content") if isinstance(rec, dict) else None
            for c in content if isinstance(content, list) else ():
                if isinstance(c, dict) and c.get("type") == "tool_use" and c.get("name") == "Bash":
                    cmd = (c.get("input") or {}).get("command")
                    if isinstance(cmd, str):
                        out.append((cmd, rec.get("cwd") or "/tmp"))
    return out
