"""Carriage returns and backspaces read as a terminal shows them, without hiding a failure (issue 31.5)."""

import pytest

from reflex.digest import build_digest
from reflex.digest.text import Output

HIDDEN_FAILURE = b"FAILED tests/test_a.py::test_real - boom\r      \rall good\n"


@pytest.mark.parametrize("family", ["other", "pytest"])
def test_a_failure_drawn_over_stays_in_the_digest(family):
    dg = build_digest(HIDDEN_FAILURE, family=family, handle="r:000000000001", exit_code=1, command="pytest")
    assert "FAILED tests/test_a.py::test_real - boom" in dg.text, dg.text


@pytest.mark.parametrize("raw,shown", [
    # progress bars and spinners render as the terminal's last frame
    (b"[###       ] 30%\r[######    ] 60%\r[##########] 100%\n", "[##########] 100%"),
    (b"Downloading 10%\r\x1b[KDownloading 100% done\n", "Downloading 100% done"),
    (b"  * test saves a cart [L#31]\r  * test saves a cart (0.00ms) [L#31]\n", "  * test saves a cart (0.00ms) [L#31]"),
    # a shorter redraw leaves the tail of the longer line visible, as on screen
    (b"abcdef\rXY\n", "XYcdef"),
    # overstrike (man pages): each letter drawn twice
    (b"N\bNA\bAM\bME\bE\n", "NAME"),
    (b"done\r\n", "done"),
    (b"\x1b[32mok\x1b[0m\r\n", "ok"),
])
def test_redraws_render_as_on_screen(raw, shown):
    assert Output(raw).lines == [shown]


@pytest.mark.parametrize("raw,failure", [
    (HIDDEN_FAILURE, "FAILED tests/test_a.py::test_real - boom"),
    (b"error: cannot build\x1b[2K\rok\n", "error: cannot build"),            # erased, then overwritten
    (b"error: boom" + b"\b" * 11 + b" " * 11 + b"\n", "error: boom"),         # backspaced over with spaces
    (b"Traceback (most recent call last)\r\x1b[K\n", "Traceback (most recent call last)"),
    (b"test_x ... FAILED\rrunning test_y\rall 10 tests done\n", "test_x ... FAILED"),
])
def test_a_drawn_over_failure_is_kept_first_on_its_line(raw, failure):
    (line,) = Output(raw).lines
    assert line.startswith(failure), line


def test_lines_stay_aligned_with_their_bytes():
    raw = b"one\n" + HIDDEN_FAILURE + b"three\r\n"
    out = Output(raw)
    assert len(out.lines) == 3 and out.lines[2] == "three"
    start, end = out.span(1, 2)
    assert raw[start:end] == HIDDEN_FAILURE


def test_a_drawn_over_piece_that_reports_no_failure_is_not_kept():
    assert Output(b"collected 0 errors\rdone\n").lines == ["doneected 0 errors"]
