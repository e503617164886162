"""The four detectors over synthetic event sequences: what fires, what never does, and why."""

import pytest

from reflex.arc.events import Event
from reflex.arc.fold import SessionReflex
from reflex.arc.policy import Policy

H1 = "r:0123456789ab"
H2 = "r:0123456789ac"


class Session:
    """A session driven like the daemon drives it: each command is decided with the state so
    far, and a rewritten one gets a run whose density comes from density_for()."""

    def __init__(self, policy=None, reflexes=True, cwd="/p"):
        self.sr = SessionReflex(policy or Policy(), "s1", reflexes=reflexes)
        self.cwd = cwd
        self.firings = []
        self.densities = []      # (density, reason) each run was rendered at
        self.n = 0

    def _apply(self, kind, **kw):
        e = Event(kind, seq=self.n, session_id="s1", **kw)
        self.n += 1
        out = self.sr.apply(e)
        self.firings.extend(out)
        return out

    def cmd(self, command, decision="pass", tid=None, wt=None, bg=False, detail=None):
        tid = tid or "t%d" % self.n
        self._apply("command", tool_use_id=tid, tool_name="Bash", command=command, cwd=self.cwd,
                    decision=decision, decision_detail=detail, worktree_hash=wt, background=bg)
        return tid

    def result(self, tid, exit_code=0, ran=True, truncated=None):
        return self._apply("result", tool_use_id=tid, exit_code=exit_code, ran=ran, truncated=truncated)

    def run(self, command, handle=H1, hints=(), failed_ids=(), failed_count=None, omitted=1, truncated=False,
            density=None, wt=None):
        sig = self.sr.signature_of(command, self.cwd)
        if density is None:
            density, reason = self.sr.density_for(sig.core_hash, sig.family)
            self.densities.append((density, reason))
        return self._apply("run", command=command, cwd=self.cwd, handle=handle, density=density, hints=tuple(hints),
                           failed_ids=tuple(failed_ids), failed_count=failed_count, omitted=omitted,
                           truncated=truncated, worktree_hash=wt, exit_code=1)

    def call(self, command, exit_code=1, wt=None, truncated=None, **run):
        """A plain (uninstrumented) call, or a rewritten one with a digest when run= is given."""
        tid = self.cmd(command, decision="rewrite" if run else "pass", wt=wt)
        if run:
            self.run(command, wt=wt, **run)
        self.result(tid, exit_code=exit_code, truncated=truncated)
        return tid

    def edit(self, path="calc.py"):
        self._apply("edit", tool_name="Edit", paths=(path,))

    def other(self, kind, **kw):
        return self._apply(kind, **kw)

    def fired(self, detector):
        return [f for f in self.firings if f.detector == detector]

    def density(self, command):
        sig = self.sr.signature_of(command, self.cwd)
        return self.sr.density_for(sig.core_hash, sig.family)


DIGEST = dict(hints=[H1 + "#tests/test_calc.py::test_mean", H1 + ":L10-40"],
              failed_ids=["tests/test_calc.py::test_mean"], failed_count=2, omitted=1)


# -- starvation --------------------------------------------------------------------------------

def test_seed_loop_fires_starvation_exactly_once_and_densifies():
    s = Session()
    s.call("pytest tests/", **DIGEST)
    assert s.density("pytest tests/") == ("normal", None)
    t2 = s.call("pytest tests/ | tail -50", **dict(DIGEST, handle=H2))
    s.call("pytest --tb=long tests/", **DIGEST)
    st = s.fired("starvation")
    assert len(st) == 1
    assert st[0].tool_use_id == t2 and st[0].signal["occurrence"] == 2 and st[0].signal["instrumented"]
    # the re-run's own digest was rendered densified and says why; the first was not
    assert s.densities[0] == ("normal", None)
    assert s.densities[1] == ("dense", "densified: re-run detected")
    assert "densified: re-run detected" in s.densities[2][1]
    assert s.sr.state.latches[st[0].core_hash].dense == st[0].seq


