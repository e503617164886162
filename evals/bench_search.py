"""`ctx search` on 100 MB of stored output: answer time per pattern, and hook latency while it runs.

Stored output: the real corpus outputs (evals/corpus), repeated until the size is
reached, with a secret every few hundred lines and now and then the lines that
make the catastrophic patterns below explode in a backtracking engine, stored
by real `ctx run`s of
SIZE/RUNS bytes each (default: 100 MB in 10 runs; --quick: 10 MB in 2 runs).
The daemon answers searches over all of them (its default scope).

Per pattern (literal, classes, anchors, dense, catastrophic for a backtracking
engine, DFA-hostile, secret probes):
  ctx        the daemon's answer time over its socket (as `ctx search` asks it),
             twice: `cold` (no redaction maps: the first search after a run,
             before the daemon computed them) and `warm` (maps in place);
             complete or cut by the 1 s limit, MB searched, matching lines
  grep       `grep -E -c` over the same bytes (a linear DFA matcher: the
             baseline; ratio = ctx warm / grep)
  python re  the engine ctx used before (Python `re`, line by line, on raw
             text), capped at --re-cap seconds
Hook latency: PreToolUse frames sent to the daemon's socket exactly as the shim
sends them, p50/p99, in alternating blocks with no search running and with a
search always running (back to back, a DFA-hostile pattern that runs to its
limit), in the same run; the ratio is the figure.

Usage: python evals/bench_search.py [--quick] [--size-mb N] [--runs N] [--hooks N]
"""

import argparse
import glob
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

SECRET = "ghp_" + "abc" + "Q7x9Lm2Pq8Rt5Vw3Yz6Bn1Cd4Fg0Hj7Km"
# (name, pattern, kind)
PATTERNS = [
    ("literal", "FAILED", "plain"),
    ("literal, rare", "zzqqzzqq", "plain"),
    ("case-insensitive", "(?i)error", "plain"),
    ("anchored", r"^E\s+assert", "plain"),
    ("classes", r"test_\w+\[[^\]]*\]", "plain"),
    ("alternation", r"(?:Error|Exception|panic|FAIL):", "plain"),
    ("dense (every line)", ".", "dense"),
    ("^(a+)+$", r"^(a+)+$", "catastrophic"),
    ("(a|aa)+$", r"(a|aa)+$", "catastrophic"),
    ("(x+x+)+y", r"(x+x+)+y", "catastrophic"),
    ("(.*a){12}", r"(.*a){12}", "catastrophic"),
    ("^(\\w+\\s?)*$", r"^(\w+\s?)*$", "catastrophic"),
    ("(a*)*b", r"(a*)*b", "catastrophic"),
    ("DFA-hostile", r"[a-z](?:[a-z ]){20}Error", "dfa-hostile"),
    ("secret probe ghp_abc", "ghp_abc", "probe"),
    ("secret probe ghp_abd", "ghp_abd", "probe"),
]
HOSTILE = r"[a-z](?:[a-z ]){20}Error"


def _limit_fsize():
    resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 30, 4 << 30))


# Lines on which a backtracking engine takes exponential time for the catastrophic patterns above.
ADVERSARIAL = ("a" * 28 + "!\n" + "x" * 28 + "\n" + "word " * 14 + "!\n" + "abbbbb" * 11 + "\n").encode()


def make_output(path, size):
    outs = [open(p, "rb").read() for p in sorted(glob.glob(os.path.join(_common.REPO, "evals", "corpus", "*", "*",
                                                                         "output.txt")))]
    rnd = random.Random(7)
    with open(path, "wb") as f:
        n = 0
        while n < size:
            chunk = rnd.choice(outs)
            if rnd.random() < 0.3:
                chunk += ("export GITHUB_TOKEN=%s\n" % SECRET).encode()
            if rnd.random() < 0.1:
                chunk += ADVERSARIAL
            f.write(chunk[:size - n])
            n += min(len(chunk), size - n)


