"""Whether a Bash command writes files (reflex.analysis.stats.timeline._writes): a /dev/null
redirect on its own no longer costs a parse, and the answer is the one the parse gives, on every
command of the real sessions (evals/real_sessions) and the signature corpus."""

import pytest

from reflex.analysis.stats import timeline as T
from tests.support import real_sessions
from tests.support.signature_labels import load_corpus


def _reference(command, cwd):
    """_writes as it was: a parse for every command _MAY_WRITE matches."""
    if not command or not T._MAY_WRITE.search(command):
        return False, False
    reverts = bool(T.REVERT.search(command))
    if reverts or T._GIT_WRITE.search(command):
        return True, reverts
    sig = T.signature_of(command, cwd)
    writes = any(w.path not in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-")
                 for s in (sig,) + tuple(sig.segments) for w in s.writes)
    return writes or reverts, reverts


def _real_commands():
    return real_sessions.bash_commands() + [(r["command"], r["cwd"]) for r in load_corpus()]


CRAFTED = [
    ("pytest -q 2>/dev/null", (False, False)),
    ("ls nope &>/dev/null; echo $?", (False, False)),
    ("make >> /dev/null 2>&1", (False, False)),
    ("cmd 2>/dev/null > out.txt", (True, False)),        # another redirect: parsed, a write
    ("cmd > /dev/null.log", (True, False)),              # not /dev/null
    ("cmd 2>/dev/null/x", (True, False)),
    ("cmd 2>/dev/null | tee log.txt", (True, False)),    # a writer word
    ("git stash 2>/dev/null", (True, False)),            # a git word: decided without the parse
    ("git checkout -- a.py 2>/dev/null", (True, True)),
]


@pytest.mark.parametrize("command,want", CRAFTED)
def test_crafted(command, want):
    assert T._writes(command, "/tmp") == want == _reference(command, "/tmp")


def test_the_same_answers_as_the_parse_on_real_commands(monkeypatch):
    commands = _real_commands()
    assert len(commands) > 1000
    want = [_reference(c, w) for c, w in commands]
    parses = []
    real_parse = T.signature_of
    monkeypatch.setattr(T, "signature_of", lambda c, w: parses.append(c) or real_parse(c, w))
    got = [T._writes(c, w) for c, w in commands]
    assert got == want
    before = sum(1 for c, w in commands if T._MAY_WRITE.search(c) and not T._GIT_WRITE.search(c))
    # the /dev/null-only commands are no longer parsed: over a hundred of them here
    assert before - len(parses) > 100, (before, len(parses))
    assert any(g[0] for g in got) and any(not g[0] and T._MAY_WRITE.search(c) for g, (c, _w) in zip(got, commands))
