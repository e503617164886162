"""The git profile on real git output: the corpus (evals/corpus/git/, truth from git's machine forms,
written by evals/gen_git_corpus.py) and repositories made here with the real git binary.

The census must name everything the truth lists: every path of a status under its state, every
file of a diff with its line counts, every commit's hash and subject, every hook that failed and
the failures and diagnostics of the tools the hooks ran, every pushed or rejected ref, every
conflict; and the digest at the default budget is never larger than the raw output.
"""

from __future__ import annotations

import glob
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from blake3 import blake3

from reflex import tokens
from reflex.digest.facts import Facts
from reflex.digest.profiles import git

REPO = Path(__file__).resolve().parents[2]
CASES = sorted(glob.glob(str(REPO / "evals" / "corpus" / "git" / "*" / "meta.json")))


def _load(meta_path: str) -> tuple[dict, bytes]:
    meta = json.loads(Path(meta_path).read_text())
    return meta, (Path(meta_path).parent / "output.txt").read_bytes()


def _digest(facts: Facts, raw: bytes, density: str = "normal"):
    render = importlib.import_module("reflex.digest.render")
    return render.render(facts, raw, density=density, budget=None, handle="r:" + blake3(raw).hexdigest()[:12])


def census_names(truth: dict) -> list[str]:
    """What the census must name, as git prints it, from a case's truth."""
    g = truth.get("git", {})
    names = [p["path"].split(" -> ")[-1] for p in g.get("paths", [])]
    names += [f["path"].split(" -> ")[-1] for f in g.get("files", [])]
    for c in g.get("commits", []):
        names += [c["hash"][:7], c["subject"]]
    names += [r["ref"] for r in g.get("refs", [])]
    names += g.get("conflicts", []) + g.get("blocked", [])
    names += [hid for hid, code in g.get("hooks", {}).items() if code]
    names += truth["failed"]
    return names


def _unquoted(text: str) -> str:
    if not text.startswith('"'):
        return text
    end = text.index('"', 1) if '"' in text[1:] else len(text)
    inner = text[1:end].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode("utf-8")
    return inner + text[end + 1:]


def coverage(facts: Facts, truth: dict) -> list[str]:
    """Truth entries the Facts do not hold in the right place (empty: 100% census)."""
    g = truth.get("git", {})
    missing = []
    # git quotes a path C-style where its form needs it (short status: one with a space)
    items = [(it.group, _unquoted(it.text), it.severity) for it in facts.items]
    for p in g.get("paths", []):
        path = _unquoted(p["path"])
        if not any(grp == p["group"] and (text == path or text.startswith(path + " (")) for grp, text, _ in items):
            missing.append(f"path {p['group']}: {path}")
    for f in g.get("files", []):
        # log -p names several commits' files: each line then starts with its commit's short hash
        texts = [text for grp, text, _ in items if grp == "files"
                 and (text.startswith(f["path"]) or text.split(" ", 1)[-1].startswith(f["path"]))]
        if not texts:
            missing.append(f"file {f['path']}")
        elif f["added"] is not None and not any(f"+{f['added']} -{f['deleted']}" in t or
                                                 f"| {f['added'] + f['deleted']}" in t for t in texts):
            missing.append(f"file stats {f['path']}")
    for key, n in g.get("stat", {}).items():
        if facts.counts.other.get(key) != n:
            missing.append(f"count {key}")
    for c in g.get("commits", []):
        if not any(grp == "commits" and c["hash"][:7] in text and c["subject"] in text for grp, text, _ in items):
            missing.append(f"commit {c['hash'][:7]} {c['subject']}")
    for r in g.get("refs", []):
        want_error = r["status"] == "rejected"
        if not any(grp == "pushed" and text.startswith(f"{r['ref']} -> {r['ref']}") and (sev == "error") == want_error
                   for grp, text, sev in items):
            missing.append(f"ref {r['ref']} {r['status']}")
    for path in g.get("conflicts", []):
        if not any(grp in ("conflicts", "conflicted") and text.startswith(path) for grp, text, _ in items):
            missing.append(f"conflict {path}")
    for path in g.get("blocked", []):
        if not any(grp == "error paths" and text == path for grp, text, _ in items):
            missing.append(f"blocked {path}")
    failed_hooks = {hid for hid, code in g.get("hooks", {}).items() if code}
    named = {b.where for b in facts.build_errors if b.label == "HOOK FAILED"}
    missing += [f"hook {h}" for h in sorted(failed_hooks - named)]
    if g.get("hooks") is not None and facts.counts.other.get("hooks passed", 0) != len(g["hooks"]) - len(failed_hooks):
        missing.append("hooks passed count")
    ids = [f.id for f in facts.failures]
    missing += [f"test {t}" for t in truth["failed"] if t not in ids]
    for d in truth["diagnostics"]:
        if not any((x.file, x.line, x.col, x.code) == (d["file"], d["line"], d["col"], d["code"]) for x in facts.diagnostics):
            missing.append(f"diagnostic {d['file']}:{d['line']} {d['code']}")
    return missing


