"""The session fold: determinism (same prefix, same state), incremental == from scratch, the
event vocabulary, intents and the policy epoch."""

import glob
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reflex.arc.events import KINDS, Event, ctx_inner, ctx_retrieval
from reflex.arc.fold import SessionReflex, fold, step, ReflexState
from reflex.arc.intents import EXPECTS, Expect, Intervention, declare
from reflex.arc.policy import DEFAULT_PATH, Policy, PolicyError, default_policy, load_policy, parse_policy
from reflex.harness.claude.transcript import read_transcript

CORPUS = sorted(glob.glob("/work/shared/corpus/transcripts/*.jsonl"))
H = "r:00000000abcd"


def _seed_events():
    ev = [Event("session_start", seq=0, model="claude-haiku-4-5")]
    n = 1

    def add(kind, **kw):
        nonlocal n
        ev.append(Event(kind, seq=n, session_id="s", cwd="/p", **kw))
        n += 1

    for i, cmd in enumerate(["pytest tests/", "pytest tests/ | tail -50", "pytest --tb=long tests/"]):
        add("command", tool_use_id="t%d" % i, command=cmd, decision="rewrite")
        add("run", command=cmd, handle=H, density="normal", hints=(H + "#tests/t.py::test_a",),
            failed_ids=("tests/t.py::test_a",), failed_count=2, omitted=1)
        add("result", tool_use_id="t%d" % i, exit_code=1)
    add("command", tool_use_id="d1", command="cat .env", decision="deny", decision_detail="secret-read")
    add("command", tool_use_id="d2", command="cat .env", decision="deny", decision_detail="secret-read")
    add("edit", paths=("a.py",))
    add("compaction")
    add("command", tool_use_id="x", command="bash -c 'pytest tests/'", decision="rewrite")
    return ev


@pytest.fixture(scope="module")
def corpus_events():
    return [read_transcript(p) for p in CORPUS]


def test_fold_is_deterministic_over_every_prefix():
    events = _seed_events()
    for k in range(len(events) + 1):
        a = fold(events[:k], Policy(), reflexes=True).to_json()
        b = fold(events[:k], Policy(), reflexes=True).to_json()
        assert a == b


def test_incremental_session_reflex_equals_fold_at_every_prefix():
    events = _seed_events()
    sr = SessionReflex(Policy(), reflexes=True)
    for k, e in enumerate(events, 1):
        sr.apply(e)
        assert sr.to_json() == fold(events[:k], Policy(), reflexes=True).to_json()


def test_rebuild_after_restart_gives_the_same_state_and_answers(corpus_events):
    """A daemon that dies mid-session and re-folds the ledger prefix answers the same."""
    for events in corpus_events + [_seed_events()]:
        live = SessionReflex(Policy(), reflexes=True)
        half = len(events) // 2
        for e in events[:half]:
            live.apply(e)
        rebuilt = SessionReflex(Policy(), reflexes=True).extend(events[:half])
        assert rebuilt.to_json() == live.to_json()
        for e in events[half:]:
            assert [f.to_json() for f in live.apply(e)] == [f.to_json() for f in rebuilt.apply(e)]
        assert rebuilt.to_json() == live.to_json()
        assert live.state.errors == 0, live.state.last_error


def test_state_json_is_canonical_text():
    s = fold(_seed_events(), Policy(), reflexes=True)
    text = s.to_json()
    assert text.startswith("{") and ", " not in text[:200]
    assert '"fired":{"affordance":1,"friction":1,"starvation":1}' in text
    assert json.loads(text) == s.as_dict()
    assert s.tier == "small" and s.model == "claude-haiku-4-5"


def test_step_advances_a_state_in_place():
    state = ReflexState("", True)
    out = []
    for e in _seed_events():
        out.extend(step(state, e, Policy()))
    assert state.to_json() == fold(_seed_events(), Policy(), reflexes=True).to_json()
    assert [f.detector for f in out].count("starvation") == 1


def test_events_of_another_session_are_ignored():
    sr = SessionReflex(Policy(), "mine", reflexes=True)
    assert sr.apply(Event("edit", seq=1, session_id="other")) == []
    assert sr.state.events == 0


_CMDS = ["pytest", "pytest | tail -5", "pytest -v", "pytest tests/t.py::test_a", "cat a.py | head -5",
         "bash -c pytest", "cat .env", "make", "make | tail -3", "ctx get r:00000000abcd:L1-2",
         "ctx run -- 'pytest -q'", "", "'unterminated", "git status", "npm test -- --run",
         "npm test > /tmp/t.log 2>&1", "tail -20 /tmp/t.log", "grep -c FAIL /tmp/t.log", "git stash",
         "git diff --stat | grep -v logs/", "curl -s localhost:8000/health | jq .", "gh run view 3 | tail -2",
         "curl -s https://x.test/a | python3 -c 'import sys; print(sys.stdin.read()[:9])'"]