def ctx(args, env, timeout=900):
    return subprocess.run([sys.executable, "-m", "reflex.entry"] + args, capture_output=True, env=env,
                          timeout=timeout, preexec_fn=_limit_fsize)


def ask(paths, pattern):
    from reflex.shim import client
    t0 = time.perf_counter()
    hdr, body = client.request_json(paths, "search", {"pattern": pattern, "json": True,
                                                      "uid": os.urandom(10).hex(), "cwd": "/"},
                                    connect_timeout=1, reply_timeout=120)
    dt = time.perf_counter() - t0
    ans = json.loads(body[:hdr.get("out", len(body))])
    know = ans.get("know") or {}
    text = know.get("text") or ans.get("miss", {}).get("detail", "")
    import re
    m = re.search(r"after ([0-9.]+) of ([0-9.]+) MB", text)
    return {"seconds": round(dt, 4), "answer": "know" if know else ans["miss"]["reason"],
            "complete": know.get("complete", "time limit" not in text), "matches": know.get("matches", 0),
            "searched_mb": float(m.group(1)) if m else None, "leaks_secret": SECRET in json.dumps(ans)}


def wait_warm(paths, timeout=60.0):
    """Seconds the daemon's start-up warm-up took (from its status), once it is done."""
    from reflex.shim import client
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        hdr, body = client.request_json(paths, "status", {}, connect_timeout=1, reply_timeout=10)
        warm = json.loads(body[:hdr.get("out", len(body))]).get("warm_s") if body else hdr.get("warm_s")
        if warm is not None:
            return warm
        time.sleep(0.05)
    raise SystemExit("the daemon did not finish its warm-up in %.0f s" % timeout)


def grep_time(pattern, files):
    if not shutil.which("grep"):
        return None
    t0 = time.perf_counter()
    p = subprocess.run(["grep", "-E", "-c", "-h", "--", pattern] + files, capture_output=True, timeout=600)
    if p.returncode not in (0, 1):
        return None
    return {"seconds": round(time.perf_counter() - t0, 4),
            "matches": sum(int(x) for x in p.stdout.split() if x.isdigit())}


_RE_SCRIPT = r"""
import re, sys, time
rx = re.compile(sys.argv[1])
t0 = time.perf_counter(); n = 0
for path in sys.argv[2:]:
    for line in open(path, 'rb').read().decode('utf-8', 'replace').split('\n'):
        if rx.search(line):
            n += 1
print(n, time.perf_counter() - t0)
"""


def python_re_time(pattern, files, cap):
    try:
        p = subprocess.run([sys.executable, "-c", _RE_SCRIPT, pattern] + files, capture_output=True, text=True,
                           timeout=cap)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "timed_out_after_s": cap}
    try:
        n, secs = p.stdout.split()
        return {"seconds": round(float(secs), 4), "matches": int(n)}
    except ValueError:
        return {"seconds": None, "error": p.stderr[-300:]}


def hook_frame(i):
    payload = json.dumps({"session_id": "bench-search", "hook_event_name": "PreToolUse", "cwd": "/tmp",
                          "tool_name": "Bash", "tool_input": {"command": "ls -la", "description": "d"},
                          "tool_use_id": "toolu_bs_%d" % i, "permission_mode": "default",
                          "transcript_path": "/tmp/t.jsonl"}).encode()
    return {"harness": "claude", "uid": os.urandom(10).hex(), "ts": time.time(), "pid": os.getpid(),
            "trunc": False}, payload


