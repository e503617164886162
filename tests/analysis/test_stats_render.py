"""The terminal view: sparklines, aligned tables, colour only on a terminal."""

import io

from reflex.analysis.stats import render


def test_sparkline_scales_to_the_largest_value():
    assert render.sparkline([8, 8, 8, 5, 0]) == "███▅▁"
    assert render.sparkline([0, 0]) == "▁▁"
    assert render.sparkline([]) == "" and render.sparkline([None, 3]) == "█"


def test_table_aligns_columns_even_with_colour():
    st = render.Style(True)
    lines = render.table(["name", "n"], [["a", st("10", "green")], ["longer", "7"]], right=(1,))
    assert [render._visible_len(ln) for ln in lines] == [len("  longer   n")] * 3
    assert lines[1].endswith("\x1b[0m") and lines[2].endswith(" 7")


def test_colour_only_on_a_tty_and_never_with_no_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert render.use_colour(Tty()) is True
    assert render.use_colour(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert render.use_colour(Tty()) is False
    assert render.Style(False)("x", "red") == "x" and render.Style(True)("x", "red") == "\x1b[31mx\x1b[0m"
