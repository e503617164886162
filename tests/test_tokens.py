"""reflex.tokens: exact o200k counts, exact truncation, and a loud failure without the encoding."""

import os
import subprocess
import sys

import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from reflex import tokens

def _enc():
    return tiktoken.get_encoding("o200k_base")  # after conftest points TIKTOKEN_CACHE_DIR at the shared copy


def test_count_is_tiktoken_o200k():
    _ENC = _enc()
    text = "FAILED tests/test_a.py::test_x[a b] - AssertionError: assert 1 == 2\n" * 3
    assert tokens.count(text) == len(_ENC.encode(text))
    assert tokens.count("") == 0


def test_special_token_text_is_ordinary_program_output():
    text = "log line <|endoftext|> more <|im_start|>"
    assert tokens.count(text) == len(_enc().encode_ordinary(text))
    assert tokens.count(text) > 3


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300), st.integers(min_value=0, max_value=80))
def test_truncate_to_is_an_exact_prefix_within_budget(text, budget):
    cut = tokens.truncate_to(text, budget)
    assert text.startswith(cut)
    assert tokens.count(cut) <= budget
    if tokens.count(text) <= budget:
        assert cut == text


def test_truncate_to_keeps_as_much_as_fits():
    text = "alpha beta gamma delta " * 50
    cut = tokens.truncate_to(text, 10)
    assert tokens.count(cut) == 10


def test_status_reports_the_encoding():
    ok, detail = tokens.tokenizer_status()
    assert ok and "o200k_base" in detail


def test_unavailable_encoding_raises_instead_of_estimating(tmp_path):
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tmp_path),
               HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9", NO_PROXY="")
    code = (
        "from reflex import tokens\n"
        "ok, detail = tokens.tokenizer_status()\n"
        "assert not ok and 'o200k_base' in detail, detail\n"
        "try:\n    tokens.count('x')\nexcept tokens.TokenizerUnavailable as e:\n    print('raised', e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("raised")


_PIECES = st.sampled_from(["\n", "\n\n", " ", "/", "./", "abc", "Déjà", "12345", "\r\n", "  x", "é", "日本",
                           "->", "::", "'s", "\t", "!!\n/", "==== FAILURES ====", "<|endoftext|>"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=60), st.lists(st.integers(1, 40), max_size=10))
def test_stream_counter_equals_whole_count(pieces, cuts):
    raw = "".join(pieces).encode("utf-8")
    counter = tokens.StreamCounter()
    at = 0
    for c in cuts:  # chunk boundaries anywhere, even inside a UTF-8 sequence
        counter.feed(raw[at : at + c])
        at += c
    counter.feed(raw[at:])
    assert counter.finish() == tokens.count(raw.decode("utf-8", errors="replace"))


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, min_size=2, max_size=60))
def test_safe_cuts_add_up(pieces):
    text = "".join(pieces)
    for i in range(1, len(text)):
        if tokens.is_safe_cut(text, i):
            assert tokens.count(text[:i]) + tokens.count(text[i:]) == tokens.count(text), (text[:i], text[i:])


def test_no_tokenizer_means_a_loud_footer_never_a_silent_passthrough(paths, daemon, tmp_path, monkeypatch):
    """Offline with no cached encoding: the agent sees its output AND why there is no digest."""
    import subprocess
    import sys
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")   # no download either
    daemon.start()
    code = "for i in range(400): print('line %d of a long test log' % i)"
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "run", "--", "python3 -c \"%s\"" % code],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0
    assert "line 399 of a long test log" in p.stdout, "the raw output is never lost"
    footer = p.stdout.strip().splitlines()[-1]
    assert "NO DIGEST" in footer and "tokenizer" in footer and "ctx doctor" in footer, footer