def hook_latency(paths, n):
    from reflex.shim import client
    fields, body = hook_frame(n)
    t0 = time.perf_counter()
    hdr, _ = client.request_json(paths, "hook", fields, body, connect_timeout=1, reply_timeout=10)
    dt = time.perf_counter() - t0
    if not hdr.get("ok"):
        raise SystemExit("hook failed: %r" % hdr)
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--size-mb", type=int, default=None)
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--hooks", type=int, default=None, help="hook calls per arm")
    ap.add_argument("--re-cap", type=float, default=None, help="seconds the python re baseline may take")
    args = ap.parse_args()
    size_mb = args.size_mb or (10 if args.quick else 100)
    nruns = args.runs or (2 if args.quick else 10)
    nhooks = args.hooks or (80 if args.quick else 300)
    re_cap = args.re_cap or (3.0 if args.quick else 10.0)
    paths = _common.setup_env("ctx-bench-search-")
    configure(paths)
    proc = _common.start_daemon(paths)
    env = dict(os.environ, CTX_RUN_FINISH_TIMEOUT="600")
    work = tempfile.mkdtemp(prefix="ctx-bench-search-data-")
    files = []
    result = {"machine": _common.machine(), "size_mb": size_mb, "runs": nruns, "time_limit_s": 1.0,
              "patterns": {}, "store_seconds": []}
    maps = lambda: [os.path.join(d, n) for d, _, ns in os.walk(paths.blobs) for n in ns if ".rmap-" in n]  # noqa
    try:
        per = (size_mb << 20) // nruns
        for i in range(nruns):
            path = os.path.join(work, "out%d.txt" % i)
            make_output(path, per)
            with open(path, "ab") as f:
                f.write(b"run %d\n" % i)  # every run a different blob
            files.append(path)
            t0 = time.perf_counter()
            p = ctx(["run", "--", "cat %s" % path], env)
            result["store_seconds"].append(round(time.perf_counter() - t0, 2))
            if p.returncode != 0 or b"[ctx]" not in p.stdout[:2000]:
                raise SystemExit("ctx run did not store %s: %s" % (path, p.stderr[-500:]))
        stored = sum(os.path.getsize(f) for f in files)
        result["stored_mb"] = round(stored / 1e6, 1)
        print("stored %.1f MB in %d runs (%s s each)" % (stored / 1e6, nruns, result["store_seconds"]))
        t0 = time.perf_counter()
        _wait_for_maps(maps, nruns, 900)  # the daemon redacts new outputs for search in the background
        result["warm_up_seconds_after_last_run"] = round(time.perf_counter() - t0, 1)
        # cold: what a search finds right after a run, before the background redaction is done
        _common.stop_daemon(paths, proc)
        kept = tempfile.mkdtemp(prefix="ctx-bench-search-maps-")
        for m in maps():
            shutil.move(m, os.path.join(kept, os.path.relpath(m, paths.blobs).replace(os.sep, "__")))
        configure(paths, search_warm=False)
        proc = _common.start_daemon(paths)
        # A search in the first moments after a daemon start shares the CPU with the daemon's
        # own warm-up (tokenizer, imports): the first one is reported on its own row, then the
        # per-pattern figures wait for the warm-up to be done (`warm_s` in the status reply).
        result["first_after_start_s"] = [ask(paths, "first-search-after-start")["seconds"]]
        result["daemon_warm_up_s"] = [wait_warm(paths)]
        for name, pattern, kind in PATTERNS:
            result["patterns"][name] = {"pattern": pattern, "kind": kind, "cold": ask(paths, pattern)}
        _common.stop_daemon(paths, proc)
        for n in os.listdir(kept):
            shutil.move(os.path.join(kept, n), os.path.join(paths.blobs, n.replace("__", os.sep)))
        configure(paths)
        proc = _common.start_daemon(paths)
        result["first_after_start_s"].append(ask(paths, "first-search-after-start")["seconds"])
        result["daemon_warm_up_s"].append(wait_warm(paths))
        print("%-22s %8s %8s %6s %9s %9s %10s %9s" % ("pattern", "cold s", "warm s", "done", "MB", "matches",
                                                    "grep s", "re s"))
        for name, pattern, kind in PATTERNS:
            r = result["patterns"][name]
            r["warm"] = ask(paths, pattern)
            r["grep"] = grep_time(pattern, files)
            r["python_re"] = python_re_time(pattern, files, re_cap)
            g = (r["grep"] or {}).get("seconds")
            r["ratio_warm_vs_grep"] = round(r["warm"]["seconds"] / g, 3) if g else None
            pr = r["python_re"].get("seconds")
            print("%-22s %8.3f %8.3f %6s %9s %9s %10s %9s" % (
                name, r["cold"]["seconds"], r["warm"]["seconds"], "yes" if r["warm"]["complete"] else "no",
                r["warm"]["searched_mb"] if r["warm"]["searched_mb"] is not None else "all",
                r["warm"]["matches"], g, pr if pr is not None else "> %gs" % re_cap))
        result["hooks"] = measure_hooks(paths, nhooks)
        h = result["hooks"]
        print("hook latency idle p50 %.2f ms p99 %.2f ms; during searches p50 %.2f ms p99 %.2f ms; ratio p99 %.2f" % (
            h["idle"]["p50_ms"], h["idle"]["p99_ms"], h["searching"]["p50_ms"], h["searching"]["p99_ms"],
            h["ratio_p99"]))
    finally:
        _common.stop_daemon(paths, proc)
        shutil.rmtree(work, ignore_errors=True)
    worst = max(r["warm"]["seconds"] for r in result["patterns"].values())
    result["worst_warm_s"] = worst
    result["worst_cold_s"] = max(r["cold"]["seconds"] for r in result["patterns"].values())
    result["complete_warm"] = sum(1 for r in result["patterns"].values() if r["warm"]["complete"])
    result["leaks"] = [n for n, r in result["patterns"].items() if r["cold"]["leaks_secret"] or r["warm"]["leaks_secret"]]
    print("worst answer: cold %.3f s, warm %.3f s; complete (warm) %d/%d; secret in an answer: %s" % (
        result["worst_cold_s"], worst, result["complete_warm"], len(PATTERNS), result["leaks"] or "never"))
    print("wrote", _common.write_json("bench_search.json", result))


