"""Claude Code's Read with ctx installed, on the REAL CLI (a scripted model; the CLI, hooks, daemon
and files are real): an unchanged re-read reaches the model as ctx's short pointer, and Edit,
Write and MultiEdit still work after every kind of read (full, window, pointer), checked on disk.
A read after an edit is served fresh, and after a compaction (`/compact`, then a resumed
session) the pointer is not used.  What this proves and what it does not: docs/reads.md.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.claude_harness import ClaudeEnv, ctx_env as _env, install_ctx as _install
from tests.support.scripted_model import ScriptedCommands, ToolUse

pytestmark = pytest.mark.e2e

TOOLS = ("Bash", "Read", "Edit", "Write", "MultiEdit")
POINTER = "[ctx] Not repeated:"


def _lines(name: str, n: int = 40) -> str:
    return "".join("%s_%d = compute(%d)  # a line long enough to be worth not repeating\n" % (name, i, i)
                   for i in range(1, n + 1))



def _read(path: Path, **window: int) -> ToolUse:
    return ToolUse("read", name="Read", extra={"file_path": str(path), **window})


def _edit(path: Path, old: str, new: str) -> ToolUse:
    return ToolUse("edit", name="Edit", extra={"file_path": str(path), "old_string": old, "new_string": new})


def test_reread_pointer_keeps_edit_write_and_multiedit_working(claude_env: ClaudeEnv, tmp_path, ctx_home):
    repo = claude_env.repo
    a, b, c = repo / "a.py", repo / "b.py", repo / "c.py"
    for f in (a, b, c):
        f.write_text(_lines(f.stem))
    settings = _install(tmp_path, ctx_home)
    script = [
        _read(a),                                        # 0 full: delivered
        _read(a),                                        # 1 unchanged: pointer
        _edit(a, "a_7 = compute(7)", "a_7 = seven()"),   # 2 Edit after a pointer
        _read(a),                                        # 3 after the edit: fresh bytes
        _read(a, offset=5, limit=20),                    # 4 a window: delivered
        _read(a, offset=5, limit=20),                    # 5 the same window: pointer
        _edit(a, "a_8 = compute(8)", "a_8 = eight()"),   # 6 Edit after a window pointer
        _read(b),                                        # 7
        _read(b),                                        # 8 pointer
        ToolUse("write", name="Write", extra={"file_path": str(b), "content": "b = 'rewritten'\n"}),  # 9
        _read(c),                                        # 10
        _read(c),                                        # 11 pointer
        ToolUse("multiedit", name="MultiEdit", extra={"file_path": str(c), "edits": [
            {"old_string": "c_2 = compute(2)", "new_string": "c_2 = two()"}]}),                     # 12
        _edit(c, "c_3 = compute(3)", "c_3 = three()"),   # 13 Edit after a pointer (and MultiEdit)
    ]
    run = claude_env.run("edit the files", settings_path=settings, policy=ScriptedCommands(script),
                         env_extra=_env(ctx_home), allowed_tools=TOOLS)
    assert run.returncode == 0, run.describe()
    seen = run.tool_results
    assert len(seen) == len(script), run.describe()
    text = [r.text for r in seen]

    assert "a_40 = compute(40)" in text[0] and POINTER not in text[0]
    assert POINTER in text[1] and str(a) in text[1] and "lines 1-40" in text[1], text[1]
    assert "call" in text[1] and "blake3" in text[1] and len(text[1]) < len(text[0]) // 5
    assert not seen[2].is_error and "updated" in text[2], text[2]
    assert "a_7 = seven()" in text[3] and POINTER not in text[3]           # fresh after the edit
    assert "a_5 = compute(5)" in text[4] and POINTER not in text[4]
    assert POINTER in text[5] and "lines 5-24" in text[5], text[5]
    assert not seen[6].is_error and "updated" in text[6], text[6]
    assert POINTER in text[8]
    assert not seen[9].is_error, text[9]
    assert POINTER in text[11]
    assert not seen[13].is_error and "updated" in text[13], text[13]

    disk_a = a.read_text()
    assert "a_7 = seven()" in disk_a and "a_8 = eight()" in disk_a and "a_7 = compute(7)" not in disk_a
    assert b.read_text() == "b = 'rewritten'\n"
    disk_c = c.read_text()
    assert "c_3 = three()" in disk_c
    # MultiEdit: 2.1.332 has no such tool (the model gets an error and nothing is written);
    # where the harness has it, what it asked for is on disk.
    if seen[12].is_error:
        assert "c_2 = compute(2)" in disk_c, text[12]
    else:
        assert "c_2 = two()" in disk_c, text[12]


def test_after_compaction_the_pointer_is_not_used(claude_env: ClaudeEnv, tmp_path, ctx_home):
    a = claude_env.repo / "a.py"
    a.write_text(_lines("a"))
    settings = _install(tmp_path, ctx_home)
    env = _env(ctx_home)
    first = claude_env.run("read it", settings_path=settings, env_extra=env, allowed_tools=TOOLS,
                           policy=ScriptedCommands([_read(a), _read(a), _read(a)]))
    assert first.returncode == 0, first.describe()
    assert POINTER in first.tool_results[1].text, first.describe()
    # asked again right after a pointer: the bytes, so the next re-read could be a pointer again
    assert POINTER not in first.tool_results[2].text, first.describe()
    compact = claude_env.run("/compact", settings_path=settings, env_extra=env, allowed_tools=TOOLS,
                             policy=ScriptedCommands([]), extra_args=["--resume", first.session_id])
    assert compact.returncode == 0, compact.describe()
    after = claude_env.run("go on", settings_path=settings, env_extra=env, allowed_tools=TOOLS,
                           extra_args=["--resume", first.session_id],
                           policy=ScriptedCommands([_read(a), _edit(a, "a_9 = compute(9)", "a_9 = nine()")]))
    assert after.returncode == 0, after.describe()
    reread, edit = after.tool_results[-2:]
    assert POINTER not in reread.text and "a_40 = compute(40)" in reread.text, after.describe()
    assert not edit.is_error and "a_9 = nine()" in a.read_text(), after.describe()
    # the ledger saw the compaction through SessionStart(source=compact)
    import sqlite3
    deadline = time.monotonic() + 10
    sources: list[str] = []
    while time.monotonic() < deadline and "compact" not in sources:
        conn = sqlite3.connect(ctx_home / "ledger.db")
        rows = conn.execute("SELECT data FROM events WHERE session_id = ? AND hook_event = 'SessionStart'",
                            (first.session_id,)).fetchall()
        conn.close()
        sources = [json.loads(r[0] or "{}").get("source") for r in rows]
        time.sleep(0.1)
    assert "compact" in sources, sources
