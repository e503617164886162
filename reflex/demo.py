"""`ctx demo`: a real daemon handling a recorded Claude Code hook session.

The session in reflex/data/demo_session.jsonl was recorded from the real
Claude Code CLI (see evals/record_demo_session.py): every hook payload it
sent, in order.  The demo copies the small project the session worked on
into a scratch directory, starts a daemon in a throwaway CTX_HOME, and feeds
each payload through the real shim process (`ctx hook claude`), doing what
Claude Code would do with each answer: run the command (rewritten or not) in
the project, or show the model the denial.  It then prints what the ledger
recorded and verifies it.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SESSION = os.path.join(DATA, "demo_session.jsonl")
PROJECT = os.path.join(DATA, "demo_project")


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
    # The recorded session ran with this project rule; with it, the harness would run
    # `pytest` unasked, so ctx rewrites it (without it, ctx leaves the command to the harness).
    os.makedirs(os.path.join(dest, ".claude"), exist_ok=True)
    with open(os.path.join(dest, ".claude", "settings.json"), "w") as f:
        json.dump({"permissions": {"allow": ["Bash(pytest:*)"]}}, f, indent=2)
    return dest


def run_demo(out=print, home=None, keep=False):
    """Run the demo; returns a summary dict.  `out` receives each printed line."""
    scratch = tempfile.mkdtemp(prefix="ctx-demo-")
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
    summary = {"events": 0, "rewrites": 0, "denies": 0, "runs": 0}
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
                _show_pre(out, payload, answer, ms, project, env, summary)
            elif event in ("PostToolUse", "PostToolUseFailure"):
                cmd = answers.get(payload.get("tool_use_id"), cmd)  # as the model wrote it
                code = 0 if event == "PostToolUse" else (payload.get("error") or "").split("\n", 1)[0]
                out("  %-19s %-34s recorded (%s) [%.1f ms]" % (event, _short(cmd), code, ms))
            else:
                out("%-21s %-34s recorded [%.1f ms]" % (event, payload.get("source") or payload.get("reason") or "",
                                                        ms))
    finally:
        time.sleep(0.2)
        out("")
        _report(out, paths, summary)
        _scorecard(out, paths, session)
        _replay(out)
        daemon_control.stop(paths)
        if not keep and home is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return summary


def _show_pre(out, payload, answer, ms, project, env, summary):
    cmd = payload["tool_input"].get("command")
    hso = (answer or {}).get("hookSpecificOutput") or {}
    decision = hso.get("permissionDecision")
    if decision == "deny":
        summary["denies"] += 1
        out("PreToolUse            %-34s DENY [%.1f ms]" % (_short(cmd), ms))
        out("    the model is told: %s" % _short(hso.get("permissionDecisionReason", ""), 160))
        return
    command = cmd
    if "updatedInput" in hso:
        summary["rewrites"] += 1
        command = hso["updatedInput"]["command"]
        out("PreToolUse            %-34s REWRITE (%s) [%.1f ms]" % (_short(cmd), decision, ms))
        out("    runs: %s" % _short(command, 120))
    else:
        out("PreToolUse            %-34s pass [%.1f ms]" % (_short(cmd), ms))
    if payload.get("tool_name") != "Bash":
        return
    # Do what Claude Code's Bash tool would: run it in the project.
    run_env = dict(env, CLAUDE_CODE_SESSION_ID=payload.get("session_id", ""),
                   PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
    p = subprocess.run(["/bin/bash", "-c", command], cwd=project, capture_output=True, env=run_env,
                       timeout=300)
    if "updatedInput" in hso:
        summary["runs"] += 1
    text = (p.stdout + p.stderr).decode(errors="replace").rstrip().splitlines()
    if not text:
        out("    exit %d, no output" % p.returncode)
        return
    shown = min(4, len(text))
    out("    exit %d, %d line%s of output; the model sees %s:" % (
        p.returncode, len(text), "" if len(text) == 1 else "s", "all of it" if shown == len(text)
        else "all %d (the last %d shown here)" % (len(text), shown)))
    for line in text[-4:]:
        out("    | " + line[:150])


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
            out("  (what ctx did in this session and what it cost. The scripted model re-ran the tests once "
                "on purpose, with `| tail -5`, to show the starvation detector: that extra round is priced in "
                "'digest net', which is why it is negative in a session this small. Timings come from the "
                "replay, so the harness-side 'ctx run overhead' is not measured here.)")
            out(render.scorecard_text(card, False).rstrip("\n"))
    except Exception as e:  # the demo must still finish and verify
        out("(scorecard unavailable: %s)" % e)


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
