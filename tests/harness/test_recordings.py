"""`ctx replay` of what the real Codex, Gemini and Copilot CLIs recorded themselves
(tests/harness/recordings/, written by the CLIs in the e2e sessions; see its README)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflex.analysis import replay
from reflex.harness import recordings

HERE = Path(__file__).parent / "recordings"
WITH_CTX = {"codex": HERE / "codex/session-with-ctx.jsonl",
            "gemini": next((HERE / "gemini/with-ctx/chats").glob("session-*.jsonl")),
            "copilot": HERE / "copilot/session-with-ctx.events.jsonl"}
RAW_CUT = {"codex": HERE / "codex/session-raw-cut.jsonl",
           "gemini": next((HERE / "gemini/raw-cut/chats").glob("session-*.jsonl")),
           "copilot": HERE / "copilot/session-raw-cut.events.jsonl"}


@pytest.mark.parametrize("harness", recordings.HARNESSES)
def test_each_recording_is_recognised_as_its_harness(harness):
    for path in (WITH_CTX[harness], RAW_CUT[harness]):
        assert replay.detect_format(path) == harness


@pytest.mark.parametrize("harness", recordings.HARNESSES)
def test_a_session_with_ctx_replays_its_runs_hints_and_denial(harness):
    (sid, events), = replay.load(WITH_CTX[harness]).items()
    assert sid and all(e.session_id == sid for e in events)
    assert events[0].kind == "session_start" and events[-1].kind == "session_end"
    commands = [e.command for e in events if e.kind == "command"]
    assert len(commands) == 4, commands
    runs = [e for e in events if e.kind == "run"]
    # the first digest, then the densified re-run, both read off the text the model received
    assert [r.density for r in runs] == ["normal", "dense"], runs
    assert runs[0].exit_code == 1 and len(runs[0].hints) == 2 and runs[1].reason == "densified: re-run detected"
    assert "test_seed.py::test_lookup_missing" in runs[0].failed_ids
    retrieval, = [e for e in events if e.kind == "retrieval"]
    assert retrieval.result == "know" and retrieval.handle == runs[1].handle
    denied = [e for e in events if e.kind == "result" and e.ran is False]
    assert len(denied) == 1 and denied[0].tool_use_id == next(
        e.tool_use_id for e in events if e.kind == "command" and e.command == "cat .env")
    report = replay.replay({sid: events})
    firings = [f["detector"] for f in report["firings"]] if "firings" in report else []
    assert "starvation" in json.dumps(replay.json_report(report)), firings


@pytest.mark.parametrize("harness", recordings.HARNESSES)
def test_the_harness_cut_exit_codes_and_file_writes_are_read_off_the_recording(harness):
    (sid, events), = replay.load(RAW_CUT[harness]).items()
    results = [e for e in events if e.kind == "result"]
    assert [r.exit_code for r in results] == [0, 3, 0, 0], results
    # only the big output was cut by the harness itself, which is what the model saw
    assert [r.truncated for r in results] == [True, False, False, False], results
    edits = [e for e in events if e.kind == "edit"]
    assert [e.paths for e in edits] == [("out.txt",)], edits
    assert all(e.cwd and e.cwd.endswith("/repo") for e in events if e.kind == "command"), events


def test_replay_cli_reads_each_harness_recording(tmp_path):
    env = dict(os.environ, CTX_HOME=str(tmp_path / "home"))
    for harness, path in WITH_CTX.items():
        p = subprocess.run([sys.executable, "-m", "reflex.entry", "replay", str(path), "--json"],
                           capture_output=True, text=True, env=env, timeout=60)
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
        assert "starvation" in json.dumps(out), (harness, out)
        forced = subprocess.run([sys.executable, "-m", "reflex.entry", "replay", str(path), "--format", harness],
                                capture_output=True, text=True, env=env, timeout=60)
        assert forced.returncode == 0 and "deny    cat .env" in forced.stdout, forced.stdout + forced.stderr


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
@pytest.mark.parametrize("harness", recordings.HARNESSES)
def test_a_damaged_recording_never_raises(harness, damage, tmp_path):
    src = WITH_CTX[harness]
    data = src.read_bytes()
    if damage == "truncate":
        data = data[: len(data) * 2 // 3]
    elif damage == "garbage":
        lines = data.split(b"\n")
        data = b"\n".join(line if i % 3 else b"{not json \xff" for i, line in enumerate(lines))
    else:
        data = data.split(b"\n", 1)[0] + b"\n"
    path = tmp_path / src.name
    path.write_bytes(data)
    events = recordings.READERS[harness](path)
    assert events[0].kind == "session_start" and events[-1].kind == "session_end"
    replay.replay({events[0].session_id: events})


def test_codex_shell_argv_and_patch_shapes():
    """Older Codex rollouts: `shell` with an argv, JSON outputs with metadata, apply_patch edits."""
    lines = [
        {"type": "session_meta", "payload": {"id": "s1", "cwd": "/w/repo"}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                                              "arguments": json.dumps({"command": ["bash", "-lc", "pytest -x"]})}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                              "output": json.dumps({"output": "1 failed", "metadata": {"exit_code": 1}})}},
        {"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
                                              "input": "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** End Patch"}},
        {"type": "compacted", "payload": {}},
    ]
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(json.dumps(x) for x in lines))
    try:
        events = recordings.read_codex_rollout(f.name)
    finally:
        os.unlink(f.name)
    cmd, = [e for e in events if e.kind == "command"]
    assert cmd.command == "pytest -x" and cmd.cwd == "/w/repo"
    res, = [e for e in events if e.kind == "result"]
    assert res.exit_code == 1 and res.ran
    edit, = [e for e in events if e.kind == "edit"]
    assert edit.paths == ("/w/repo/src/a.py",)
    assert [e.kind for e in events][-2:] == ["compaction", "session_end"]



def test_replay_harness_filter_on_recordings():
    """`ctx replay --harness NAME` keeps a recording only when it is that harness's (the ledger
    side of the filter is checked on each real CLI's ledger in tests/support/agent_sessions.py)."""
    from click.testing import CliRunner

    from reflex.commands.replay_cmd import replay_cmd
    for harness, path in WITH_CTX.items():
        mine = json.loads(CliRunner().invoke(replay_cmd, [str(path), "--json", "--harness", harness]).output)
        other = "claude" if harness != "claude" else "codex"
        theirs = json.loads(CliRunner().invoke(replay_cmd, [str(path), "--json", "--harness", other]).output)
        assert (mine["commands"], theirs["commands"]) == (4, 0), (harness, mine, theirs)
        assert mine["harness"] == harness and mine["format"] == harness
