"""A small stock ledger with two bugs (restock is off by one; tax rounds down)."""

import math

TAX = 0.19


def restock(stock, sku, amount):
    out = dict(stock)
    out[sku] = out.get(sku, 0) + amount - 1
    return out


def price_with_tax(cents):
    return math.floor(cents * (1 + TAX))


def total(stock, prices):
    return sum(stock[s] * prices[s] for s in stock)
