import pytest

from scoring import lookup, score


@pytest.mark.parametrize("name,expected", [("alpha", 6), ("beta", 10), ("gamma", 16)])
def test_score(name, expected):
    got = score(name)
    assert got == expected, "score doubles the value: score(%s) gave %d" % (name, got)


def test_lookup_missing_is_zero():
    assert lookup("delta") == 0, "unknown names count as zero"


def test_lookup_known():
    assert lookup("alpha") == 3
