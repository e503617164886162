"""Claude Code transcript JSONL -> Events."""

import glob
import json

import pytest

from reflex.harness.claude.transcript import events_from_lines, parse_digest, read_transcript

CORPUS = sorted(glob.glob("/work/shared/corpus/transcripts/*.jsonl"))


def use(tid, name, **inp):
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def assistant(*items, cwd="/p", model="claude-opus-4-1"):
    return {"type": "assistant", "sessionId": "s1", "cwd": cwd, "uuid": "a",
            "message": {"id": "m", "role": "assistant", "model": model, "content": list(items)}}


def result(tid, content, is_error=False, **extra):
    r = {"type": "user", "sessionId": "s1", "cwd": "/p", "uuid": "u",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": content,
                                                  "is_error": is_error}]}}
    r.update(extra)
    return r


def prompt(text, **extra):
    r = {"type": "user", "sessionId": "s1", "cwd": "/p", "message": {"role": "user", "content": text}}
    r.update(extra)
    return r


def lines(*records):
    return [r if isinstance(r, str) else json.dumps(r) for r in records]


def kinds(events):
    return [e.kind for e in events]


def test_pairs_calls_with_results_by_id_even_out_of_order():
    ev = events_from_lines(lines(
        assistant(use("t1", "Bash", command="pytest -q"), use("t2", "Bash", command="git status")),
        result("t2", "clean"),
        result("t1", "Exit code 1\n1 failed", is_error=True),
    ))
    assert kinds(ev) == ["session_start", "command", "command", "result", "result", "session_end"]
    assert ev[0].model == "claude-opus-4-1" and ev[0].session_id == "s1"
    r2, r1 = ev[3], ev[4]
    assert (r2.tool_use_id, r2.exit_code, r2.ran) == ("t2", 0, True)
    assert (r1.tool_use_id, r1.exit_code) == ("t1", 1)
    assert [e.seq for e in ev] == list(range(len(ev)))


def test_edit_tools_and_write_commands_are_edits():
    ev = events_from_lines(lines(
        assistant(use("e1", "Edit", file_path="/p/a.py", old_string="a", new_string="b"),
                  use("e2", "Write", file_path="/p/b.py", content="x"),
                  use("e3", "MultiEdit", file_path="/p/c.py", edits=[]),
                  use("e4", "NotebookEdit", notebook_path="/p/n.ipynb"),
                  use("b1", "Bash", command="sed -i s/a/b/ d.py"),
                  use("b2", "Bash", command="ls > /dev/null 2>&1"),
                  use("k1", "Task", prompt="fix it")),
        result("k1", "done"),
    ))
    edits = [e for e in ev if e.kind == "edit"]
    assert [e.paths for e in edits] == [("/p/a.py",), ("/p/b.py",), ("/p/c.py",), ("/p/n.ipynb",), ("d.py",), ()]
    assert edits[-1].tool_name == "Task"


def test_reads_carry_line_ranges():
    ev = events_from_lines(lines(assistant(use("r1", "Read", file_path="/p/a.py", offset=10, limit=20),
                                           use("r2", "Grep", pattern="x", path="/p/src"))))
    assert [e.paths for e in ev if e.kind == "read"] == [("/p/a.py:10-29",), ("/p/src",)]


def test_compaction_records_and_prompts():
    ev = events_from_lines(lines(
        prompt("fix the tests"),
        {"type": "system", "subtype": "compact_boundary", "sessionId": "s1"},
        prompt("This session is being continued...", isCompactSummary=True),
        prompt("<command-name>/clear</command-name>"),
        prompt("injected", isMeta=True),
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "swapped"}]}},
    ))
    assert kinds(ev) == ["session_start", "prompt", "compaction", "session_start", "prompt", "session_end"]


def test_never_ran_truncated_and_background_results():
    ev = events_from_lines(lines(
        assistant(use("t1", "Bash", command="pytest"), use("t2", "Bash", command="make"),
                  use("t3", "Bash", command="npm run dev", run_in_background=True)),
        result("t1", "The user doesn't want to proceed with this tool use.", is_error=True),
        result("t2", "<persisted-output>\nOutput too large (55.2KB). Full output saved to: /x\n"),
        result("t3", "Command running in background with ID: b1"),
    ))
    res = {e.tool_use_id: e for e in ev if e.kind == "result"}
    assert res["t1"].ran is False and res["t1"].exit_code is None
    assert res["t2"].truncated is True
    assert [e.background for e in ev if e.kind == "command"] == [False, False, True]


def test_malformed_lines_are_skipped_but_salvaged_conservatively():
    broken_edit = ('{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_01X","name":"Edit",'
                   '"input":{"file_path":"/p/a.py","old_string":"cut off')
    broken_result = ('{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_B1",'
                     '"type":"tool_result","content":"<persisted-output>\nOutput too')
    ev = events_from_lines(lines(
        assistant(use("toolu_B1", "Bash", command="brew install x")),
        broken_edit,
        broken_result,
        "not json at all",
        '{"type":"user","message":{"role":"user","content":"a prompt cut off',
        "",
    ))
    assert kinds(ev) == ["session_start", "command", "edit", "result", "prompt", "session_end"]
    assert ev[2].paths == ("/p/a.py",)
    assert ev[3].tool_use_id == "toolu_B1" and ev[3].ran is True


