"""Claude Code's Grep result -> the search digest in Grep's shape (reflex.harness.claude.grep_result).

The results are real: rg run over real files, put in the shape the real CLI (2.1.332) gives
PostToolUse (recorded; tests/e2e/test_grep_digest.py holds the CLI to it).
"""

import re
import shutil
import subprocess

import pytest

from reflex import address, blobs, tokens
from reflex.digest.profiles.search import hints_of
from reflex.harness.claude import grep_result

pytestmark = pytest.mark.skipif(shutil.which("rg") is None, reason="needs ripgrep")

LONG = "x" * 250  # a minified-looking line: the census clips it and points at the whole line


def _tree(root, files=20, lines=6, long_every=3, long=LONG):
    for i in range(files):
        body = []
        for j in range(lines):
            tail = long if long_every and (i + j) % long_every == 0 else "value"
            body.append("needle_%d_%d = %s  # line %d of module %d\n" % (i, j, tail, j, i))
            body.append("other = %d\n" % j)
        (root / ("module_%02d.py" % i)).write_text("".join(body))
    return root


def _rg(root, *args):
    p = subprocess.run(["rg", "--no-heading", "--color", "never", "--sort", "path", *args], cwd=root,
                       capture_output=True, text=True)
    assert p.returncode in (0, 1), p.stderr
    return p.stdout.rstrip("\n")


def _content(root, pattern, *flags, **extra):
    """A content-mode result as the CLI gives it (rg's lines, no trailing newline)."""
    text = _rg(root, "-n", *flags, "-e", pattern)
    n = text.count("\n") + 1 if text else 0
    return {"mode": "content", "numFiles": 0, "filenames": [], "content": text, "numLines": n, "totalLines": n,
            **extra}


def test_large_content_is_replaced_by_a_smaller_digest_grouped_by_file_with_long_lines_clipped(tmp_path):
    minified = "y" * 2000
    root = _tree(tmp_path, files=6, lines=4, long_every=4, long=minified)
    resp = _content(root, "needle")
    g = grep_result.digest({"pattern": "needle", "output_mode": "content", "-n": True}, resp, cwd=str(root))
    assert g is not None
    assert g.raw == resp["content"].encode()
    assert g.handle == blobs.handle_of(blobs.blob_id(g.raw))
    assert g.command == "rg -n -e needle"
    out = g.output
    # Grep's content shape: the CLI ignores anything else
    assert set(out) == {"mode", "numFiles", "filenames", "content", "numLines", "totalLines"}
    assert out["mode"] == "content" and out["filenames"] == [] and out["totalLines"] == resp["totalLines"]
    assert out["content"].startswith("[ctx] search") and g.handle in out["content"]
    assert "24 matches in 6 files" in out["content"]  # the census states the counts
    assert out["numLines"] == out["content"].count("\n") + 1
    assert g.digest.tokens < g.received_tokens == tokens.count(resp["content"])
    # grouped by file; a long line is clipped, with the address of the whole line
    assert "module_00.py (4):" in out["content"] and minified not in out["content"]
    hints = re.findall(r"ctx get (r:[0-9a-f]{12}):L(\d+)-(\d+) b3=([0-9a-f]{8})", out["content"])
    assert len(hints) == 6
    from blake3 import blake3
    for handle, a, b, b3 in hints:
        assert handle == g.handle
        start, end = address.line_span(g.raw, int(a), int(b))
        assert minified.encode() in g.raw[start:end] and blake3(g.raw[start:end]).hexdigest()[:8] == b3


def test_many_matches_are_named_by_file_and_line_under_one_address(tmp_path):
    root = _tree(tmp_path)
    resp = _content(root, "needle")
    g = grep_result.digest({"pattern": "needle", "output_mode": "content"}, resp)
    assert g is not None and "120 matches in 20 files" in g.output["content"]
    assert g.digest.tokens < g.received_tokens
    text = g.output["content"]
    for i in range(20):  # every match's file:line, even when the lines themselves do not fit
        assert "module_%02d.py (6): L1 L3 L5 L7 L9 L11" % i in text, text[:600]
    a, b = re.search(r"ctx get r:[0-9a-f]{12}:L(\d+)-(\d+)", text).groups()
    assert (int(a), int(b)) == (1, 120)


def test_small_results_pass_untouched(tmp_path):
    root = _tree(tmp_path, files=2, lines=2, long_every=0)
    resp = _content(root, "needle")
    assert resp["numLines"] == 4
    assert grep_result.digest({"pattern": "needle", "output_mode": "content"}, resp) is None
    empty = {"mode": "content", "numFiles": 0, "filenames": [], "content": "", "numLines": 0, "totalLines": 0}
    assert grep_result.digest({"pattern": "zzz", "output_mode": "content"}, empty) is None
    names = {"mode": "files_with_matches", "filenames": ["a.py", "b.py"], "numFiles": 2, "totalFiles": 2}
    assert grep_result.digest({"pattern": "needle"}, names) is None


def test_not_a_grep_result_is_left_alone():
    assert grep_result.digest({"pattern": "x"}, "a string") is None
    assert grep_result.digest({"pattern": "x"}, {"mode": "other", "content": "x\n" * 5000}) is None
    assert grep_result.digest({"pattern": "x"}, {"mode": "content", "content": 42}) is None
    assert grep_result.digest({"pattern": "x"}, {"mode": "files_with_matches", "filenames": [1, 2]}) is None


