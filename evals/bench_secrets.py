"""Cost of the secret-read hardening (issue 16 class 2), against the code before it, same run.

  safety check  µs per check, this tree vs a baseline tree (default: the merge-base with main,
                exported with `git archive`), interleaved in fresh interpreters (A B A B):
                  table   every case of tests/data/safety_bypass_table.json (virtual paths:
                          the lookups on disk find nothing, as on a machine without them)
                  corpus  every Bash command of the shared Claude Code transcripts, run
                          against a real project directory (so realpath, glob expansion and
                          directory checks hit a real disk)
                  large   bench_safety's large inputs (30 KB scripts, a 200-stage pipeline,
                          1 MB command lines)
  ctx run       what redaction adds to a run: the census of a real project (this
                repository, dependencies pruned) and of a generated one of --census-files files,
                each by a fresh walk and with the listings of the run before kept
                (reflex.safety.secrets.DirCache; the two must find the same files), and redacting a 100 KB and a 5 MB output
                with a census of a .env and a private key, vs the bare copy of the bytes

Usage: python evals/bench_secrets.py [--rounds N] [--baseline-rev REV]
"""

import argparse
import base64
import glob
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

TABLE = os.path.join(_common.REPO, "tests", "data", "safety_bypass_table.json")
CORPUS = os.path.join(_common.REPO, "..", "shared", "corpus", "transcripts")

# Runs in a fresh interpreter with sys.path[0] = the tree under test: times every call.
CHILD = r"""
import json, statistics, sys, time
spec = json.load(sys.stdin)
sys.path.insert(0, spec["tree"])
from reflex.safety.plane import SafetyPolicy, check_command, check_tool

def policy(p):
    try:
        return SafetyPolicy(p["project_root"], p["home"], tuple(p["tmp_dirs"]), tuple(p["allow"]),
                            ctx_home=p.get("ctx_home"))
    except TypeError:                       # a tree from before ctx_home
        return SafetyPolicy(p["project_root"], p["home"], tuple(p["tmp_dirs"]), tuple(p["allow"]))

pols = {k: policy(v) for k, v in spec["policies"].items()}
calls = []
for c in spec["calls"]:
    pol = pols[c.get("policy", "default")]
    if "tool" in c:
        calls.append((check_tool, (c["tool"], c["input"], c["cwd"], pol)))
    else:
        calls.append((check_command, (c["command"], c["cwd"], pol)))
for fn, args in calls:
    fn(*args)
per = [[] for _ in calls]
for _ in range(spec["rounds"]):
    for i, (fn, args) in enumerate(calls):
        t0 = time.perf_counter_ns()
        fn(*args)
        per[i].append((time.perf_counter_ns() - t0) / 1000.0)
print(json.dumps([statistics.median(x) for x in per]))
"""


