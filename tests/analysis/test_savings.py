"""Savings evidence (reflex.analysis.savings, `ctx replay --savings`): what the model received for
each tool result of a session and what ctx would have delivered, counted exactly."""

import collections
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys

import pytest
from blake3 import blake3
from click.testing import CliRunner

from reflex import tokens
from reflex.analysis import savings
from reflex.commands.replay_cmd import replay_cmd
from reflex.digest import build_digest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL = os.path.join(REPO, "evals", "real_sessions", "dev", "applab-nl__dmux__eef6c282b0.json.gz")
PROJECT = "/home/dev/proj"


def _limit_output():
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 22, 1 << 22))


@pytest.fixture(scope="module")
def pytest_failure(tmp_path_factory):
    """(command, output, exit code) of a real pytest run with failing tests."""
    d = tmp_path_factory.mktemp("failing")
    (d / "test_numbers.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.parametrize('n', range(12))\n"
        "def test_even(n):\n"
        "    assert n % 2 == 0, 'odd number %d' % n\n")
    command = "python -m pytest -q -p no:cacheprovider test_numbers.py"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_numbers.py"],
                       cwd=d, capture_output=True, text=True, timeout=60, preexec_fn=_limit_output)
    assert p.returncode == 1, p.stdout[-2000:]
    return command, p.stdout + p.stderr, p.returncode