def test_seed_loop_second_digest_is_dense_with_its_reason():
    s = Session()
    s.call("pytest tests/", **DIGEST)
    s.cmd("pytest tests/ | tail -50", decision="rewrite")
    assert s.density("pytest tests/ | tail -50") == ("dense", "densified: re-run detected")


def test_seed_loop_with_edits_in_between_fires_nothing():
    s = Session()
    s.call("pytest tests/", **DIGEST)
    s.edit()
    s.call("pytest tests/ | tail -50", **DIGEST)
    s.edit()
    s.call("pytest --tb=long tests/", **DIGEST)
    assert s.firings == []
    assert s.density("pytest tests/") == ("normal", None)


def test_unknown_family_with_new_slicer_is_starvation():
    s = Session()
    s.call('mix test 2>&1 | tail -5')
    t = s.call('mix test 2>&1 | grep -E "(tests|failures)"')
    s.call('mix test 2>&1 | tail -40')
    st = s.fired("starvation")
    assert [f.tool_use_id for f in st] == [t]
    assert st[0].core == "mix test" and "tail 5" in st[0].reason


def test_make_check_dropping_its_slicer_is_starvation():
    s = Session()
    s.call("make check 2>&1 | tail -30")
    t = s.call("make check")
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


def test_equal_worktree_hash_is_starvation_even_after_an_edit_event():
    s = Session()
    s.call("pytest -q | tail -5", wt="wt:aa")
    s.edit()
    s.call("pytest -q | tail -20", wt="wt:aa")
    assert len(s.fired("starvation")) == 1


def test_different_worktree_hash_is_progress_without_any_edit_event():
    s = Session()
    s.call("pytest -q | tail -5", wt="wt:aa")
    s.call("pytest -q | tail -20", wt="wt:bb")
    assert s.fired("starvation") == []


@pytest.mark.parametrize("between", ["edit", "prompt", "compaction", "session_start", "write"])
def test_a_change_or_censoring_boundary_in_between_is_never_starvation(between):
    s = Session()
    s.call("go test ./... | tail -5")
    if between == "edit":
        s.edit()
    elif between == "write":
        s.call("sed -i s/a/b/ stats.go")
    else:
        s.other(between)
    s.call("go test ./... | grep FAIL")
    assert s.fired("starvation") == []


def test_paging_a_file_is_not_starvation():
    s = Session()
    s.call("sed -n 1,80p src/app.py")
    s.call("sed -n 80,160p src/app.py")
    s.call("cat src/app.py | head -50")
    s.call("cat src/app.py | sed -n 50,100p")
    s.call("cat src/app.py | sed -n 50,100p")
    assert s.firings == []


def test_polling_a_background_task_is_not_starvation():
    s = Session()
    bg = s.cmd("npm run build > build.log 2>&1", bg=True)
    s.result(bg)
    s.call("grep -c error build.log | tail -1")
    s.call("grep -c error build.log | head -1")
    s.call("tail -5 /tmp/claude/tasks/b1.output")
    s.call("tail -5 /tmp/claude/tasks/b1.output")
    s.call("sleep 5; curl -s localhost:8000/health | head -3")
    s.call("sleep 10; curl -s localhost:8000/health | head -1")
    assert s.firings == []


def test_verbatim_rerun_of_complete_output_is_a_retry_not_starvation():
    s = Session()
    s.call("git status")
    s.call("git status")
    s.call("bun install -g ralph-tui", exit_code=1)
    s.call("bun install -g ralph-tui")
    assert s.firings == []


def test_verbatim_rerun_of_a_digest_that_left_things_out_is_starvation():
    s = Session()
    s.call("pytest", **DIGEST)
    t = s.call("pytest", **DIGEST)
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


def test_narrowing_a_complete_view_is_not_starvation():
    s = Session()
    s.call("ykman piv info 2>&1")
    s.call('ykman piv info 2>&1 | grep -E "PIN|PUK"')
    assert s.firings == []


def test_harness_truncation_makes_the_view_lossy():
    s = Session()
    s.call("cargo test", truncated=True)
    t = s.call("cargo test 2>&1 | grep -A5 panicked")
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


