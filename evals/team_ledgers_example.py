"""Worked example: a team compiles one policy epoch from several developers' exported ledgers.

Each developer's ctx keeps its own ledger (~/.local/share/ctx/ledger.db or $CTX_HOME).  To pool
them, each developer exports theirs and drops the file in a shared directory; anyone then
compiles the directory:

    # on each developer's machine
    ctx ledger export --format jsonl --out team-ledgers/alice.jsonl
    ctx ledger export --format parquet --out team-ledgers/bob.parquet    # needs ctx-reflex[parquet]

    # once, anywhere
    ctx policy compile --ledger team-ledgers/ --plan-value --out .ctx/policies/epoch-2.toml
    ctx policy check .ctx/policies/epoch-2.toml
    git add .ctx/policies/epoch-2.toml     # reviewed and committed like code

A directory is read as every *.db, *.sqlite, *.sqlite3, *.ledger, *.jsonl and *.parquet file in
it.  The epoch is the same bytes whatever order the files are listed or found in, and a session
that appears in two files (a ledger and its own export) is counted once; its [epoch] block
lists each input's blake3 digest and event count as provenance.

This script does all of it for real, end to end: it runs two "developers" (two CTX_HOMEs,
two real daemons) through simulated agent sessions: hook payloads delivered with
reflex.shim.hook.deliver exactly as the shim sends them and commands run through `ctx run` when
the daemon rewrites them, against a small real pytest project.  The agent is a simulation
(a fixed script of commands); the daemon, the hooks, `ctx run`, pytest and the ledgers are
real.  Then it exports alice as JSONL and bob as parquet (JSONL when pyarrow is missing),
compiles the directory twice (files listed in opposite orders) and checks the bytes agree.

Usage: python evals/team_ledgers_example.py [--keep DIR]
Writes evals/out/team_ledgers_example.json and prints the epoch's provenance.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

REPO = _common.REPO


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
        from reflex.shim import client
        os.makedirs(self.paths.home, exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "reflex.daemon", "run"], env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                if client.request_json(self.paths, "ping", connect_timeout=0.2, reply_timeout=1)[0].get("ok"):
                    return self
            except client.Unavailable:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("daemon for %s did not start" % self.name)

    def stop(self):
        _common.stop_daemon(self.paths, self.proc)

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
    a.bash("ls")                             # the remediation
    a.edit("test_a.py", tests_file(0))
    a.bash("python -m pytest -q")
    a.end()
    return a


def plain_session(dev, session, model):
    """No command ctx digests, and an A/B/A/B alternation."""
    a = dev.agent(session, model)
    a.start()
    for cmd in ("ls", "echo hello", "ls", "echo hello", "cat test_a.py"):
        a.bash(cmd)
    a.end()
    return a


def run(keep=None, log=print):
    root = keep or tempfile.mkdtemp(prefix="ctx-team-")
    os.makedirs(root, exist_ok=True)
    share = os.path.join(root, "team-ledgers")
    os.makedirs(share, exist_ok=True)
    alice, bob = Developer(root, "alice"), Developer(root, "bob")
    try:
        alice.start()
        loop_session(alice, "alice-1", "claude-haiku-4-5")
        careful_session(alice, "alice-2", "claude-sonnet-4-5")
        alice.stop()
        bob.start()
        careful_session(bob, "bob-1", "claude-opus-4-1")
        loop_session(bob, "bob-2", "claude-haiku-4-5")
        bob.stop()
    finally:
        alice.stop()
        bob.stop()
    alice.ctx("ledger", "export", "--format", "jsonl", "--out", os.path.join(share, "alice.jsonl"))
    try:
        import pyarrow  # noqa: F401
        bob_file = os.path.join(share, "bob.parquet")
        bob.ctx("ledger", "export", "--format", "parquet", "--out", bob_file)
    except ImportError:
        bob_file = os.path.join(share, "bob.jsonl")
        bob.ctx("ledger", "export", "--format", "jsonl", "--out", bob_file)
    epoch_dir = os.path.join(root, "epoch-from-dir.toml")
    epoch_listed = os.path.join(root, "epoch-listed.toml")
    alice.ctx("policy", "compile", "--ledger", share, "--plan-value", "--out", epoch_dir)
    alice.ctx("policy", "compile", "--ledger", bob_file, "--ledger", os.path.join(share, "alice.jsonl"),
              "--plan-value", "--out", epoch_listed)
    with open(epoch_dir, "rb") as f:
        a_bytes = f.read()
    with open(epoch_listed, "rb") as f:
        b_bytes = f.read()
    check = alice.ctx("policy", "check", epoch_dir).stdout.strip()
    stats = json.loads(alice.ctx("stats", "--ledger", alice.paths.ledger, "--json").stdout)
    result = {"inputs": sorted(os.listdir(share)), "identical": a_bytes == b_bytes, "check": check,
              "epoch_bytes": len(a_bytes), "alice_sessions": stats["sessions"],
              "provenance": [ln for ln in a_bytes.decode().splitlines() if ln.startswith("#   b3:")]}
    if keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return result, a_bytes.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", default=None, help="keep the developers' homes, exports and epochs here")
    a = ap.parse_args()
    result, text = run(a.keep)
    print(text.split("\n\n")[0])
    print("inputs:", ", ".join(result["inputs"]))
    print("same bytes whatever the order:", result["identical"])
    print(result["check"])
    print("wrote", _common.write_json("team_ledgers_example.json", result))
    sys.exit(0 if result["identical"] else 1)


if __name__ == "__main__":
    main()
