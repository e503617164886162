"""Commands that never exit, in the REAL Claude Code CLI, with and without ctx (issue 30, item 7).

The same scripted session (a simulation of an agent; the CLI, hooks, daemon, shell, npm, node and
pytest are real) runs once with no hooks and once with ctx installed:

1. a dev server (`npm run dev`: prints "ready on http://…", then a tick every 300 ms, forever)
   started with `run_in_background`; the agent waits for "ready on" in the task's output file,
   reads it with Read (2.1.332 has no BashOutput tool: the Bash result names the file and says
   "use Read on that file path"), and stops it with TaskStop;
2. the same dev server in the foreground with the Bash `timeout` (3 s): the harness moves it to
   the background at the timeout and the model gets what it printed so far, "ready on" included;
   then TaskStop;
3. a pytest run that hangs after 400 passing tests, with `timeout` 6 s: moved to the background,
   then killed by TaskStop; the task's output file must hold the partial output (with ctx: ctx
   run's digest of it, whose address `ctx get` serves, and a ledger run with exit 143);
4. a script that reads stdin: the harness gives /dev/null, so it sees EOF at once, with or
   without ctx (ctx run passes stdin through).

After the session nothing either run started may still be alive (each process carries a marker
in its argv).  What differs with ctx is asserted where it differs; see docs/never-exiting.md.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.support.agent_sessions import wait_for
from tests.support.claude_harness import ClaudeEnv, run_claude
from tests.support.scripted_model import DeterministicPolicy, FinalText, ToolUse

pytestmark = pytest.mark.e2e

VENV_BIN = os.path.dirname(sys.executable)
TASK = re.compile(r"ID: (\w+)\)?\. Output is being written to: (\S+\.output)")
PASSING = 400

SERVER_JS = """
const http = require('http');
const s = http.createServer((q, r) => r.end('ok'));
s.listen(0, '127.0.0.1', () => { console.log('ready on http://127.0.0.1:' + s.address().port); });
let n = 0; setInterval(() => console.log('tick ' + (++n)), 300);
"""
ASK_JS = ("process.stdout.write('name? ');"
          "process.stdin.on('data', d => { console.log('hello ' + d); process.exit(0); });"
          "process.stdin.on('end', () => { console.log('no stdin'); process.exit(2); });")


def _project(repo: Path, marker: str) -> None:
    (repo / "server.js").write_text(SERVER_JS)
    (repo / "ask.js").write_text(ASK_JS)
    (repo / "package.json").write_text(json.dumps(
        {"name": "p", "version": "1.0.0", "scripts": {"dev": f"node server.js {marker}", "ask": "node ask.js"}}))
    tests = "".join(f"def test_ok_{i}():\n    assert True\n\n" for i in range(PASSING))
    (repo / "test_hang.py").write_text(
        f"import time\n\nMARKER = {marker!r}\n\n{tests}"
        "def test_hang():\n    open('hang.started', 'w').close()\n    time.sleep(600)\n")


def _settings(tmp_path: Path, ctx_home: Path | None) -> Path:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(pytest:*)", "Bash(npm run:*)"]}}))
    if ctx_home is not None:
        p = subprocess.run([sys.executable, "-m", "reflex.entry", "install", "--settings", str(settings)],
                           env=dict(os.environ, CTX_HOME=str(ctx_home)), capture_output=True, text=True, timeout=60, check=False)
        assert p.returncode == 0, p.stderr
    return settings


class NeverExitingSession(DeterministicPolicy):
    """The agent's moves; it keeps what it learnt (task ids, output files, tool results) on self."""

    max_steps = 20

    def __init__(self, hang_argv: str, settled: str) -> None:
        self.hang_argv = hang_argv
        self.settled = settled  # what the hanging run's task file holds once all its output is in
        self.seen: dict[str, str] = {}
        self.tasks: dict[str, tuple[str, str]] = {}

    def _task(self, name: str, text: str) -> tuple[str, str]:
        m = TASK.search(text)
        assert m, f"{name}: no background task in {text[:600]!r}"
        self.tasks[name] = (m.group(1), m.group(2))
        return self.tasks[name]

    def first(self, state):
        return ToolUse("npm run dev", extra={"run_in_background": True})

    def after(self, state, last):
        step, text = state.step, last.text
        if step == 1:
            self.seen["bg_started"] = text
            _, out = self._task("bg", text)
            return ToolUse(f"timeout 20 sh -c 'until grep -q \"ready on\" {out}; do sleep 0.1; done'; echo waited")
        if step == 2:
            return ToolUse("read", name="Read", extra={"file_path": self.tasks["bg"][1]})
        if step == 3:
            self.seen["bg_read"] = text
            return ToolUse("load TaskStop", name="ToolSearch", extra={"query": "select:TaskStop"})
        if step == 4:
            return ToolUse("stop", name="TaskStop", extra={"task_id": self.tasks["bg"][0]})
        if step == 5:
            self.seen["bg_stopped"] = text
            return ToolUse("npm run dev", extra={"timeout": 3000})
        if step == 6:
            self.seen["fg_timeout"] = text
            return ToolUse("stop", name="TaskStop", extra={"task_id": self._task("fg", text)[0]})
        if step == 7:
            return ToolUse(self.hang_argv, extra={"timeout": 6000})
        if step == 8:
            self.seen["hang_timeout"] = text
            self._task("hang", text)
            # stop it only once every passing test is through (test_hang leaves the file)
            return ToolUse("timeout 60 sh -c 'until [ -e hang.started ]; do sleep 0.1; done'; echo waited")
        if step == 9:
            return ToolUse("stop", name="TaskStop", extra={"task_id": self.tasks["hang"][0]})
        if step == 10:
            self.seen["hang_stopped"] = text
            return ToolUse(f"timeout 20 sh -c 'until grep -qF \"{self.settled}\" {self.tasks['hang'][1]}; "
                           "do sleep 0.1; done'; echo waited")
        if step == 11:
            return ToolUse("read", name="Read", extra={"file_path": self.tasks["hang"][1]})
        if step == 12:
            self.seen["hang_read"] = text
            return ToolUse("npm run ask")
        if step == 13:
            self.seen["ask"] = text
            self.seen["ask_is_error"] = str(last.is_error)
        return FinalText("done")