def test_a_long_file_list_becomes_a_census_by_directory_a_short_one_does_not(tmp_path):
    for d in range(12):
        sub = tmp_path / ("package_%02d" % d) / "src" / "implementation"
        sub.mkdir(parents=True)
        for i in range(25):
            (sub / ("a_module_with_a_descriptive_name_%03d.py" % i)).write_text("needle\n")
    names = _rg(tmp_path, "--files-with-matches", "-e", "needle").split("\n")
    resp = {"mode": "files_with_matches", "filenames": names, "numFiles": len(names), "totalFiles": len(names)}
    g = grep_result.digest({"pattern": "needle"}, resp)
    assert g is not None and g.command == "rg --files-with-matches -e needle"
    assert g.raw == "\n".join(names).encode()
    # answered as text: the content shape replaces a file list too (seen on the real CLI)
    assert g.output["mode"] == "content" and g.output["filenames"] == [] and "totalLines" not in g.output
    assert "300 files" in g.output["content"]
    assert "package_00/src/implementation/" in g.output["content"]
    assert g.digest.tokens < g.received_tokens
    short = dict(resp, filenames=names[:30], numFiles=30, totalFiles=30)
    assert tokens.count("\n".join(short["filenames"])) < grep_result.FILE_LIST_MIN_TOKENS
    assert grep_result.digest({"pattern": "needle"}, short) is None


def test_counts_keep_the_total_the_cli_prints_under_them(tmp_path):
    for i in range(400):
        (tmp_path / ("file_with_a_long_descriptive_name_%04d.txt" % i)).write_text("needle\n" * (i % 7 + 1))
    text = _rg(tmp_path, "--count", "-e", "needle")
    resp = {"mode": "count", "numFiles": 400, "filenames": [], "content": text, "numMatches": 1597}
    g = grep_result.digest({"pattern": "needle", "output_mode": "count"}, resp)
    assert g is not None and g.command == "rg --count -e needle"
    assert g.output["mode"] == "count" and g.output["numMatches"] == 1597 and g.output["numFiles"] == 400
    assert "400 files" in g.output["content"]


def test_pagination_is_kept_so_the_cli_still_says_the_result_was_limited(tmp_path):
    root = _tree(tmp_path)
    resp = _content(root, "needle", appliedLimit=250)
    g = grep_result.digest({"pattern": "needle", "output_mode": "content"}, resp)
    assert g is not None and g.output["appliedLimit"] == 250
    assert grep_result.received_text(resp, "content").endswith("[Showing results with pagination = limit: 250]")


def test_past_the_cli_limit_the_digest_is_no_larger_than_the_preview_the_model_would_get(tmp_path):
    root = _tree(tmp_path, files=60, lines=8, long_every=1)
    assert len(LONG) * 480 > grep_result.RESULT_CHARS
    resp = _content(root, "needle")
    assert len(resp["content"]) > grep_result.RESULT_CHARS
    seen = grep_result.received_text(resp, "content")
    assert seen.startswith("<persisted-output>") and len(seen) < grep_result.PREVIEW_CHARS + 400
    g = grep_result.digest({"pattern": "needle", "output_mode": "content"}, resp)
    assert g is not None and g.digest.tokens < g.received_tokens == tokens.count(seen)
    assert "480 matches in 60 files" in g.output["content"]  # a census of all of it, not a 2 KB head
    # a recorded session says what the model received: that is the baseline then (under the
    # smallest budget a digest can have, the result is left as it is)
    assert grep_result.digest({"pattern": "needle", "output_mode": "content"}, resp, received_tokens=120) is None
    wider = grep_result.digest({"pattern": "needle", "output_mode": "content"}, resp, received_tokens=5000)
    assert wider is not None and wider.received_tokens == 5000 and wider.digest.tokens < 5000


@pytest.mark.parametrize("tool_input, mode, expected", [
    ({"pattern": "a"}, "files_with_matches", "rg --files-with-matches -e a"),
    ({"pattern": "a", "-n": False}, "content", "rg -e a"),
    ({"pattern": "-x b", "-i": True, "-C": 2, "glob": "*.py", "path": "src dir"}, "content",
     "rg -n -i -C 2 --glob '*.py' -e '-x b' 'src dir'"),
    ({"pattern": "a", "-A": 1, "-B": 3, "type": "py"}, "content", "rg -n -A 1 -B 3 --type py -e a"),
    ({"pattern": "a.*\\nb", "multiline": True}, "content", "rg -n -U --multiline-dotall -e 'a.*\\nb'"),
    ({"pattern": "a", "-C": 2, "glob": "*.md"}, "count", "rg --count --glob '*.md' -e a"),
])
def test_the_rg_command_line_gives_the_profile_the_right_hints(tool_input, mode, expected):
    command = grep_result.rg_command(tool_input, mode)
    assert command == expected
    hints = hints_of(command)
    assert hints.tool == "rg"
    assert hints.paths_only == (mode == "files_with_matches")
    assert hints.counts == (mode == "count")
    assert hints.numbered == (mode == "content" and tool_input.get("-n") is not False)
    assert hints.context == (mode == "content" and any(k in tool_input for k in ("-A", "-B", "-C")))
    assert hints.operand == tool_input.get("path")