def configure(paths, **extra):
    os.makedirs(paths.home, exist_ok=True)
    with open(paths.config, "w") as f:
        json.dump(dict({"search_time_limit_s": 1.0}, **extra), f)


def _wait_for_maps(maps, n, timeout):
    deadline = time.monotonic() + timeout
    while len(maps()) < n and time.monotonic() < deadline:
        time.sleep(0.5)


def measure_hooks(paths, n):
    """Alternating blocks of hook calls: idle, then with searches running back to back."""
    idle, searching = [], []
    stop = threading.Event()
    running = threading.Event()
    searches = []

    def searcher():
        while not stop.is_set():
            running.set()
            searches.append(ask(paths, HOSTILE)["seconds"])

    for i in range(n):  # warm the path
        hook_latency(paths, i)
    blocks = 4
    for b in range(blocks):
        for i in range(n // blocks):
            idle.append(hook_latency(paths, i))
        stop.clear()
        running.clear()
        t = threading.Thread(target=searcher, daemon=True)
        t.start()
        running.wait(10)
        time.sleep(0.2)  # the first search is under way
        for i in range(n // blocks):
            searching.append(hook_latency(paths, i))
        stop.set()
        t.join(30)

    def stats(xs):
        return {"n": len(xs), "p50_ms": round(statistics.median(xs) * 1000, 3),
                "p99_ms": round(_common.pct(xs, 99) * 1000, 3), "max_ms": round(max(xs) * 1000, 3)}

    out = {"idle": stats(idle), "searching": stats(searching), "searches_during": len(searches),
           "search_seconds_median": round(statistics.median(searches), 3) if searches else None}
    out["ratio_p50"] = round(out["searching"]["p50_ms"] / out["idle"]["p50_ms"], 3)
    out["ratio_p99"] = round(out["searching"]["p99_ms"] / out["idle"]["p99_ms"], 3)
    return out


if __name__ == "__main__":
    main()
