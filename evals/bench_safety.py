"""Safety plane cost: µs per check over the bypass table, worst cases, and import time.

The safety plane runs inside the hook shim when the daemon is down, so both the per-check
time and the import time of reflex.safety.plane are paid on the hook's critical path.

  per check     every case of tests/data/safety_bypass_table.json (commands and tool calls),
                `--rounds` passes in shuffled order after one warm-up pass; median/p90/p99/max
  large inputs  a 30 KB heredoc script, a 200-command pipeline, a 1 MB command line
  import        `python -S -X importtime -c "import reflex.safety.plane"` in fresh processes:
                cumulative µs of reflex.safety.plane and of its heaviest stdlib imports

Usage: python evals/bench_safety.py [--rounds N] [--imports N]
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402
from reflex.safety.plane import SafetyPolicy, check_command, check_tool  # noqa: E402

TABLE = os.path.join(_common.REPO, "tests", "data", "safety_bypass_table.json")


def load_cases():
    with open(TABLE) as f:
        table = json.load(f)
    policies = {k: SafetyPolicy(v["project_root"], v["home"], tuple(v["tmp_dirs"]), tuple(v["allow"]),
                                ctx_home=v.get("ctx_home"))
                for k, v in table["policies"].items()}
    calls = []
    for c in table["cases"]:
        policy = policies[c.get("policy", "default")]
        cwd = c.get("cwd", table["cwd"])
        if "tool" in c:
            calls.append((c["id"], c["expect"], check_tool, (c["tool"], c["input"], cwd, policy)))
        else:
            calls.append((c["id"], c["expect"], check_command, (c["command"], cwd, policy)))
    return calls


def us_stats(xs):
    xs = sorted(xs)
    return {"n": len(xs), "median_us": round(statistics.median(xs), 1), "p90_us": round(_common.pct(xs, 90), 1),
            "p99_us": round(_common.pct(xs, 99), 1), "max_us": round(xs[-1], 1)}


def time_checks(calls, rounds):
    for _, _, fn, args in calls:          # warm-up: compiled regexes, caches
        fn(*args)
    per_case = {cid: [] for cid, _, _, _ in calls}
    order = list(calls)
    rng = random.Random(7)
    for _ in range(rounds):
        rng.shuffle(order)
        for cid, _, fn, args in order:
            t0 = time.perf_counter_ns()
            fn(*args)
            per_case[cid].append((time.perf_counter_ns() - t0) / 1000.0)
    return per_case


def time_large():
    policy = SafetyPolicy("/home/dev/proj", "/home/dev", ("/tmp",))
    body = "\n".join("echo line %d of the generated script >> /tmp/out.txt" % i for i in range(600))
    cases = {
        "heredoc_30kb": "cat > /tmp/gen.sh <<'EOF'\n" + body + "\nEOF\nbash /tmp/gen.sh",
        "script_30kb_parsed": "bash <<'EOF'\n" + body + "\nEOF",
        "pipeline_200": " | ".join("grep -v pattern%d" % i for i in range(200)),
        "line_1mb": "echo " + "a" * (1 << 20),
        "line_1mb_tokens": "echo " + "a " * (1 << 19),
    }
    out = {}
    for name, cmd in cases.items():
        ts = []
        for _ in range(5):
            t0 = time.perf_counter()
            check_command(cmd, "/home/dev/proj", policy)
            ts.append((time.perf_counter() - t0) * 1e6)
        out[name] = {"chars": len(cmd), "median_us": round(statistics.median(ts), 1)}
    return out


def import_times(n, bytecode):
    """Cumulative µs per module from -X importtime, median over n fresh interpreters.

    bytecode=True is what an installed ctx pays: .pyc files exist (kept under a private
    PYTHONPYCACHEPREFIX so the repository is not touched). bytecode=False compiles every
    module from source, as happens under PYTHONDONTWRITEBYTECODE=1 without a cache.
    """
    wanted = ("reflex.safety.plane", "dataclasses", "re", "reflex.safety.lex", "reflex.safety.cmds")
    runs = {k: [] for k in wanted}
    walls = []
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "ctx-bench-safety-pycache")
        subprocess.run([sys.executable, "-S", "-c", "import reflex.safety.plane"], cwd=_common.REPO, env=env,
                       check=True)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    for _ in range(n):
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-S", "-X", "importtime", "-c", "import reflex.safety.plane"],
                           cwd=_common.REPO, capture_output=True, text=True, env=env)
        walls.append((time.perf_counter() - t0) * 1000)
        if p.returncode != 0:
            raise SystemExit(p.stderr)
        seen = {}
        for line in p.stderr.splitlines():
            if not line.startswith("import time:") or "|" not in line:
                continue
            _, cum, mod = line.split("|")
            try:
                seen[mod.strip()] = int(cum)
            except ValueError:
                continue
        for k in wanted:
            runs[k].append(seen.get(k, 0))
    bare = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", "pass"], cwd=_common.REPO)
        bare.append((time.perf_counter() - t0) * 1000)
    return {"cumulative_us": {k: statistics.median(v) for k, v in runs.items()},
            "process_wall_ms": round(statistics.median(walls), 2),
            "bare_python_S_wall_ms": round(statistics.median(bare), 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--imports", type=int, default=9)
    a = ap.parse_args()
    calls = load_cases()
    per_case = time_checks(calls, a.rounds)
    everything = [x for xs in per_case.values() for x in xs]
    by_expect = {e: [x for cid, exp, _, _ in calls if exp == e for x in per_case[cid]] for e in ("deny", "allow")}
    case_medians = sorted(((statistics.median(xs), cid) for cid, xs in per_case.items()), reverse=True)
    result = {
        "machine": _common.machine(),
        "cases": len(calls),
        "rounds": a.rounds,
        "per_check": us_stats(everything),
        "per_check_deny": us_stats(by_expect["deny"]),
        "per_check_allow": us_stats(by_expect["allow"]),
        "slowest_cases_median_us": [{"id": cid, "median_us": round(m, 1)} for m, cid in case_medians[:5]],
        "large_inputs": time_large(),
        "import": import_times(a.imports, bytecode=True),
        "import_from_source": import_times(a.imports, bytecode=False),
    }
    path = _common.write_json("bench_safety.json", result)
    pc = result["per_check"]
    print("safety plane: %d cases x %d rounds" % (len(calls), a.rounds))
    print("  %-14s %9s %9s %9s %9s" % ("", "median", "p90", "p99", "max"))
    for label, key in (("all checks", "per_check"), ("deny", "per_check_deny"), ("allow", "per_check_allow")):
        s = result[key]
        print("  %-14s %7.1fus %7.1fus %7.1fus %7.1fus" % (label, s["median_us"], s["p90_us"], s["p99_us"], s["max_us"]))
    print("  slowest cases: " + ", ".join("%s %.0fus" % (x["id"], x["median_us"])
                                          for x in result["slowest_cases_median_us"]))
    for name, v in result["large_inputs"].items():
        print("  %-20s %8d chars %10.1fus" % (name, v["chars"], v["median_us"]))
    for label, key in (("with .pyc", "import"), ("from source", "import_from_source")):
        imp = result[key]
        print("  import reflex.safety.plane %-11s (python -S, cumulative): %5.1f ms (dataclasses %.1f ms, re %.1f ms);"
              " process wall %.1f ms vs bare %.1f ms"
              % (label, imp["cumulative_us"]["reflex.safety.plane"] / 1000, imp["cumulative_us"]["dataclasses"] / 1000,
                 imp["cumulative_us"]["re"] / 1000, imp["process_wall_ms"], imp["bare_python_S_wall_ms"]))
    print("  median target < 200us: %s" % ("met" if pc["median_us"] < 200 else "MISSED"))
    print("wrote " + path)


if __name__ == "__main__":
    main()
