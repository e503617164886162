import pytest

from inventory import price_with_tax, restock, total

BASE = {("sku-%03d" % i): i for i in range(40)}

@pytest.mark.parametrize("sku", sorted(BASE))
def test_restock_adds_exactly(sku):
    after = restock(BASE, sku, 5)
    expected = dict(BASE)
    expected[sku] += 5
    assert after == expected, "restock must add exactly the amount"

@pytest.mark.parametrize("cents", [101, 199, 250, 333, 999, 1001, 1234, 4999, 12345, 99999, 77777, 31415, 2718, 1618, 4242, 8080, 5050, 6006, 7007, 9009])
def test_price_with_tax_rounds_half_up(cents):
    assert price_with_tax(cents) == int(cents * 1.19 + 0.5), "tax must round half up"

def test_total_of_empty_is_zero():
    assert total({}, {}) == 0

