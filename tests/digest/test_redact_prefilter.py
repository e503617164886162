"""The prefilter that rules a clean text out before any secret pattern runs: its fast form
(may_hold_secret, used on whole JSON documents by the team export) says what the regex says, and
neither can rule out a text a pattern would redact."""

import random

import pytest

from reflex.digest import redact as r

# Every literal and shape, and near misses of each (one character off).
SEEDS = ["AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA", "AIza", "secret", "SECRET", "Secret", "ghp_", "gho_",
         "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxa-", "xoxp-", "xoxo-", "xoxs-", "xoxr-",
         "hooks.slack", "k_live_", "sk-", "eyJ", "://", "?a=", "&token=", "?_=",
         "AKIa", "secreT", "ghx_", "gh_", "xoxz-", "hooks_slack", "k-live_", "sk_", "eyj", ":/", "?=", "& a=", "?1="]


def _texts(n, seed):
    rnd = random.Random(seed)
    alphabet = "AKISBCDROzsecrtSECRTghpousr_it-bapxl.kJy:/?&=Ab 1\n\"{}"
    for _ in range(n):
        parts = [rnd.choice(SEEDS) if rnd.random() < 0.3 else
                 "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 6))) for _ in range(rnd.randint(0, 4))]
        yield "".join(parts)


def test_may_hold_secret_says_what_the_prefilter_says():
    seen = {True: 0, False: 0}
    for text in _texts(50_000, 7):
        want = r._PREFILTER.search(text) is not None
        assert r.may_hold_secret(text) is want, text
        seen[want] += 1
    assert min(seen.values()) > 5_000          # both answers were exercised


@pytest.mark.parametrize("text", [
    "AKIAIOSFODNN7EXAMPLE", "ghp_" + "a" * 36, "github_pat_" + "b" * 40, "glpat-" + "c" * 20,
    "xoxb-123-456-abc", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "AIza" + "d" * 35, "sk_live_" + "e" * 24,
    "sk-" + "f" * 40, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "postgres://u:pw@h/db", "curl 'h/x?token=abc'",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
])
def test_nothing_a_pattern_redacts_is_ruled_out(text):
    assert r.redact(text) != text                 # a real secret shape ...
    assert r.may_hold_secret(text) and r._PREFILTER.search(text)   # ... always reaches the patterns
