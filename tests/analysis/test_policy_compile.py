"""`ctx policy compile`: deterministic epochs that load, and decisions only where the evidence is."""

import json
import os
import random
import subprocess
import sys

import pytest

from reflex.arc import policy as policy_mod
from reflex.ledger import chain
from reflex.ledger.db import open_ledger
from reflex.arc.policy import load_policy, parse_policy
from reflex.analysis.compile import MIN_EVIDENCE, CompileError, compile_epoch, decide_density, Cell, to_toml, wilson
from tests.analysis.test_evidence import Rows, failing
from tests.analysis.test_stats_ledgers import write_rows

MODELS = {"haiku": "claude-haiku-4-5", "sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-1"}


def session(sid, reader="haiku", *, requery=0, follow=False, density="normal", family_cmd="python -m pytest -q",
            edit="/proj/test_a.py"):
    """A session whose first digest is (or is not) asked for again with nothing changed, `requery` times."""
    s = Rows(sid, model=MODELS.get(reader, "gpt-5"))
    s.bash(family_cmd, exit=1, run=dict(failing(6), density=density))
    if follow:
        h = s.last_handle
        s.bash("ctx get %s:L1-3" % h, retrieval={"address": h + ":L1-3", "result": "know", "handle": h})
    for k in range(int(requery)):
        s.bash(family_cmd + " | tail -%d" % (40 + k), exit=1,
               run=dict(failing(6), density=density, slicer="tail -%d" % (40 + k)))
    s.edit(edit)
    s.bash(family_cmd, exit=0, run=failing(0))
    s.end()
    return s.rows


def ledger(path, sessions):
    conn = open_ledger(str(path)).conn
    prev = chain.GENESIS
    for rows in sessions:
        prev = write_rows(conn, rows, prev)
    conn.commit()
    conn.close()
    return str(path)