def test_control_characters_inside_strings_are_tolerated():
    raw = ('{"type":"assistant","sessionId":"s1","message":{"model":"m","content":[{"type":"tool_use","id":"t1",'
           '"name":"Bash","input":{"command":"echo \x01hi"}}]}}')
    ev = events_from_lines([raw])
    assert [e.command for e in ev if e.kind == "command"] == ["echo \x01hi"]


def test_sidechain_records_are_not_the_sessions_calls():
    side = assistant(use("t9", "Bash", command="pytest"))
    side["isSidechain"] = True
    assert kinds(events_from_lines(lines(side))) == ["session_start", "session_end"]


def _side(*items):
    r = assistant(*items)
    r["isSidechain"] = True
    return r


def test_a_subagent_that_edits_is_a_change_one_that_only_reads_is_not():
    ev = events_from_lines(lines(
        assistant(use("k1", "Task", subagent_type="debug-specialist", prompt="fix"),
                  use("k2", "Task", subagent_type="investigator", prompt="look")),
        _side(use("s1", "Read", file_path="/p/a.py")),
        _side(use("s2", "Edit", file_path="/p/a.py", old_string="a", new_string="b")),
        _side(use("s3", "Bash", command="npm install left-pad"), use("s4", "Bash", command="git status")),
        result("k1", "fixed"), result("k2", "nothing to change"),
    ))
    edits = [e for e in ev if e.kind == "edit"]
    # the subagents' edits at their place in the file; the Tasks themselves add nothing (seen)
    assert [(e.tool_use_id, e.paths) for e in edits] == [("s2", ("/p/a.py",)), ("s3", ())]
    assert not any(e.kind == "command" for e in ev)


def test_a_task_whose_subagent_is_not_in_the_file_is_an_edit_unless_read_only():
    ev = events_from_lines(lines(
        assistant(use("k1", "Task", subagent_type="general-purpose", prompt="do it"),
                  use("k2", "Agent", subagent_type="Explore", prompt="find it")),
        result("k1", "done"), result("k2", "found"),
    ))
    assert [(e.kind, e.tool_use_id) for e in ev if e.kind == "edit"] == [("edit", "k1")]


def test_newer_subagent_files_are_read_next_to_the_transcript(tmp_path):
    sub = tmp_path / "s1" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-a1.jsonl").write_text(json.dumps(_side(use("x1", "Write", file_path="/p/new.py", content="")))
                                        + "\n")
    (sub / "agent-a2.jsonl").write_text(json.dumps(_side(use("x2", "Grep", pattern="foo"))) + "\n")
    path = tmp_path / "s1.jsonl"
    path.write_text("\n".join(lines(
        assistant(use("k1", "Task", subagent_type="coder", prompt="write"),
                  use("k2", "Task", subagent_type="coder", prompt="look")),
        result("k1", "ok", toolUseResult={"agentId": "a1", "status": "completed"}),
        result("k2", "ok", toolUseResult={"agentId": "a2", "status": "completed"}),
    )) + "\n")
    edits = [e for e in read_transcript(str(path)) if e.kind == "edit"]
    assert [(e.tool_use_id, e.paths) for e in edits] == [("x1", ("/p/new.py",))]


def test_the_harness_cut_is_read_wherever_its_marker_is():
    head, tail = "x" * 5000, "y" * 5000
    ev = events_from_lines(lines(
        assistant(use("t1", "Bash", command="npm test"), use("t2", "Bash", command="make"),
                  use("t3", "Bash", command="cat notes.md"), use("t4", "Bash", command="git commit -m x"),
                  use("t5", "Bash", command="cat notes.md")),
        result("t1", "Exit code 1\n" + head + "\n\n... [187669 characters truncated] ...\n\n" + tail, is_error=True),
        result("t2", "a" * 30000 + "\n\n... [1851 lines truncated] ...\n"),
        result("t3", "the docs say: [3 lines truncated] is what the tool prints"),
        # CC0 57bb5674: the archive's redaction swallowed the marker's leading "... ".
        result("t4", "Exit code 1\n" + head + "\nsecret=[REDACTED] [4718 characters truncated] ...\n\n" + tail,
               is_error=True),
        result("t5", "the docs say: [3 lines truncated] ...and more"),
    ))
    res = {e.tool_use_id: e.truncated for e in ev if e.kind == "result"}
    assert res == {"t1": True, "t2": True, "t3": False, "t4": True, "t5": False}


