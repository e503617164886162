"""slicer.apply() gives what the agent's own `| head/tail/grep` would have printed (checked against coreutils)."""

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reflex.digest.slicer import apply

PIPELINES = [
    "tail -20", "tail -n 5", "tail -n +3", "head -3", "head -n 7", "head",
    "grep FAIL", "grep -v PASS", "grep -i fail", "grep -E 'FAIL|ERROR'", "grep -c FAIL", "grep -n ERROR",
    "grep -F 'a.b'", "grep 'x\\|y'", "tail -50 | grep -E '(FAIL|passed)'", "grep FAIL | head -2",
]

LINE = st.sampled_from(["FAILED tests/a.py::t - x", "PASSED b", "ERROR c", "a.b", "axb", "fail lower", "x", "y",
                        "3 passed, 1 failed in 0.1s", "", "  indented ERROR"])


@pytest.mark.skipif(not shutil.which("grep") or not shutil.which("tail"), reason="coreutils needed")
@settings(max_examples=40, deadline=None)
@given(st.lists(LINE, max_size=60), st.sampled_from(PIPELINES), st.booleans())
def test_matches_coreutils(lines, pipeline, trailing_newline):
    raw = "\n".join(lines).encode() + (b"\n" if trailing_newline and lines else b"")
    expected = subprocess.run(["sh", "-c", pipeline], input=raw, capture_output=True).stdout.decode()
    got = apply(raw, pipeline)
    assert got is not None
    if not raw.endswith(b"\n") and expected and not expected.endswith("\n"):
        expected += "\n"  # we always end the view with a newline
    assert got == expected


@pytest.mark.parametrize("pipeline", ["sed -n 1,5p", "grep -A3 FAIL", "awk '{print $1}'", "tail -f", "sort",
                                      "grep FAIL file.txt", "tail -20 > out.txt", ""])
def test_unsupported_slicers_are_declined(pipeline):
    assert apply(b"a\nb\n", pipeline) is None
