"""reflex.address: handles, addresses, hints, line spans and UTF-8 boundaries (stdlib-only)."""

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from reflex import address as A

H = "r:7f3a2c9d01ab"


def test_parse_three_forms():
    assert A.parse_address(H) == A.Address(H, "whole")
    assert A.parse_address(H + ":L120-188") == A.Address(H, "lines", 120, 188)
    got = A.parse_address(H + "#tests/test_a.py::test_x[a b]")
    assert got.kind == "test" and got.test_id == "tests/test_a.py::test_x[a b]"


def test_rejects_what_is_not_an_address():
    for bad in ["r:7F3A2C9D01AB", "r:7f3a2c9d01a", "r:7f3a2c9d01ab:L0-3", "r:7f3a2c9d01ab:L5-4",
                "x" + H, H + ":L1-2x", "r:7f3a2c9d01abc", ""]:
        assert A.parse_address(bad) is None, bad


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="\n\r\x00"), min_size=1, max_size=60))
def test_hint_round_trip_for_any_test_id(test_id):
    addr = A.format_test(H, test_id)
    line = "  " + A.format_hint(addr, "1a2b3c4d5e")
    hint = A.parse_hint(line)
    assert hint is not None and hint.b3 == "1a2b3c4d"
    assert hint.address.kind == "test"
    assert hint.address.test_id == test_id


@given(st.integers(1, 10**6), st.integers(0, 10**6))
def test_line_hint_round_trip(a, extra):
    hint = A.parse_hint(A.format_hint(A.format_lines(H, a, a + extra), "deadbeef"))
    assert hint.address == A.Address(H, "lines", a, a + extra)
    assert str(hint.address) == f"{H}:L{a}-{a + extra}"


def test_plain_address_needs_no_quoting():
    assert A.format_hint(H + ":L3-9", "00112233") == f"ctx get {H}:L3-9 b3=00112233"


def _lines(raw):
    return raw.split(b"\n")[:-1] if raw.endswith(b"\n") else (raw.split(b"\n") if raw else [])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=12), st.booleans(), st.data())
def test_line_span_covers_exactly_the_lines(parts, trailing, data):
    raw = "\n".join(parts).encode() + (b"\n" if trailing and parts else b"")
    n = A.count_lines(raw)
    assert n == len(_lines(raw))
    assert len(A.line_starts(raw)) == n
    if n == 0:
        return
    a = data.draw(st.integers(1, n))
    b = data.draw(st.integers(a, n + 3))
    start, end = A.line_span(raw, a, b)
    expected = b"".join(line + b"\n" for line in _lines(raw)[a - 1 : b])
    if not raw.endswith(b"\n") and b >= n:
        expected = expected[:-1]
    assert raw[start:end] == expected
    assert A.is_line_aligned(raw, (start, end)) or start == end
    assert A.lines_of_span(A.line_starts(raw), (start, end), len(raw))[0] == a


def test_line_span_clamps_past_the_end_and_rejects_bad_ranges():
    raw = b"a\nb\n"
    assert A.line_span(raw, 2, 99) == (2, 4)
    assert A.line_span(raw, 5, 6) == (4, 4)
    for a, b in [(0, 1), (3, 2)]:
        try:
            A.line_span(raw, a, b)
        except ValueError:
            pass
        else:
            raise AssertionError("accepted a bad range")


@given(st.text(max_size=20), st.integers(0, 80))
def test_utf8_boundary_helpers(text, i):
    raw = text.encode("utf-8")
    i = min(i, len(raw))
    lo, hi = A.floor_utf8_boundary(raw, i), A.ceil_utf8_boundary(raw, i)
    assert lo <= i <= hi
    assert A.is_utf8_boundary(raw, lo) and A.is_utf8_boundary(raw, hi)
    raw[:lo].decode("utf-8")
    raw[hi:].decode("utf-8")


def test_fast_path_modules_import_only_the_standard_library():
    code = (
        "import sys\n"
        "import reflex.address, reflex.digest.redact, reflex.digest.neutralize, reflex.safety.pipesplit\n"
        "bad = [m for m in ('pydantic', 'tiktoken', 'blake3', 'click', 'sqlite_utils', 'tree_sitter') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""
