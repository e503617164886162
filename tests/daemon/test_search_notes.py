"""What a stopped search says of how far it got (reflex/daemon/retrieval.py)."""
from reflex.daemon.retrieval import _megabytes


def test_sizes_that_round_alike_get_the_decimals_that_tell_them_apart():
    assert _megabytes(3.12, 3.14) == ("3.12", "3.14")
    assert _megabytes(3.108, 3.145) == ("3.11", "3.15")
    assert _megabytes(3.1451, 3.1458) == ("3.145", "3.146")


def test_sizes_that_differ_keep_one_decimal():
    assert _megabytes(1.2, 12.6) == ("1.2", "12.6")


def test_a_search_that_read_everything_says_so_with_one_decimal():
    assert _megabytes(3.145, 3.145) == ("3.1", "3.1")
