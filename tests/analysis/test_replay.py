"""`ctx replay`: real transcripts against hand labels, synthetic transcripts, ledgers, the CLI."""

import glob
import json
import os

import pytest
from click.testing import CliRunner

from reflex.commands.replay_cmd import replay_cmd
from reflex.arc.events import ctx_inner, ctx_retrieval
from reflex.ledger.writer import LedgerWriter
from reflex.arc.fold import SessionReflex
from reflex.arc.ledger_events import read_events, rebuild, session_events
from reflex.arc.policy import default_policy
from reflex.analysis.replay import detect_format, load, replay
from reflex.signature import signature
from tests.support import rerun_labels

CORPUS_DIR = "/work/shared/corpus/transcripts"
CORPUS = sorted(glob.glob(os.path.join(CORPUS_DIR, "*.jsonl")))
needs_corpus = pytest.mark.skipif(not CORPUS, reason="shared corpus not available")


def _reruns(events):
    """tool_use_ids of every command whose core signature was issued before in the session."""
    seen, out = set(), []
    for e in events:
        if e.kind != "command" or ctx_retrieval(e.command):
            continue
        sig = signature(ctx_inner(e.command) or e.command, e.cwd)
        if not sig.core:
            continue
        if sig.core_hash in seen:
            out.append(e.tool_use_id)
        seen.add(sig.core_hash)
    return out


@pytest.fixture(scope="module")
def corpus_replays():
    return {os.path.basename(p): replay(load(p)) for p in CORPUS}


def _finder_candidates(name):
    from tests.support.rerun_candidates import candidates
    out = set()
    for path in rerun_labels.set_files(name):
        for c in candidates(path):
            out.add((rerun_labels.transcript_name(name, path), c["steps"][c["index"]]["id"]))
    return out


@pytest.mark.parametrize("name", rerun_labels.SETS)
def test_every_rerun_in_each_labelled_set_is_labelled(name):
    """The labels cover every re-run the finder lists (and every equal-core re-issue), nothing else."""
    if not rerun_labels.set_files(name):
        pytest.skip("shared corpus not available")
    labels = rerun_labels.labels(name)
    keyed = {(lab["transcript"], lab["tool_use_id"]) for lab in labels}
    assert len(keyed) == len(labels)
    assert _finder_candidates(name) == keyed
    for path in rerun_labels.set_files(name):
        for events in load(path, "claude").values():
            assert {(rerun_labels.transcript_name(name, path), t) for t in _reruns(events)} <= keyed
    assert {lab["label"] for lab in labels} <= {"starvation", "progress", "paging", "polling", "other"}
    assert all(lab["why"] for lab in labels)


def test_real_sessions_are_the_labelled_bytes_with_their_licences():
    """evals/real_sessions holds exactly the files the labels name, each the bytes of its
    repository's file at the labelled commit (sha256 of the gunzipped file), with a licence text
    per repository; ctx's readers take them gzipped."""
    import gzip
    import hashlib
    with open(rerun_labels.REAL_LABELS) as f:
        sources = json.load(f)["sources"]
    root = rerun_labels.REAL_SESSIONS
    stored = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "*", "*.json.gz")))
    assert stored == sorted(s["file"] + ".gz" for s in sources)
    for s in sources:
        data = gzip.decompress(open(os.path.join(root, s["file"] + ".gz"), "rb").read())
        assert (len(data), hashlib.sha256(data).hexdigest()) == (s["bytes"], s["sha256"]), s["file"]
        lic = open(os.path.join(root, "LICENSES", s["repository"].replace("/", "__") + ".txt")).read()
        assert {"MIT": "Permission is hereby granted", "Apache-2.0": "Apache License"}[s["licence"]] in lic, \
            s["repository"]
    assert {len(rerun_labels.set_files(n)) for n in ("real-dev", "real-heldout")} == {10, 8}


def test_a_gzipped_transcript_replays_as_the_plain_one(tmp_path):
    import gzip
    src = os.path.join(rerun_labels.REAL_SESSIONS, "heldout", "RyanLisse__big3__8f06bcb413.json.gz")
    plain = tmp_path / "big3.json"
    plain.write_bytes(gzip.decompress(open(src, "rb").read()))
    assert detect_format(src) == detect_format(str(plain)) == "claude"
    got, want = load(src), load(str(plain))
    assert list(got) == list(want) and list(got.values()) == list(want.values()) and len(list(got.values())[0]) > 20