def test_first_call_that_never_ran_is_censored():
    s = Session()
    t = s.cmd("pytest -q | tail -5")
    s.result(t, ran=False)
    s.call("pytest -q | tail -20")
    denied = s.cmd("jest | tail -5", decision="deny", detail="secret-read")
    assert denied
    s.call("jest | tail -30")
    assert s.fired("starvation") == []


def test_parallel_calls_are_not_reruns_of_each_other():
    s = Session()
    a = s.cmd("pytest -q | tail -5")
    b = s.cmd("pytest -q | tail -50")
    s.result(a)
    s.result(b)
    assert s.fired("starvation") == []


def test_warns_once_per_streak_and_a_new_streak_after_progress():
    s = Session()
    s.call("tsc --noEmit | head -20")
    for n in (30, 40, 50):
        s.call("tsc --noEmit | head -%d" % n)
    assert len(s.fired("starvation")) == 1
    s.edit()
    s.call("tsc --noEmit | head -20")
    s.call("tsc --noEmit | head -60")
    assert len(s.fired("starvation")) == 2


def test_fire_at_threshold_comes_from_the_policy():
    s = Session(Policy.model_validate({"starvation": {"fire_at": 3}}))
    s.call("ruff check . | head -5")
    s.call("ruff check . | head -10")
    assert s.fired("starvation") == []
    t = s.call("ruff check . | head -50")
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


def test_circuit_breaker_after_densified_digests_still_starve():
    s = Session()
    s.call("pytest", **DIGEST)
    s.call("pytest | tail -50", **dict(DIGEST, hints=[]))   # starvation: next digests dense
    assert s.density("pytest")[0] == "dense"
    s.call("pytest | tail -80", **dict(DIGEST, hints=[]))   # 1st starvation of a dense digest
    assert s.density("pytest")[0] == "dense"
    t = s.call("pytest -v", **dict(DIGEST, hints=[]))       # 2nd: breaker
    breakers = [f for f in s.fired("starvation") if f.signal.get("breaker")]
    assert [f.tool_use_id for f in breakers] == [t]
    assert s.density("pytest") == ("raw-capped", "raw-capped: starved after densify")


# -- starvation in the wild (issue 17): each case is shaped on a labelled real session ------------

def test_an_empty_grep_then_a_harmless_flag_spelling_is_the_same_loop():
    # attio-mcp-server 3954325bf1: `| grep "Test Files:"` printed nothing, then `npm test -- --run`.
    s = Session()
    s.call('npm test 2>&1 | grep "Test Files:"', exit_code=0)
    t = s.call("npm test -- --run")
    st = s.fired("starvation")
    assert [f.tool_use_id for f in st] == [t] and "grep" in st[0].reason
    # both spellings of the producer get the denser digest from here on
    assert s.density("npm test")[0] == s.density("npm test -- --run")[0] == "dense"


@pytest.mark.parametrize("first,second", [
    ("npm test", "npm test -- --watch=false"), ("pnpm test", "pnpm test --run"),
    ("npx vitest", "npx vitest run"), ("npx jest", "npx jest --watchAll=false --colors"),
])
def test_runner_flags_that_only_change_how_it_runs_are_the_same_core(first, second):
    s = Session()
    s.call(first + " 2>&1 | tail -5")
    t = s.call(second)
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


def test_runner_flags_that_change_what_runs_are_another_core():
    s = Session()
    s.call("npm test 2>&1 | tail -5")
    s.call("npm test -- test/a.test.ts")
    s.call("npm run test:offline 2>&1 | grep FAIL")
    assert s.fired("starvation") == []


def test_git_display_flags_are_views_of_one_diff():
    # attio 816b68aa84: `--stat | grep -v logs/` kept only the summary line, then `--name-only`.
    s = Session()
    s.call("git diff origin/main..69d7aa37 --stat | grep -v logs/", exit_code=0)
    t = s.call("git diff origin/main..69d7aa37 --name-only | grep -v logs/", exit_code=0)
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


