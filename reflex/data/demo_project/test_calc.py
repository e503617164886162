import pytest

from calc import add, clamp, mean, median, percent


@pytest.mark.parametrize("a", range(-3, 5))
@pytest.mark.parametrize("b", [0, 1, 7])
def test_add(a, b):
    assert add(a, b) == a + b


@pytest.mark.parametrize("values,expected", [([2, 2], 2), ([1, 2, 3], 2), ([5], 5), ([0, 10], 5),
                                             ([1, 2], 1.5), ([1, 2, 3, 4], 2.5), ([1, 1, 2], 4 / 3)])
def test_mean(values, expected):
    assert mean(values) == pytest.approx(expected)


@pytest.mark.parametrize("values,expected", [([3, 1, 2], 2), ([4, 1, 3, 2], 2.5), ([7], 7), ([1, 1, 1, 9], 1),
                                             ([10, 20], 15), ([5, 3, 9, 1, 7], 5)])
def test_median(values, expected):
    assert median(values) == expected


@pytest.mark.parametrize("x", [-5, -1, 0, 3, 9, 10, 11, 50])
def test_clamp(x):
    assert clamp(x, 0, 10) == min(max(x, 0), 10)


@pytest.mark.parametrize("part,whole,expected", [(1, 4, 25.0), (1, 3, 33.3), (2, 3, 66.7), (0, 9, 0.0),
                                                 (9, 9, 100.0)])
def test_percent(part, whole, expected):
    assert percent(part, whole) == expected
