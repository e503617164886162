"""The listing profile on real ls and tree runs: every name an item, kinds and counts checked against
the filesystem (lstat) and tree's own JSON report, never against the profile's reading of the text."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from reflex.digest.profiles import listing
from tests.support.tool_runs import run

needs_tree = pytest.mark.skipif(shutil.which("tree") is None, reason="tree not installed (apt-get install tree)")



@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "main.py").write_text("print(1)\n" * 2000)
    (tmp_path / "src" / "deep" / "x.txt").write_text("x")
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# hi\n")
    (tmp_path / "with space.txt").write_text("")
    (tmp_path / ".hidden").write_text("")
    os.symlink("README.md", tmp_path / "link.md")
    return tmp_path


def kinds_on_disk(d: Path, hidden: bool = True) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"dirs": set(), "files": set(), "links": set()}
    for p in d.iterdir():
        if not hidden and p.name.startswith("."):
            continue
        kind = "links" if p.is_symlink() else "dirs" if p.is_dir() else "files"
        out[kind].add(p.name)
    return out


def test_ls_la_lists_every_name_under_its_kind_with_counts(tree: Path):
    raw = run("ls -la", tree)
    facts = listing.PROFILE.extract(raw, 0, "ls -la")
    assert facts.profile == "listing" and facts.format == "long"
    want = kinds_on_disk(tree)
    got: dict[str, set[str]] = {"dirs": set(), "files": set(), "links": set()}
    for it in facts.items:
        name = it.text.split(" -> ")[0].rstrip("/") if it.group != "files" else it.text.rsplit(" ", 1)[0]
        got[it.group].add(name)
    assert got == want  # `.` and `..` are not entries; a name with a space is whole
    assert facts.counts.other == {k: len(v) for k, v in want.items()}
    assert [it.group for it in facts.items] == sorted((it.group for it in facts.items),
                                                      key=["dirs", "files", "links"].index)
    assert "README.md 5" in {it.text for it in facts.items}
    assert any(it.text == "link.md -> README.md" for it in facts.items)
    assert facts.notes == [next(s for s in raw.decode().splitlines() if s.startswith("total "))]


def test_several_sections_group_names_by_directory(tree: Path):
    raw = run("ls -laR src", tree)
    facts = listing.PROFILE.extract(raw, 0, "ls -laR src")
    groups: dict[str, list[str]] = {}
    for it in facts.items:
        groups.setdefault(it.group, []).append(it.text)
    assert groups == {"src": ["deep/", "main.py 18K"], "src/deep": ["x.txt 1"]}  # 18000 bytes: compact
    two = listing.PROFILE.extract(run("ls -F src docs .", tree), 0, "ls -F src docs .")
    assert {it.group for it in two.items} == {"src", "."}  # docs/ is empty: a heading with no entry


def test_columns_and_plain_names(tree: Path):
    raw = run("ls -C", tree)
    assert b"  " in raw.strip()  # several names a line
    facts = listing.PROFILE.extract(raw, 0, "ls -C")
    names = sorted(p.name for p in tree.iterdir() if not p.name.startswith("."))
    assert sorted(it.text for it in facts.items) == names
    assert facts.counts.other == {"names": len(names)}
    f = listing.PROFILE.extract(run("ls -F", tree), 0, "ls -F")
    want = kinds_on_disk(tree, hidden=False)
    suffix = {"dirs": "/", "links": "@", "files": ""}
    assert sorted((it.group, it.text) for it in f.items) == sorted(
        (kind, name + suffix[kind]) for kind, names in want.items() for name in names)
    assert f.counts.other == {k: len(v) for k, v in want.items()}


@needs_tree
def test_tree_groups_names_by_their_directory_and_states_trees_counts(tree: Path):
    raw = run("tree", tree)
    facts = listing.PROFILE.extract(raw, 0, "tree")
    doc = json.loads(run("tree -J", tree))
    report = next(d for d in doc if d["type"] == "report")
    assert facts.counts.other == {"directories": report["directories"], "files": report["files"]}
    want: set[tuple[str, str]] = set()

    def walk(node: dict, parent: str) -> None:
        for child in node.get("contents", []):
            want.add((parent + "/", child["name"]))
            walk(child, parent + "/" + child["name"])

    walk(doc[0], ".")
    got = {(it.group, it.text.split(" -> ")[0].rstrip("/")) for it in facts.items}
    assert got == want
    texts = {it.text for it in facts.items}
    assert "src/" in texts and "deep/" in texts and "docs" in texts  # an empty directory looks like a file


def test_errors_are_items_and_unknown_output_goes_to_generic(tree: Path):
    facts = listing.PROFILE.extract(run("ls -la nope src", tree), 2, "ls -la nope src")
    errors = [it for it in facts.items if it.severity == "error"]
    assert len(errors) == 1 and "nope" in errors[0].text
    other = listing.PROFILE.extract(b"some words\nthat are not a listing\n", 0, "")
    assert other.profile == "generic" and other.handed_over_from == "listing"