def test_a_commit_between_two_runs_is_not_a_change():
    s = Session()
    s.call("pytest -q | tail -5")
    s.call("git add -A && git commit -m wip", exit_code=0)
    t = s.call("pytest -q | grep FAILED")
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


@pytest.mark.parametrize("between", ["git stash", "git checkout main", "git pull origin main", "npm install",
                                     "rm -rf dist", "git checkout -- src/a.py", "docker compose up -d"])
def test_commands_that_rewrite_the_worktree_or_local_state_are_changes(between):
    s = Session()
    s.call("pytest -q | tail -5")
    s.call(between, exit_code=0)
    s.call("pytest -q | grep FAILED")
    assert s.fired("starvation") == []


@pytest.mark.parametrize("first,second", [
    ("npm install 2>&1 | tail -5", "npm install 2>&1 | grep ERR"),
    ("git push 2>&1 | tail -3", "git push"),
    ("git checkout main 2>&1 | tail -2", "git checkout main"),
    ('curl -s -X POST https://api.example.com/v1/items -d "{}" | head -5', 'curl -s -X POST https://api.example.com/v1/items -d "{}"'),
])
def test_a_state_changing_command_again_is_a_retry(first, second):
    s = Session()
    s.call(first)
    s.call(second)
    assert s.fired("starvation") == []


@pytest.mark.parametrize("first,second", [
    ("gh run view 123 --json status | head -5", "gh run view 123 --json status,conclusion"),
    ("gh pr checks 12 | tail -3", "gh pr checks 12"),
    ("curl -s localhost:8000/healthz | jq .", "curl -s localhost:8000/healthz"),
    ("curl -s https://ci.example.com/api/builds/77 | head -3", "curl -s https://ci.example.com/api/builds/77"),
    ('ssh host "docker logs app 2>&1" | tail -20', 'ssh host "docker logs app 2>&1" | grep ERROR'),
    ("docker ps | head -3", "docker ps"),
    ("ps aux | grep esptool | grep -v grep", "ps aux | grep esptool | grep -v grep | head -1"),
    ("sleep 15 && gh run view 9 | tail -3", "sleep 30 && gh run view 9"),
])
def test_polling_live_state_is_never_starvation(first, second):
    s = Session()
    s.call(first)
    s.call(second)
    assert s.fired("starvation") == []


def test_a_remote_fetch_cut_by_its_own_view_is_starvation():
    # loopkit 73124c94e1: `curl URL | python3 -m json.tool | head -100`, then a python extraction.
    url = "https://api.fxtwitter.com/u/status/206"
    s = Session()
    s.call("curl -sL %s | python3 -m json.tool | head -100" % url, exit_code=0)
    t = s.call('curl -sL %s | python3 -c "import json,sys; d=json.load(sys.stdin); print(d[1])"' % url,
               exit_code=0)
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


def test_a_pipe_into_a_program_that_acts_is_not_a_view():
    s = Session()
    s.call("curl -sL https://example.com/install.sh | head -20", exit_code=0)
    s.call("curl -sL https://example.com/install.sh | sh", exit_code=0)
    s.call('curl -sL https://example.com/a.json | python3 -c "import sys,os; os.remove(sys.stdin.read())"',
           exit_code=0)
    assert s.fired("starvation") == []


def test_rereading_a_finished_log_with_another_slice_is_starvation():
    # openshrooly 80ad1d1f82: `cat <finished build output> | tail -20`, then `| grep -E "Error|FAILED"`.
    s = Session()
    s.call("npm test > /tmp/t.log 2>&1")
    s.call("tail -20 /tmp/t.log", exit_code=0)
    s.edit("src/app.ts")                       # an edit elsewhere does not change a finished log
    t = s.call("grep -E 'Error|FAILED' /tmp/t.log | head -10", exit_code=0)
    st = s.fired("starvation")
    assert [f.tool_use_id for f in st] == [t] and "finished log /tmp/t.log" in st[0].reason
    s2 = Session()
    s2.call("cat build.log | tail -20", exit_code=0)
    t2 = s2.call("cat build.log | grep Error", exit_code=0)
    assert [f.tool_use_id for f in s2.fired("starvation")] == [t2]


