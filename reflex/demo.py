"""`ctx demo`: a real daemon handling a recorded Claude Code hook session.

The session in reflex/data/demo_session.jsonl was recorded from the real
Claude Code CLI (see evals/record_demo_session.py): every hook payload it
sent, in order.  The demo copies the small project the session worked on
into a scratch directory, starts a daemon in a CTX_HOME of its own, and feeds
each payload through the real shim process (`ctx hook claude`), doing what
Claude Code would do with each answer: run the command (rewritten or not) in
the project, or show the model the denial.  It then prints what the ledger
recorded, verifies it, retrieves one of the digest's addresses and says what
to do next.

The demo runs the project's tests with pytest, as the recorded session did.
Where pytest cannot be found it says so before it starts anything and fails
(DemoError): a demo that ran `pytest: command not found` through ctx would
show nothing about ctx.  Its CTX_HOME is kept afterwards (the addresses it
printed resolve there); `ctx demo --clean` removes it.
"""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

from reflex.errors import UserError

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SESSION = os.path.join(DATA, "demo_session.jsonl")
PROJECT = os.path.join(DATA, "demo_project")
# The project's permission rule in the recorded session: the tests run unasked.
ALLOW_RULE = "Bash(pytest:*)"
# What the recorded session runs besides the shell's own tools (see demo_session.meta.json).
REQUIRED_TOOLS = ("pytest",)


def load_session(path=SESSION):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _substitute(obj, mapping):
    if isinstance(obj, str):
        for k, v in mapping.items():
            obj = obj.replace(k, v)
        return obj
    if isinstance(obj, list):
        return [_substitute(x, mapping) for x in obj]
    if isinstance(obj, dict):
        return {k: _substitute(v, mapping) for k, v in obj.items()}
    return obj


def prepare_project(dest):
    os.makedirs(dest, exist_ok=True)
    for name in os.listdir(PROJECT):
        if name.startswith("__pycache__"):
            continue
        target = ".env" if name == "dotenv" else name
        shutil.copy(os.path.join(PROJECT, name), os.path.join(dest, target))
    # The recorded session ran with this project rule; with it, the harness would run the tests
    # unasked, so ctx rewrites them (without it, ctx leaves the command to the harness).
    os.makedirs(os.path.join(dest, ".claude"), exist_ok=True)
    with open(os.path.join(dest, ".claude", "settings.json"), "w") as f:
        json.dump({"permissions": {"allow": [ALLOW_RULE]}}, f, indent=2)
    return dest


class DemoError(UserError):
    """The demo cannot show ctx on this machine; the message says what is missing."""


def run_path(environ=None) -> str:
    """The PATH the demo runs the session's commands with: the Python ctx is installed in first,
    so the tools installed next to ctx (`pip install pytest` into the same environment) are found."""
    env = os.environ if environ is None else environ
    return os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")


