"""Class 3: the safety decision depends on the tool call only, and is the same daemon-up and
daemon-down for every payload.

Daemon-down is local_decision.decide, exactly what the shim runs when no daemon answers;
daemon-up is hook.deliver against a real daemon on a real socket (a call that fell back
instead of reaching the daemon fails the test, so the comparison cannot pass vacuously).

CASES is the table of the shapes that broke it (extend it); the hypothesis test explores
the rest at CI size; evals/bench_invariance.py runs the same strategy on 100,000 payloads.
"""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings

from reflex.shim import hook
from reflex.shim import fallback as local_decision
from reflex.harness.claude import payload as payload_mod

from tests.support.payloads import huge_unrelated, outcome, payloads

CI_EXAMPLES = int(os.environ.get("CTX_INVARIANCE_EXAMPLES", "150"))


def _call(tool="Bash", tool_input=None, **fields):
    obj = {"session_id": "sess-inv", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "permission_mode": "default",
           "hook_event_name": "PreToolUse", "tool_name": tool,
           "tool_input": tool_input if tool_input is not None else {"command": "cat .env"},
           "tool_use_id": "toolu_inv"}
    for k, v in fields.items():
        if v is _DROP:
            obj.pop(k)
        else:
            obj[k] = v
    return json.dumps(obj).encode()


_DROP = object()
DEEP = b"[" * 50_000 + b"]" * 50_000
NINE_MIB = b"a" * (9 << 20)

# name: (payload bytes, the decision both sides must give).  Most are a `cat .env` whose
# surroundings are wrong in one way; the controls show "large" or "odd" alone is no deny.
CASES = {
    "session_id missing": (_call(session_id=_DROP), "deny"),
    "session_id an object": (_call(session_id={"a": 1}), "deny"),
    "session_id too long for the model": (_call(session_id="s" * 600), "deny"),
    "cwd a number": (_call(cwd=5), "deny"),
    "cwd missing": (_call(cwd=_DROP), "deny"),
    "cwd relative": (_call(cwd="sub/dir"), "deny"),
    "permission_mode NaN": (_call(permission_mode=float("nan")), "deny"),
    "tool_use_id a list": (_call(tool_use_id=[1, 2]), "deny"),
    "50,000-deep array in tool_input": (
        _call(tool_input={"command": "cat .env", "x": "@"}).replace(b'"@"', DEEP), "deny"),
    "50,000-deep array at the top": (_call(extra="@").replace(b'"@"', DEEP), "deny"),
    "invalid UTF-8 in the description": (
        _call(tool_input={"command": "cat .env", "description": "@"}).replace(b'"@"', b'"\xff\xfe"'), "deny"),
    "lone surrogate in another field": (_call(tool_input={"command": "cat .env", "description": "\ud800"}), "deny"),
    "trailing garbage": (_call() + b"}{", "deny"),
    "9 MiB unrelated field after the call": (huge_unrelated(_call(), before=False), "deny"),
    "9 MiB description before the command": (
        _call(tool_input={"description": "@", "command": "cat .env"}).replace(b'"@"', b'"' + NINE_MIB + b'"'),
        "deny"),
    "9 MiB content written to .env": (
        _call("Write", {"file_path": ".env", "content": "@"}).replace(b'"@"', b'"' + NINE_MIB + b'"'), "deny"),
    "control: 9 MiB content written to notes.md": (
        _call("Write", {"file_path": "/tmp/notes.md", "content": "@"}).replace(b'"@"', b'"' + NINE_MIB + b'"'),
        "not deny"),
    "control: a rewrite whose other field holds a lone surrogate": (
        _call(tool_input={"command": "pytest -q", "description": "\udfff"}), "not deny"),
    "control: a deep array around `ls`": (
        _call(tool_input={"command": "ls", "x": "@"}).replace(b'"@"', DEEP), "not deny"),
}


@pytest.fixture(scope="module")
def module_daemon(tmp_path_factory):
    """One real daemon for the whole table (its own CTX_HOME; every call names its paths)."""
    from reflex import paths as paths_mod

    from ..conftest import DaemonProc, _kill_strays
    env = dict(os.environ, CTX_HOME=str(tmp_path_factory.mktemp("inv") / "ctxhome"))
    paths = paths_mod.resolve(env)
    d = DaemonProc(paths)
    d.start(extra_env={"CTX_HOME": env["CTX_HOME"]})
    try:
        yield paths
    finally:
        d.kill9()
        _kill_strays(paths)


