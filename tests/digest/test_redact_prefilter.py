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
         "AKIa", "secreT", "ghx_", "gh_", "xoxz-", "hooks_slack", "k-live_", "sk_", "eyj", ":/", "?=", "& a=", "?1=",
         # "secret" in other cases: re's IGNORECASE (the aws-secret and url-secret patterns) also
         # reads U+017F as s, U+212A as k and U+0130/U+0131 as i; U+00DF casefolds to "ss".
         "sEcReT", "SeCrEt", "\u017fecret", "\u017fECRET", "\u00dfecret", "secre\u0165", "?\u0131=", "&\u212a="]


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


# Real secrets of every kind (and case variants of the case-insensitive ones), for the fuzz below
# to embed among the seeds so that patterns match as well as miss.
SECRETS = ["AKIAIOSFODNN7EXAMPLE", "ASIA" + "Q" * 16, "ghp_" + "a" * 36, "ghs_" + "Z9" * 20, "github_pat_" + "b" * 40,
           "glpat-" + "c" * 20, "xoxb-123-456-abcdef", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXX",
           "AIza" + "d" * 35, "rk_live_" + "e" * 24, "sk-ant-" + "f" * 40, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fw",
           "postgres://u:pw@h/db", "?token=abc", "&PassWord=x", "AWS_SECRET_ACCESS_KEY=" + "w" * 40,
           "aws_SeCrEt_access_key: '" + "K" * 40 + "'", "AwsSecretAccessKey=" + "/" * 40,
           "aws_sEcReT_access_key=" + "w" * 40, "AWS_\u017fECRET_ACCESS_KEY=" + "w" * 40, "?pa\u017f\u017fword=x",
           "&api_\u212aey=x", "&\u0130\u0131=x", "?ACCESS_TOKEN=y"]


def _every_pattern(line):
    """redact_line as it was before its literal gates: every pattern searched on every line the
    prefilter lets through (the reference the gated loop must equal)."""
    if not r._PREFILTER.search(line):
        return line
    for kind, pattern, group, _literals in r._PATTERNS:
        if pattern.search(line):
            line = pattern.sub(r._sub_group(kind, group), line)
    return line


def test_literal_gates_change_nothing():
    rnd = random.Random(11)
    seen = {True: 0, False: 0}
    for text in _texts(30_000, 13):
        if rnd.random() < 0.5:
            cut = rnd.randint(0, len(text))
            text = text[:cut] + rnd.choice(SECRETS) + rnd.choice(["", " ", "x", "\"", "://", "?a=1"]) + text[cut:]
        for line in text.split("\n"):
            want = _every_pattern(line)
            assert r.redact_line(line) == want, line
            seen[want != line] += 1
    assert min(seen.values()) > 5_000          # lines redacted and lines left alone


@pytest.mark.parametrize("kind,pattern,group,literals", r._PATTERNS)
def test_every_match_holds_its_literal(kind, pattern, group, literals):
    """A gate may only skip a line the pattern cannot match: each real secret the pattern matches
    holds one of its literals (lowercased for the case-insensitive ones)."""
    matched = 0
    for s in SECRETS:
        for m in pattern.finditer(s):
            text = m.group(0).casefold() if kind in r._LOWER else m.group(0)
            assert any(lit in text for lit in literals), (kind, s)
            matched += 1
    assert matched, kind                           # the secrets exercise every pattern


def _case_mixed(text, rnd):
    """text with each letter in a random case, and some s, k and i as the non-ASCII letters re's
    IGNORECASE reads as them."""
    other = {"s": "\u017f", "k": "\u212a", "i": "\u0131"}
    out = []
    for ch in text:
        roll = rnd.random()
        if ch.lower() in other and roll < 0.1:
            out.append(other[ch.lower()])
        else:
            out.append(ch.upper() if roll < 0.55 else ch.lower())
    return "".join(out)


def test_the_prefilter_rules_out_nothing_a_pattern_matches():
    """The prefilter (and so redact_line, the export's column masks and `ctx search`'s block scan)
    lets through every line any pattern matches, whatever the case of the case-insensitive ones
    (aws_sEcReT_access_key=... used to pass unredacted)."""
    rnd = random.Random(17)
    keyed = ["aws_secret_access_key=" + "w" * 40, "AWSSecretAccessKey: '" + "Q" * 40 + "'", "?password=x",
             "&passwd=x", "?pwd=x", "&token=x", "?secret=x", "&api_key=x", "?apikey=x", "&access_token=x"]
    matched = 0
    for text in _texts(20_000, 19):
        cut = rnd.randint(0, len(text))
        text = text[:cut] + _case_mixed(rnd.choice(keyed), rnd) + text[cut:]
        for line in text.split("\n"):
            hits = [kind for kind, pattern, _g, _l in r._PATTERNS if pattern.search(line)]
            if hits:
                matched += 1
                assert r._PREFILTER.search(line) and r.may_hold_secret(line), (hits, line)
                assert r.redact_line(line) != line, line
    assert matched > 15_000
