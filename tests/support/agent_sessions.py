"""One ctx session in a real agent CLI (Codex, Gemini, Copilot, Qwen Code, OpenCode or Droid), and the checks every harness
must pass, from what the scripted model received.

The scripted "model" (a simulation of an agent; the CLI, hooks, shell, daemon and pytest are
real) runs a failing pytest suite, re-runs it through `| tail -50` with the worktree unchanged,
follows a `ctx get` hint from the first digest, and tries `cat .env`.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support.agent_clis import CLIRun, opencode_config, run_cli
from tests.support.daemons import wait_for
from tests.support.api_models import ChatCompletionsAPI, GeminiAPI, ResponsesAPI, ScriptedAPI

VENV_BIN = os.path.dirname(sys.executable)
SEED_TEST = '''
import pytest

DATA = {"alpha": 3, "beta": 5, "gamma": 8}

def score(name):
    return DATA[name] * 2 + 1

@pytest.mark.parametrize("name,expected", [("alpha", 6), ("beta", 10), ("gamma", 16)])
def test_score(name, expected):
    got = score(name)
    assert got == expected, "score(%s) gave %d" % (name, got)

@pytest.mark.parametrize("n", range(12))
def test_passing(n):
    assert n >= 0

def test_lookup_missing():
    assert score("delta") == 0
'''
# The digest names parametrized siblings after their first id: `test_score[alpha-6] [beta-10] [gamma-16]`.
FAILING_IDS = ["test_seed.py::test_score[alpha-6]", "[beta-10]", "[gamma-16]", "test_seed.py::test_lookup_missing"]
SECRET = "sk-live-0123456789abcdef0123456789abcdef"
HINT_RE = re.compile(r"ctx get (r:[^\s`'\"]+)")
# ctx's answer where a harness cannot rewrite (reflex.harness.model.degrade): a deny naming the command.
SUGGESTION_RE = re.compile(r"Run it as: (.+?)\s*$", re.S)


def make_repo(repo: Path, files: dict[str, str] | None = None) -> Path:
    """A git repo with the seed suite and a `.env` (or with `files` instead, e.g. a referee fixture)."""
    repo.mkdir(parents=True)
    for name, text in (files or {"test_seed.py": SEED_TEST, ".env": "API_KEY=%s\n" % SECRET}).items():
        (repo / name).write_text(text)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-p no:cacheprovider'\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit",
                                                 "-qm", "seed"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


def ctx_env(ctx_home: Path) -> dict[str, str]:
    return {"CTX_HOME": str(ctx_home), "PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""),
            "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")}


def ctx(ctx_home: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    full = dict(os.environ, **ctx_env(ctx_home), **(env or {}))
    return subprocess.run([sys.executable, "-m", "reflex.entry", *args], env=full, capture_output=True, text=True,
                          timeout=timeout)


def install(name: str, ctx_home: Path, home: Path, repo: Path | None = None) -> str:
    """`ctx install --harness NAME` as a user would run it, into the run's throwaway HOME (OpenCode:
    into the project's opencode.json, see agent_clis.prepare_home)."""
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    if name == "codex":
        env["CODEX_HOME"] = str(home / ".codex")
    if name == "copilot":
        env["COPILOT_HOME"] = str(home / ".copilot")
    where = ("--settings", str(repo / "opencode.json")) if name == "opencode" and repo is not None else ()
    p = ctx(ctx_home, "install", "--harness", name, *where, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    again = ctx(ctx_home, "install", "--harness", name, *where, env=env)
    assert again.returncode == 0 and "already current" in again.stdout, again.stdout + again.stderr
    return p.stdout


CHAT_COMPLETIONS = ("qwen", "opencode", "droid")
OWN_TRANSCRIPT = ("qwen", "droid")  # session files `ctx replay` reads (reflex/harness/transcripts.py)
# Qwen ignores every rewrite a pre hook answers: in its YOLO mode ctx denies the command with the
# one to run instead, and the model (as a real one would) runs that.
DENY_WITH_SUGGESTION = ("qwen",)


def suggestions(outputs: list[str]) -> list[str]:
    return [o for o in outputs if SUGGESTION_RE.search(o)]


def following_suggestions(policy):  # noqa: ANN001, ANN201
    """The model runs the command a denial names; its script goes on over the other outputs."""
    def follow(outputs: list[str]) -> str | None:
        if outputs:
            m = SUGGESTION_RE.search(outputs[-1])
            if m:
                return m.group(1)
        return policy([o for o in outputs if not SUGGESTION_RE.search(o)])
    return follow


def api_for(name: str, policy, repo: Path | None = None) -> ScriptedAPI:  # noqa: ANN001
    if name in CHAT_COMPLETIONS:
        return ChatCompletionsAPI(policy, root=str(repo) if repo else None)
    return GeminiAPI(policy) if name == "gemini" else ResponsesAPI(policy)


@dataclass
class Session:
    name: str
    run: CLIRun
    outputs: list[str]
    api: ScriptedAPI
    ctx_home: Path
    repo: Path

    def describe(self) -> str:
        return "%s\n--- outputs seen by the model\n%s\n--- server errors %s" % (
            self.run.describe(), "\n=====\n".join(o[-1500:] for o in self.outputs), self.api.errors)


def loop_policy(outputs: list[str]) -> str | None:
    """pytest; the same run sliced; a hint from the first digest; cat .env; the CLI's own file
    reader on .env (Gemini, Copilot; Codex has none, its server answers that with `done`); done."""
    if len(outputs) == 0:
        return "pytest -q"
    if len(outputs) == 1:
        return "pytest -q 2>&1 | tail -50"
    if len(outputs) == 2:
        # The newest digest's hint: the re-run superseded the first run's handle.
        m = HINT_RE.search(outputs[1]) or HINT_RE.search(outputs[0])
        return "ctx get %s" % m.group(1) if m else "echo no-hint-found"
    if len(outputs) == 3:
        return "cat .env"
    if len(outputs) == 4:
        return "@read .env"
    return None


def run_session(name: str, tmp_path: Path, policy=loop_policy, *, with_ctx: bool = True,  # noqa: ANN001
                extra_args: tuple[str, ...] = (), argv_override=None,  # noqa: ANN001
                files: dict[str, str] | None = None, prompt: str = "make the tests pass",
                max_steps: int | None = None, env_extra: dict[str, str] | None = None) -> Session:
    repo = make_repo(tmp_path / "repo", files)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    ctx_home = tmp_path / "ctxhome"
    if name in DENY_WITH_SUGGESTION:
        policy = following_suggestions(policy)
    with api_for(name, policy, repo) as api:
        if max_steps is not None:
            api.max_steps = max_steps
        url = api.base_url
        from tests.support.agent_clis import prepare_home
        prepare_home(name, home, url)
        if name == "opencode":
            (repo / "opencode.json").write_text(json.dumps(opencode_config(url)))
        if with_ctx:
            install(name, ctx_home, home, repo)
        run = run_cli(name, repo=repo, home=home, api_url=url, prompt=prompt,
                      env_extra={**ctx_env(ctx_home), **(env_extra or {})}, extra_args=extra_args,
                      argv=argv_override)
        outputs = api.tool_outputs()
    return Session(name, run, outputs, api, ctx_home, repo)


def events(ctx_home: Path, session: str | None = None) -> list[dict]:
    db = ctx_home / "ledger.db"
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    sql = "SELECT * FROM events" + (" WHERE session_id = ?" if session else "") + " ORDER BY seq"
    rows = [dict(r) for r in conn.execute(sql, (session,) if session else ())]
    conn.close()
    return rows


def sessions(ctx_home: Path) -> list[dict]:
    conn = sqlite3.connect(ctx_home / "ledger.db")
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM sessions")]
    conn.close()
    return rows


def check_loop(s: Session) -> None:
    """Every assertion of the issue, from what the model received and what the ledger holds."""
    assert s.run.returncode == 0, s.describe()
    assert not s.api.errors, s.describe()
    file_reader = s.name != "codex"  # Codex reads files through its shell only
    outputs = s.outputs
    if s.name in DENY_WITH_SUGGESTION:  # each test run was denied once, naming `ctx run -- ...`
        denied = suggestions(outputs)
        assert len(denied) == 2 and all(" run -- " in SUGGESTION_RE.search(d).group(1) for d in denied), s.describe()
        outputs = [o for o in outputs if o not in denied]
    assert len(outputs) == (5 if file_reader else 4), s.describe()
    first, second, followed, secret = outputs[:4]
    # 1. the first run is a digest naming every failing test
    assert "[ctx] pytest" in first, s.describe()
    for test_id in FAILING_IDS:
        assert test_id in first, (test_id, s.describe())
    # 2. the sliced re-run with an unchanged worktree is densified and says so
    header = next((ln for ln in second.splitlines() if "[ctx] pytest" in ln), "")
    assert "densified: re-run detected" in header, s.describe()
    # 3. the hint was followable: `ctx get` returned the stored bytes it points at
    assert "no-hint-found" not in followed, s.describe()
    assert "score(" in followed or "assert" in followed or "KeyError" in followed, s.describe()
    # 4. `cat .env` was denied with ctx's remediation, and no secret reached the model
    assert SECRET not in "".join(s.outputs), s.describe()
    assert "secret" in secret.lower() and "ctx" in secret.lower(), s.describe()
    if file_reader:  # the harness's own file tool does not read it either (denied by ctx, or by the CLI)
        assert SECRET not in outputs[4] and "API_KEY" not in outputs[4], s.describe()
        if s.name != "gemini":  # Gemini's read_file refuses .env itself, before its hook
            assert "secret" in outputs[4].lower() and "ctx" in outputs[4].lower(), s.describe()
    # 5. the ledger has the session's events, labelled with the harness
    sess = [x for x in sessions(s.ctx_home) if x["harness"] == s.name]
    assert len(sess) == 1, sessions(s.ctx_home)
    sid = sess[0]["session_id"]
    assert wait_for(lambda: len([e for e in events(s.ctx_home, sid) if e["kind"] == "run"]) >= 2)
    evs = events(s.ctx_home, sid)
    hooks = [e for e in evs if e["kind"] == "hook"]
    assert hooks and all(e["harness"] == s.name for e in hooks), [(e["harness"], e["hook_event"]) for e in evs]
    names = [e["hook_event"] for e in hooks]
    assert names[0] == "SessionStart", names
    pre = [e for e in hooks if e["hook_event"] == "PreToolUse"]
    if s.name in DENY_WITH_SUGGESTION:  # the denied originals; the `ctx run` calls the model made
        degraded = [e for e in pre if (json.loads(e["data"] or "{}").get("degraded") or {}).get("to") == "deny"]
        assert [e["command"] for e in degraded] == ["pytest -q", "pytest -q 2>&1 | tail -50"], [dict(e) for e in pre]
    else:
        assert [e["command"] for e in pre][:2] == ["pytest -q", "pytest -q 2>&1 | tail -50"], [e["command"] for e in pre]
        assert pre[0]["decision"] == "rewrite" and pre[1]["decision"] == "rewrite", [dict(e) for e in pre]
    assert any(e["decision"] == "deny" and e["command"] == "cat .env" for e in pre), [dict(e) for e in pre]
    runs = [e for e in evs if e["kind"] == "run"]
    assert [r["command"] for r in runs][:2] == ["pytest -q", "pytest -q 2>&1 | tail -50"], runs
    # 6. `ctx stats --session` shows the session and its harness
    p = ctx(s.ctx_home, "stats", "--session", sid)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ("%s · %s ·" % (sid, s.name)) in p.stdout.splitlines()[0], p.stdout
    agg = json.loads(ctx(s.ctx_home, "stats", "--harness", s.name, "--json").stdout)
    assert agg["sessions"] == 1 and agg["by_harness"][s.name]["runs"] >= 2, agg["by_harness"]
    other = "claude" if s.name != "claude" else "codex"
    assert json.loads(ctx(s.ctx_home, "stats", "--harness", other, "--json").stdout)["sessions"] == 0
    verify = ctx(s.ctx_home, "ledger", "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # 7. replay: the session, from ctx's own ledger export, decides as the live run did
    export = ctx(s.ctx_home, "ledger", "export")
    assert export.returncode == 0, export.stderr
    (s.repo.parent / "ledger-export.jsonl").write_text(export.stdout)
    replay = ctx(s.ctx_home, "replay", str(s.repo.parent / "ledger-export.jsonl"), "--format", "events")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    replayed = replay.stdout.split("session %s:" % sid, 1)[-1]
    assert re.search(r"deny\s+cat \.env", replayed) and "starvation" in replayed, replay.stdout
    # ... per harness: this session under its own name, nothing under another
    db = str(s.ctx_home / "ledger.db")
    mine = json.loads(ctx(s.ctx_home, "replay", db, "--harness", s.name, "--json").stdout)
    assert mine["commands"] >= 4 and any(d["command"] == "cat .env" and d["decision"] == "deny"
                                         for d in mine["decisions"]), mine
    assert json.loads(ctx(s.ctx_home, "replay", db, "--harness", other, "--json").stdout)["commands"] == 0
    if s.name in OWN_TRANSCRIPT:  # ...and from the harness's own session file
        start = next(e for e in hooks if e["hook_event"] == "SessionStart")
        path = json.loads(start["data"])["transcript_path"]
        own = ctx(s.ctx_home, "replay", path)
        assert own.returncode == 0 and ("session %s:" % sid) in own.stdout, own.stdout + own.stderr
        assert re.search(r"deny\s+cat \.env", own.stdout) and re.search(r"\s+pytest -q\n", own.stdout), own.stdout
    if s.name in RECORDINGS:  # ...and from the session file the CLI wrote itself
        p = ctx(s.ctx_home, "replay", str(recording(s)), "--json")
        assert p.returncode == 0, p.stdout + p.stderr
        report = json.loads(p.stdout)
        decisions = report["decisions"]
        assert report["commands"] == 4 and decisions[-1]["command"] == "cat .env", decisions
        assert decisions[-1]["decision"] == "deny", decisions
        rerun = decisions[1]["tool_use_id"]
        assert any(f["detector"] == "starvation" and f["tool_use_id"] == rerun for f in report["firings"]), report


RECORDINGS = {"codex": ".codex/sessions/*/*/*/rollout-*.jsonl", "gemini": ".gemini/tmp/*/chats/session-*.jsonl",
              "copilot": ".copilot/session-state/*/events.jsonl"}


def recording(s: Session) -> Path:
    """The session file the CLI wrote itself (Codex rollout, Gemini chat, Copilot events)."""
    found = sorted((s.repo.parent / "home").glob(RECORDINGS[s.name]))
    assert len(found) == 1, found
    return found[0]


def kill_daemon(ctx_home: Path) -> None:
    from reflex import paths
    from reflex.daemon import control as daemon_control
    pid = daemon_control.lock_pid(paths.resolve({"CTX_HOME": str(ctx_home)}))
    if pid:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def dump(obj) -> str:  # noqa: ANN001
    return json.dumps(obj, indent=1, default=str)[:4000]