def ctx(*args):
    return subprocess.run([sys.executable, "-m", "reflex.entry"] + list(args), capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    d = tmp_path_factory.mktemp("three")
    a = ledger(d / "a.db", [session("a%02d" % i, "haiku", requery=int(i % 2 == 0)) for i in range(6)])
    b = ledger(d / "b.db", [session("b%02d" % i, "opus", follow=True) for i in range(5)])
    c = ledger(d / "c.db", [session("c%02d" % i, "sonnet", requery=int(i % 3 == 0)) for i in range(4)])
    return [a, b, c]


def test_same_ledgers_same_bytes_in_any_order(three):
    first = compile_epoch(three, plan_value=True).text
    assert compile_epoch(three, plan_value=True).text == first
    rng = random.Random(3)
    for _ in range(3):
        order = three[:]
        rng.shuffle(order)
        assert compile_epoch(order, plan_value=True).text == first
    assert compile_epoch(three + [three[0]], plan_value=True).text == first     # named twice: read once
    parse_policy(first)


def test_cli_compile_is_byte_identical_and_atomic(three, tmp_path):
    out1, out2 = tmp_path / "e1.toml", tmp_path / "e2.toml"
    p = ctx("policy", "compile", "--ledger", three[0], "--ledger", three[1], "--ledger", three[2], "--out", str(out1))
    assert p.returncode == 0, p.stderr
    p = ctx("policy", "compile", "--ledger", three[2], "--ledger", three[0], "--ledger", three[1], "--out", str(out2))
    assert p.returncode == 0, p.stderr
    assert out1.read_bytes() == out2.read_bytes()
    stdout = ctx("policy", "compile", "--ledger", three[1], "--ledger", three[2], "--ledger", three[0]).stdout
    assert stdout.encode() == out1.read_bytes()
    chk = ctx("policy", "check", str(out1))
    assert chk.returncode == 0 and "(compiled) OK" in chk.stdout


def _chain_head(path):
    import sqlite3
    with sqlite3.connect("file:%s?mode=ro" % path, uri=True) as c:
        return c.execute("SELECT hash FROM events ORDER BY id DESC LIMIT 1").fetchone()[0]


def test_provenance_is_digests_and_event_counts_only(three):
    res = compile_epoch(three)
    p = parse_policy(res.text)
    digests = sorted(_chain_head(f) for f in three)     # each ledger's chain head: its events, not its bytes
    assert p.epoch.ledgers == digests and p.epoch.source == "compiled" and p.epoch.created == ""
    assert p.epoch.events == sum(i.events for i in res.inputs) == res.events
    assert p.epoch.version == policy_mod.default_policy().epoch.version + 1
    assert p.epoch.name.startswith("compiled-")
    for f in three:
        assert os.path.basename(f) not in res.text and os.path.dirname(f) not in res.text   # no paths
    for d in digests:
        assert "#   %s  sqlite  events=" % d in res.text


def test_the_same_events_give_the_same_epoch_whatever_the_file_holds(three, tmp_path):
    """A ledger's bytes change while its events do not: the daemon's WAL is checkpointed, rows land
    in its other tables, someone VACUUMs it.  None of that is a different ledger to compile."""
    import shutil
    import sqlite3
    first = compile_epoch(three).text
    copy = str(tmp_path / "a.db")
    shutil.copy(three[0], copy)
    with sqlite3.connect(copy) as c:
        c.execute("CREATE TABLE not_events (x)")
        c.execute("INSERT INTO not_events VALUES (randomblob(70000))")
    c.close()
    with sqlite3.connect(copy) as c:
        c.execute("VACUUM")
    c.close()
    with open(copy, "rb") as f, open(three[0], "rb") as g:
        assert f.read() != g.read()
    assert compile_epoch([copy] + three[1:]).text == first
    # one more event is another ledger: another digest, counted
    conn = open_ledger(copy).conn
    write_rows(conn, session("a99", "haiku"), _chain_head(copy))
    conn.commit()
    conn.close()
    grown = compile_epoch([copy] + three[1:])
    assert grown.text != first and _chain_head(copy) in grown.text
    assert grown.events > compile_epoch(three).events


def test_a_ledger_read_while_it_grows_is_read_up_to_its_digest(three, tmp_path):
    """Events appended after the compile pinned the ledger are not read (their sessions either):
    the events counted and compiled are exactly those up to the event the digest names."""
    import shutil
    from reflex.analysis import compile as compile_mod
    copy = str(tmp_path / "b.db")
    shutil.copy(three[1], copy)
    before = compile_epoch([copy]).text
    inp, sessions, close = compile_mod._open_input(copy)
    conn = open_ledger(copy).conn                           # the daemon appends a whole new session
    write_rows(conn, session("b99", "opus", follow=True), _chain_head(copy))
    conn.commit()
    conn.close()
    try:
        read = [sid for sid, _rows in sessions]
    finally:
        close()
    assert "b99" not in read and len(read) == 5 and inp.digest in before
    assert inp.events == int(before.split("events=")[1].split()[0])


def test_exports_and_directories_compile_like_the_ledgers(three, tmp_path):
    share = tmp_path / "team"
    share.mkdir()
    try:
        import pyarrow  # noqa: F401
        second = "parquet"
    except ImportError:                     # the parquet extra is optional; CI may not install it
        second = "jsonl"
    for i, f in enumerate(three):
        fmt = second if i == 1 else "jsonl"
        p = ctx("ledger", "export", "--ledger", f, "--format", fmt, "--out", str(share / ("dev%d.%s" % (i, fmt))))
        assert p.returncode == 0, p.stderr
    from_dir = compile_epoch([str(share)], plan_value=True)
    from_db = compile_epoch(three, plan_value=True)
    a, b = parse_policy(from_dir.text), parse_policy(from_db.text)
    assert a.families == b.families and a.starvation == b.starvation and a.affordance == b.affordance
    assert a.epoch.events == b.epoch.events and a.epoch.ledgers != b.epoch.ledgers
    strip = lambda t: [ln for ln in t.splitlines() if "b3:" not in ln and not ln.startswith("name = ")]  # noqa: E731
    assert strip(from_dir.text) == strip(from_db.text)
    # a ledger and its own export: every session is read once
    both = compile_epoch([three[0], str(share / "dev0.jsonl")])
    assert both.sessions == 6 and sorted(i.skipped_sessions for i in both.inputs) == [0, 6]
    assert parse_policy(both.text).families == parse_policy(compile_epoch([three[0]]).text).families


def test_too_little_evidence_changes_nothing(three):
    p = parse_policy(compile_epoch(three).text)
    d = policy_mod.default_policy()
    assert p.families == d.families and p.starvation == d.starvation and p.affordance == d.affordance
    assert p.tiers == d.tiers and p.polling == d.polling and p.friction == d.friction


def test_starved_first_digests_move_one_tier_up_and_only_that_tier(tmp_path):
    n = MIN_EVIDENCE + 5
    sessions = [session("h%02d" % i, "haiku", requery=1) for i in range(n)]
    sessions += [session("o%02d" % i, "opus") for i in range(n)]
    res = compile_epoch([ledger(tmp_path / "l.db", sessions)])
    p = parse_policy(res.text)
    # pooled: 25 of 50 first digests requeried, Wilson lower bound 0.37 >= 0.25 -> dense for the family;
    # opus alone had 0 of 25 and keeps normal; haiku alone decides dense, as the family does
    assert p.families["pytest"].density == "dense"
    assert p.families["pytest"].tiers == {"large": "normal"}
    assert p.start_density("pytest", p.tier_of("claude-haiku-4-5")) == "dense"
    assert p.start_density("pytest", p.tier_of("claude-opus-4-1")) == "normal"
    assert "pytest x haiku (tier small): %d runs; first normal digests requeried %d/%d" % (3 * n, n, n) in res.text
    # densified runs are what breaker_after reads: the requeried re-runs here were normal, so it stays
    assert p.starvation.breaker_after == 2


def test_ignored_hints_start_inline_and_fire_affordance_sooner(tmp_path):
    # nobody retrieves a hint, narrows to a named test or edits a named file
    sessions = [session("s%02d" % i, "sonnet", edit="/proj/src/mod.py") for i in range(MIN_EVIDENCE + 2)]
    p = parse_policy(compile_epoch([ledger(tmp_path / "l.db", sessions)]).text)
    assert p.families["pytest"].density == "inline"
    assert p.affordance.fire_after_ignored == 1


def test_followed_hints_and_no_requeries_allow_lean(tmp_path):
    sessions = [session("s%02d" % i, "opus", follow=True) for i in range(2 * MIN_EVIDENCE + 1)]
    p = parse_policy(compile_epoch([ledger(tmp_path / "l.db", sessions)]).text)
    assert p.families["pytest"].density == "lean"


def test_densify_that_keeps_starving_trips_the_breaker_sooner(tmp_path):
    n = MIN_EVIDENCE + 2
    sessions = [session("s%02d" % i, "haiku", requery=2, density="dense") for i in range(n)]
    res = compile_epoch([ledger(tmp_path / "l.db", sessions)])
    p = parse_policy(res.text)
    assert p.starvation.breaker_after == 1              # 2 of every 3 dense digests were asked for again
    assert "densified (dense/inline) runs requeried %d/%d" % (2 * n, 3 * n) in res.text
    half = [session("s%02d" % i, "haiku", requery=1, density="dense") for i in range(n)]
    assert parse_policy(compile_epoch([ledger(tmp_path / "h.db", half)]).text).starvation.breaker_after == 2


def test_plan_value_is_a_table_the_loader_accepts(three):
    res = compile_epoch(three, plan_value=True)
    assert not res.warnings
    p = parse_policy(res.text)
    pv = p.plan_value["pytest"]
    assert pv["runs"] == 15 * 2 + 3 + 2          # two runs per session, one more per requery (3 in a, 2 in c)
    assert set(pv["rates"]) == {"retrieved", "narrowed", "landed", "validated_after_edit", "discriminated",
                                "reversed", "equivalent_requery", "redundant", "abandoned"}
    assert all(0 < v < 1 for v in pv["rates"].values()) and -1 <= pv["value"] <= 1
    assert p.plan_value["min_evidence"] == MIN_EVIDENCE


def test_wilson_and_decisions_on_cells():
    lo, hi = wilson(10, 20)
    assert 0.29 < lo < 0.30 and 0.70 < hi < 0.71
    assert wilson(0, 0) == (0.0, 1.0)
    ladder = policy_mod.LADDER
    c = Cell(first={"normal": [MIN_EVIDENCE - 1, MIN_EVIDENCE - 1]})
    assert decide_density(c, "normal", ladder)[0::2] == ("normal", False)      # one short of the minimum
    c = Cell(first={"normal": [MIN_EVIDENCE, MIN_EVIDENCE - 5]})
    assert decide_density(c, "normal", ladder)[0::2] == ("dense", True)
    c = Cell(first={"dense": [MIN_EVIDENCE, MIN_EVIDENCE]})
    assert decide_density(c, "dense", ladder)[0] == "inline"
    c = Cell(first={"inline": [MIN_EVIDENCE, MIN_EVIDENCE]})
    assert decide_density(c, "inline", ladder)[0] == "inline"                # never up to raw-capped


def test_toml_writer_round_trips_awkward_values():
    import tomllib
    doc = {"a": {"b-c": "q\"uo\\te\x7f", "n": 3, "f": 0.1, "z": 2.0, "l": ["x", "y"], "tiers": {"small": "dense"},
                 "weird key": True}, "top": {"tiers": {"haiku": "small"}}}
    text = to_toml(doc, header=["a header"])
    back = tomllib.loads(text)
    assert back == {"a": {"b-c": "q\"uo\\te\x7f", "n": 3, "f": 0.1, "z": 2.0, "l": ["x", "y"],
                          "tiers": {"small": "dense"}, "weird key": True}, "top": {"tiers": {"haiku": "small"}}}
    assert text.startswith("# a header\n") and to_toml(doc, header=["a header"]) == text


def test_bad_inputs_are_clear_errors(tmp_path):
    with pytest.raises(CompileError, match="no ledger at"):
        compile_epoch([str(tmp_path / "missing.db")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(CompileError, match="holds no ledgers"):
        compile_epoch([str(tmp_path / "empty")])
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"kind": "hook", "session_id": "s"}\nnot json\n')
    with pytest.raises(CompileError, match="line 2 is not JSON"):
        compile_epoch([str(bad)])
    base = tmp_path / "base.toml"
    base.write_text("[starvation]\nfire_at = 1\n")
    good = ledger(tmp_path / "l.db", [session("s1")])
    with pytest.raises(CompileError, match="(?s)base epoch: .*starvation.fire_at"):
        compile_epoch([good], base=str(base))


def test_compiled_epoch_loads_as_a_file(three, tmp_path):
    out = tmp_path / "epoch.toml"
    out.write_text(compile_epoch(three, plan_value=True).text)
    p = load_policy(out)
    assert p.epoch.source == "compiled"
    assert json.loads(json.dumps(p.model_dump(mode="json")))["tiers"] == {"haiku": "small", "sonnet": "mid",
                                                                         "opus": "large"}


def test_parquet_export_round_trips_every_event(three, tmp_path):
    pytest.importorskip("pyarrow")
    from reflex.ledger.export import iter_events
    from reflex.ledger.parquet import export_parquet, read_parquet_rows
    out = tmp_path / "a.parquet"
    assert export_parquet(three[0], str(out)) == sum(1 for _ in iter_events(three[0]))
    rows = list(read_parquet_rows(str(out)))
    want = list(iter_events(three[0]))
    assert [r["uid"] for r in rows] == [w["uid"] for w in want]
    assert [json.loads(r["data"]) for r in rows] == [w["data"] for w in want]
    assert rows[3]["hash"] == want[3]["hash"] and rows[3]["seq"] == want[3]["seq"]
    one = tmp_path / "one.parquet"
    assert export_parquet(three[0], str(one), session="a01") == sum(1 for _ in iter_events(three[0], "a01"))
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_compile_shows_progress_on_a_terminal_only(tmp_path):
    import os
    import pty
    import subprocess
    import sys
    from tests.support.team_ledgers import Developer, plain_session
    dev = Developer(str(tmp_path), "dev")
    try:
        dev.start()
        plain_session(dev, "p-1", "claude-haiku-4-5")
    finally:
        dev.stop()
    argv = [sys.executable, "-m", "reflex.entry", "policy", "compile", "--ledger", dev.paths.ledger,
            "--out", str(tmp_path / "epoch.toml")]
    quiet = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=dev.env)
    assert quiet.returncode == 0 and "compiling" not in quiet.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave, env=dev.env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    assert p.wait(120) == 0
    os.close(master)
    assert b"compiling" in seen and b"1 sessions" in seen, seen