@pytest.fixture
def up_and_down(module_daemon, monkeypatch):
    """-> compare(data, truncated): both decisions, asserting the daemon really answered."""
    paths = module_daemon
    # A loaded CI machine must not turn "the daemon answered" into "the shim fell back".
    monkeypatch.setattr(hook, "REPLY_TIMEOUT", 30.0)

    def fallbacks():
        try:
            with open(paths.log) as f:
                return f.read().count("hook fallback")
        except OSError:
            return 0

    def compare(data, truncated=False):
        data, truncated = data[:payload_mod.MAX_PAYLOAD], truncated or len(data) > payload_mod.MAX_PAYLOAD
        down = local_decision.decide("claude", data, truncated, hook.local_env(paths))[0]
        before = fallbacks()
        up = hook.deliver(paths, "claude", data, truncated)[0]
        assert fallbacks() == before, "the daemon did not answer; see %s" % paths.log
        return outcome(up), outcome(down)
    return compare


@pytest.mark.parametrize("name", sorted(CASES))
def test_decision_depends_on_the_call_not_its_surroundings(up_and_down, name):
    data, expected = CASES[name]
    up, down = up_and_down(data)
    assert down[0] == expected, down
    assert up == down


def test_same_decision_daemon_up_and_down(up_and_down):
    @settings(max_examples=CI_EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(payloads(cwds=("/tmp", os.getcwd())))
    def check(case):
        data, truncated = case
        up, down = up_and_down(data, truncated)
        assert up == down, data[:300]
    check()


def test_pathological_payloads_are_decided_not_crashed_on():
    """A deep bomb and a payload that spends the parser's token budget before the command:
    decided (denied: the command is a secret read, or cannot be seen), never an exception.
    Their cost is measured by evals/bench_invariance.py."""
    bombs = {
        "2 MiB deep, not closed": b'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":'
                                  b'{"command":"cat .env","x":' + b"[" * (1 << 20) + b"]" * (1 << 20),
        "budget spent before the command": b'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":'
                                           b'{"x":[' + b"1," * (payload_mod.TOKEN_BUDGET + 10) + b'1],'
                                           b'"command":"ls"} trailing',
        "cut before the command": b'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":'
                                  b'{"description":"' + b"a" * payload_mod.MAX_PAYLOAD,
    }
    for name, bomb in bombs.items():
        data, truncated = bomb[:payload_mod.MAX_PAYLOAD], len(bomb) > payload_mod.MAX_PAYLOAD
        reading = payload_mod.read(data, truncated)
        assert not reading.complete, name
        out, err, tag = local_decision.decide("claude", data, truncated)
        assert tag == "deny" and outcome(out)[0] == "deny", (name, err)


def test_the_daemon_decides_with_the_hooks_environment(up_and_down, monkeypatch, tmp_path):
    """The daemon was started by another process, elsewhere: it must use the hook's TMPDIR
    (and HOME, project dir, working directory, config), which the shim sends along."""
    data = _call("Write", {"file_path": "/scratch-of-this-hook/out.txt", "content": "x"}, cwd=str(tmp_path))
    monkeypatch.setenv("TMPDIR", "/scratch-of-this-hook")
    up, down = up_and_down(data)
    assert down == ("not deny",) and up == down
    monkeypatch.delenv("TMPDIR")
    up, down = up_and_down(data)
    assert down[0] == "deny" and up == down   # the control: outside the root and no longer a temp dir


def test_the_iterative_parser_reads_json_as_json_does():
    """What the daemon records for a deep payload, and what the safety plane reads from a cut
    one, comes from payload._parse: on whole JSON it must agree with json.loads (NaN aside,
    which is unequal to itself), and on any prefix it must return, not raise."""
    from hypothesis import strategies as st

    values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                          | st.text(max_size=8), lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=15)

    @settings(max_examples=150, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(values, st.booleans(), st.integers(0, 10_000))
    def check(value, indent, cut):
        text = json.dumps(value, indent=2 if indent else None)
        parsed, complete, open_keys, error = payload_mod._parse(text)
        assert complete and error is None and parsed == json.loads(text)
        payload_mod._parse(text[:cut % (len(text) + 1)])
    check()