def test_a_command_the_harness_stopped_says_so():
    ev = events_from_lines(lines(
        assistant(use("t1", "Bash", command="npm run e2e")),
        result("t1", "Command timed out after 2m 0.0s\nrunning suite 3 of 9", is_error=True),
    ))
    (res,) = [e for e in ev if e.kind == "result"]
    assert res.reason == "timed out" and res.ran is True


def test_a_transcript_stored_as_one_json_array_reads_the_same(tmp_path):
    recs = [assistant(use("t1", "Bash", command="pytest -q | tail -5")), result("t1", "1 failed")]
    a, b = tmp_path / "a.jsonl", tmp_path / "chat.json"
    a.write_text("\n".join(lines(*recs)) + "\n")
    b.write_text(json.dumps(recs, indent=2))
    assert [e.to_json() for e in read_transcript(str(a))] == [e.to_json() for e in read_transcript(str(b))]


def test_background_tasks_end_by_notification_or_by_their_output_tool():
    ev = events_from_lines(lines(
        assistant(use("b1", "Bash", command="make build", run_in_background=True),
                  use("b2", "Bash", command="npm run dev", run_in_background=True)),
        result("b1", "Command running in background with ID: bx1. Output is being written to: /tmp/t/bx1.output"),
        result("b2", "Command running in background with ID: bash_2", toolUseResult={"backgroundTaskId": "bash_2"}),
        assistant(use("o1", "BashOutput", bash_id="bash_2")),
        result("o1", "<status>running</status>", toolUseResult={"shellId": "bash_2", "status": "running"}),
        prompt("<task-notification>\n<task-id>bx1</task-id>\n<tool-use-id>b1</tool-use-id>\n"
               "<output-file>/tmp/t/bx1.output</output-file>\n<status>completed</status>\n</task-notification>"),
        assistant(use("o2", "BashOutput", bash_id="bash_2")),
        result("o2", "<status>failed</status>", toolUseResult={"shellId": "bash_2", "status": "failed"}),
    ))
    bg = {e.tool_use_id: e.paths for e in ev if e.kind == "result"}
    assert bg["b1"] == ("/tmp/t/bx1.output",)
    ends = [(e.tool_use_id, e.paths) for e in ev if e.kind == "task_end"]
    assert ends == [("b1", ("/tmp/t/bx1.output",)), ("b2", ())]
    assert "prompt" not in kinds(ev)          # a task notification is not a user turn


def test_ctx_digest_in_a_result_is_a_run_and_ctx_get_a_retrieval():
    digest = ("[ctx] pytest 8.3 | dense (densified: re-run detected) | exit 1 | 2 failed, 3 passed | "
              "2900→410 tokens | r:0123456789ab | truncated\n"
              "FAIL tests/test_calc.py::test_mean (line 12) AssertionError: assert 1 == 2\n"
              "FAIL tests/test_calc.py::test_p[a b] [c] (line 20) ValueError\n"
              "  ctx get 'r:0123456789ab#tests/test_calc.py::test_mean' b3=1a2b3c4d\n"
              "  ctx get r:0123456789ab:L10-40 b3=9c0ffee1\n")
    ev = events_from_lines(lines(
        assistant(use("t1", "Bash", command="pytest")),
        result("t1", digest, is_error=True),
        assistant(use("t2", "Bash", command="ctx get r:0123456789ab:L10-40")),
        result("t2", "line 10\nline 11"),
    ))
    run = next(e for e in ev if e.kind == "run")
    assert (run.handle, run.density, run.reason, run.truncated) == ("r:0123456789ab", "dense",
                                                                     "densified: re-run detected", True)
    assert run.hints == ("r:0123456789ab#tests/test_calc.py::test_mean", "r:0123456789ab:L10-40")
    assert run.failed_ids == ("tests/test_calc.py::test_mean", "tests/test_calc.py::test_p[a b]")
    assert run.exit_code == 1
    ret = next(e for e in ev if e.kind == "retrieval")
    assert (ret.address, ret.handle, ret.result) == ("r:0123456789ab:L10-40", "r:0123456789ab", "know")
    assert parse_digest("plain output") is None


def test_ask_user_question_answer_is_a_prompt():
    ev = events_from_lines(lines(assistant(use("q1", "AskUserQuestion", questions=[])),
                                 result("q1", "User has answered")))
    assert kinds(ev) == ["session_start", "prompt", "session_end"]


@pytest.mark.skipif(not CORPUS, reason="shared corpus not available")
def test_corpus_transcripts_parse_every_readable_bash_call():
    for path in CORPUS:
        readable = 0
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    r = json.loads(line, strict=False)
                except ValueError:
                    continue
                if r.get("isSidechain") or r.get("type") != "assistant":
                    continue
                readable += sum(1 for c in r["message"]["content"]
                                if isinstance(c, dict) and c.get("type") == "tool_use" and c.get("name") == "Bash")
        ev = read_transcript(path)
        commands = [e for e in ev if e.kind == "command"]
        assert len(commands) == readable > 0
        assert len({e.tool_use_id for e in commands}) == len(commands)
        assert all(e.session_id == ev[0].session_id for e in ev)
