"""`python -m evals [--quick] [--only a,b]`: every benchmark, one report.

Runs each benchmark script in its own process (so one crash is one row, not
a lost report), collects the JSON each writes to evals/out/, and writes
evals/report.md plus its JSON twin evals/report.json: machine, versions and
date at the top; for each figure the value, the baseline measured in the same
run, the ratio and the target.  Nothing in the report is typed by hand.

--quick (CI-sized, under 2 minutes) shrinks every benchmark that has a small form and
lists the others (real agent CLIs, peers, gigabyte outputs) as not run; the full run
takes under 20 minutes on 2 cores.  Each benchmark's previous output is removed
before it runs, every output and the report carry `code_tree` (evals/stamp.py),
--only runs are marked partial and show nothing they did not measure, and any
failed benchmark or missed target makes the command exit 1.
The full run adds the invariance campaign (100,000 payloads through a real
daemon: about an hour).
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

# name: (script, quick args, full args, timeout seconds, the JSON it writes to evals/out/).
# Quick args None: the benchmark has no CI-sized form (it drives real agent CLIs, installs peers
# or writes gigabytes); --quick lists it as not run, and only a full run measures it.
BENCHES = {
    "hook": ("bench_hook.py", ["--runs", "5"], ["--runs", "40"], 300, "bench_hook.json"),
    "harness_hooks": ("bench_harness_hooks.py", ["--runs", "5"], ["--runs", "40"], 300, "bench_harness_hooks.json"),
    # A study of where to digest (rewrite vs post hook), not a regression figure: full runs only.
    "post_digest": ("bench_post_digest.py", None, [], 300, "bench_post_digest.json"),
    "throughput": ("bench_throughput.py", ["--clients", "2", "--events-per-client", "150"], ["--events-per-client", "2500"], 300,
                   "bench_throughput.json"),
    "durability": ("bench_durability.py", ["--events", "600", "--clients", "4", "--min-gap", "0.3", "--max-gap", "0.6"], [], 600,
                   "bench_durability.json"),
    "run": ("bench_run.py", ["--runs", "3", "--quick"], ["--runs", "30"], 300, "bench_run.json"),
    "huge": ("bench_huge.py", None, [], 900, "bench_huge.json"),
    "signature": ("bench_signature.py", ["--rounds", "1"], [], 300, "bench_signature.json"),
    "safety": ("bench_safety.py", ["--rounds", "2", "--imports", "2"], [], 300, "bench_safety.json"),
    "invariance": ("bench_invariance.py", ["--payloads", "300", "--pathological-rounds", "1"],
                   ["--payloads", "100000"], 14400, "bench_invariance.json"),
    "secrets": ("bench_secrets.py", ["--rounds", "2", "--pairs", "1", "--census-files", "30000"], [], 600, "bench_secrets.json"),
    "digest": ("bench_digest.py", ["--quick"], [], 600, "bench_digest.json"),
    "worktree": ("bench_worktree.py", ["--files", "2000", "--edits", "5", "--queries", "2000", "--no-limit-run"], ["--no-limit-run"], 300,
                 "bench_worktree.json"),
    "fold": ("bench_fold.py", ["--rounds", "1"], [], 300, "bench_fold.json"),
    "replay": ("bench_replay.py", ["--mb", "0.5", "--rounds", "1"], [], 300, "bench_replay.json"),
    "labels": ("bench_labels.py", [], [], 300, "bench_labels.json"),
    "stats": ("bench_stats.py", ["--sessions", "20", "--events", "200", "--repeat", "1"], [], 1200,
              "bench_stats.json"),
    "peers": ("bench_peers.py", None, [], 900, "bench_peers.json"),
    "referee": ("referee.py", ["--quick", "--arms", "raw,ctx"], [], 1800, "referee.json"),
    "search": ("bench_search.py", ["--quick", "--size-mb", "2"], [], 1800, "bench_search.json"),
    "team": ("bench_team.py", None,
             ["--sizes", "10000000,100000000", "--base", "1000000", "--export", "1000000", "--spark"], 7200,
             "bench_team.json"),
    "ledger_guard": ("bench_ledger_guard.py", [], [], 600, "bench_ledger_guard.json"),
    "savings": ("bench_savings.py", [], [], 600, "bench_savings.json"),
    "adversarial": ("bench_adversarial.py", [], [], 1200, "bench_adversarial.json"),
    "timeline": ("bench_timeline.py", ["--pairs", "2", "--passes", "2"], [], 300, "bench_timeline.json"),
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


def run_bench(name, quick, code_tree):
    script, qargs, fargs, timeout, out_json = BENCHES[name]
    path = os.path.join(HERE, script)
    if not os.path.exists(path):
        return {"status": "missing", "detail": "%s does not exist" % script}
    if quick and qargs is None:
        return {"status": "not run (--quick)", "seconds": 0}
    # Last run's output must never pass for this run's: it goes before the benchmark starts.
    try:
        os.unlink(os.path.join(OUT, out_json))
    except FileNotFoundError:
        pass
    t0 = time.time()
    env = dict(os.environ)
    env.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(REPO, "..", "shared", "tiktoken"))
    try:
        p = subprocess.run([sys.executable, path] + (qargs if quick else fargs), capture_output=True, text=True,
                           timeout=timeout, cwd=REPO, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": timeout}
    status = "ok" if p.returncode == 0 else "failed (exit %d)" % p.returncode
    if status == "ok":
        try:
            with open(os.path.join(OUT, out_json)) as f:
                stamped = json.load(f).get("code_tree")
        except (OSError, ValueError):
            stamped = "missing"
        if stamped != code_tree:
            status = "failed (output %s)" % ("missing" if stamped == "missing" else "stamped %s" % stamped)
    return {"status": status, "seconds": round(time.time() - t0, 1), "stdout_tail": p.stdout[-3000:],
            "stderr_tail": p.stderr[-1500:]}


def main():
    ap = argparse.ArgumentParser(prog="python -m evals")
    ap.add_argument("--quick", action="store_true", help="CI-sized run (a few minutes)")
    ap.add_argument("--only", default="", help="comma-separated benchmark names: " + ",".join(BENCHES))
    ap.add_argument("--full", default="", help="with --quick: these benchmarks run at full size anyway "
                                               "(e.g. huge,invariance for the 1 GB output and 100,000 payloads)")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(BENCHES)
    full = [n for n in args.full.split(",") if n]
    unknown = [n for n in names + full if n not in BENCHES]
    if unknown:
        ap.error("unknown benchmark(s): %s" % ", ".join(unknown))
    os.makedirs(OUT, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    t_start = time.time()
    sys.path.insert(0, HERE)
    import stamp
    code_tree = stamp.code_tree()
    print("code tree %s" % code_tree, flush=True)
    runs = {}
    for i, name in enumerate(names, 1):
        print("== %s (%d/%d)" % (name, i, len(names)), flush=True)
        runs[name] = run_bench(name, args.quick and name not in full, code_tree)
        if args.quick and name in full:
            runs[name]["size"] = "full"
        print("   %s (%ss)" % (runs[name]["status"], runs[name].get("seconds")), flush=True)
        if runs[name]["status"] not in ("ok", "not run (--quick)"):
            print(runs[name].get("stderr_tail", "")[-800:], flush=True)
    if stamp.code_tree() != code_tree:
        print("reflex/ changed while the benchmarks ran: the report would mix two trees", file=sys.stderr)
        return 1
    from evals import report
    fresh = [BENCHES[n][4] for n, r in runs.items() if r["status"] == "ok"]
    partial = bool(args.only) or any(r["status"] == "not run (--quick)" for r in runs.values())
    mode = "quick" if args.quick else "full"
    if args.quick and full:
        mode += " (full size: %s)" % ", ".join(full)
    doc = report.build(runs, {"date": started, "mode": mode, "partial": partial,
                              "ran": [n for n in names if runs[n]["status"] != "not run (--quick)"],
                              "seconds": round(time.time() - t_start, 1), "code_tree": code_tree, "versions": versions(),
                              "cpus": os.cpu_count()}, fresh_files=fresh)
    with open(os.path.join(HERE, "report.json"), "w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(HERE, "report.md"), "w") as f:
        f.write(report.markdown(doc))
    print("wrote evals/report.md and evals/report.json%s" % (" (partial run)" if partial else ""))
    failed = [n for n, r in runs.items() if r["status"] not in ("ok", "not run (--quick)")]
    unmet = [r["figure"] for r in doc["rows"] if r["ok"] is False]
    for n in failed:
        print("FAILED benchmark: %s (%s)" % (n, runs[n]["status"]), file=sys.stderr)
    for fig in unmet:
        print("target not met: %s" % fig, file=sys.stderr)
    # Quick or full, a failed benchmark or a missed target fails the command.
    return 1 if failed or unmet else 0


if __name__ == "__main__":
    sys.path.insert(0, REPO)
    sys.exit(main())