def export_tree(rev, dest):
    archive = subprocess.run(["git", "archive", rev], cwd=_common.REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    return dest


def default_baseline():
    for ref in ("main", "origin/main"):
        p = subprocess.run(["git", "merge-base", "HEAD", ref], cwd=_common.REPO, capture_output=True, text=True)
        if p.returncode == 0 and p.stdout.strip():
            return p.stdout.strip()
    return "HEAD~1"


def time_tree(tree, spec, pairs=2):
    spec = dict(spec, tree=tree)
    runs = []
    for _ in range(pairs):
        p = subprocess.run([sys.executable, "-S", "-c", CHILD], input=json.dumps(spec), capture_output=True,
                           text=True, timeout=600, cwd="/")
        if p.returncode != 0:
            raise SystemExit(p.stderr)
        runs.append(json.loads(p.stdout))
    return [min(xs) for xs in zip(*runs)]     # per call: the less disturbed of the runs


def ab(spec, current, baseline, pairs):
    """Interleave the two trees (A B A B ...) so drift in machine load hits both."""
    cur, base = [], []
    for _ in range(pairs):
        cur.append(time_tree(current, spec, 1))
        base.append(time_tree(baseline, spec, 1))
    cur = [min(x) for x in zip(*cur)]
    base = [min(x) for x in zip(*base)]
    med_c, med_b = statistics.median(cur), statistics.median(base)
    return {"calls": len(cur), "median_us": round(med_c, 1), "baseline_median_us": round(med_b, 1),
            "ratio": round(med_c / med_b, 2) if med_b else None,
            "p90_us": round(_common.pct(sorted(cur), 90), 1),
            "baseline_p90_us": round(_common.pct(sorted(base), 90), 1)}


def table_spec(rounds):
    with open(TABLE) as f:
        table = json.load(f)
    calls = [dict(c, cwd=c.get("cwd", table["cwd"])) for c in table["cases"]]
    return {"policies": table["policies"], "calls": calls, "rounds": rounds}


def corpus_spec(rounds, project, home):
    commands = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.jsonl"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                msg = obj.get("message")
                content = msg.get("content") if isinstance(msg, dict) else None
                for block in content if isinstance(content, list) else ():
                    if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Bash":
                        cmd = block.get("input", {}).get("command")
                        if isinstance(cmd, str) and len(cmd) < 20000:
                            commands.append(cmd)
    pol = {"project_root": project, "home": home, "tmp_dirs": ["/tmp", "/var/tmp"], "allow": [],
           "ctx_home": os.path.join(home, ".local", "share", "ctx")}
    return {"policies": {"default": pol}, "calls": [{"command": c, "cwd": project} for c in commands],
            "rounds": rounds}


def large_spec(rounds):
    body = "\n".join("echo line %d of the generated script >> /tmp/out.txt" % i for i in range(600))
    cmds = ["cat > /tmp/gen.sh <<'EOF'\n" + body + "\nEOF\nbash /tmp/gen.sh", "bash <<'EOF'\n" + body + "\nEOF",
            " | ".join("grep -v pattern%d" % i for i in range(200)), "echo " + "a" * (1 << 20),
            "echo " + "a " * (1 << 19)]
    pol = {"project_root": "/home/dev/proj", "home": "/home/dev", "tmp_dirs": ["/tmp"], "allow": []}
    return {"policies": {"default": pol}, "calls": [{"command": c, "cwd": "/home/dev/proj"} for c in cmds],
            "rounds": rounds}


def real_project(root):
    """A small but real project: sources, tests, a .env, a key, a symlink, node_modules."""
    proj, home = os.path.join(root, "proj"), os.path.join(root, "home")
    files = {"proj/src/app.py": "x = 1\n", "proj/src/util/helpers.py": "y = 2\n", "proj/tests/test_app.py": "",
             "proj/README.md": "readme\n", "proj/package.json": "{}\n", "proj/.env": "API_KEY=abcdef123456\n",
             "proj/config/server.pem": "k\n", "proj/node_modules/left-pad/index.js": "\n",
             "home/.ssh/id_ed25519": "k\n", "home/.ssh/id_ed25519.pub": "p\n"}
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    for i in range(200):
        with open(os.path.join(proj, "src", "mod%03d.py" % i), "w") as f:
            f.write("\n")
    os.symlink(".env", os.path.join(proj, "notes.txt"))
    return proj, home


def big_project(root, files):
    """A generated project of `files` files in directories of 50 (a .env and a key every 97 directories)."""
    proj = os.path.join(root, "big")
    for k in range(max(1, files // 50)):
        d = os.path.join(proj, "pkg%03d" % (k // 100), "mod%04d" % k)
        os.makedirs(d)
        for i in range(50):
            with open(os.path.join(d, "f%02d.py" % i), "w") as f:
                f.write("x = %d\n" % i)
        if k % 97 == 0:
            with open(os.path.join(d, ".env"), "w") as f:
                f.write("TOKEN_%d=%s\n" % (k, secrets.token_hex(12)))
    return proj


def census_times(secret_values, proj, work, rounds=3):
    """-> (fresh walk s, with the listings kept s, census) over `proj`: the best of `rounds` each,
    alternating.  A fresh walk: an empty CTX_HOME every time; kept: one CTX_HOME whose listings
    the first (untimed) run wrote."""
    kept_home = tempfile.mkdtemp(dir=work)
    env = {"HOME": "/nonexistent-home", "CTX_HOME": kept_home}
    want = secret_values.collect(proj, env, "grep -rn KEY .")
    cold, warm = [], []
    for _ in range(rounds):
        fresh = tempfile.mkdtemp(dir=work)
        t0 = time.perf_counter()
        got_cold = secret_values.collect(proj, {"HOME": "/nonexistent-home", "CTX_HOME": fresh}, "grep -rn KEY .")
        cold.append(time.perf_counter() - t0)
        shutil.rmtree(fresh)
        t0 = time.perf_counter()
        got_warm = secret_values.collect(proj, env, "grep -rn KEY .")
        warm.append(time.perf_counter() - t0)
        # the listings change the cost, never the census
        assert (got_cold.files, got_cold.values) == (got_warm.files, got_warm.values) == (want.files, want.values)
    return min(cold), min(warm), want


def run_costs(work, census_files):
    from reflex.safety import secrets as secret_values
    out = {}
    secret_values.collect(_common.REPO, {"HOME": "/nonexistent-home", "CTX_HOME": tempfile.mkdtemp(dir=work)},
                          "grep -rn KEY .")        # imports, as in a warm run
    big = big_project(work, census_files)
    time.sleep(secret_values.DirCache.RACY_NS / 1e9 + 0.1)   # listings of a directory changed just now are not kept
    for key, proj in (("this_repo", _common.REPO), ("big", big)):
        cold, warm, census = census_times(secret_values, proj, work)
        out["census_%s_ms" % key] = round(cold * 1000, 1)
        out["census_%s_kept_ms" % key] = round(warm * 1000, 1)
        out["census_%s_files" % key] = len(census.files)
        out["census_%s_truncated" % key] = census.truncated
    out["census_big_project_files"] = census_files
    c = secret_values.Census()
    env = b"".join(b"K%d=%s\n" % (i, secrets.token_hex(16).encode()) for i in range(20))
    pem = b"\n".join(base64.b64encode(secrets.token_bytes(48)) for _ in range(25))
    for v in secret_values.values_of(env, "env"):
        c.values[v] = ".env"
    for v in secret_values.values_of(pem, "key"):
        c.values[v] = "key.pem"
    out["census_values"] = len(c.values)
    line = b"tests/test_module_%d.py::test_something_long_name[param-%d] PASSED          [ 42%%]\n"
    for label, n in (("100KB", 1200), ("5MB", 60000)):
        data = b"".join(line % (i % 500, i) for i in range(n))
        ts, bare = [], []
        for _ in range(3):
            t0 = time.perf_counter()
            secret_values.redact_bytes(data, c)
            ts.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            bytes(bytearray(data))
            bare.append(time.perf_counter() - t0)
        out["redact_%s_ms" % label] = round(min(ts) * 1000, 1)
        out["copy_%s_ms" % label] = round(min(bare) * 1000, 2)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--baseline-rev", default=None)
    ap.add_argument("--census-files", type=int, default=100_000, help="files of the generated project censused")
    a = ap.parse_args()
    rev = a.baseline_rev or default_baseline()
    work = tempfile.mkdtemp(prefix="ctx-bench-secrets-")
    try:
        baseline = os.path.join(work, "baseline")
        os.makedirs(baseline)
        export_tree(rev, baseline)
        proj, home = real_project(os.path.join(work, "world"))
        result = {"machine": _common.machine(), "baseline_rev": rev, "rounds": a.rounds,
                  "table": ab(table_spec(a.rounds), _common.REPO, baseline, a.pairs)}
        if os.path.isdir(CORPUS):
            result["corpus_real_disk"] = ab(corpus_spec(a.rounds, proj, home), _common.REPO, baseline, a.pairs)
        result["large"] = ab(large_spec(3), _common.REPO, baseline, a.pairs)
        result["ctx_run"] = run_costs(work, a.census_files)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    path = _common.write_json("bench_secrets.json", result)
    print("secret-read hardening vs %s (same run, interleaved)" % rev[:12])
    for key in ("table", "corpus_real_disk", "large"):
        if key in result:
            r = result[key]
            print("  safety check, %-17s %4d calls: median %6.1fus vs %6.1fus (x%.2f), p90 %6.1fus vs %6.1fus"
                  % (key, r["calls"], r["median_us"], r["baseline_median_us"], r["ratio"], r["p90_us"],
                     r["baseline_p90_us"]))
    rc = result["ctx_run"]
    print("  ctx run: census of a %d-file project %.1f ms fresh, %.1f ms with its listings kept (%d files found, "
          "truncated: %s); of this repo %.1f / %.1f ms" % (
              rc["census_big_project_files"], rc["census_big_ms"], rc["census_big_kept_ms"], rc["census_big_files"],
              rc["census_big_truncated"], rc["census_this_repo_ms"], rc["census_this_repo_kept_ms"]))
    print("  ctx run: census of this repo %.1f ms (%d files); redaction with %d values: 100KB %.1f ms, 5MB %.1f ms "
          "(bare copy %.2f / %.2f ms)" % (rc["census_this_repo_ms"], rc["census_this_repo_files"], rc["census_values"],
                                          rc["redact_100KB_ms"], rc["redact_5MB_ms"], rc["copy_100KB_ms"],
                                          rc["copy_5MB_ms"]))
    print("wrote " + path)


if __name__ == "__main__":
    main()
