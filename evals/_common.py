"""Shared helpers for the benchmarks: an isolated CTX_HOME, a real daemon, JSON output.

Benchmarks report ratios against a baseline measured in the same run: these
machines are noisy and absolute times drift.
"""

import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(REPO, "evals", "out")


def setup_env(prefix="ctx-bench-"):
    home = tempfile.mkdtemp(prefix=prefix)
    os.environ["CTX_HOME"] = os.path.join(home, "ctxhome")
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(REPO, "..", "shared", "tiktoken"))
    from reflex import paths as paths_mod
    return paths_mod.resolve()


def start_daemon(paths, wait=20):
    from reflex.shim import client
    os.makedirs(paths.home, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "reflex.daemon", "run"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            if client.request_json(paths, "ping", connect_timeout=0.2, reply_timeout=1)[0].get("ok"):
                return proc
        except client.Unavailable:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("daemon did not start")


def stop_daemon(paths, proc=None):
    from reflex.daemon import control as daemon_control
    try:
        daemon_control.stop(paths)
    except Exception:
        pass
    pid = daemon_control.lock_pid(paths)
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if proc is not None:
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    k = min(len(xs) - 1, max(0, int(round(q / 100.0 * (len(xs) - 1)))))
    return xs[k]


def summary_ms(xs):
    return {"n": len(xs), "median_ms": round(statistics.median(xs) * 1000, 3),
            "p95_ms": round(pct(xs, 95) * 1000, 3), "max_ms": round(max(xs) * 1000, 3)}


def machine():
    return {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def write_json(name, obj):
    """Write a benchmark's result, stamped with the code it measured (evals/stamp.py)."""
    sys.path.insert(0, os.path.join(REPO, "evals"))
    import stamp
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, name)
    obj = dict(obj, **stamp.stamp())
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
    os.replace(tmp, path)
    return path
