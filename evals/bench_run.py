"""`ctx run` wall-time overhead over the bare command, for small outputs.

Interleaved in one run: the bare command (`bash -c CMD`), `ctx run -- CMD`
through the fast launcher (what rewrites use), and the baselines
`python3 -c pass` / the interpreter's own `-c pass`.  The overhead is
median(ctx run) - median(bare); the issue's target compares it with python
startup.  Also reports the daemon-side digest cost for a 100 KB and a 5 MB
output (tokenizer warm, as in the daemon).

Usage: python evals/bench_run.py [--runs N] [--quick]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

SMALL = "printf 'collected 3 items\\n\\n... [100%%]\\n3 passed in 0.01s\\n'"


def t(argv, env, cwd=None):
    s = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    return time.perf_counter() - s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="1 MB instead of 5 MB for the digest latencies")
    args = ap.parse_args()
    sizes = (("100KB", 100 * 1024), ("1MB" if args.quick else "5MB", (1 if args.quick else 5) * 1024 * 1024))
    paths = _common.setup_env()
    from reflex.shim import launcher
    fast = launcher.write_launcher(paths)
    proc = _common.start_daemon(paths)
    env = dict(os.environ)
    arms = {
        "bare bash -c": ["/bin/bash", "-c", SMALL],
        "ctx run (fast launcher)": [fast, "run", "--", SMALL],
        "python3 -c pass": ["python3", "-c", "pass"],
        "interp -c pass": [sys.executable, "-c", "pass"],
        "interp -S -c pass": [sys.executable, "-S", "-c", "pass"],
    }
    times = {k: [] for k in arms}
    try:
        for argv in arms.values():
            t(argv, env)
        for _ in range(args.runs):
            for k, argv in arms.items():
                times[k].append(t(argv, env))
        res_daemon = daemon_latency(paths, fast, env, sizes)
    finally:
        _common.stop_daemon(paths, proc)
    med = {k: statistics.median(v) for k, v in times.items()}
    overhead = med["ctx run (fast launcher)"] - med["bare bash -c"]
    res = {"machine": _common.machine(), "runs": args.runs,
           "median_ms": {k: round(v * 1000, 3) for k, v in med.items()},
           "overhead_ms": round(overhead * 1000, 3),
           "overhead_vs_python3_c_pass": round(overhead / med["python3 -c pass"], 3),
           "overhead_vs_interp_c_pass": round(overhead / med["interp -c pass"], 3),
           "overhead_vs_interp_S_c_pass": round(overhead / med["interp -S -c pass"], 3)}
    res["digest_latency"] = digest_latency(sizes)
    res["daemon_latency"] = res_daemon
    for k, v in res["median_ms"].items():
        print("%-26s %8.2f ms" % (k, v))
    print("ctx run overhead: %.2f ms = %.2fx python3 -c pass, %.2fx interp -c pass, %.2fx interp -S" % (
        res["overhead_ms"], res["overhead_vs_python3_c_pass"], res["overhead_vs_interp_c_pass"],
        res["overhead_vs_interp_S_c_pass"]))
    for k, v in res["digest_latency"].items():
        print("digest after the fact %-6s median %.1f ms (n=%d)" % (k, v["median_ms"], v["n"]))
    for k, v in res["daemon_latency"].items():
        print("daemon, ctx run %-6s median %.1f ms after exit (store+count tail+digest; n=%d)" % (
            k, v["median_ms"], v["n"]))
    print("wrote", _common.write_json("bench_run.json", res))


EMIT = r"""
import sys, time
line = b"tests/test_mod.py::test_case PASSED [ 50%%] some log text value=123456\n"
n = %d // len(line)
chunk = line * 2000
for i in range(0, n, 2000):
    sys.stdout.buffer.write(chunk)
    time.sleep(0.005)
"""


def daemon_latency(paths, fast, env, sizes):
    """Daemon-side time from the command's exit to the digest (store + count tail + render),
    for commands that emit 100 KB and 5 MB over their run, as test runners do; read from
    the timing each run records in the ledger."""
    import json
    import sqlite3
    out = {}
    for label, size in sizes:
        script = os.path.join(paths.home, "emit_%s.py" % label)
        with open(script, "w") as f:
            f.write(EMIT % size)
        for _ in range(3 if size > 1e6 else 5):
            subprocess.run([fast, "run", "--", "%s %s" % (sys.executable, script)], stdout=subprocess.DEVNULL,
                           env=env)
        conn = sqlite3.connect(paths.ledger)
        rows = conn.execute("SELECT data FROM events WHERE kind='run' AND command LIKE ? ORDER BY id DESC LIMIT 5",
                            ("%" + os.path.basename(script),)).fetchall()
        conn.close()
        xs = []
        counted = 0
        for (d,) in rows:
            t = json.loads(d).get("timing_ms") or {}
            xs.append(t.get("store", 0) + t.get("follow", 0) + t.get("digest", 0))
            counted += 1 if t.get("counted_while_running") else 0
        if xs:
            out[label] = {"n": len(xs), "median_ms": round(statistics.median(xs), 2), "max_ms": round(max(xs), 2),
                          "counted_while_running": counted}
    return out


def digest_latency(sizes):
    """Median digest time in-process with a warm tokenizer, on real pytest-shaped output."""
    from reflex import tokens
    from reflex.digest import build_digest
    tokens.count("warm")
    corpus = os.path.join(_common.REPO, "evals", "corpus", "pytest", "tb_long", "output.txt")
    with open(corpus, "rb") as f:
        base = f.read()
    out = {}
    for label, size in sizes:
        raw = (base * (size // len(base) + 1))[:size]
        raw = raw[:raw.rfind(b"\n") + 1]
        xs = []
        for _ in range(5 if size > 1e6 else 20):
            s = time.perf_counter()
            build_digest(raw, family="pytest", exit_code=1, command="pytest", handle="r:0123456789ab")
            xs.append(time.perf_counter() - s)
        out[label] = {"n": len(xs), "median_ms": round(statistics.median(xs) * 1000, 2),
                      "max_ms": round(max(xs) * 1000, 2)}
    return out


if __name__ == "__main__":
    main()
