"""`python -m evals [--quick] [--only a,b]`: every benchmark, one report.

Runs each benchmark script in its own process (so one crash is one row, not
a lost report), collects the JSON each writes to evals/out/, and writes
evals/report.md plus its JSON twin evals/report.json: machine, versions and
date at the top; for each figure the value, the baseline measured in the same
run, the ratio and the target.  Nothing in the report is typed by hand.

--quick (CI-sized, under ~2 minutes) shrinks every benchmark; the full run
takes under 20 minutes on 2 cores.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")

# name: (script, quick args, full args, timeout seconds)
BENCHES = {
    "hook": ("bench_hook.py", ["--runs", "12"], ["--runs", "40"], 300),
    "throughput": ("bench_throughput.py", ["--events-per-client", "300"], ["--events-per-client", "2500"], 300),
    "durability": ("bench_durability.py", ["--events", "2000", "--min-gap", "0.3", "--max-gap", "0.8"], [], 600),
    "run": ("bench_run.py", ["--runs", "10"], ["--runs", "30"], 300),
    "signature": ("bench_signature.py", ["--rounds", "3"], [], 300),
    "safety": ("bench_safety.py", ["--rounds", "10", "--imports", "3"], [], 300),
    "secrets": ("bench_secrets.py", ["--rounds", "5", "--pairs", "1"], [], 600),
    "digest": ("bench_digest.py", ["--quick"], [], 600),
    "worktree": ("bench_worktree.py", ["--files", "5000", "--edits", "15", "--no-limit-run"], ["--no-limit-run"], 300),
    "fold": ("bench_fold.py", ["--rounds", "1"], [], 300),
    "replay": ("bench_replay.py", ["--rounds", "1"], [], 300),
    "labels": ("bench_labels.py", [], [], 300),
    "stats": ("bench_stats.py", ["--sessions", "100", "--events", "500", "--repeat", "3"], [], 1200),
    "peers": ("bench_peers.py", ["--quick"], [], 900),
    "referee": ("referee.py", ["--quick"], [], 1200),
}


def versions():
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for mod in ("tiktoken", "tree_sitter", "tree_sitter_bash", "pydantic", "sqlite_utils", "blake3", "watchdog",
                "click", "claude_agent_sdk"):
        try:
            from importlib.metadata import version
            out[mod] = version(mod.replace("_", "-"))
        except Exception:
            out[mod] = None
    try:
        out["ctx"] = subprocess.run([sys.executable, "-m", "reflex.entry", "--version"], capture_output=True,
                                    text=True, cwd=REPO).stdout.strip()
    except OSError:
        pass
    return out


def run_bench(name, quick):
    script, qargs, fargs, timeout = BENCHES[name]
    path = os.path.join(HERE, script)
    if not os.path.exists(path):
        return {"status": "missing", "detail": "%s does not exist" % script}
    t0 = time.time()
    env = dict(os.environ)
    env.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(REPO, "..", "shared", "tiktoken"))
    try:
        p = subprocess.run([sys.executable, path] + (qargs if quick else fargs), capture_output=True, text=True,
                           timeout=timeout, cwd=REPO, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": timeout}
    status = "ok" if p.returncode == 0 else "failed (exit %d)" % p.returncode
    return {"status": status, "seconds": round(time.time() - t0, 1), "stdout_tail": p.stdout[-3000:],
            "stderr_tail": p.stderr[-1500:]}


def main():
    ap = argparse.ArgumentParser(prog="python -m evals")
    ap.add_argument("--quick", action="store_true", help="CI-sized run (under ~2 minutes)")
    ap.add_argument("--only", default="", help="comma-separated benchmark names: " + ",".join(BENCHES))
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        ap.error("unknown benchmark(s): %s" % ", ".join(unknown))
    os.makedirs(OUT, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    runs = {}
    for name in names:
        print("== %s" % name, flush=True)
        runs[name] = run_bench(name, args.quick)
        print("   %s (%ss)" % (runs[name]["status"], runs[name].get("seconds")), flush=True)
    from evals import report
    if args.only:
        # A partial run keeps the statuses of the benchmarks it did not re-run.
        try:
            with open(os.path.join(HERE, "report.json")) as f:
                previous = json.load(f).get("runs", {})
            runs = dict(previous, **runs)
        except (OSError, ValueError):
            pass
    doc = report.build(runs, {"date": started, "mode": "quick" if args.quick else "full",
                              "versions": versions(), "cpus": os.cpu_count()})
    with open(os.path.join(HERE, "report.json"), "w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(HERE, "report.md"), "w") as f:
        f.write(report.markdown(doc))
    print("wrote evals/report.md and evals/report.json")
    failed = [n for n, r in runs.items() if r["status"] not in ("ok",)]
    return 1 if failed and not args.quick else 0


if __name__ == "__main__":
    sys.path.insert(0, REPO)
    sys.exit(main())
