"""install: pip / npm / apt-get output against the truth of the tools' structured forms.

The corpus (evals/corpus/install/, made by evals/gen_install_corpus.py) is real installs from PyPI,
the npm registry and Debian; truth comes from pip's --report JSON, npm's --json result and the
exit codes, never from this parser.  One test runs a real pip here (no network: --no-index).
"""

import glob
import os
import re
import resource
import subprocess
import sys

import pytest
from blake3 import blake3

from reflex import tokens
from reflex.digest import DENSITIES
from reflex.digest.profiles import install
from reflex.digest.render import render
from tests.support.corpus import load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = sorted(glob.glob(os.path.join(ROOT, "evals", "corpus", "install", "*", "meta.json")))


def norm(dist):
    """A distribution as name-version with the name normalized (pip prints `pygments`, its report
    says `Pygments`)."""
    name, _, ver = dist.rpartition("-")
    return re.sub(r"[-_.]+", "-", name).lower() + "-" + ver



def digest(raw, exit_code, command, density="normal"):
    facts = install.PROFILE.extract(raw, exit_code, command)
    return render(facts, raw, density=density, budget=None, handle="r:" + blake3(raw).hexdigest()[:12])


def case_id(p):
    return os.path.basename(os.path.dirname(p))


def test_corpus_is_there():
    assert len(CASES) >= 8


@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_facts_match_truth(meta_path):
    meta, raw = load(meta_path)
    truth = meta["truth"]
    facts = install.PROFILE.extract(raw, meta["exit_code"], meta["command"])
    assert facts.profile == "install" and facts.recognized
    installed = sorted(norm(it.text) for it in facts.items if it.group == "Successfully installed")
    assert installed == sorted(norm(d) for d in truth["installed"])
    assert facts.counts.other.get("installed", 0) == len(truth["installed"])
    assert facts.counts.other.get("packages added") == truth["added"]
    # A failed install names what failed in an error the tool printed; a good one has none.
    assert bool(facts.build_errors) == bool(truth["errors"])
    for wanted in truth["errors"]:
        name = wanted.lstrip("./")
        assert any(name in b.message or name in raw[b.span[0]:b.span[1]].decode("utf-8", "replace")
                   for b in facts.build_errors), (wanted, facts.build_errors)
    if truth.get("npm_error_code"):
        assert truth["npm_error_code"] in [b.where for b in facts.build_errors]
    deprecated = sorted(it.text.split(":")[0] for it in facts.items if it.group == "deprecated")
    assert deprecated == truth["warnings"]


@pytest.mark.parametrize("meta_path", CASES, ids=case_id)
def test_digest_is_census_first_and_never_larger(meta_path):
    meta, raw = load(meta_path)
    truth = meta["truth"]
    for density in DENSITIES:
        dg = digest(raw, meta["exit_code"], meta["command"], density)
        assert dg.tokens == tokens.count(dg.text) <= dg.budget
        assert dg.tokens <= dg.raw_tokens
        if dg.passthrough:
            continue  # a small output is shown whole
        # Every density names every installed package (lean by the entry's first word).
        shown = dg.text.lower()
        for pkg in truth["installed"]:
            assert norm(pkg) in shown, (density, pkg)
        for wanted in truth["errors"]:
            assert wanted.lstrip("./") in dg.text or "ERROR" in dg.text
        # Progress is counted, never shown line by line.
        assert "Downloading " not in dg.text and "━━" not in dg.text
        for h in dg.hints:
            assert blake3(raw[h.span[0]:h.span[1]]).hexdigest()[:8] == h.b3


def _small_files():
    resource.setrlimit(resource.RLIMIT_FSIZE, (50 * 1024 * 1024, 50 * 1024 * 1024))


def test_a_real_pip_that_cannot_find_a_package(tmp_path):
    """Real pip, no network (--no-index): its own ERROR lines become the census."""
    env = {**os.environ, "PIP_CACHE_DIR": str(tmp_path / "cache"), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "pip", "install", "--no-index", "--target", str(tmp_path / "t"),
           "ctx-no-such-package-xyzzy"]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
                          preexec_fn=_small_files, check=False)
    assert proc.returncode == 1
    facts = install.PROFILE.extract(proc.stdout, proc.returncode, "pip install ctx-no-such-package-xyzzy")
    assert facts.recognized and facts.format == "pip"
    messages = [b.message for b in facts.build_errors]
    assert "No matching distribution found for ctx-no-such-package-xyzzy" in messages


def test_a_pip_subprocess_error_printed_twice_is_one_error_with_its_cause():
    meta, raw = load(os.path.join(ROOT, "evals", "corpus", "install", "pip_build_failure", "meta.json"))
    facts = install.PROFILE.extract(raw, 1, meta["command"])
    (be,) = facts.build_errors
    assert be.message.startswith("Getting requirements to build wheel did not run successfully.")
    assert "RuntimeError: libfoo-dev is required" in be.message
    assert raw[be.span[0]:be.span[1]].count(b"error: subprocess-exited-with-error") == 2


def test_bad_bytes_and_a_huge_line_do_not_break_it():
    raw = (b"Collecting \xff\xfebad\n" + b"  Downloading " + b"x" * 200_000 + b".whl\n"
           + b"ERROR: No matching distribution found for \xc3\x28broken\n")
    dg = digest(raw, 1, "pip install broken")
    assert dg.tokens <= dg.budget and dg.tokens < dg.raw_tokens
    assert "No matching distribution found for" in dg.text
    assert dg.facts.counts.other["downloaded"] == 1


def test_output_of_another_tool_is_not_claimed():
    raw = b"==== 1 failed, 2 passed in 0.1s ====\n"
    facts = install.PROFILE.extract(raw, 1, "pip install x")
    assert not facts.recognized and facts.handed_over_from == "install"
