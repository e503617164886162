"""Hook round trip per harness: `ctx hook claude|codex|gemini|copilot|qwen|opencode|droid|cursor`,
daemon warm, against
`python -S -c pass` (and `python3 -c pass`), interleaved in one run so drift hits all arms alike.

Each harness gets its own pre-shell payload for `pytest -q` (shapes recorded from Claude Code
2.1.332, Codex 0.171.0, Gemini 0.61.0, Copilot 1.0.102, Qwen 0.24.4, ctx's OpenCode 1.18.33
plugin, Droid 0.225.2; Cursor's from its documentation), through the fast launcher that
`ctx install --harness` writes into the harness's config.  The non-Claude harnesses pay for the
codec on top of Claude's path (decode, translate, decide once, encode); this measures what that
costs per tool call.  Whether the answer was a rewrite is recorded: the bench process is not the
harness, so the permission mirror leaves the decision to the harness and the answer is empty for
the three (the decision path still runs in full).

Usage: python evals/bench_harness_hooks.py [--runs N]
"""

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402


def payloads(cwd):
    cmd = "pytest -q"
    return {
        "claude": ({"session_id": "bench-claude", "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Bash",
                    "tool_input": {"command": cmd, "description": "Run tests"}, "tool_use_id": "toolu_bench",
                    "permission_mode": "default", "transcript_path": "/tmp/x.jsonl"}, []),
        "codex": ({"session_id": "bench-codex", "turn_id": "t", "transcript_path": "/tmp/r.jsonl", "cwd": cwd,
                   "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "bypassPermissions",
                   "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "call_1"}, []),
        "gemini": ({"session_id": "bench-gemini", "transcript_path": "/tmp/s.jsonl", "cwd": cwd,
                    "hook_event_name": "BeforeTool", "timestamp": "2026-12-01T00:00:00.000Z",
                    "tool_name": "run_shell_command", "tool_input": {"command": cmd, "description": "Run tests"}}, []),
        "copilot": ({"sessionId": "bench-copilot", "timestamp": 1796078490512, "cwd": cwd, "toolName": "bash",
                     "toolArgs": {"command": cmd, "description": "Run tests"}}, ["preToolUse"]),
        "qwen": ({"session_id": "bench-qwen", "transcript_path": "/tmp/q.jsonl", "cwd": cwd,
                  "hook_event_name": "PreToolUse", "timestamp": "2026-12-01T00:00:00.000Z", "permission_mode": "yolo",
                  "tool_name": "run_shell_command", "tool_input": {"command": cmd, "description": "Run tests"},
                  "tool_use_id": "toolu_bench", "tool_call_id": "call_1"}, []),
        # what ctx's OpenCode plugin hands the shim from tool.execute.before
        "opencode": ({"hook_event_name": "tool.execute.before", "session_id": "ses_bench", "call_id": "call_1",
                      "tool": "bash", "args": {"command": cmd, "description": "Run tests"}, "cwd": cwd}, []),
        "droid": ({"session_id": "bench-droid", "transcript_path": "/tmp/d.jsonl", "cwd": cwd,
                   "permission_mode": "auto-low", "hook_event_name": "PreToolUse", "tool_name": "Execute",
                   "tool_input": {"command": cmd, "description": "Run tests"}}, []),
        # Cursor: its documented schema (no client runs here)
        "cursor": ({"conversation_id": "bench-cursor", "generation_id": "g", "model": "gpt-5",
                    "hook_event_name": "preToolUse", "cursor_version": "2.1.0", "workspace_roots": [cwd],
                    "tool_name": "Shell", "tool_input": {"command": cmd}, "tool_use_id": "tu_1", "cwd": cwd,
                    "transcript_path": "/tmp/c.jsonl"}, []),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    paths = _common.setup_env()
    from reflex.shim import launcher
    fast = launcher.write_launcher(paths)
    proc = _common.start_daemon(paths)
    env = dict(os.environ)
    cwd = os.path.dirname(paths.home)
    arms = {"python3 -c pass": (["python3", "-c", "pass"], b""),
            "python -S -c pass": ([sys.executable, "-S", "-c", "pass"], b"")}
    for name, (obj, extra) in payloads(cwd).items():
        arms["ctx hook %s" % name] = ([fast, "hook", name] + extra, json.dumps(obj).encode())
    times = {k: [] for k in arms}
    answers = {}
    try:
        for name, (argv, data) in arms.items():  # warm up caches and the daemon's per-harness state
            _common.time_cmd(argv, data, env)
        for _ in range(args.runs):
            for name, (argv, data) in arms.items():
                dt, p = _common.time_cmd(argv, data, env)
                times[name].append(dt)
                answers[name] = (p.returncode, p.stdout[:200].decode(errors="replace"), p.stderr[:200].decode(
                    errors="replace"))
    finally:
        _common.stop_daemon(paths, proc)
    base = statistics.median(times["python -S -c pass"])
    py3 = statistics.median(times["python3 -c pass"])
    result = {"machine": _common.machine(), "runs": args.runs, "arms": {}}
    print("%-22s %9s %9s %9s %12s %12s" % ("arm", "median", "p95", "max", "x python -S", "x python3"))
    for name, xs in times.items():
        s = _common.summary_ms(xs)
        s["ratio_vs_python_S_c_pass"] = round(statistics.median(xs) / base, 3)
        s["ratio_vs_python3_c_pass"] = round(statistics.median(xs) / py3, 3)
        rc, out, err = answers[name]
        s.update(exit_code=rc, answer_head=out, stderr_head=err)
        result["arms"][name] = s
        print("%-22s %7.2fms %7.2fms %7.2fms %11.2fx %11.2fx" % (
            name, s["median_ms"], s["p95_ms"], s["max_ms"], s["ratio_vs_python_S_c_pass"], s["ratio_vs_python3_c_pass"]))
    bad = [n for n, s in result["arms"].items() if s["exit_code"] != 0 or s["stderr_head"]]
    result["all_answered_cleanly"] = not bad
    print("every hook exited 0 with nothing on stderr:", not bad, bad or "")
    print("wrote", _common.write_json("bench_harness_hooks.json", result))


if __name__ == "__main__":
    main()