@pytest.mark.parametrize("name", ["cc0", "real-dev"])
def test_starvation_against_hand_labels(name):
    """The sets the detector was built on: every starved re-run found, nothing else called starved.
    (The held-out set is scored by evals/bench_labels.py, never tuned against.)"""
    if not rerun_labels.set_files(name):
        pytest.skip("shared corpus not available")
    fired, classified, _ = rerun_labels.replay_set(name)
    sc = rerun_labels.score(name, fired, classified)
    for what in ("firings", "reruns"):
        d = sc[what]
        print("%s %s: tp=%d fp=%d fn=%d precision=%s recall=%s" % (name, what, d["tp"], d["fp"], d["fn"],
                                                                  d["precision"], d["recall"]))
        assert d["after_change"] == 0 and d["on_polling_or_state"] == 0, d["false"]
        assert d["fp"] == 0, d["false"]
    assert sc["reruns"]["recall"] == 1.0, sc["reruns"]["missed"]
    assert set(fired) <= set(classified)


@needs_corpus
def test_corpus_replay_shape_and_counts(corpus_replays):
    for name, rep in corpus_replays.items():
        events = load(os.path.join(CORPUS_DIR, name))
        commands = sum(1 for evs in events.values() for e in evs if e.kind == "command")
        assert rep["commands"] == commands == len(rep["decisions"])
        assert all(set(d) == {"tool_use_id", "command", "decision"} for d in rep["decisions"])
        assert all(d["decision"] in ("pass", "rewrite", "deny") for d in rep["decisions"])
        assert all(set(f) == {"detector", "tool_use_id", "core", "reason"} for f in rep["firings"])
        assert rep["sessions"][0]["state"].errors == 0


# -- synthetic transcripts ---------------------------------------------------------------------