def _use(tid, name, inp, *, uuid, parent=None, sidechain=False):
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "isSidechain": sidechain, "cwd": PROJECT,
            "sessionId": "s1", "message": {"role": "assistant", "model": "claude-test",
                                           "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}]}}


def _result(tid, text, *, uuid, parent=None, is_error=False, sidechain=False):
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "isSidechain": sidechain, "cwd": PROJECT,
            "sessionId": "s1", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": is_error}]}}


def _numbered(lines):
    return "".join("%6d\u2192%s\n" % (i + 1, line) for i, line in enumerate(lines))


def _synthetic(pytest_failure):
    """A session: a Read, the same Read again, an Edit of that file, a third Read, a compaction,
    a fourth Read, a failing pytest run, a Bash command writing a file, an MCP call."""
    command, output, code = pytest_failure
    app = PROJECT + "/app.py"
    before = _numbered(["def f():", "    return 1"] * 40)
    after = _numbered(["def f():", "    return 2"] * 40)
    recs, n = [], 0

    def call(name, inp, text, **kw):
        nonlocal n
        n += 1
        recs.append(_use("t%d" % n, name, inp, uuid="u%d" % n))
        recs.append(_result("t%d" % n, text, uuid="r%d" % n, parent="u%d" % n, **kw))

    call("Read", {"file_path": app}, before)
    call("Read", {"file_path": app}, before)
    call("Edit", {"file_path": app, "old_string": "return 1", "new_string": "return 2", "replace_all": True},
         "The file %s has been updated." % app)
    call("Read", {"file_path": app}, after)
    recs.append({"type": "system", "subtype": "compact_boundary", "uuid": "c1", "content": "Conversation compacted"})
    recs.append({"type": "user", "isCompactSummary": True, "uuid": "c2", "message": {
        "role": "user", "content": "This session is being continued from a previous conversation ..."}})
    call("Read", {"file_path": app}, after)
    call("Bash", {"command": command}, "Exit code %d\n%s" % (code, output), is_error=True)
    call("Bash", {"command": "echo done > notes.txt"}, "")
    call("mcp__github__get_issue", {"owner": "o", "repo": "r", "issue_number": 1},
         [{"type": "text", "text": json.dumps({"number": 1, "title": "a bug", "body": "x" * 400})}])
    return recs, (command, output, code), (before, after)


def test_synthetic_session_exact_accounting(pytest_failure):
    recs, (command, output, code), (before, after) = _synthetic(pytest_failure)
    calls = savings.session_savings(recs, memo_class=None)
    assert [c.tool for c in calls] == ["Read", "Read", "Edit", "Read", "Read", "Bash", "Bash", "mcp:github"]
    assert [c.seq for c in calls] == list(range(8))
    # received: the exact o200k count of each text the model got
    texts = [before, before, "The file %s/app.py has been updated." % PROJECT, after, after,
             "Exit code %d\n%s" % (code, output), "",
             json.dumps({"number": 1, "title": "a bug", "body": "x" * 400})]
    assert [c.received for c in calls] == [tokens.count(t) for t in texts]
    # Without a read memo, no Read is acted on; nothing but the pytest run is.
    assert [c.why for c in calls if c.tool == "Read"] == ["not handled"] * 4
    assert [c.acted for c in calls] == [False, False, False, False, False, True, False, False]
    # The pytest run: the digest of its output (the harness's `Exit code 1` line is not output),
    # with that line in front as the harness would put it, for exit code 1.
    run = calls[5]
    raw = output.encode()
    digest = build_digest(raw, family="pytest", exit_code=1, command=command,
                          handle="r:" + blake3(raw).hexdigest()[:12], density="normal", cwd=PROJECT)
    assert not digest.passthrough and "FAIL " in digest.text
    assert run.delivered == tokens.count("Exit code 1\n" + digest.text)
    assert run.delivered < run.received and run.program == "pytest" and not run.passthrough
    assert run.exit_code == 1
    assert calls[6].program == "echo" and calls[6].why == "family other not digested"
    assert calls[7].program == "mcp:github"

    total = savings.tally(calls)["total"]
    assert (total.calls, total.received, total.acted_calls, total.acted_received, total.delivered) == (
        8, sum(c.received for c in calls), 1, run.received, run.delivered)
    assert total.ratio == run.delivered / run.received


def test_read_memo_sees_reads_edits_and_compactions(pytest_failure):
    memo = savings.read_memo_class()
    if memo is None:
        pytest.skip("reflex.arc.reads is not in this tree")
    recs, _, _ = _synthetic(pytest_failure)
    reads = [c for c in savings.session_savings(recs) if c.tool == "Read"]
    # First read: delivered whole; the same content again: answered by the memo; after the
    # edit: new content, delivered whole; after the compaction the model no longer holds it.
    assert [c.acted for c in reads] == [False, True, False, False]
    assert reads[1].delivered < reads[1].received


def test_real_session_counts_every_tool_result():
    records = savings.read_records(REAL)
    names, texts, expected = {}, [], collections.Counter()
    for r in records:
        for item in (r.get("message") or {}).get("content") or ():
            if not isinstance(item, dict):
                continue
            if item.get("type") == "tool_use":
                names[item["id"]] = item["name"]
            elif item.get("type") == "tool_result":
                content = item.get("content")
                text = content if isinstance(content, str) else "\n".join(
                    c["text"] for c in content or () if isinstance(c, dict) and isinstance(c.get("text"), str))
                texts.append(text)
                expected[names[item["tool_use_id"]]] += 1
    calls = savings.session_savings(records, memo_class=None)
    assert len(calls) == len(texts) == sum(expected.values())
    assert collections.Counter(c.tool for c in calls) == expected
    assert sum(c.received for c in calls) == sum(tokens.count(t) for t in texts)
    bash = [c for c in calls if c.tool == "Bash"]
    assert len(bash) == expected["Bash"]
    build = [c for c in bash if c.program == "npm-script build"]
    assert build and all(c.acted and c.delivered < c.received for c in build)
    assert all(not c.acted for c in calls if c.tool not in ("Bash", "Grep"))  # Grep: test_savings_grep.py


def test_exit_code_as_the_harness_reported_it(pytest_failure):
    """`Exit code N` first (Claude Code 1.0.7x and later); older ones only set is_error."""
    command, output, _ = pytest_failure
    old = [_use("t1", "Bash", {"command": command}, uuid="u1"), _result("t1", output, uuid="r1", is_error=True),
           _use("t2", "Bash", {"command": command}, uuid="u2"), _result("t2", "Exit code 3\n" + output, uuid="r2"),
           _use("t3", "Bash", {"command": command}, uuid="u3"), _result("t3", output, uuid="r3")]
    assert [c.exit_code for c in savings.session_savings(old, memo_class=None)] == [None, 3, 0]


def test_program_and_tool_names():
    assert savings.program_of("git commit -m 'x'") == "git commit"
    assert savings.program_of("cd /x && python -m pytest -q tests/") == "pytest"
    assert savings.program_of("grep -rn foo src") == "grep"
    assert savings.program_of("ls -la") == "ls"
    assert savings.program_of("./scripts/check.sh --fast") == "check.sh"
    assert savings.tool_of("mcp__github__get_issue") == "mcp:github"
    assert savings.tool_of("mcp__clear-thought-server__sequentialthinking") == "mcp:clear-thought-server"
    assert savings.tool_of("Read") == "Read"


def test_subagent_reads_have_their_own_context():
    """A subagent's records (isSidechain) are its own context: chained by parentUuid to the
    subagent's first record, not to the main agent's."""
    s = savings._Session(None)
    main = s.context({"uuid": "m1"})
    a = s.context({"uuid": "a1", "parentUuid": "m1", "isSidechain": True})
    a2 = s.context({"uuid": "a2", "parentUuid": "a1", "isSidechain": True})
    b = s.context({"uuid": "b1", "parentUuid": "m1", "isSidechain": True})
    assert main == "main" and a == a2 and a != b and "main" not in (a, b)


def test_cli_groups_dev_and_heldout(tmp_path, pytest_failure):
    recs, _, _ = _synthetic(pytest_failure)
    for group in ("dev", "heldout"):
        (tmp_path / group).mkdir()
    shutil.copy(REAL, tmp_path / "dev" / os.path.basename(REAL))
    with gzip.open(tmp_path / "heldout" / "synthetic.json.gz", "wt") as f:
        json.dump(recs, f)
    out = CliRunner().invoke(replay_cmd, ["--savings", str(tmp_path / "dev"), str(tmp_path / "heldout"), "--json"])
    assert out.exit_code == 0, out.output
    rep = json.loads(out.output)
    assert list(rep["groups"]) == ["dev", "heldout"]
    dev = savings.tally(savings.session_savings(savings.read_records(REAL)))["total"]
    assert rep["groups"]["dev"]["total"]["received"] == dev.received
    assert rep["groups"]["heldout"]["total"]["calls"] == 8
    assert rep["all"]["total"]["received"] == dev.received + rep["groups"]["heldout"]["total"]["received"]
    assert rep["all"]["sessions"] == 2
    text = CliRunner().invoke(replay_cmd, ["--savings", str(tmp_path / "dev"), str(tmp_path / "heldout")])
    assert text.exit_code == 0 and "== heldout: 1 sessions" in text.output and "acts on " in text.output
    assert "pytest" in text.output and "mcp:github" in text.output
    one = CliRunner().invoke(replay_cmd, [str(tmp_path / "dev")])
    assert one.exit_code == 2 and "only with --savings" in one.output


def test_a_large_full_read_is_counted_as_its_numbered_head_and_ctx_note():
    """The memo decides on the file's text (the harness's line numbers taken off); the outline
    is counted as the head as the harness numbered it plus the note; a full re-read of the same
    file is delivered whole; with the policy off the first read is delivered whole and the
    unchanged re-read gets the pointer."""
    from reflex.arc.reads import ReadMemo
    app = PROJECT + "/big.py"
    source = [line for i in range(300) for line in ("def step_%d(value):" % i, "    return value * %d  # ..." % i, "")]
    text = _numbered(source)
    recs = [_use("t1", "Read", {"file_path": app}, uuid="u1"), _result("t1", text, uuid="r1", parent="u1"),
            _use("t2", "Read", {"file_path": app}, uuid="u2"), _result("t2", text, uuid="r2", parent="u2")]
    first, again = savings.session_savings(recs)
    assert first.why == "large read outlined" and first.delivered < first.received // 3
    head = "".join(text.splitlines(True)[:60])  # the head is at most 60 lines, all of them numbered
    assert first.delivered > tokens.count(head) // 2
    assert not again.acted and again.why == "read delivered whole"
    off = savings.session_savings(recs, memo_class=lambda: ReadMemo(outline_over=None))
    assert [c.why for c in off] == ["read delivered whole", "answered by the read memo"]
