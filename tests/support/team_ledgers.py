"""Simulated developers for team-scale examples and tests: a CTX_HOME, a real daemon, a real
pytest project, and an agent simulation that delivers hook payloads with
reflex.shim.hook.deliver exactly as the shim sends them and runs rewritten commands through
`ctx run`.  The agent is a fixed script of commands; the daemon, the hooks, `ctx run`, pytest
and the ledgers are real.  evals/team_ledgers_example.py is the worked example built on it.
"""

import json
import os
import subprocess
import sys
import tempfile
import time


from tests.support.daemons import start_daemon, stop_daemon

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tests_file(failing: int, total: int = 8) -> str:
    """A pytest module with `total` tests of which the first `failing` fail."""
    return "".join("def test_%d():\n    assert %d %s 100\n" % (i, i, "==" if i < failing else "!=")
                   for i in range(total))


class AgentSim:
    """A simulated agent driving the real daemon the way Claude Code does.

    Hook payloads go through reflex.shim.hook.deliver (the shim's own code); a Bash command the
    daemon rewrites runs as the rewritten command (so `ctx run` records its run under this
    session through CLAUDE_CODE_SESSION_ID); the result goes back as PostToolUse or
    PostToolUseFailure with the harness-measured duration."""

    def __init__(self, paths, env, session, project, model="claude-haiku-4-5"):
        self.paths, self.env, self.session, self.project, self.model = paths, env, session, project, model
        self.n = 0
        self.log = []

    def _deliver(self, payload):
        from reflex.shim import hook
        # This simulated harness runs every command it is given, no one asked: that is
        # bypassPermissions, and saying so lets ctx's permission mirror rewrite as it would there.
        base = {"session_id": self.session, "cwd": self.project, "transcript_path": "/tmp/transcript.jsonl",
                "permission_mode": "bypassPermissions"}
        base.update(payload)
        out, _err = hook.deliver(self.paths, "claude", json.dumps(base).encode())
        return json.loads(out) if out.strip() else None

    def tool_use_id(self):
        self.n += 1
        return "toolu_%s_%02d" % (self.session, self.n)

    def start(self):
        self._deliver({"hook_event_name": "SessionStart", "source": "startup", "model": self.model})

    def end(self):
        self._deliver({"hook_event_name": "SessionEnd", "reason": "exit"})

    def bash(self, command):
        """-> (tool_use_id, decision, exit code or None, output)."""
        tid = self.tool_use_id()
        ti = {"command": command, "description": "step %d" % self.n}
        ans = self._deliver({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": ti,
                             "tool_use_id": tid})
        hso = (ans or {}).get("hookSpecificOutput", {})
        if hso.get("permissionDecision") == "deny":
            self.log.append((tid, "deny", command))
            return tid, "deny", None, hso.get("permissionDecisionReason", "")
        run_cmd = hso.get("updatedInput", {}).get("command", command)
        env = dict(self.env, CLAUDE_CODE_SESSION_ID=self.session)
        t0 = time.perf_counter()
        p = subprocess.run(["/bin/bash", "-c", run_cmd], cwd=self.project, env=env, capture_output=True,
                           text=True, timeout=120)
        duration_ms = (time.perf_counter() - t0) * 1000.0
        out = p.stdout + p.stderr
        ti_run = dict(ti, command=run_cmd)
        if p.returncode == 0:
            self._deliver({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": ti_run,
                           "tool_use_id": tid, "duration_ms": duration_ms,
                           "tool_response": {"stdout": out, "stderr": "", "interrupted": False}})
        else:
            self._deliver({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": ti_run,
                           "tool_use_id": tid, "duration_ms": duration_ms, "is_interrupt": False,
                           "error": "Exit code %d\n%s" % (p.returncode, out)})
        decision = "rewrite" if run_cmd != command else "pass"
        self.log.append((tid, decision, command))
        return tid, decision, p.returncode, out

    def edit(self, rel, text):
        tid = self.tool_use_id()
        path = os.path.join(self.project, rel)
        ti = {"file_path": path, "old_string": "-", "new_string": "+"}
        self._deliver({"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": ti, "tool_use_id": tid})
        with open(path, "w") as f:
            f.write(text)
        self._deliver({"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": ti, "tool_use_id": tid,
                       "tool_response": {"filePath": path, "success": True}})
        self.log.append((tid, "edit", rel))
        return tid


class Developer:
    """One developer's machine: a CTX_HOME, a real daemon, a project."""

    def __init__(self, root, name):
        from reflex import paths as paths_mod
        self.name = name
        self.home = os.path.join(root, name)
        fake_home = os.path.join(self.home, "home")
        os.makedirs(fake_home, exist_ok=True)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("CLAUDE_") and k not in ("XDG_RUNTIME_DIR", "XDG_DATA_HOME", "CTX_SAFETY_ALLOW")}
        self.env.update(CTX_HOME=os.path.join(self.home, "ctxhome"), HOME=fake_home)
        # `ctx get` in a hint must resolve to this checkout's ctx, as in the agent's shell.
        self.env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + self.env.get("PATH", "")
        self.env.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(REPO, "..", "shared", "tiktoken"))
        self.paths = paths_mod.resolve(self.env)
        self.proc = None

    def start(self, wait=20):
        self.proc = start_daemon(self.paths, env=self.env, wait=wait)
        return self

    def stop(self):
        stop_daemon(self.paths, self.proc)

    def project(self, failing=8):
        d = tempfile.mkdtemp(prefix="proj-", dir=self.home)
        with open(os.path.join(d, "test_a.py"), "w") as f:
            f.write(tests_file(failing))
        return d

    def agent(self, session, model, failing=8):
        return AgentSim(self.paths, self.env, session, self.project(failing), model)

    def ctx(self, *args):
        p = subprocess.run([sys.executable, "-m", "reflex.entry"] + list(args), env=self.env,
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError("ctx %s failed: %s" % (" ".join(args), p.stderr[-2000:]))
        return p


def loop_session(dev, session, model):
    """The seed's loop: a digest, `| tail -50`, `--tb=long`, then edits until green."""
    a = dev.agent(session, model)
    a.start()
    a.bash("python -m pytest -q")
    a.bash("python -m pytest -q | tail -50")
    a.bash("python -m pytest -q --tb=long")
    a.edit("test_a.py", tests_file(5))
    a.bash("python -m pytest -q")
    a.edit("test_a.py", tests_file(0))
    a.bash("python -m pytest -q")
    a.end()
    return a


def careful_session(dev, session, model):
    """An agent that follows the digest: a hint retrieved, a narrower re-run, an edit, green."""
    a = dev.agent(session, model, failing=8)
    a.start()
    _tid, _d, _code, out = a.bash("python -m pytest -q")
    a.hint = next((w for line in out.splitlines() for w in line.split() if w.startswith("r:") and ":L" in w), None)
    if a.hint:
        a.bash("ctx get %s" % a.hint)
    a.bash("python -m pytest -q test_a.py::test_0")
    a.bash("cat .env")                       # denied by the safety plane
    a.bash("pwd")                            # the remediation (not a listing: those are digested)
    a.edit("test_a.py", tests_file(0))
    a.bash("python -m pytest -q")
    a.end()
    return a


def plain_session(dev, session, model):
    """No command ctx digests, and an A/B/A/B alternation."""
    a = dev.agent(session, model)
    a.start()
    # `pwd`, not `ls`: listings are digested since issue 29, and this session digests nothing.
    for cmd in ("pwd", "echo hello", "pwd", "echo hello", "cat test_a.py"):
        a.bash(cmd)
    a.end()
    return a