def _transcript(tmp_path, steps, name="t.jsonl"):
    """steps: ("bash", command, output) | ("edit", path) | ("prompt", text) -> a transcript file."""
    rows, n = [], 0
    for step in steps:
        n += 1
        tid = "toolu_%03d" % n
        if step[0] == "bash":
            rows.append({"type": "assistant", "sessionId": "syn", "cwd": "/proj",
                         "message": {"model": "claude-sonnet-4-5", "content": [
                             {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": step[1]}}]}})
            rows.append({"type": "user", "sessionId": "syn", "cwd": "/proj", "message": {"content": [
                {"type": "tool_result", "tool_use_id": tid, "content": step[2], "is_error": False}]}})
        elif step[0] == "edit":
            rows.append({"type": "assistant", "sessionId": "syn", "cwd": "/proj", "message": {"content": [
                {"type": "tool_use", "id": tid, "name": "Edit", "input": {"file_path": step[1]}}]}})
        elif step[0] == "prompt":
            rows.append({"type": "user", "sessionId": "syn", "cwd": "/proj", "message": {"content": step[1]}})
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return str(path)


def _starved(path):
    return [f["tool_use_id"] for f in replay(load(path))["firings"] if f["detector"] == "starvation"]


def test_mix_test_loop_without_a_profile_is_starvation(tmp_path):
    path = _transcript(tmp_path, [
        ("bash", "mix test 2>&1 | tail -5", "Finished in 0.1s\n12 tests, 2 failures"),
        ("bash", "mix test 2>&1 | tail -20", "..."),
        ("bash", 'mix test 2>&1 | grep -E "(tests|failures)"', "12 tests, 2 failures"),
    ])
    assert _starved(path) == ["toolu_002"]


def test_mix_test_loop_with_an_edit_in_between_is_progress(tmp_path):
    path = _transcript(tmp_path, [
        ("bash", "mix test 2>&1 | tail -5", "12 tests, 2 failures"),
        ("edit", "/proj/lib/cart.ex"),
        ("bash", "mix test 2>&1 | tail -20", "12 tests, 1 failure"),
        ("bash", "sed -i 's/a/b/' lib/cart.ex", ""),
        ("bash", 'mix test 2>&1 | grep -E "(tests|failures)"', "12 tests, 0 failures"),
    ])
    assert _starved(path) == []


def test_paging_and_user_turns_are_not_starvation(tmp_path):
    path = _transcript(tmp_path, [
        ("bash", "sed -n 1,80p lib/cart.ex", "..."),
        ("bash", "sed -n 80,160p lib/cart.ex", "..."),
        ("bash", "make check 2>&1 | tail -3", "ok"),
        ("prompt", "I restarted the database, try again"),
        ("bash", "make check 2>&1 | tail -30", "ok"),
    ])
    assert _starved(path) == []


def test_replay_shows_the_rewrite_ctx_would_make(tmp_path):
    path = _transcript(tmp_path, [("bash", "pytest -q", "1 failed"), ("bash", "cat .env", "SECRET=1")])
    rep = replay(load(path))
    assert [d["decision"] for d in rep["decisions"]] == ["rewrite", "deny"]


# -- ledgers -----------------------------------------------------------------------------------

def _ledger_rows():
    def hook(uid, hook_event, **kw):
        d = {"uid": uid, "session_id": "L1", "ts": 1.0, "harness": "claude", "kind": "hook",
             "hook_event": hook_event, "cwd": "/proj", "spooled": 0, "data": json.dumps(kw.pop("data", {}))}
        d.update(kw)
        return d
    h = "r:0123456789ab"
    digest = {"handle": h, "density": "normal", "hints": [h + "#tests/t.py::test_a"],
              "failed_ids": ["tests/t.py::test_a"],
              "failed_count": 1, "omitted": 2, "truncated": False}
    rows = [hook("u00000001", "SessionStart", decision="none", data={"model": "claude-haiku-4-5", "source": "startup"})]
    for i, cmd in enumerate(["pytest", "pytest | tail -50"]):
        rows.append(hook("u0000001%d" % i, "PreToolUse", tool_name="Bash", tool_use_id="t%d" % i, command=cmd,
                         decision="rewrite", decision_detail="ctx run -- %r" % cmd))
        rows.append({"uid": "u0000002%d" % i, "session_id": "L1", "ts": 1.0, "harness": "ctx-run", "kind": "run",
                     "cwd": "/proj", "command": cmd, "exit_code": 1, "spooled": 0, "decision": "none",
                     "data": json.dumps(dict(digest, density="dense" if i else "normal"))})
        rows.append(hook("u0000003%d" % i, "PostToolUseFailure", tool_name="Bash", tool_use_id="t%d" % i, command=cmd,
                         exit_code=1, decision="none"))
    rows.append(hook("u00000040", "PreToolUse", tool_name="Edit", tool_use_id="e1", decision="pass",
                     data={"tool_input": {"file_path": "/proj/calc.py"}}))
    rows.append(hook("u00000050", "SessionEnd", decision="none"))
    return rows


def test_ledger_database_and_export_replay_the_same(tmp_path):
    db = str(tmp_path / "ledger.db")
    w = LedgerWriter(db).start()
    try:
        for row in _ledger_rows():
            w.submit(row).result()
    finally:
        w.close()
    from reflex.ledger.export import export_jsonl
    export = tmp_path / "export.jsonl"
    with open(export, "w") as f:
        export_jsonl(db, f)
    assert detect_format(db) == detect_format(str(export)) == "events"
    from_db, from_export = read_events(db), read_events(str(export))
    assert from_db == from_export
    events = from_db["L1"]
    assert [e.kind for e in events] == ["session_start", "command", "run", "result", "command", "run", "result",
                                        "edit", "session_end"]
    live = SessionReflex(default_policy(), "L1", reflexes=True).extend(events)
    assert rebuild(db, "L1", default_policy(), reflexes=True).to_json() == live.to_json()
    assert session_events(db, "L1") == events and session_events(db, "other") == []
    rep = replay(from_db)
    assert [f["detector"] for f in rep["firings"]] == ["starvation"]
    assert rep["firings"][0]["tool_use_id"] == "t1"
    assert rep["sessions"][0]["state"].tier == "small"


def test_events_jsonl_is_accepted(tmp_path):
    src = load(_transcript(tmp_path, [("bash", "make | tail -3", "x"), ("bash", "make | tail -30", "y")]))
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e.to_json()) + "\n" for evs in src.values() for e in evs))
    assert detect_format(str(path)) == "events"
    assert load(str(path)) == src


# -- the command -------------------------------------------------------------------------------

def test_cli_json_and_text(tmp_path):
    path = _transcript(tmp_path, [("bash", "make | tail -3", "x"), ("bash", "make | tail -30", "y")])
    r = CliRunner().invoke(replay_cmd, [path, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert set(out) == {"format", "harness", "commands", "decisions", "firings"} and out["commands"] == 2
    assert out["format"] == "claude"
    assert out["firings"] == [{"detector": "starvation", "tool_use_id": "toolu_002", "core": "make",
                               "reason": out["firings"][0]["reason"]}]
    r = CliRunner().invoke(replay_cmd, [path, "--format", "claude"])
    assert r.exit_code == 0 and "-> starvation:" in r.output and "2 command(s)" in r.output


def test_cli_errors_are_one_line(tmp_path):
    # Through the `ctx` group, as a user reaches it: the CLI's one error edge prints the message.
    from reflex.cli import cli
    r = CliRunner().invoke(cli, ["replay", str(tmp_path / "missing.jsonl")])
    assert r.exit_code == 1 and "cannot read" in r.output and len(r.output.strip().splitlines()) == 1
    bad = tmp_path / "bad.toml"
    bad.write_text("[starvation]\nfire_at = 0\n")
    r = CliRunner().invoke(cli, ["replay", str(bad), "--policy", str(bad)])
    assert r.exit_code == 1 and "starvation.fire_at" in r.output


def _digest(handle):
    return ("[ctx] pytest 9.2.0 | normal | exit 1 | 2 failed, 3 passed | 2900→410 tokens | %s\n"
            "FAIL tests/test_calc.py::test_mean (line 12) AssertionError: assert 1 == 2\n"
            "  ctx get %s:L10-40 b3=1a2b3c4d\n" % (handle, handle))


def test_instrumented_transcript_seed_loop(tmp_path):
    """A transcript recorded with ctx active: digests in the results make runs."""
    loop = [("bash", "pytest tests/", _digest("r:000000000001")),
            ("bash", "pytest tests/ | tail -50", _digest("r:000000000002")),
            ("bash", "pytest --tb=long tests/", _digest("r:000000000003"))]
    assert _starved(_transcript(tmp_path, loop, "a.jsonl")) == ["toolu_002"]
    with_edits = [loop[0], ("edit", "/proj/calc.py"), loop[1], ("edit", "/proj/calc.py"), loop[2]]
    assert _starved(_transcript(tmp_path, with_edits, "b.jsonl")) == []
    followed = [loop[0], ("bash", "ctx get r:000000000001:L10-40", "line 10"), loop[1]]
    rep = replay(load(_transcript(tmp_path, followed, "c.jsonl")))
    assert "span resolved" in [f["reason"] for f in rep["firings"]]


# -- what the model saw, live: the harness's cut from the hook's sizes --------------------------

@pytest.mark.parametrize("hook,exit_code,size,persisted,cut", [
    ("PostToolUseFailure", 1, 10_041, None, True),     # a failed call over 10k: head and tail only
    ("PostToolUseFailure", 2, 9_000, None, False),
    ("PostToolUse", 0, 30_500, None, True),            # a successful one over 30k
    ("PostToolUse", 0, 29_000, None, False),
    ("PostToolUse", 0, 2_000, "/tmp/x/tool-results/a.txt", True),   # moved to a file: a preview
])
def test_ledger_rows_carry_the_harness_cut(hook, exit_code, size, persisted, cut):
    from reflex.arc.ledger_events import events_from_row
    row = {"kind": "hook", "hook_event": hook, "tool_name": "Bash", "session_id": "s", "seq": 3,
           "tool_use_id": "t1", "command": "npm test", "exit_code": exit_code, "output_bytes": size,
           "harness": "claude", "data": json.dumps({"persisted_output": persisted} if persisted else {})}
    (ev,) = events_from_row(row)
    assert ev.kind == "result" and ev.truncated is cut


def test_replay_lists_the_class_of_every_re_run(tmp_path):
    path = _transcript(tmp_path, [
        ("bash", "npm test 2>&1 | grep 'Test Files:'", ""),
        ("bash", "npm test -- --run", " Test Files  4 failed | 51 passed (65)"),
        ("edit", "/proj/src/a.ts"),
        ("bash", "npm test -- --run", " Test Files  51 passed (51)"),
    ])
    rep = replay(load(path))
    classes = [d["rerun"] for d in rep["sessions"][0]["decisions"]]
    assert classes == [None, "starvation", "progress"]
    from reflex.analysis.replay import render_text
    assert "re-run: starvation (a new view after one that left out grep)" in render_text(rep)


def test_ledger_rows_of_a_subagent_s_call_say_which_agent():
    from reflex.arc.ledger_events import events_from_row
    row = {"kind": "hook", "hook_event": "PreToolUse", "tool_name": "Bash", "session_id": "s", "seq": 4,
           "tool_use_id": "t9", "command": "pytest -q", "decision": "pass",
           "data": json.dumps({"agent_id": "a7", "tool_input": {}})}
    (ev,) = events_from_row(row)
    assert ev.kind == "command" and ev.agent_id == "a7"
