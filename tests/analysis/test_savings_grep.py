"""`ctx replay --savings` counts Claude Code's Grep results through the function the live post hook
calls (reflex.harness.claude.grep_result.digest), on the structured result the transcript records
beside the tool_result (`toolUseResult`), against what the model received."""

import shutil
import subprocess

import pytest

from reflex import tokens
from reflex.analysis import savings
from reflex.harness.claude import grep_result

PROJECT = "/home/dev/proj"
pytestmark = pytest.mark.skipif(shutil.which("rg") is None, reason="needs ripgrep")


def _records(tid, tool_input, tool_response, text, *, extra_results=()):
    use = {"type": "assistant", "uuid": "u1", "cwd": PROJECT, "sessionId": "s1",
           "message": {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "Grep",
                                                         "input": tool_input}]}}
    results = [{"type": "tool_result", "tool_use_id": tid, "content": text}, *extra_results]
    result = {"type": "user", "uuid": "u2", "parentUuid": "u1", "cwd": PROJECT, "sessionId": "s1",
              "message": {"role": "user", "content": results}, "toolUseResult": tool_response}
    return [use, result]


@pytest.fixture
def grep_content(tmp_path):
    """A content-mode Grep result of real rg output over real files, and the text the model got."""
    for i in range(10):
        (tmp_path / ("bundle_%d.js" % i)).write_text(
            "// needle %d\nexport const t={%s}; // needle\n" % (i, ",".join("k%d:%d" % (j, j) for j in range(60))))
    content = subprocess.run(["rg", "--no-heading", "--color", "never", "--sort", "path", "-n", "-e", "needle"],
                             cwd=tmp_path, capture_output=True, text=True, check=True).stdout.rstrip("\n")
    return ({"pattern": "needle", "output_mode": "content"},
            {"mode": "content", "numFiles": 0, "filenames": [], "content": content, "numLines": 20}, content)


def test_a_grep_result_is_counted_as_the_digest_the_hook_would_deliver(grep_content):
    tool_input, resp, text = grep_content
    (call,) = savings.session_savings(_records("toolu_g", tool_input, resp, text), memo_class=None)
    expected = grep_result.digest(tool_input, resp, cwd=PROJECT, received_tokens=tokens.count(text))
    assert expected is not None
    assert call.tool == "Grep" and call.received == tokens.count(text)
    assert call.acted and call.delivered == expected.digest.tokens < call.received
    assert call.why == "result digested"


def test_a_grep_without_its_structured_result_is_not_acted_on(grep_content):
    tool_input, resp, text = grep_content
    (call,) = savings.session_savings(_records("toolu_g", tool_input, None, text), memo_class=None)
    assert not call.acted and call.why == "no structured result"
    # two results in one record: the structured output is of one of them, so neither uses it
    other = {"type": "tool_result", "tool_use_id": "toolu_other", "content": "x"}
    calls = savings.session_savings(_records("toolu_g", tool_input, resp, text, extra_results=[other]),
                                    memo_class=None)
    assert [c.why for c in calls if c.tool == "Grep"] == ["no structured result"]


def test_the_report_counts_grep_tokens_by_what_ctx_would_do(tmp_path, grep_content):
    import gzip
    import json
    tool_input, resp, text = grep_content
    path = tmp_path / "s.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for r in _records("toolu_g", tool_input, resp, text):
            f.write(json.dumps(r) + "\n")
    rep = savings.report({"dev": [str(path)]}, memo_class=None)
    assert rep["why_tokens"] == {"Grep: result digested": tokens.count(text)}
    assert rep["all"]["by_tool"]["Grep"]["acted_calls"] == 1
