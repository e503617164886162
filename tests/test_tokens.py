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
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tmp_path), CTX_TOKENIZER_FILE=str(tmp_path / "missing"),
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
    monkeypatch.setenv("CTX_TOKENIZER_FILE", str(tmp_path / "no-bundled-file"))
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")   # no download either
    daemon.start()
    code = "for i in range(400): print('line %d of a long test log' % i)"
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "run", "--", "python3 -c \"%s\"" % code],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0
    assert "line 399 of a long test log" in p.stdout, "the raw output is never lost"
    footer = p.stdout.strip().splitlines()[-1]
    assert "NO DIGEST" in footer and "tokenizer" in footer and "ctx doctor" in footer, footer


def _offline_env(tmp_path, **extra):
    """No TIKTOKEN_CACHE_DIR, tiktoken's default cache empty, no network: a fresh offline machine."""
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "CTX_TOKENIZER_FILE")}
    empty = tmp_path / "data-gym-cache"
    empty.mkdir(exist_ok=True)
    env.update(DATA_GYM_CACHE_DIR=str(empty), HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
               NO_PROXY="", **extra)
    return env


def test_the_bundled_file_is_tiktokens_o200k_base():
    """Issue 30 item 2: the encoding built from the shipped file is tiktoken's, rank for rank."""
    ref = _enc()
    ours = tokens._bundled_encoding()[0]
    assert ours._pat_str == ref._pat_str and ours._special_tokens == ref._special_tokens
    assert ours._mergeable_ranks == ref._mergeable_ranks
    text = "def f(x):\n    return x ** 2  # Déjà vu 日本語 <|endoftext|>\n" * 3
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


def test_counts_offline_with_no_tiktoken_cache(tmp_path):
    """Issue 30 item 2: a fresh offline machine, TIKTOKEN_CACHE_DIR unset, counts exactly."""
    code = ("from reflex import tokens\n"
            "ok, detail = tokens.tokenizer_status()\n"
            "print(ok, tokens.count('hello world'), detail)\n")
    r = subprocess.run([sys.executable, "-c", code], env=_offline_env(tmp_path), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("True 2 ") and "sha256 verified" in r.stdout, r.stdout
    assert not os.listdir(tmp_path / "data-gym-cache"), "nothing copied into tiktoken's cache"


def test_an_altered_bundled_file_is_refused_not_used(tmp_path):
    data = bytearray(open(tokens.BUNDLED_FILE, "rb").read())
    data[100:104] = b"AAAA"
    altered = tmp_path / "o200k_base.tiktoken"
    altered.write_bytes(bytes(data))
    code = "from reflex import tokens\nprint(tokens.tokenizer_status())\n"
    r = subprocess.run([sys.executable, "-c", code], env=_offline_env(tmp_path, CTX_TOKENIZER_FILE=str(altered)),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("(False,") and "not the pinned" in r.stdout, r.stdout


def test_a_daemon_with_no_cache_dir_and_no_network_digests(paths, daemon, tmp_path, monkeypatch):
    """Issue 30 item 2: the README's first command on an offline machine with no TIKTOKEN_CACHE_DIR."""
    for k, v in _offline_env(tmp_path).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    daemon.start()
    code = "for i in range(400): print('line %d of a long test log' % i)"
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "run", "--", "python3 -c \"%s\"" % code],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "NO DIGEST" not in p.stdout and "line 399" not in p.stdout, p.stdout[-500:]
    assert "ctx get r:" in p.stdout, p.stdout[-500:]


def test_doctor_reports_the_daemons_tokenizer_not_its_own(paths, daemon, tmp_path, monkeypatch):
    """Issue 30 item 2: a daemon started without the tokenizer; doctor (which has one) says so."""
    import json
    broken = dict(TIKTOKEN_CACHE_DIR=str(tmp_path / "empty-cache"), CTX_TOKENIZER_FILE=str(tmp_path / "missing"),
                  HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9", NO_PROXY="")
    daemon.start(extra_env=broken)
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "doctor", "--json"], capture_output=True, text=True,
                       timeout=120)
    check = {c["name"]: c for c in json.loads(p.stdout)}["tokenizer"]
    assert not check["ok"] and "in the daemon (pid %d)" % daemon.proc.pid in check["detail"], check
    assert p.returncode != 0
    daemon.stop()
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "doctor", "--json"], capture_output=True, text=True,
                       timeout=120)
    check = {c["name"]: c for c in json.loads(p.stdout)}["tokenizer"]
    assert check["ok"] and "doctor's process" in check["detail"], check
