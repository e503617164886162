"""The search profile on real grep, rg and find runs: every match an item of its file, with truth from
the tool's own NUL-separated or JSON form, never from the profile's reading of the text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from blake3 import blake3

from reflex import tokens
from reflex.digest.budget import DEFAULT_BUDGETS
from reflex.digest.profiles import search
from reflex.digest.render import render
from tests.support.tool_runs import run

needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep not installed (apt-get install ripgrep)")



@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n\ndef other():\n    pass\n")
    # A path that reads as `path-N-text` twice over: a naive split of its context lines goes wrong.
    (tmp_path / "src" / "a-1-b.py").write_text("x = 1\ndef helper():\n    return 2\n")
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    return tmp_path


def items_by_group(facts) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for it in facts.items:
        out.setdefault(it.group, []).append(it.text)
    return out


def grep_truth(command: str, cwd: Path) -> list[tuple[str, int]]:
    """(path, line) of every match, from `grep -Z` (the path ends with a NUL) of the same command."""
    raw = run(command.replace("grep ", "grep -Z ", 1), cwd).decode()
    out = []
    for line in raw.splitlines():
        path, _, rest = line.partition("\0")
        num = rest.split(":", 1)[0]
        if num.isdigit() and rest[len(num)] == ":":
            out.append((path, int(num)))
    return out


def test_grep_rn_every_match_is_an_item_of_its_file(tree: Path):
    cmd = "grep -rn def src"
    raw = run(cmd, tree)
    facts = search.PROFILE.extract(raw, 0, cmd)
    assert facts.profile == "search" and facts.recognized
    truth = grep_truth(cmd, tree)
    assert len(truth) == 3
    assert sorted((it.group, int(it.text.split(":")[0][1:])) for it in facts.items) == sorted(truth)
    assert facts.counts.other == {"matches": 3, "files": 2}
    for it in facts.items:  # each span is exactly its match line
        assert raw[it.span[0]:it.span[1]].decode().startswith(f"{it.group}:")


def test_context_lines_belong_to_the_match_before_them_even_in_a_path_with_dashes(tree: Path):
    cmd = "grep -rn -C1 def src/a-1-b.py src/app.py"  # `src/a-1-b.py-1-x = 1` comes first
    raw = run(cmd, tree)
    facts = search.PROFILE.extract(raw, 0, cmd)
    assert sorted((it.group, it.text) for it in facts.items) == sorted([
        ("src/a-1-b.py", "L2: def helper():"), ("src/app.py", "L3: def main():"), ("src/app.py", "L6: def other():")])
    helper = next(it for it in facts.items if it.group == "src/a-1-b.py")
    assert raw[helper.span[0]:helper.span[1]] == b"src/a-1-b.py:2:def helper():\nsrc/a-1-b.py-3-    return 2\n"
    assert helper.body


def test_grep_without_line_numbers_and_single_file_forms(tree: Path):
    facts = search.PROFILE.extract(run("grep -r return .", tree), 0, "grep -r return .")
    assert items_by_group(facts) == {"./src/app.py": ["return os.getcwd()"], "./src/a-1-b.py": ["return 2"]}
    one = search.PROFILE.extract(run("grep -n def src/app.py", tree), 0, "grep -n def src/app.py")
    assert items_by_group(one) == {"src/app.py": ["L3: def main():", "L6: def other():"]}
    assert one.format == "line:text"


@needs_rg
def test_rg_default_and_heading_forms_match_rg_json(tree: Path):
    truth = sorted((json.loads(s)["data"]["path"]["text"], json.loads(s)["data"]["line_number"])
                   for s in run("rg --json def", tree).decode().splitlines() if '"type":"match"' in s)
    for cmd in ("rg -n def", "rg --heading -n def"):
        facts = search.PROFILE.extract(run(cmd, tree), 0, cmd)
        assert sorted((it.group, int(it.text.split(":")[0][1:])) for it in facts.items) == truth, cmd
    plain = search.PROFILE.extract(run("rg def", tree), 0, "rg def")  # piped rg prints no line numbers
    assert sorted(it.group for it in plain.items) == sorted(p for p, _ in truth)
    assert all(it.text.startswith("def ") for it in plain.items)


def test_binary_file_notice_is_an_item_of_that_file(tree: Path):
    (tree / "blob.bin").write_bytes(b"\x00\x01def\x00")
    cmd = "grep -rn def ."
    facts = search.PROFILE.extract(run(cmd, tree), 0, cmd)
    assert items_by_group(facts)["./blob.bin"] == ["binary file matches"]
    assert facts.counts.other["binary files"] == 1


def test_file_lists_and_find_are_grouped_by_directory(tree: Path):
    facts = search.PROFILE.extract(run("grep -rl def .", tree), 0, "grep -rl def .")
    assert {k: sorted(v) for k, v in items_by_group(facts).items()} == {"./src/": ["a-1-b.py", "app.py"]}
    found = search.PROFILE.extract(run("find . -name '*.py'", tree), 0, "find . -name '*.py'")
    truth = sorted(p for p in run("find . -name '*.py' -print0", tree).decode().split("\0") if p)
    assert sorted(it.group + it.text for it in found.items) == truth
    assert found.counts.other == {"paths": 2}


def test_counts_name_every_file_and_the_empty_ones_apart(tree: Path):
    cmd = "grep -rc def ."
    facts = search.PROFILE.extract(run(cmd, tree), 0, cmd)
    groups = items_by_group(facts)
    assert sorted(groups["counts"]) == ["./src/a-1-b.py: 1", "./src/app.py: 2"]
    assert groups["no match"] == ["./notes.txt"]
    assert facts.counts.other == {"matching lines": 3, "files": 2}
    assert next(iter(groups)) == "counts"


def test_a_huge_minified_line_is_clipped_with_the_address_of_the_whole_line(tree: Path):
    line = "!function(t){" + ";".join(f"var v{i}=function(){{return {i}}}" for i in range(8000)) + "}"
    (tree / "bundle.min.js").write_text(line + "\n")
    cmd = "grep -rn function ."
    raw = run(cmd, tree)
    assert len(raw) > 200_000
    facts = search.PROFILE.extract(raw, 0, cmd)
    (item,) = facts.items
    assert len(item.text) <= search.TEXT_CHARS + 10  # not copied whole into the facts
    handle = "r:" + blake3(raw).hexdigest()[:12]
    dg = render(facts, raw, density="normal", handle=handle, budget=DEFAULT_BUDGETS["normal"])
    assert dg.tokens <= 2000 and dg.tokens < tokens.count(raw.decode()) // 20
    assert f"ctx get {handle}:L1-1" in dg.text
    hint = next(h for h in dg.hints if "L1-1" in h.command)
    assert hint.span == (0, len(raw))


def test_non_utf8_output_keeps_its_spans_on_line_boundaries(tree: Path):
    (tree / "latin1.txt").write_bytes(b"caf\xe9 def\nplain def\n")
    cmd = "LC_ALL=C grep -n def latin1.txt"  # (in a UTF-8 locale grep calls the file binary)
    raw = run(cmd, tree)
    facts = search.PROFILE.extract(raw, 0, cmd)
    assert [it.text for it in facts.items] == ["L1: caf\ufffd def", "L2: plain def"]
    assert [raw[a:b] for a, b in (it.span for it in facts.items)] == [b"1:caf\xe9 def\n", b"2:plain def\n"]


def test_output_that_is_not_a_search_result_goes_to_generic(tree: Path):
    cmd = "grep -rn def . | wc -l"
    facts = search.PROFILE.extract(run(cmd, tree), 0, cmd)
    assert facts.profile == "generic" and facts.handed_over_from == "search"
    assert search.PROFILE.extract(b"", 1, "grep -rn nothing .").profile == "generic"


def test_the_command_line_decides_the_shape():
    h = search.hints_of("cd web && LC_ALL=C grep -rnC2 --include=*.js foo src | head -50")
    assert (h.tool, h.numbered, h.with_path, h.context) == ("grep", True, True, True)
    h = search.hints_of("grep -e foo -e bar file.txt")
    assert (h.with_path, h.operand) == (False, "file.txt")
    assert search.hints_of("rg -l foo").paths_only and search.hints_of("find . -type f").paths_only
    assert search.hints_of("git grep -n foo").with_path is True
    assert search.hints_of("rg -c foo").counts and search.hints_of("rg --count-matches foo").count_matches