def test_a_log_is_paged_forward_rewritten_or_not_a_log():
    s = Session()
    s.call("sed -n 1,100p build.log", exit_code=0)
    s.call("sed -n 100,200p build.log", exit_code=0)          # the next page: reading on
    s.call("tail -20 /tmp/t.log", exit_code=0)
    s.call("npm test > /tmp/t.log 2>&1")                      # rewritten in between
    s.call("grep FAIL /tmp/t.log", exit_code=0)
    s.call("cat src/app.py | head -50", exit_code=0)          # source, not a log: reading
    s.call("cat src/app.py | grep import", exit_code=0)
    assert s.fired("starvation") == []


def test_a_log_still_written_by_a_background_task_is_polled_until_the_task_ends():
    s = Session()
    bg = s.cmd("npm run build > build.log 2>&1", bg=True)
    s.result(bg)
    s.call("tail -20 build.log", exit_code=0)
    s.call("grep -i error build.log", exit_code=0)
    assert s.fired("starvation") == []
    s.other("task_end", tool_use_id=bg)
    s.call("tail -5 build.log", exit_code=0)
    t = s.call("grep -c warning build.log", exit_code=0)
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


def test_the_harness_s_task_output_file_is_a_log_once_the_task_ends():
    s = Session()
    bg = s.cmd("esphome compile app.yaml", bg=True)
    s._apply("result", tool_use_id=bg, ran=True, paths=("/tmp/claude/tasks/b1.output",))
    s.call("cat /tmp/claude/tasks/b1.output | tail -20", exit_code=0)
    s.call("cat /tmp/claude/tasks/b1.output | grep error", exit_code=0)
    assert s.fired("starvation") == []                         # still running: polling its output
    s.other("task_end", tool_use_id=bg, paths=("/tmp/claude/tasks/b1.output",))
    s.call("cat /tmp/claude/tasks/b1.output | tail -20", exit_code=0)
    t = s.call("cat /tmp/claude/tasks/b1.output | grep -B2 Error", exit_code=0)
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]


# -- affordance --------------------------------------------------------------------------------

def test_affordance_fires_after_two_runs_of_ignored_hints_then_inlines():
    s = Session()
    s.call("pytest", **DIGEST)
    s.call("pytest | tail -50", **DIGEST)
    assert s.fired("affordance") == []
    t = s.call("pytest --tb=long", **DIGEST)
    aff = s.fired("affordance")
    assert [f.tool_use_id for f in aff] == [t] and aff[0].signal["ignored_runs"] == 2
    assert s.density("pytest") == ("inline", "densified: re-run detected; inline: hints not followed")


def test_affordance_threshold_from_policy():
    s = Session(Policy.model_validate({"affordance": {"fire_after_ignored": 1}}))
    s.call("pytest", **DIGEST)
    t = s.call("pytest | tail -50", **DIGEST)
    assert [f.tool_use_id for f in s.fired("affordance")] == [t]


def test_retrieval_on_the_handle_resolves_hints_and_lands():
    s = Session(Policy.model_validate({"affordance": {"fire_after_ignored": 1}}))
    s.call("pytest", **DIGEST)
    s.other("retrieval", command="ctx get %s:L10-40" % H1, address=H1 + ":L10-40", handle=H1, result="know")
    s.call("pytest | tail -50", **DIGEST)
    assert s.fired("affordance") == []
    assert [f.reason for f in s.fired("landing")] == ["span resolved"]


def test_narrower_run_of_a_named_test_resolves_hints():
    s = Session(Policy.model_validate({"affordance": {"fire_after_ignored": 1}}))
    s.call("pytest tests/", **DIGEST)
    s.call("pytest tests/test_calc.py::test_mean")
    s.call("pytest tests/ | tail -5", **DIGEST)
    assert s.fired("affordance") == []
    assert [f.reason for f in s.fired("landing")] == ["narrower re-run of a named failing test"]