def _alive_with(marker: str) -> list[str]:
    """Processes whose command line carries the marker (a dev server, a pytest), as `pid args`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in argv:
            found.append(f"{proc.name} {argv}")
    return found


def _kill_all(found: list[str]) -> None:
    for line in found:
        try:
            os.kill(int(line.split()[0]), signal.SIGKILL)
        except OSError:
            pass


def _ledger_runs(ctx_home: Path, session: str) -> list[dict]:
    import sqlite3
    conn = sqlite3.connect(ctx_home / "ledger.db")
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM events WHERE session_id = ? ORDER BY seq", (session,))]
    conn.close()
    return rows


def _run_session(claude_env: ClaudeEnv, tmp_path: Path, ctx_home: Path | None, **extra_env: str):
    marker = "H30MARK" + uuid.uuid4().hex[:12]
    _project(claude_env.repo, marker)
    settings = _settings(tmp_path, ctx_home)
    env = {"PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""),
           "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", ""), **extra_env}
    if ctx_home is not None:
        env["CTX_HOME"] = str(ctx_home)
    # `-p` marker keeps the marker in pytest's own argv, so a leaked pytest is found like a server
    policy = NeverExitingSession(f"pytest -v test_hang.py -p no:cacheprovider -k 'test_ or {marker}'",
                                 # ctx run writes its digest after the kill; without ctx the kill is the end
                                 settled="[ctx]" if ctx_home is not None else "killed")
    # the CLI's process group is NOT reaped: the Bash children live in groups of their own, and
    # whatever the harness's kills left behind is exactly what this test looks for
    try:
        run = run_claude("start the dev server, then run the tests", cwd=claude_env.repo, settings_path=settings,
                         model_server=claude_env.model_server, env_extra=env, timeout=120, home=claude_env.home,
                         policy=policy, allowed_tools=("Bash", "Read", "ToolSearch", "TaskStop"),
                         reap_process_group=False)
    finally:
        # the harness's own kill is asynchronous: give it a moment, then look (and clean up)
        wait_for(lambda: not _alive_with(marker), timeout=5)
        leaked = _alive_with(marker)
        _kill_all(leaked)
    assert claude_env.model_server.errors == [], claude_env.model_server.errors
    assert run.returncode == 0, run.describe()
    assert leaked == [], f"processes outlived the harness's kills: {leaked}"
    return run, policy.seen


def _check_common(seen: dict[str, str]) -> None:
    # 1. background dev server: "ready on" readable in the task file while it runs; stopped
    assert "Command running in background" in seen["bg_started"]
    assert re.search(r"ready on http://127\.0\.0\.1:\d+", seen["bg_read"]), seen["bg_read"]
    assert "Successfully stopped task" in seen["bg_stopped"], seen["bg_stopped"]
    # 2. foreground dev server hitting the Bash timeout: what it printed reached the model at once
    assert "did not complete within its 3s timeout and was moved to the background" in seen["fg_timeout"]
    assert re.search(r"ready on http://127\.0\.0\.1:\d+\ntick 1\n", seen["fg_timeout"]), seen["fg_timeout"]
    # 3. the hanging pytest: moved to the background at 6 s, then killed by TaskStop
    assert "did not complete within its 6s timeout" in seen["hang_timeout"], seen["hang_timeout"]
    assert "Successfully stopped task" in seen["hang_stopped"], seen["hang_stopped"]
    assert "[killed]" in seen["hang_read"], seen["hang_read"]
    # 4. stdin: /dev/null in the harness, EOF at once, the script's own exit code
    assert seen["ask_is_error"] == "True" and seen["ask"].startswith("Exit code 2"), seen["ask"]
    assert "name? no stdin" in seen["ask"], seen["ask"]


def test_without_ctx(claude_env: ClaudeEnv, tmp_path: Path) -> None:
    _run, seen = _run_session(claude_env, tmp_path, None)
    _check_common(seen)
    # at the timeout the model saw the tail of pytest's progress (the harness keeps the tail of a
    # long output and names the file for the rest), and all of the partial output after the kill
    assert re.search(r"test_hang\.py::test_ok_\d+ PASSED", seen["hang_timeout"]), seen["hang_timeout"]
    assert seen["hang_read"].count(" PASSED") == PASSING, seen["hang_read"][:400]


@pytest.fixture
def ctx_home(tmp_path: Path):
    home = tmp_path / "ctxhome"
    yield home
    subprocess.run([sys.executable, "-m", "reflex.entry", "daemon", "stop"], env=dict(os.environ, CTX_HOME=str(home)),
                   capture_output=True, timeout=60, check=False)


def test_with_ctx(claude_env: ClaudeEnv, tmp_path: Path, ctx_home: Path) -> None:
    run, seen = _run_session(claude_env, tmp_path, ctx_home)
    _check_common(seen)
    session = run.session_id
    assert wait_for(lambda: not list((ctx_home / "spool").glob("*.frame")))
    events = _ledger_runs(ctx_home, session)
    pre = [(e["command"], e["decision"]) for e in events if e["hook_event"] == "PreToolUse" and e["command"]]
    # the dev server passed untouched both times (backgrounded, then by its script's name);
    # pytest and the stdin script were rewritten into ctx run
    assert [d for c, d in pre if c == "npm run dev"] == ["pass", "pass"], pre
    assert [d for c, d in pre if c.startswith("pytest")] == ["rewrite"], pre
    assert [d for c, d in pre if c == "npm run ask"] == ["rewrite"], pre
    # the killed pytest: ctx run kept what it printed (exit 143: SIGTERM from TaskStop) and digested it
    runs = [e for e in events if e["kind"] == "run"]
    hang = next(e for e in runs if e["command"].startswith("pytest"))
    assert hang["exit_code"] == 143, hang
    assert re.search(r"\[ctx\] pytest .*\| exit 143 \|", seen["hang_read"]), seen["hang_read"][:2000]
    addr = re.search(r"\| (r:[0-9a-f]{8,})\b", seen["hang_read"])
    assert addr, seen["hang_read"][:2000]
    got = subprocess.run([os.path.join(VENV_BIN, "ctx"), "get", addr.group(1)], capture_output=True, text=True,
                         env=dict(os.environ, CTX_HOME=str(ctx_home)), timeout=60, check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    # the stored bytes are the whole partial output, every test the run got through
    assert got.stdout.count(" PASSED") == PASSING and "test_hang" in got.stdout, got.stdout[:400]
    ask = next(e for e in runs if e["command"] == "npm run ask")
    assert ask["exit_code"] == 2


class ProgressHidden(AssertionError):
    """The one failure the known gap below expects; any other failure of that test is real."""


def test_with_ctx_the_latest_lines_are_printed_before_the_harness_timeout(claude_env: ClaudeEnv, tmp_path: Path,
                                                                          ctx_home: Path) -> None:
    # ctx run prints a running command's latest lines once, at CTX_PROGRESS_AFTER_S (110 s by
    # default, under Claude Code's default 120 s timeout): set under this session's 6 s timeout.
    _run, seen = _run_session(claude_env, tmp_path, ctx_home, CTX_PROGRESS_AFTER_S="3")
    _check_common(seen)
    assert "[ctx] still running after 3 s" in seen["hang_timeout"], seen["hang_timeout"][:1500]
    assert re.search(r"test_hang\.py::test_ok_\d+ PASSED", seen["hang_timeout"]), seen["hang_timeout"][:1500]


@pytest.mark.xfail(strict=True, raises=ProgressHidden, reason="KNOWN GAP: ctx run prints a running command's latest lines "
                                       "at 110 s (under Claude Code's default 120 s Bash timeout), not at a "
                                       "shorter timeout the call sets itself: then the model sees no "
                                       "progress of a rewritten command at that timeout (without ctx it "
                                       "sees what ran so far); see docs/never-exiting.md")
def test_with_ctx_progress_is_visible_at_the_harness_timeout(claude_env: ClaudeEnv, tmp_path: Path,
                                                              ctx_home: Path) -> None:
    _run, seen = _run_session(claude_env, tmp_path, ctx_home)
    _check_common(seen)
    if not re.search(r"test_hang\.py::test_ok_\d+ PASSED", seen["hang_timeout"]):
        raise ProgressHidden(seen["hang_timeout"])