_event = st.one_of(
    st.builds(lambda c, d, i: Event("command", command=c, decision=d, tool_use_id="t%d" % i, cwd="/p"),
              st.sampled_from(_CMDS), st.sampled_from([None, "pass", "rewrite", "deny"]), st.integers(0, 6)),
    st.builds(lambda i, r, t: Event("result", tool_use_id="t%d" % i, ran=r, truncated=t, exit_code=1),
              st.integers(0, 6), st.sampled_from([None, True, False]), st.sampled_from([None, True, False])),
    st.builds(lambda c, h, f, o: Event("run", command=c, handle=H, hints=(H,) * h, failed_count=f, omitted=o,
                                       density="dense", cwd="/p"),
              st.sampled_from(_CMDS), st.integers(0, 2), st.sampled_from([None, 1, 5]), st.sampled_from([None, 0, 3])),
    st.builds(lambda r: Event("retrieval", address=H + ":L1-2", handle=H, result=r), st.sampled_from(["know", "miss"])),
    st.sampled_from([Event("edit"), Event("prompt"), Event("compaction"), Event("session_start"),
                     Event("read", paths=("tests/t.py",)), Event("edit", paths=("/tmp/t.log",), cwd="/p"),
                     Event("task_end", tool_use_id="t2", paths=("/tmp/t.log",))]),
    st.builds(lambda i: Event("command", command="make > build.log", background=True, tool_use_id="t%d" % i,
                              cwd="/p"), st.integers(0, 6)),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_event, max_size=25))
def test_random_sequences_fold_deterministically_without_errors(events):
    events = [Event(**{**{f: getattr(e, f) for f in e.__slots__}, "seq": i}) for i, e in enumerate(events)]
    a = fold(events, Policy(), reflexes=True)
    b = SessionReflex(Policy(), reflexes=True)
    for e in events:
        b.apply(e)
    assert a.to_json() == b.to_json()
    assert a.errors == 0, a.last_error


def test_event_json_round_trip_and_kinds():
    for e in _seed_events():
        assert Event.from_json(e.to_json()) == e
    with pytest.raises(ValueError):
        Event("bogus")
    assert set(KINDS) >= {"command", "result", "run", "retrieval", "edit", "session_start", "session_end",
                          "compaction"}


def test_ctx_wrappers_are_read_as_what_they_run():
    assert ctx_inner("ctx run -- 'pytest -q | tail -5'") == "pytest -q | tail -5"
    assert ctx_inner("/opt/bin/ctx run -- pytest -q") == "pytest -q"
    assert ctx_inner("pytest -q") is None
    assert ctx_retrieval("ctx get r:00000000abcd:L1-9 b3=12345678") == ("get", "r:00000000abcd:L1-9")
    assert ctx_retrieval("ctx search 'def foo'") == ("search", "def foo")
    assert ctx_retrieval("ctx getter x") is None


def test_intents_are_declared_for_every_intervention():
    assert set(EXPECTS) == set(Intervention)
    assert declare("digest") == {"intervention": "digest", "expect": Expect.NO_RERUN.value}
    state = fold(_seed_events(), Policy(), reflexes=True)
    assert state.tally["no-rerun-unchanged"]["violated"] == 1
    assert state.tally["no-verbatim-retry"]["violated"] == 1
    # the compaction closed what was still open as censored, never as a violation
    assert sum(t.get("censored", 0) for t in state.tally.values()) >= 1


# -- policy ------------------------------------------------------------------------------------

def test_shipped_default_epoch_equals_the_built_in_defaults():
    assert DEFAULT_PATH.is_file()
    assert load_policy(DEFAULT_PATH).model_dump() == Policy().model_dump()
    assert default_policy().epoch.name == "default"


def test_every_section_of_the_epoch_file_is_documented():
    import re
    import tomllib
    text = DEFAULT_PATH.read_text()
    data = tomllib.loads(text)
    # each table carries a comment, in it or in the block right above its header
    chunks = re.split(r"(?m)^(?=\[)", text)
    documented = set()
    for prev, chunk in zip(chunks, chunks[1:], strict=False):
        header = chunk.splitlines()[0]
        group = header.strip("[]").split(".")[0]        # [families.x] are documented as a group
        above = prev.rstrip().splitlines()[-3:]
        if "#" in chunk or any(a.lstrip().startswith("#") for a in above):
            documented.add(group)
        assert group in documented, header
    # every scalar key of a detector section has its own comment (above or trailing)
    for section in ("reflexes", "starvation", "affordance", "friction", "polling", "landings", "epoch"):
        for key in data[section]:
            m = re.search(r"(?m)^%s\s*=.*$" % re.escape(key), text)
            line = m.group(0)
            above = text[:m.start()].rstrip().splitlines()[-1]
            assert "#" in line or above.lstrip().startswith("#"), (section, key)


def test_policy_errors_are_clear(tmp_path):
    with pytest.raises(PolicyError, match=r"starvation\.fire_at: Input should be greater"):
        parse_policy("[starvation]\nfire_at = 1\n")
    with pytest.raises(PolicyError, match=r"starvation\.firee_at: unknown key"):
        parse_policy("[starvation]\nfiree_at = 2\n")
    with pytest.raises(PolicyError, match="not valid TOML"):
        parse_policy("[starvation\n")
    with pytest.raises(PolicyError, match="cannot read policy"):
        load_policy(tmp_path / "missing.toml")
    with pytest.raises(PolicyError, match=r"density\.start: Input should be"):
        parse_policy('[density]\nstart = "huge"\n')