def missing_tools(path=None) -> list:
    """(tool, why) for each command the recorded session runs that does not work on `path`
    (run_path()).  Found is not enough: a pyenv shim answers `command not found`, exit 127,
    when the selected Python lacks the tool, so each one is asked for its version."""
    path = path if path is not None else run_path()
    out = []
    for tool in REQUIRED_TOOLS:
        exe = shutil.which(tool, path=path)
        if exe is None:
            out.append((tool, "not found"))
            continue
        try:
            p = subprocess.run([exe, "--version"], capture_output=True, timeout=60,
                               env=dict(os.environ, PATH=path), stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as e:
            out.append((tool, "%s does not run: %s" % (exe, e)))
            continue
        if p.returncode != 0:
            said = (p.stdout + p.stderr).decode(errors="replace").strip().splitlines()
            out.append((tool, "%s exits %d%s" % (exe, p.returncode, (": " + said[0][:200]) if said else "")))
    return out


def default_scratch() -> str:
    """Where the demo keeps its project and CTX_HOME: one per user, replaced by the next demo."""
    return os.path.join(tempfile.gettempdir(), "ctx-demo-%d" % os.getuid())


def run_demo(out=print, home=None, keep=True, scratch=None):
    """Run the demo; returns a summary dict.  `out` receives each printed line.

    Raises DemoError before starting anything when a tool the session runs is missing.  The
    scratch directory (project and CTX_HOME) is kept unless keep=False."""
    missing = missing_tools()
    if missing:
        names = " ".join(t for t, _ in missing)
        raise DemoError(
            "ctx demo replays a session that runs the project's tests with %s, which does not work here (%s; "
            "this Python: %s). Install it into the same environment as ctx (`%s -m pip install %s`; for "
            "pipx, `pipx inject ctx-reflex %s`) and run `ctx demo` again. Nothing was started. ctx itself "
            "does not need %s: it digests whatever your project runs."
            % (names, "; ".join("%s: %s" % tw for tw in missing), sys.executable, sys.executable, names, names,
               names))
    if scratch is None:
        scratch = (tempfile.mkdtemp(prefix="ctx-demo-", dir=os.path.dirname(os.path.abspath(home)))
                   if home is not None else _fresh_scratch())
    ctx_home = home or os.path.join(scratch, "ctxhome")
    project = prepare_project(os.path.join(scratch, "project"))
    env = dict(os.environ, CTX_HOME=ctx_home, CLAUDE_PROJECT_DIR=project)
    from reflex import paths as paths_mod
    from reflex.daemon import control as daemon_control
    from reflex.shim import launcher
    os.environ["CTX_HOME"] = ctx_home
    paths = paths_mod.resolve()
    ctx = launcher.write_launcher(paths)
    out("ctx demo: CTX_HOME=%s" % ctx_home)
    out("project: %s (calc.py with a bug, its tests, a .env with fake secrets)" % project)
    t0 = time.time()
    st = daemon_control.start(paths)
    out("daemon started: pid %s in %.2fs" % (st.get("pid"), time.time() - t0))
    from reflex.tokens import tokenizer_status
    ok, detail = tokenizer_status()
    if ok:
        out("tokenizer: %s" % detail)
    else:
        out("!! NO TOKENIZER: %s" % detail)
        out("!! ctx cannot digest without it: every run below shows raw output and says why.")
        out("!! Fix: set TIKTOKEN_CACHE_DIR to a directory holding o200k_base, or allow one download.")
    out("")
    session = load_session()
    mapping = {"{project}": project, "{ctx}": ctx}
    answers = {}
    summary = {"events": 0, "rewrites": 0, "denies": 0, "runs": 0, "digests": 0, "addresses": [], "handles": [],
               "ctx_home": ctx_home, "project": project}
    try:
        for raw in session:
            payload = _substitute(raw, mapping)
            # A recorded duration is the original session's, not this replay's: comparing it with
            # the demo's own runs would print a meaningless (even negative) overhead.
            payload.pop("duration_ms", None)
            event = payload.get("hook_event_name")
            summary["events"] += 1
            t = time.perf_counter()
            p = subprocess.run([ctx, "hook", "claude"], input=json.dumps(payload).encode(),
                               capture_output=True, env=env, timeout=30)
            ms = (time.perf_counter() - t) * 1000
            answer = json.loads(p.stdout) if p.stdout.strip() else None
            cmd = (payload.get("tool_input") or {}).get("command")
            if event == "PreToolUse":
                answers[payload.get("tool_use_id")] = cmd
                printed = _show_pre(out, payload, answer, ms, project, env, summary)
                # The recorded model followed the address its digest printed; this replay's run
                # stored other bytes (pytest prints its timing), so its address differs: later
                # payloads get this run's.
                mapping.update(zip(recorded_addresses(session, payload.get("tool_use_id")), printed))
            elif event in ("PostToolUse", "PostToolUseFailure"):
                cmd = answers.get(payload.get("tool_use_id"), cmd)  # as the model wrote it
                code = 0 if event == "PostToolUse" else (payload.get("error") or "").split("\n", 1)[0]
                out("  %-19s %-34s recorded (%s) [%.1f ms]" % (event, _short(cmd), code, ms))
            else:
                out("%-21s %-34s recorded [%.1f ms]" % (event, payload.get("source") or payload.get("reason") or "",
                                                        ms))
        _wait_for_runs(paths, summary["runs"])
        out("")
        _report(out, paths, summary)
        _scorecard(out, paths, session)
        _replay(out)
    finally:
        daemon_control.stop(paths)
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    _next_steps(out, summary, kept=keep)
    return summary


def _fresh_scratch() -> str:
    """default_scratch(), emptied (the previous demo's daemon stopped first), or a new private
    directory when that path is not a directory of this user's (a shared /tmp: never follow
    or reuse what another user put there)."""
    path = default_scratch()
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        os.mkdir(path, 0o700)
        return path
    if not (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()):
        return tempfile.mkdtemp(prefix="ctx-demo-")
    _stop_old_daemon(os.path.join(path, "ctxhome"))
    shutil.rmtree(path, ignore_errors=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:         # something in it could not be removed: start elsewhere
        return tempfile.mkdtemp(prefix="ctx-demo-")
    return path


def _stop_old_daemon(ctx_home):
    """A previous demo's daemon (it exits when idle, but may still be up) before its home is removed."""
    if not os.path.isdir(ctx_home):
        return
    from reflex import paths as paths_mod
    from reflex.daemon import control as daemon_control
    saved = os.environ.get("CTX_HOME")
    os.environ["CTX_HOME"] = ctx_home
    try:
        daemon_control.stop(paths_mod.resolve())
    except Exception:  # noqa: BLE001 - a stale home is removed either way
        pass
    finally:
        if saved is None:
            os.environ.pop("CTX_HOME", None)
        else:
            os.environ["CTX_HOME"] = saved


def _wait_for_runs(paths, n, timeout=10.0):
    """Until the ledger holds the session's `ctx run` rows (the daemon writes them after the
    digest is printed), or the deadline: the report below reads them."""
    import sqlite3
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = sqlite3.connect("file:%s?mode=ro" % paths.ledger, uri=True)
            try:
                if conn.execute("SELECT count(*) FROM runs").fetchone()[0] >= n:
                    return
            finally:
                conn.close()
        except sqlite3.Error:
            pass
        time.sleep(0.05)


ADDRESS = re.compile(r"ctx get (r:[0-9a-f]{12}\S*(?: b3=[0-9a-f]+)?)")


def recorded_addresses(session, tool_use_id) -> list:
    """The `ctx get` addresses the recorded run of `tool_use_id` printed (from its post payload)."""
    for raw in session:
        if raw.get("tool_use_id") == tool_use_id and raw.get("hook_event_name") in ("PostToolUse",
                                                                                      "PostToolUseFailure"):
            return ADDRESS.findall(json.dumps(raw.get("tool_response") or raw.get("error") or ""))
    return []


def _show_pre(out, payload, answer, ms, project, env, summary):
    """Show one PreToolUse answer and do what the harness would; returns the addresses printed."""
    cmd = payload["tool_input"].get("command")
    hso = (answer or {}).get("hookSpecificOutput") or {}
    decision = hso.get("permissionDecision")
    if decision == "deny":
        summary["denies"] += 1
        out("PreToolUse            %-34s DENY [%.1f ms]" % (_short(cmd), ms))
        out("    the model is told: %s" % _short(hso.get("permissionDecisionReason", ""), 160))
        return []
    command = cmd
    if "updatedInput" in hso:
        summary["rewrites"] += 1
        command = hso["updatedInput"]["command"]
        out("PreToolUse            %-34s REWRITE (%s) [%.1f ms]" % (_short(cmd), decision, ms))
        out("    runs: %s" % _short(command, 120))
    else:
        out("PreToolUse            %-34s pass [%.1f ms]" % (_short(cmd), ms))
    if payload.get("tool_name") != "Bash":
        return []
    # Do what Claude Code's Bash tool would: run it in the project.
    run_env = dict(env, CLAUDE_CODE_SESSION_ID=payload.get("session_id", ""), PATH=run_path(env))
    p = subprocess.run(["/bin/bash", "-c", command], cwd=project, capture_output=True, env=run_env,
                       timeout=300)
    if "updatedInput" in hso:
        summary["runs"] += 1
    text = (p.stdout + p.stderr).decode(errors="replace").rstrip().splitlines()
    printed = []
    if "updatedInput" in hso:
        digest = [line for line in text if line.startswith("[ctx] ") and " | " in line]
        if digest and "passthrough" not in digest[0] and "no digest" not in digest[0]:
            summary["digests"] += 1
        printed = ADDRESS.findall("\n".join(text))
        summary["handles"].extend(w for line in digest for w in line.split() if re.fullmatch(r"r:[0-9a-f]{12}", w))
        summary["addresses"].extend(printed)
        if p.returncode in (126, 127):
            summary.setdefault("broken", []).append("%s exited %d" % (_short(cmd, 60), p.returncode))
    elif ADDRESS.match(cmd or ""):
        summary["retrieved"] = p.returncode == 0 and not any(line.startswith("ctx get: miss") for line in text)
    if not text:
        out("    exit %d, no output" % p.returncode)
        return printed
    # A retrieval's point is the failing line it returns (pytest marks it `>` and `E`); of
    # anything else, the end is what matters.
    pointed = [line for line in text if line.startswith((">", "E "))] if ADDRESS.match(cmd or "") else []
    shown, which = (pointed[:4], "its failing lines") if pointed else (text[-4:], "the last %d" % min(4, len(text)))
    out("    exit %d, %d line%s of output; the model sees %s:" % (
        p.returncode, len(text), "" if len(text) == 1 else "s", "all of it" if len(shown) == len(text)
        else "all %d (%s shown here)" % (len(text), which)))
    for line in shown:
        out("    | " + line[:150])
    return printed


def _report(out, paths, summary):
    import sqlite3
    from reflex.ledger.verify import verify
    conn = sqlite3.connect(paths.ledger)
    rows = conn.execute("SELECT kind, hook_event, decision, count(*) FROM events "
                        "GROUP BY kind, hook_event, decision ORDER BY min(id)").fetchall()
    runs = conn.execute("SELECT handle, exit_code, raw_bytes, command FROM runs ORDER BY id").fetchall()
    conn.close()
    out("ledger (%s): every hook event and every `ctx run`, append-only and hash-chained" % paths.ledger)
    for kind, ev, dec, n in rows:
        out("  %4d  %-8s %-20s %s" % (n, kind, ev or "", dec or ""))
    for handle, code, size, cmd in runs:
        out("  run %s exit %s, %d bytes stored: %s" % (handle, code, size, _short(cmd, 60)))
        if "|" in (cmd or "") and code not in (0, None):
            out("      (the exit of the command itself; the pipeline the model ran, like bash, exited "
                "with its last stage, so the model saw exit 0)")
    rep = verify(paths.ledger, paths.blobs)
    out("ctx ledger verify: %s (%d events, hash chain intact)" % ("OK" if rep.ok else "FAILED", rep.counts.get("events", 0)))
    summary["verify_ok"] = rep.ok


def _scorecard(out, paths, session):
    """The scorecard a user would see: `ctx stats --session <id>`."""
    if not session:
        return
    try:
        from reflex.analysis.stats import render
        from reflex.analysis.stats.scorecard import scorecard_from_ledger
        card = scorecard_from_ledger(paths.ledger, session[0].get("session_id"))
        if card:
            out("")
            out("$ ctx stats --session %s" % session[0].get("session_id"))
            out("  (what ctx did in this session and what it cost: 'harness alone' is what the model would "
                "have read of the same runs without ctx, 'delivered' what it read; the denied `cat .env` is an "
                "extra round ctx caused, and kept the secrets out of the model's context. Timings come from "
                "the replay, so the harness-side 'ctx run overhead' is not measured here.)")
            out(render.scorecard_text(card, False).rstrip("\n"))
    except Exception as e:  # the demo must still finish and verify
        out("(scorecard unavailable: %s)" % e)


def _next_steps(out, summary, kept):
    out("")
    if kept:
        home = summary["ctx_home"]
        last = summary["handles"][-1] if summary["handles"] else "ADDRESS"
        out("The demo's CTX_HOME is kept (`ctx demo --clean` removes it): `CTX_HOME=%s ctx get %s` prints the "
            "last run's stored output (an earlier run's address answers `superseded` and names the newer run), "
            "and `CTX_HOME=%s ctx stats --last` shows the scorecard again." % (home, last, home))
    else:
        out("The demo's CTX_HOME was removed (--clean): the addresses above no longer resolve.")
    out("Next: `ctx install` hooks ctx into Claude Code for your user (`--harness codex|gemini|…` for other "
        "agents), `ctx doctor` checks it, and after your next session `ctx stats --last` shows what ctx did in it.")


def _replay(out):
    """`ctx replay` over a real recorded Claude Code transcript (CC0), never seen by ctx."""
    from reflex.analysis import replay as replay_mod
    path = os.path.join(DATA, "demo_transcript.jsonl")
    report = replay_mod.json_report(replay_mod.replay(replay_mod.load(path)))
    decisions = {}
    for d in report["decisions"]:
        decisions[d["decision"]] = decisions.get(d["decision"], 0) + 1
    out("")
    out("$ ctx replay reflex/data/demo_transcript.jsonl   (a real Claude Code session, CC0)")
    out("  (what ctx would have decided at each Bash call of a session it never saw, and where its detectors "
        "fire: 'starvation' marks a re-run of the same command with nothing changed in between, the loop "
        "ctx answers by densifying the next digest)")
    out("  %d Bash calls; ctx would have: %s" % (report["commands"], ", ".join(
        "%s %d" % (k, v) for k, v in sorted(decisions.items()))))
    for f in report["firings"][:6]:
        out("  %-11s %s  %s" % (f["detector"], _short(f.get("core"), 40), _short(f.get("reason"), 70)))


def _short(s, n=34):
    s = " ".join(str(s or "").split())
    return s if len(s) <= n else s[:n - 1] + "…"


def problems(summary) -> list:
    """Why a finished demo did not show ctx working (empty: it did)."""
    out = list(summary.get("broken") or ())
    if summary.get("addresses") and summary.get("retrieved") is False:
        out.append("the session's `ctx get` of a digest's address missed")
    if summary.get("runs") and not summary.get("digests"):
        out.append("none of the %d rewritten runs was digested (see the tokenizer line at the top)" % summary["runs"])
    if not summary.get("verify_ok"):
        out.append("ctx ledger verify failed")
    return out
