"""A large full Read with ctx installed, on the REAL CLI (a scripted model; the CLI, hooks, daemon
and files are real): the model gets the file's first lines with their true line numbers and, outside
the numbered text, ctx's outline of the rest; a window is delivered whole, a full re-read is
delivered whole, and Edit and Write work after an outlined read (inside the head, inside a window
read afterwards, and where the model saw only the outline), checked on disk.  docs/reads.md.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_read_pointer import TOOLS, _edit, _read
from tests.support.claude_harness import ctx_env as _env, install_ctx as _install
from tests.support.claude_harness import ClaudeEnv
from tests.support.scripted_model import ScriptedCommands, ToolUse

pytestmark = pytest.mark.e2e

OUTLINE = "[ctx] Outline, not the file:"


def _module(name: str, functions: int = 100) -> str:
    """A Python module of ~13k characters: a docstring, imports, then functions."""
    out = ['"""The %s module."""\n' % name, "import os\n", "\n\n"]
    for i in range(1, functions + 1):
        out.append("def %s_%d(value):\n    # step %d of the %s pipeline, a line of real-looking length, as code has\n"
                   "    return value * %d + len(os.sep)\n\n\n" % (name, i, i, name, i))
    return "".join(out)


def _numbers(text: str) -> list[int]:
    """The line numbers the CLI put before each line of a Read result."""
    return [int(m.group(1)) for m in re.finditer(r"^\s*(\d+)[\t\u2192]", text, re.M)]


def test_large_read_outline_keeps_windows_rereads_edit_and_write_working(claude_env: ClaudeEnv, tmp_path,
                                                                          ctx_home):
    repo = claude_env.repo
    a, b, c, d = (repo / ("%s.py" % n) for n in "abcd")
    for f in (a, b, c, d):
        f.write_text(_module(f.stem))
    assert len(a.read_text()) > 12000
    lines_of = {f: f.read_text().splitlines() for f in (a, b, c, d)}
    line_a70 = next(n for n, s in enumerate(lines_of[a], 1) if s.startswith("def a_70("))
    settings = _install(tmp_path, ctx_home)
    script = [
        _read(a),                                                     # 0 large, full: outlined
        _read(a, offset=line_a70, limit=10),                          # 1 a window of a part not shown
        _edit(a, "return value * 70 + len", "return value * 700 + len"),  # 2 Edit inside that window
        _read(b),                                                     # 3 outlined
        _edit(b, "def b_2(value):", "def b_two(value):"),             # 4 Edit inside the shown head
        _edit(b, "return value * 88 + len", "return value * 880 + len"),  # 5 Edit the model saw only outlined
        _read(c),                                                     # 6 outlined
        _read(c),                                                     # 7 full re-read: whole
        _read(d),                                                     # 8 outlined
        ToolUse("write", name="Write", extra={"file_path": str(d), "content": "d = 'rewritten'\n"}),  # 9
    ]
    run = claude_env.run("work on the files", settings_path=settings, policy=ScriptedCommands(script),
                         env_extra=_env(ctx_home), allowed_tools=TOOLS)
    assert run.returncode == 0, run.describe()
    seen = run.tool_results
    assert len(seen) == len(script), run.describe()
    text = [r.text for r in seen]
    notes = ["\n".join(r.context) for r in seen]

    # 0: the head, numbered 1..K exactly as the file's lines; the outline outside the numbered text
    head = _numbers(text[0])
    k = len(head)
    assert head == list(range(1, k + 1)) and 0 < k <= 60, text[0][-300:]
    assert text[0].splitlines()[-1].endswith(lines_of[a][k - 1]), text[0][-200:]
    assert "def a_100(" not in text[0] and OUTLINE not in text[0]
    assert OUTLINE in notes[0], run.describe()
    n = len(lines_of[a])
    assert "lines %d-%d of %d are not shown" % (k + 1, n, n) in notes[0], notes[0][:400]
    assert "L%d-%d def a_70(value):" % (line_a70, line_a70 + 2) in notes[0], notes[0]
    assert "offset=%d limit=" % (k + 1) in notes[0]
    assert len(text[0]) + len(notes[0]) < len(a.read_text()) // 2
    # 1: a window is delivered whole, numbered from its offset, with no outline
    assert _numbers(text[1]) == list(range(line_a70, line_a70 + 10)), text[1]
    assert "return value * 70 + len" in text[1] and not notes[1].count(OUTLINE)
    # 2: Edit inside the window applied
    assert not seen[2].is_error and "updated" in text[2], text[2]
    assert "return value * 700 + len(os.sep)" in a.read_text()
    # 3-5: Edit inside the shown head, and Edit of text the model saw only in the outline
    assert OUTLINE in notes[3]
    assert not seen[4].is_error and not seen[5].is_error, run.describe()
    disk_b = b.read_text()
    assert "def b_two(value):" in disk_b and "return value * 880 + len" in disk_b and "def b_2(" not in disk_b
    # 6-7: a full re-read after an outline is delivered whole
    assert OUTLINE in notes[6]
    assert _numbers(text[7])[:len(lines_of[c])] == list(range(1, len(lines_of[c]) + 1)), text[7][-300:]
    assert "def c_100(value):" in text[7] and OUTLINE not in notes[7]
    # 8-9: Write after an outlined read
    assert OUTLINE in notes[8]
    assert not seen[9].is_error, text[9]
    assert d.read_text() == "d = 'rewritten'\n"