@pytest.mark.skipif(not CASES, reason="evals/corpus/git not generated")
@pytest.mark.parametrize("meta_path", CASES, ids=lambda p: Path(p).parent.name)
def test_census_holds_every_truth_entry(meta_path: str) -> None:
    meta, raw = _load(meta_path)
    facts = git.PROFILE.extract(raw, meta["exit_code"], meta["command"])
    assert facts.profile == "git" and facts.recognized
    assert coverage(facts, meta["truth"]) == []
    assert len(facts.failures) == meta["truth"]["failed_count"]
    assert len(facts.diagnostics) == len(meta["truth"]["diagnostics"])
    if meta["exit_code"] != 0:
        # A failing command says why: a failed hook, a git error, a failing test or a rejected ref.
        assert facts.build_errors or facts.failures or any(it.severity == "error" for it in facts.items)


@pytest.mark.skipif(not CASES, reason="evals/corpus/git not generated")
@pytest.mark.parametrize("meta_path", CASES, ids=lambda p: Path(p).parent.name)
def test_digest_names_everything_and_is_never_larger(meta_path: str) -> None:
    meta, raw = _load(meta_path)
    facts = git.PROFILE.extract(raw, meta["exit_code"], meta["command"])
    dg = _digest(facts, raw)
    assert dg.tokens <= tokens.count(raw.decode("utf-8", "replace"))
    missing = [n for n in census_names(meta["truth"]) if n not in dg.text]
    assert missing == []


def test_short_hashes_and_statuses_need_the_command() -> None:
    """`XY path` and hash-led lines are git's only when the command says status / log."""
    raw = b" M src/a.py\n?? notes.txt\n"
    assert git.PROFILE.extract(raw, 0, "git status -s").items
    other = git.PROFILE.extract(raw, 0, "cat list.txt")
    assert other.profile == "generic" and other.handed_over_from == "git"
    assert git.subcommands("git -C sub -c a=b status -s && git --no-pager log --oneline") == {"status", "log"}


def test_output_in_no_shape_is_handed_to_generic() -> None:
    facts = git.PROFILE.extract(b"Lorem ipsum\ndolor sit amet\n", 0, "git frobnicate")
    assert facts.profile == "generic" and facts.handed_over_from == "git"


def test_a_huge_line_is_content_not_a_shape() -> None:
    """A 3 MB line is never matched against a pattern (nor makes the parse slow): it is kept as
    an item with an address, and the digest stays small."""
    huge = b"[main abc1234] " + b"x" * 3_000_000 + b"\n"
    facts = git.PROFILE.extract(huge + b" 1 file changed, 1 insertion(+)\n", 0, "git commit -m x")
    assert [it.group for it in facts.items] == ["output"]
    assert facts.items[0].span == (0, len(huge))
    assert facts.counts.other["files changed"] == 1


# -- real git, made here --------------------------------------------------------------------------------------

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def _git(repo: Path, *args: str) -> tuple[bytes, int]:
    env = {"PATH": os.environ["PATH"], "HOME": str(repo.parent), "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8",
           "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    p = subprocess.run(["git", *args], cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    return p.stdout, p.returncode


@needs_git
def test_a_patch_inside_a_diff_stays_in_its_hunk(tmp_path: Path) -> None:
    """A .patch file's own `diff --git`, `+++ b/…` and `@@` lines are content of the outer hunk
    (`+diff --git …`, `++++ b/…`): read by the hunk's line counts, they neither start files, rename
    this one nor go uncounted, so the census has one file with git's own numstat counts."""
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    inner = "".join(f"diff --git a/f{k}.py b/f{k}.py\n--- a/f{k}.py\n+++ b/f{k}.py\n@@ -1 +1 @@\n-a\n+b\n"
                    for k in range(2))
    (repo / "fix.patch").write_text("old\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    (repo / "fix.patch").write_text(inner)
    raw, rc = _git(repo, "diff")
    assert rc == 0 and raw.count(b"diff --git") == 3
    numstat = _git(repo, "diff", "--numstat")[0].decode().split()
    facts = git.PROFILE.extract(raw, 0, "git diff")
    assert [it.text.split(" ")[0] for it in facts.items] == ["fix.patch"]
    assert f"+{numstat[0]} -{numstat[1]}" in facts.items[0].text
    assert facts.items[0].span == (0, len(raw)) and facts.items[0].body


@needs_git
def test_a_plain_hook_running_pytest_is_a_failing_run(tmp_path: Path) -> None:
    """`.git/hooks/pre-commit` running a real pytest that fails: the commit is refused, and the
    digest's failures are pytest's, from pytest's own output inside git's."""
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "test_x.py").write_text("def test_ok():\n    assert True\n\n\ndef test_bad():\n    assert 1 == 2\n")
    hook = repo / ".git" / "hooks" / "pre-commit"
    python = Path(sys.executable)
    hook.write_text(f"#!/bin/sh\nexec {python} -m pytest -q -p no:cacheprovider\n")
    hook.chmod(0o755)
    _git(repo, "add", "-A")
    raw, rc = _git(repo, "commit", "-m", "add tests")
    assert rc == 1
    facts = git.PROFILE.extract(raw, rc, "git commit -m 'add tests'")
    assert [f.id for f in facts.failures] == ["test_x.py::test_bad"]
    assert facts.counts.failed == 1 and facts.counts.passed == 1
    span = facts.failures[0].span
    assert span is not None and b"assert 1 == 2" in raw[span[0]:span[1]]
