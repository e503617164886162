import pytest

from calc import add, clamp, mean


def test_add():
    assert add(2, 3) == 5


@pytest.mark.parametrize("values,expected", [([1, 2], 1.5), ([1, 2, 3, 4], 2.5), ([2, 2], 2)])
def test_mean(values, expected):
    assert mean(values) == expected


def test_clamp():
    assert clamp(15, 0, 10) == 10
    assert clamp(-1, 0, 10) == 0