def test_read_of_a_named_file_resolves_hints():
    s = Session(Policy.model_validate({"affordance": {"fire_after_ignored": 1}}))
    s.call("pytest", **DIGEST)
    s.other("read", tool_name="Read", paths=("/p/tests/test_calc.py:1-40",))
    s.call("pytest | tail -5", **DIGEST)
    assert s.fired("affordance") == []
    assert [f.reason for f in s.fired("landing")] == ["hint followed: read of a named file"]


def test_hints_ignored_across_an_edit_are_not_judged():
    s = Session(Policy.model_validate({"affordance": {"fire_after_ignored": 1}}))
    s.call("pytest", **DIGEST)
    s.edit()
    s.call("pytest", **DIGEST)
    assert s.firings == []


# -- friction ----------------------------------------------------------------------------------

def test_safety_deny_then_verbatim_retry_fires_but_never_stands_down():
    s = Session()
    s.cmd("head -3 .env", decision="deny", detail="secret-read")
    t = s.cmd("head -3 .env", decision="deny", detail="secret-read")
    fr = s.fired("friction")
    assert [f.tool_use_id for f in fr] == [t] and fr[0].signal["safety"] is True
    core = fr[0].core_hash
    assert s.sr.escalate_teaching(core) is None
    s.cmd("head -3 .env", decision="deny", detail="secret-read")
    assert not s.sr.stand_down(core)
    assert len(s.fired("friction")) == 1


def test_a_denied_call_delivered_twice_is_not_a_retry():
    # ctx hooked in user and project settings: the harness sends each event to both hooks, so
    # the daemon sees the one denied call twice, with one tool_use_id (issue 30 item 5).
    s = Session()
    s.cmd("cat .env", decision="deny", detail="secret-read", tid="toolu_1")
    s.cmd("cat .env", decision="deny", detail="secret-read", tid="toolu_1")
    assert s.fired("friction") == []
    t = s.cmd("cat .env", decision="deny", detail="secret-read", tid="toolu_2")   # a real retry
    assert [f.tool_use_id for f in s.fired("friction")] == [t]


def test_evidence_deny_retry_escalates_teaching_once_then_stands_down():
    s = Session()
    s.cmd("cat huge.log", decision="deny", detail="evidence:huge-read")
    s.cmd("cat  huge.log", decision="deny", detail="evidence:huge-read")   # same raw once collapsed
    core = s.fired("friction")[0].core_hash
    assert not s.sr.stand_down(core)
    text = s.sr.escalate_teaching(core)
    assert text and "cat huge.log" in text and "evidence:huge-read" in text
    s.cmd("cat huge.log", decision="pass")        # the teaching went out with this decision
    assert s.sr.escalate_teaching(core) is None
    assert s.sr.stand_down(core)


@pytest.mark.parametrize("route_around,route", [
    ("bash -c 'pytest -q'", "bash -c"),
    ("python -m pytest -q", "python -m"),
    ("/usr/local/bin/pytest -q", "abs-path"),
    ("env CI=1 pytest -q", "env"),
    ("cat > run.sh <<'EOF'\npytest\nEOF\nbash run.sh", "script"),
])
def test_rewrite_then_route_around(route_around, route):
    s = Session()
    first = s.cmd("pytest -q", decision="rewrite")
    s.run("pytest -q", **DIGEST)
    s.result(first)
    t = s.cmd(route_around, decision="pass")
    fr = s.fired("friction")
    assert [f.tool_use_id for f in fr] == [t]
    assert fr[0].signal["routes"] == [route] and fr[0].signal["safety"] is False
    core = fr[0].core_hash
    assert "goes around" in s.sr.escalate_teaching(core)
    s.cmd("pytest -q", decision="rewrite")
    assert s.sr.stand_down(core)


def test_a_route_the_rewritten_command_already_used_is_no_route_around():
    s = Session()
    s.cmd("python -m pytest -q", decision="rewrite")
    s.cmd("python -m pytest -q | tail -5", decision="rewrite")
    assert s.fired("friction") == []


