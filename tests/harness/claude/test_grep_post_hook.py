"""Claude Code's Grep through the real shim and daemon: a large result comes back as the search
digest in Grep's own output shape, the result is stored (the digest's addresses answer through
`ctx get`), the event and the run are in the ledger; a small result gets no answer."""

import json
import re
import shutil
import subprocess

import pytest

from tests.conftest import ctx_cmd, ledger_rows, run_hook
from tests.support.daemons import wait_for

pytestmark = pytest.mark.skipif(shutil.which("rg") is None, reason="needs ripgrep")

MINIFIED = "var a=" + ",".join("k%d:%d" % (i, i) for i in range(400)) + ";"


def _project(root, files):
    proj = root / "proj"
    proj.mkdir()
    for i in range(files):
        (proj / ("bundle_%02d.js" % i)).write_text("// needle %d\n%s // needle\nlet x = 'needle';\n" % (i, MINIFIED))
    return proj


def _post_grep(proj, tool_use_id):
    """The PostToolUse payload the real CLI sends for Grep(pattern, output_mode=content), with
    the result rg gives for it (the shape recorded from Claude Code 2.1.332)."""
    content = subprocess.run(["rg", "--no-heading", "--color", "never", "--sort", "path", "-n", "-e", "needle"],
                             cwd=proj, capture_output=True, text=True, check=True).stdout.rstrip("\n")
    n = content.count("\n") + 1
    return {"session_id": "sess-g", "hook_event_name": "PostToolUse", "cwd": str(proj), "tool_name": "Grep",
            "tool_input": {"pattern": "needle", "output_mode": "content"}, "tool_use_id": tool_use_id,
            "tool_response": {"mode": "content", "numFiles": 0, "filenames": [], "content": content,
                              "numLines": n, "totalLines": n},
            "permission_mode": "default", "transcript_path": "/tmp/t.jsonl", "duration_ms": 12}, content


def test_a_large_grep_result_is_answered_with_its_digest_and_the_address_returns_the_line(
        tmp_path, paths, running_daemon):
    proj = _project(tmp_path, files=5)
    payload, content = _post_grep(proj, "toolu_grep1")
    rc, out, err, _ = run_hook(payload, timeout=30)
    assert rc == 0 and out, err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PostToolUse"
    replaced = answer["updatedToolOutput"]
    assert set(replaced) == {"mode", "numFiles", "filenames", "content", "numLines", "totalLines"}
    assert replaced["mode"] == "content" and replaced["filenames"] == [] and replaced["totalLines"] == 15
    text = replaced["content"]
    assert text.startswith("[ctx] search") and "15 matches in 5 files" in text
    assert len(text) < len(content) // 3 and MINIFIED not in text
    hint = re.search(r"ctx get (r:[0-9a-f]{12}:L(\d+)-(\d+)) (b3=[0-9a-f]{8})", text)
    assert hint is not None
    got = subprocess.run(ctx_cmd() + ["get", hint.group(1), hint.group(4)], capture_output=True, text=True,
                         timeout=30)
    assert got.returncode == 0, got.stderr
    assert MINIFIED in got.stdout  # the whole line the digest clipped
    # the ledger: the event says what was delivered, and the result is a run of its own
    assert wait_for(lambda: ledger_rows(paths, "SELECT * FROM runs"), timeout=10)
    (ev,) = ledger_rows(paths, "SELECT * FROM events WHERE tool_use_id = 'toolu_grep1'")
    data = json.loads(ev["data"])
    assert data["grep"] == {"mode": "content", "command": "rg -n -e needle"}
    assert data["post_digest"]["delivered_as"] == "replace"
    assert data["post_digest"]["tokens"] < data["post_digest"]["received_tokens"]
    (run,) = ledger_rows(paths, "SELECT * FROM runs")
    assert run["command"] == "rg -n -e needle" and run["family"] == "search" and run["exit_code"] == 0
    assert hint.group(1).startswith(run["handle"])


def test_a_small_grep_result_gets_no_answer(tmp_path, paths, running_daemon):
    proj = tmp_path / "small"
    proj.mkdir()
    (proj / "a.py").write_text("needle = 1\n")
    payload, _ = _post_grep(proj, "toolu_grep2")
    rc, out, err, _ = run_hook(payload, timeout=30)
    assert rc == 0 and out == b"", (out, err)
    assert wait_for(lambda: ledger_rows(paths, "SELECT * FROM events WHERE tool_use_id = 'toolu_grep2'"), timeout=10)
    (ev,) = ledger_rows(paths, "SELECT * FROM events WHERE tool_use_id = 'toolu_grep2'")
    data = json.loads(ev["data"])
    assert data["grep"] == {"mode": "content", "command": "rg -n -e needle"}  # seen, and left alone
    assert "post_digest" not in data and ledger_rows(paths, "SELECT * FROM runs") == []
