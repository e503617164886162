"""Shared helpers for the benchmarks: an isolated CTX_HOME, a real daemon, JSON output.

Benchmarks report ratios against a baseline measured in the same run: these
machines are noisy and absolute times drift.
"""

import json
import os
import platform
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from tests.support import daemons  # noqa: E402
OUT_DIR = os.path.join(REPO, "evals", "out")


def setup_env(prefix="ctx-bench-"):
    return daemons.isolated_home(prefix)


def start_daemon(paths, wait=20):
    return daemons.start_daemon(paths, wait=wait)


def stop_daemon(paths, proc=None):
    daemons.stop_daemon(paths, proc)


def time_cmd(argv, data, env):
    """(wall seconds, CompletedProcess) of one process fed `data` on stdin."""
    t0 = time.perf_counter()
    p = subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return time.perf_counter() - t0, p


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