def test_friction_does_not_cross_a_compaction():
    s = Session()
    s.cmd("pytest", decision="rewrite")
    s.other("compaction")
    s.cmd("bash -c pytest", decision="rewrite")
    s.cmd("rm -rf ~", decision="deny", detail="delete-outside-root")
    s.other("compaction")
    s.cmd("rm -rf ~", decision="deny", detail="delete-outside-root")
    assert s.fired("friction") == []


def test_reflexes_off_still_records_but_adapts_nothing():
    s = Session(reflexes=False)
    s.call("pytest", **DIGEST)
    s.call("pytest | tail -50", **DIGEST)
    s.cmd("pytest", decision="rewrite")
    s.cmd("bash -c pytest")
    assert len(s.fired("starvation")) == 1 and len(s.fired("friction")) == 1
    core = s.fired("starvation")[0].core_hash
    assert s.sr.density_for(core, "pytest") == ("normal", None)
    assert not s.sr.stand_down(core) and s.sr.escalate_teaching(core) is None


def test_ctx_reflexes_environment_switch():
    sr = SessionReflex(Policy(), "s", environ={"CTX_REFLEXES": "off"})
    assert sr.state.enabled is False
    assert SessionReflex(Policy(), "s", environ={}).state.enabled is True
    off = Policy.model_validate({"reflexes": {"enabled": False}})
    assert SessionReflex(off, "s", environ={}).state.enabled is False


# -- landings ----------------------------------------------------------------------------------

def test_failure_count_falling_across_runs_of_a_signature():
    s = Session()
    s.call("pytest", **dict(DIGEST, failed_count=8))
    s.edit()
    s.call("pytest", **dict(DIGEST, failed_count=5))
    s.edit()
    s.call("pytest", **dict(DIGEST, failed_count=5))
    lands = [f for f in s.fired("landing") if f.reason == "failure count falling"]
    assert len(lands) == 1 and lands[0].signal["from"] == 8 and lands[0].signal["to"] == 5


def test_remediation_taken_after_a_deny():
    s = Session()
    s.cmd("cat .env", decision="deny", detail="secret-read")
    s.cmd("cat .env.example")
    lands = s.fired("landing")
    assert [f.reason for f in lands] == ["remediation taken"]
    assert lands[0].signal["rule"] == "secret-read" and lands[0].signal["denied"] == "cat .env"


def test_hint_followed_with_a_miss_is_still_followed():
    s = Session()
    s.call("pytest", **DIGEST)
    s.other("retrieval", address=H1 + "#tests/test_calc.py::test_mean", handle=H1, result="miss")
    assert [f.reason for f in s.fired("landing")] == ["hint followed"]


def test_firing_to_json_has_the_signal():
    s = Session()
    s.call("make | tail -3")
    s.call("make | tail -30")
    j = s.fired("starvation")[0].to_json()
    assert set(j) == {"detector", "tool_use_id", "core_hash", "core", "reason", "signal", "seq"}
    assert j["signal"]["prior_raw"] == "make | tail -3" and j["signal"]["raw"] == "make | tail -30"


def test_a_run_the_harness_stopped_is_retried_not_starved():
    s = Session()
    t = s.cmd("esphome compile app.yaml 2>&1 | tail -30")
    s._apply("result", tool_use_id=t, exit_code=1, ran=True, reason="timed out")
    s.call("esphome compile app.yaml 2>&1 | grep -i error")
    assert s.fired("starvation") == []


def test_a_subagent_asking_again_is_not_the_main_agent_starving():
    # Hooks inside subagents carry the session's id and an agent_id: one fold, two contexts.
    s = Session()
    s.call("pytest -q | tail -5")
    s._apply("command", tool_use_id="sub1", tool_name="Bash", command="pytest -q | grep FAILED", cwd=s.cwd,
             agent_id="a7")
    s.result("sub1")
    assert s.fired("starvation") == []
    t = s.call("pytest -q | grep FAILED")
    assert [f.tool_use_id for f in s.fired("starvation")] == [t]