def test_start_density_per_family_and_reader_tier():
    p = parse_policy('[families.pytest]\ndensity = "lean"\ntiers = { small = "dense" }\n')
    assert p.start_density("pytest", None) == "lean"
    assert p.start_density("pytest", p.tier_of("claude-3-5-haiku")) == "dense"
    assert p.start_density("mix", "small") == "normal"
    sr = SessionReflex(p, reflexes=True)
    sr.apply(Event("session_start", model="claude-haiku-4-5"))
    assert sr.density_for("nothing", "pytest") == ("dense", None)


def test_a_latch_below_the_starting_density_changes_nothing():
    p = parse_policy('[families.pytest]\ndensity = "inline"\n')
    state_events = _seed_events()[:7]          # through the starving re-run
    sr = SessionReflex(p, reflexes=True).extend(state_events)
    core = next(iter(sr.state.latches))
    assert sr.density_for(core, "pytest") == ("inline", None)


@pytest.mark.skipif(not CORPUS, reason="shared corpus not available")
def test_corpus_folds_without_errors(corpus_events):
    for events in corpus_events:
        state = fold(events, Policy(), reflexes=True)
        assert state.errors == 0, state.last_error
        assert state.events == len(events)


# -- live: the daemon's fold over a real repository ----------------------------------------------

def _git(cwd, *args):
    import subprocess
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env, timeout=30)


def test_live_fold_sees_content_not_commits_or_the_harness_logs(paths, running_daemon, tmp_path):
    """The daemon folds what it commits: between two runs, a commit and a rewrite of the
    hooks' tracked logs/*.json leave the worktree hash equal (starvation), an edit does not."""
    import shutil
    import time
    from reflex.shim import hook
    from tests.conftest import ledger_rows, pre_bash
    if not shutil.which("git"):
        pytest.skip("git not installed")
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "logs").mkdir()
    (repo / "src" / "app.py").write_text("print(1)\n")
    record = {"session_id": "live", "hook_event_name": "PreToolUse", "transcript_path": "/t.jsonl"}
    (repo / "logs" / "pre_tool_use.json").write_text(json.dumps([record]))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    n = [0]

    def send(payload):
        hook.deliver(paths, "claude", json.dumps(payload).encode())

    def settled_hash():
        """Ask until the daemon answers with a settled hash (it answers None while a scan or an
        edit is in flight), bounded in time.  The pause first lets the watch deliver the events
        of what the test just wrote: a hash read before they arrive would look settled."""
        time.sleep(0.6)
        deadline = time.monotonic() + 30
        last = None
        while time.monotonic() < deadline:
            n[0] += 1
            send({"session_id": "live", "hook_event_name": "PreToolUse", "cwd": str(repo), "tool_name": "Read",
                  "tool_input": {"file_path": str(repo / "src" / "app.py")}, "tool_use_id": "r%d" % n[0]})
            row = ledger_rows(paths, "SELECT data FROM events WHERE tool_use_id=?", ("r%d" % n[0],))
            h = json.loads(row[-1]["data"]).get("worktree_hash") if row else None
            # Settled: the same hash twice, half a second apart.  On a loaded machine the watch
            # can deliver a commit's events after the first read, which then looked settled.
            if h and h == last:
                return h
            last = h
            time.sleep(0.5)
        raise AssertionError("no settled worktree hash")

    def bash(cmd, tid, out):
        send(pre_bash(cmd, session="live", tool_use_id=tid, cwd=str(repo)))
        send({"session_id": "live", "hook_event_name": "PostToolUse", "cwd": str(repo), "tool_name": "Bash",
              "tool_input": {"command": cmd}, "tool_use_id": tid,
              "tool_response": {"stdout": out, "stderr": "", "interrupted": False}})
        return json.loads(ledger_rows(paths, "SELECT data FROM events WHERE tool_use_id=? AND hook_event='PreToolUse'",
                                      (tid,))[0]["data"]).get("worktree_hash")

    def starved():
        return [r["tool_use_id"] for r in ledger_rows(
            paths, "SELECT tool_use_id FROM outcomes WHERE session_id='live' AND detector='starvation'")]

    send({"session_id": "live", "hook_event_name": "SessionStart", "cwd": str(repo), "source": "startup"})
    settled_hash()
    h1 = bash("make check 2>&1 | tail -5", "b1", "2 errors\n")
    # what the hooks do on every call, and a commit in between
    (repo / "logs" / "pre_tool_use.json").write_text(json.dumps([record] * 3))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "wip")
    settled_hash()
    h2 = bash("make check 2>&1 | grep -i error", "b2", "a.c:3: error: x\nb.c:9: error: y\n")
    assert h1 and h1 == h2
    assert starved() == ["b2"]
    (repo / "src" / "app.py").write_text("print(2)\n")
    settled_hash()
    h3 = bash("make check 2>&1 | tail -40", "b3", "ok\n")
    assert h3 and h3 != h2
    assert starved() == ["b2"]
