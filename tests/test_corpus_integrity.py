"""Integrity of evals/corpus/: every case is complete, its truth is self-consistent, and usable.

The corpus (real tool outputs plus ground truth from the tools' structured reporters) is what the
digest engine's census tests and the RTK benchmark run against; a silently broken case would make
those numbers meaningless. These checks need no tool installed: they only read the stored files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "evals" / "corpus"
FIXTURES = ROOT / "evals" / "fixtures"

REQUIRED_META = ("family", "case", "command", "cwd", "exit_code", "tool", "tool_version", "truth",
                 "truth_source")
REQUIRED_TRUTH = ("failed", "failed_count", "passed_count", "error_count", "skipped_count", "errors",
                  "diagnostics", "collection_errors")
DIAG_KEYS = {"file", "line", "col", "code", "message", "severity"}
SEVERITIES = {"error", "warning", "note"}
TEST_FAMILIES = {"pytest", "go", "cargo", "vitest", "jest", "generic", "nodetest", "exunit", "rspec", "minitest",
                 "phpunit", "junit", "gotestsum", "prove", "ctest", "maven", "buntest", "denotest", "playwright",
                 "gradle"}
# generic/make and make_k are cc/make and cc/make_k now: no generic case is left.
FAMILIES = (TEST_FAMILIES - {"generic"}) | {"tsc", "eslint", "ruff", "mypy", "esbuild", "webpack", "vite", "flake8",
                                            "pylint", "shellcheck", "pyright", "biome",
                                            "cc", "cargobuild", "gobuild", "tscbuild"}
ANSI = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")
# Directories the fixtures create when run; they are gitignored and not part of the size budget.
GENERATED_DIRS = {"node_modules", "target", "_build", "build", "classes", ".pytest_cache", ".mypy_cache",
                  ".ruff_cache", "__pycache__"}

CASE_DIRS = sorted(p.parent for p in CORPUS.glob("*/*/meta.json"))


def load_meta(case_dir: Path) -> dict:
    return json.loads((case_dir / "meta.json").read_text(encoding="utf-8"))


def leaf_name(family: str, test_id: str) -> str:
    """The part of a truth id that the tool prints in its own human output."""
    if family == "pytest":
        return test_id.split("::")[-1]
    if family in ("go", "gotestsum"):
        return test_id.split(" ", 1)[1]
    if family in ("vitest", "jest", "nodetest", "buntest", "denotest", "gradle"):
        return test_id.split(" > ")[-1]
    if family in ("generic", "exunit"):  # ExUnit: "Module test name"
        return test_id.split(" ", 1)[1]
    if family == "prove":  # t/file.t: description
        return test_id.split(": ", 1)[1]
    if family in ("minitest", "maven"):  # Class#test_name, package.Class#method{params}[n]
        return test_id.split("#", 1)[1]
    if family == "junit":  # class#method [display name]
        return test_id.split("#", 1)[1].split(" [", 1)[-1].rstrip("]")
    if family == "phpunit":  # Class::method[ with data set "x"]
        return test_id.split("::", 1)[1].split(" with data set ")[0]
    return test_id


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_corpus", ROOT / "evals" / "gen_corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_corpus_covers_every_family():
    assert CASE_DIRS, "evals/corpus is empty: run python evals/gen_corpus.py"
    assert {d.parent.name for d in CASE_DIRS} == FAMILIES


def test_corpus_matches_the_generator_case_list():
    gen = load_generator()
    declared = {c.key for c in gen.CASES}
    stored = {f"{d.parent.name}/{d.name}" for d in CASE_DIRS}
    assert stored == declared
    assert set(gen.REQUIRED_META) == set(REQUIRED_META)


@pytest.mark.parametrize("case_dir", CASE_DIRS, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_case_is_complete_and_consistent(case_dir: Path):
    meta = load_meta(case_dir)
    missing = [k for k in REQUIRED_META if k not in meta]
    assert not missing, missing
    assert (meta["family"], meta["case"]) == (case_dir.parent.name, case_dir.name)
    assert isinstance(meta["exit_code"], int)
    assert meta["tool_version"].strip() and meta["truth_source"].strip()
    assert not Path(meta["cwd"]).is_absolute() and (ROOT / meta["cwd"]).is_dir()

    raw = (case_dir / "output.txt").read_bytes()
    assert raw, "output.txt is empty"
    assert meta["output_bytes"] == len(raw)
    assert meta["output_sha256"] == hashlib.sha256(raw).hexdigest(), "output.txt changed after generation"

    truth = meta["truth"]
    assert all(k in truth for k in REQUIRED_TRUTH), [k for k in REQUIRED_TRUTH if k not in truth]
    for key in ("failed_count", "passed_count", "error_count", "skipped_count"):
        assert isinstance(truth[key], int) and truth[key] >= 0, key
    assert truth["failed"] == sorted(set(truth["failed"]))
    assert truth["failed_count"] == len(truth["failed"])
    assert truth["errors"] == sorted(set(truth["errors"]))
    error_diags = [d for d in truth["diagnostics"] if d["severity"] == "error"]
    assert truth["error_count"] == len(truth["errors"]) + len(error_diags)
    for d in truth["diagnostics"]:
        assert DIAG_KEYS <= set(d), d
        assert d["severity"] in SEVERITIES and d["message"]
    if meta["family"] == "pytest":
        assert set(truth["collection_errors"]) <= set(truth["errors"])
    # The exit code and the structured verdict must agree: this is what makes a case usable to
    # catch digests that call a failing run green (or the other way round).
    assert (meta["exit_code"] == 0) == (truth["failed_count"] == 0 and truth["error_count"] == 0)


@pytest.mark.parametrize("case_dir", CASE_DIRS, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_truth_is_visible_in_the_raw_output(case_dir: Path):
    """A census can only be complete if the raw bytes name what the truth lists."""
    meta = load_meta(case_dir)
    raw = ANSI.sub(b"", (case_dir / "output.txt").read_bytes()).decode("utf-8", "replace")
    if meta["family"] in TEST_FAMILIES and "display_ids" in meta["truth"]:
        # ids as this output prints them (phpunit --testdox), mapped from the structured report
        unseen = [t for t in meta["truth"]["display_ids"] if t.split(" > ", 1)[-1] not in raw]
        assert not unseen, unseen
    elif meta["family"] in TEST_FAMILIES:
        unseen = [t for t in meta["truth"]["failed"] if leaf_name(meta["family"], t) not in raw]
        assert not unseen, unseen
    unseen_codes = [d["code"] for d in meta["truth"]["diagnostics"] if d["code"] and d["code"] not in raw]
    assert not unseen_codes, unseen_codes


@pytest.mark.parametrize("case_dir", CASE_DIRS, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_rtk_side_is_complete(case_dir: Path):
    rtk_meta_path = case_dir / "rtk_meta.json"
    if not rtk_meta_path.exists():
        pytest.skip("corpus generated with --no-rtk")
    rtk = json.loads(rtk_meta_path.read_text(encoding="utf-8"))
    assert rtk["rtk_version"].startswith("rtk ")
    if rtk.get("rtk_command"):
        # RTK keeps an environment prefix in front of its rewrite (`FORCE_COLOR=1 rtk bun test`)
        assert re.sub(r"^(?:[A-Za-z_]\w*=\S*\s+)*", "", rtk["rtk_command"]).startswith("rtk ")
        assert isinstance(rtk["exit_code"], int)
        assert (case_dir / "rtk.txt").exists()
    if "pipe" in rtk:
        assert (case_dir / "rtk_pipe.txt").exists()
    if "recall" in rtk:
        assert (case_dir / "rtk_recall.txt").exists()


def test_sizes_stay_small():
    corpus_bytes = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    assert corpus_bytes < 5 * 1024 * 1024, corpus_bytes
    fixture_bytes = sum(p.stat().st_size for p in FIXTURES.rglob("*")
                        if p.is_file() and not GENERATED_DIRS & set(p.relative_to(FIXTURES).parts))
    assert fixture_bytes < 2 * 1024 * 1024, fixture_bytes


def test_no_stored_case_is_ignored_by_git():
    """A case whose directory a .gitignore pattern matches (a case named `build`) is on this disk and
    in no clone: the generator's case list and the corpus would disagree only on a fresh checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    files = [str(p.relative_to(ROOT)) for p in CORPUS.rglob("*") if p.is_file()]
    out = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(files),
                         capture_output=True, text=True, check=False)
    assert out.stdout.split() == [], out.stdout[:2000]
