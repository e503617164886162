"""Starvation, densify and inline for every runner family, on its real output, live and in replay.

For each family of the corpus (one failing case each, found in evals/corpus/index.json, so a family
added to the corpus is covered without touching this file), an agent loop is driven the way the
daemon drives it: the call is decided (rewrite to `ctx run`), the digest is rendered on the real
output at the density the fold gives, the run is recorded as the ledger records it (the daemon's
own digest_summary and the ledger reader's events_from_row), then the agent re-runs the command
behind `| tail -20` (the slice that starves) and once more ignoring the hints. The second digest
must be densified and say why, the third inlined; replaying the recorded events must fire exactly
what the live fold fired.
"""

import dataclasses
import json
import os

import pytest
from blake3 import blake3

from reflex.analysis.replay import _safety_policy, decide, replay_session
from reflex.arc.events import Event
from reflex.arc.fold import SessionReflex
from reflex.arc.ledger_events import events_from_row
from reflex.arc.policy import Policy
from reflex.daemon.ops import digest_summary
from reflex.digest import build_digest

from tests.support.corpus import recorded_cwd

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "evals", "corpus")


# Tools that are not runners (issue 29): a failed `git checkout` or `apt-get install` re-run is not
# a test re-run, and their starvation is not what this file is about.
NOT_RUNNERS = frozenset({"git", "search", "listing", "cilog", "install"})


def _one_failing_case_per_family():
    cases = {}
    for c in json.load(open(os.path.join(CORPUS, "index.json"))):
        if (c["family"] != "generic" and c["family"] not in NOT_RUNNERS and c["exit_code"] != 0
                and not c.get("held_out")):
            cases.setdefault(c["family"], c["family"] + "/" + c["case"])
    return sorted(cases.values())


CASES = _one_failing_case_per_family()


class Loop:
    def __init__(self, case):
        d = os.path.join(CORPUS, case)
        self.meta = json.load(open(os.path.join(d, "meta.json")))
        self.raw = open(os.path.join(d, "output.txt"), "rb").read()
        self.cwd = recorded_cwd(self.meta)
        self.sr = SessionReflex(Policy(), "s1")
        self.spolicy = _safety_policy([])
        self.events, self.live, self.digests, self.decisions = [], [], [], []

    def _apply(self, ev):
        ev = dataclasses.replace(ev, seq=len(self.events), session_id="s1")
        self.events.append(ev)
        self.live.extend((f.detector, f.tool_use_id) for f in self.sr.apply(ev))

    def call(self, command):
        tid = "t%d" % len(self.digests)
        ev = Event("command", tool_use_id=tid, tool_name="Bash", command=command, cwd=self.cwd)
        action, detail = decide(self.sr, ev, self.spolicy)
        self.decisions.append(action)
        self._apply(dataclasses.replace(ev, decision=action, decision_detail=detail))
        sig = self.sr.signature_of(command, self.cwd)
        density, reason = self.sr.density_for(sig.core_hash, sig.family)
        dg = build_digest(self.raw, family=sig.family, exit_code=self.meta["exit_code"], command=command,
                          handle="r:" + blake3(self.raw).hexdigest()[:12], density=density, reason=reason,
                          cwd=self.cwd)
        self.digests.append(dg)
        data = dict(digest_summary(dg), handle=dg.handle, reason=reason)
        row = {"kind": "run", "seq": 0, "session_id": "s1", "tool_use_id": tid, "cwd": self.cwd,
               "command": command, "exit_code": self.meta["exit_code"], "data": json.dumps(data)}
        for run in events_from_row(row):
            self._apply(run)
        self._apply(Event("result", tool_use_id=tid, exit_code=self.meta["exit_code"], ran=True))


def test_every_runner_family_of_the_corpus_is_covered():
    families = {c.split("/")[0] for c in CASES}
    assert {"pytest", "go", "jest", "exunit", "rspec", "phpunit", "junit", "ctest", "prove"} <= families


@pytest.mark.parametrize("case", CASES)
def test_starvation_densifies_then_ignored_hints_inline(case):
    loop = Loop(case)
    command = loop.meta["command"]
    loop.call(command)
    loop.call(command + " | tail -20")
    loop.call(command)
    # Every call of a known runner goes to ctx run, the sliced one included.
    assert loop.decisions == ["rewrite"] * 3, loop.decisions
    first, second, third = loop.digests
    assert (first.density, first.reason) == ("normal", None)
    starvation = [tid for det, tid in loop.live if det == "starvation"]
    lossy = bool(sum(first.omitted.values()) or first.truncated or (first.hints and not first.passthrough))
    if lossy:
        # The digest left something behind a hint: re-running it, sliced, is the starved re-issue.
        assert starvation == ["t1"], loop.live
        densified, after = second, third
    else:
        # A digest that left nothing out cannot starve; re-slicing it is reshaping what was seen.
        # The agent's own `| tail -20` made the next view lossy, so the run after it starves.
        assert starvation == ["t2"], loop.live
        assert second.density == "normal"
        densified, after = third, None
    assert densified.density == "dense" and "densified: re-run detected" in densified.reason
    header = densified.text.split("\n", 1)[0]
    # A densified digest that reaches the raw output's size is the output itself (passthrough).
    assert "densified: re-run detected" in header or densified.passthrough, header
    if after is not None and second.hints and not second.passthrough:
        # Hints shown twice and never followed: the next digest carries the evidence itself.
        assert after.density == "inline" and "inline: hints not followed" in after.reason, after.reason
        assert ("affordance", "t2") in loop.live
    # What the ledger holds replays to the same firings.
    replayed = replay_session(loop.events, Policy())
    assert [(f["detector"], f["tool_use_id"]) for f in replayed["firings"]] == loop.live
