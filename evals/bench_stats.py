"""Reading a big ledger: `ctx stats --session` and `ctx policy compile` on 1,000,000 events.

Generates, in-process, a synthetic ledger of SESSIONS sessions x EVENTS events (default
1,000 x 1,000 = 1,000,000 events) written directly with sqlite3 executemany into a ledger
migrated by open_ledger (the real schema, its triggers and indexes; the hash chain computed
with reflex.ledger.chain, so `ctx ledger verify` passes on it).  Each session looks like an
agent's: SessionStart (haiku/sonnet/opus/other), pytest loops rewritten to ctx run with digests
whose failure counts fall after edits, re-runs with `| tail -50` and `--tb=long` (starvation),
ctx get retrievals, Edit calls, plain commands, the odd denial, detector firings in the outcomes
table, SessionEnd.  Then it measures, each as a subprocess (interpreter start included):

    ctx stats --session ID --json        wall time, over REPEAT sessions      target < 300 ms
    ctx stats --last                     wall time
    ctx stats --json (all sessions)      wall time and peak RSS (informational)
    ctx policy compile --ledger L        wall time and peak RSS (os.wait4)    target < 30 s, < 500 MB

No extra index is needed: a session's events come from the UNIQUE (session_id, seq) index, its
firings from outcomes_session, the newest session from the rowid.

Usage: python evals/bench_stats.py [--sessions 1000] [--events 1000] [--repeat 10] [--keep DIR]
Writes evals/out/bench_stats.json.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

TARGET_STATS_MS = 300
TARGET_COMPILE_S = 30
TARGET_COMPILE_MB = 500
MODELS = ("claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1", "gpt-5")


class Gen:
    """One synthetic ledger, generated deterministically from a seed."""

    def __init__(self, seed=7):
        from reflex.ledger import chain, schema
        from reflex.signature import signature
        self.rng = random.Random(seed)
        self.chain = chain
        self.cols = schema.EVENT_COLUMNS
        self.run_cols = schema.RUN_COLUMNS
        self.sig = signature
        self.prev = chain.GENESIS
        self.sigs = {}
        self.uid_n = 0
        self.events = []
        self.runs = []
        self.outcomes = []
        self.sessions = []

    def _sig(self, cmd, cwd):
        key = (cmd, cwd)
        s = self.sigs.get(key)
        if s is None:
            sig = self.sig(cmd, cwd)
            s = self.sigs[key] = (sig.family, sig.core_hash)
        return s

    def _uid(self):
        self.uid_n += 1
        return "%020x" % self.uid_n

    def _event(self, sid, seq, ts, **kw):
        row = {c: None for c in self.cols}
        row.update(uid=self._uid(), session_id=sid, seq=seq, ts=ts, recorded_at=ts + 0.0005, spooled=0,
                   decision="none")
        row.update(kw)
        row["data"] = json.dumps(row.get("data") or {}, sort_keys=True, separators=(",", ":"))
        row["prev_hash"] = self.prev
        row["hash"] = self.chain.link(self.prev, row)
        self.prev = row["hash"]
        self.events.append(tuple(row[c] for c in self.cols))
        return row

    def session(self, i, n_events, t0):
        rng = self.rng
        sid = "bench-%04d" % i
        cwd = "/work/proj%02d" % (i % 20)
        model = MODELS[i % len(MODELS)]
        seq = 0
        ts = t0
        self.sessions.append((sid, "claude", ts, cwd))

        def ev(**kw):
            nonlocal seq, ts
            seq += 1
            ts += rng.uniform(0.5, 20.0)
            kw.setdefault("harness", "claude")
            kw.setdefault("cwd", cwd)
            return self._event(sid, seq, ts, **kw)

        ev(kind="hook", hook_event="SessionStart", latency_us=rng.randint(80, 400),
           data={"model": model, "source": "startup", "transcript_path": "/t.jsonl"})
        tool_n = 0
        failing = rng.randint(3, 12)
        mod = rng.randint(0, 40)
        tests = ["tests/test_mod%d.py::test_case_%d" % (mod, k) for k in range(failing)]
        handle = None
        while seq < n_events - 4:
            tool_n += 1
            tid = "toolu_%s_%05d" % (sid, tool_n)
            r = rng.random()
            if r < 0.34:                      # a pytest call rewritten to ctx run
                variant = rng.random()
                cmd = ("python -m pytest -q" if variant < 0.6 else "python -m pytest -q | tail -50"
                       if variant < 0.8 else "python -m pytest -q --tb=long" if variant < 0.9
                       else "python -m pytest -q tests/test_mod%d.py" % mod)
                fam, core = self._sig(cmd, cwd)
                ctxcmd = "/usr/local/bin/ctx run -- '%s'" % cmd
                ev(kind="hook", hook_event="PreToolUse", tool_name="Bash", tool_use_id=tid, command=cmd,
                   family=fam, core_hash=core, decision="rewrite", decision_detail=ctxcmd,
                   latency_us=rng.randint(300, 3000), data={"permission": "allow", "permission_mode": "default",
                                                            "tool_input": {"description": "run tests"}})
                handle = "r:%012x" % rng.getrandbits(48)
                n_fail = len(tests)
                raw_bytes = rng.randint(2000, 60000)
                raw_tokens = raw_bytes // 4
                density = rng.choice(("normal", "normal", "normal", "dense", "inline"))
                hints = ["%s:L%d-%d" % (handle, 10 * k + 1, 10 * k + 9) for k in range(min(n_fail, 8))]
                data = {"blob": "b3:" + "%064x" % rng.getrandbits(256), "handle": handle, "density": density,
                        "duration_ms": rng.uniform(300, 9000), "failed_count": n_fail, "failed_ids": tests[:200],
                        "hints": hints if density == "normal" else [], "omitted": rng.choice((0, 0, 0, 3)),
                        "passthrough": False, "profile": "pytest", "raw_tokens": raw_tokens,
                        "delivered_tokens": rng.randint(200, 1800), "reason": None, "slicer": None,
                        "truncated": False, "worktree_hash": None}
                if "| tail" in cmd:
                    data["slicer"] = "tail -50"
                run = ev(kind="run", harness="ctx-run", command=cmd, family=fam, core_hash=core,
                         exit_code=1 if n_fail else 0, output_bytes=raw_bytes, data=data)
                self.runs.append((run["uid"], handle, data["blob"], sid, cmd, cwd, run["exit_code"],
                                  data["duration_ms"], raw_bytes, fam, core, "pytest", density, raw_tokens,
                                  data["delivered_tokens"], None, json.dumps({"hints": hints})))
                post = "PostToolUseFailure" if n_fail else "PostToolUse"
                ev(kind="hook", hook_event=post, tool_name="Bash", tool_use_id=tid, command=cmd, family=fam,
                   core_hash=core, decision_detail=ctxcmd, exit_code=1 if n_fail else 0,
                   output_bytes=rng.randint(800, 6000), rewrite_applied=1, latency_us=rng.randint(200, 900),
                   data={"duration_ms": data["duration_ms"] + rng.uniform(20, 80), "is_interrupt": False})
                if variant >= 0.6 and variant < 0.9 and rng.random() < 0.5:
                    self.outcomes.append((run["uid"], sid, run["seq"], "starvation", tid, core,
                                          "re-run with the worktree unchanged", json.dumps({"occurrence": 2}),
                                          "default", ts))
            elif r < 0.44 and handle:         # ctx get on the last handle
                cmd = "ctx get %s:L1-9" % handle
                fam, core = self._sig(cmd, cwd)
                ev(kind="hook", hook_event="PreToolUse", tool_name="Bash", tool_use_id=tid, command=cmd,
                   family=fam, core_hash=core, decision="pass", decision_detail="already a ctx command",
                   latency_us=rng.randint(300, 2000), data={"tool_input": {"description": "get"}})
                ev(kind="retrieval", harness="ctx-retrieval", command="ctx get %s:L1-9" % handle,
                   data={"address": handle + ":L1-9", "result": "know", "handle": handle, "span": [0, 100],
                         "truncated": False})
                ev(kind="hook", hook_event="PostToolUse", tool_name="Bash", tool_use_id=tid, command=cmd,
                   family=fam, core_hash=core, exit_code=0, output_bytes=rng.randint(200, 3000),
                   latency_us=rng.randint(200, 900), data={"duration_ms": 40.0, "interrupted": False})
            elif r < 0.62:                    # an edit; it fixes some failures
                path = "%s/src/mod%d.py" % (cwd, mod)
                ev(kind="hook", hook_event="PreToolUse", tool_name="Edit", tool_use_id=tid, decision="pass",
                   latency_us=rng.randint(100, 600), data={"tool_input": {"file_path": path}})
                ev(kind="hook", hook_event="PostToolUse", tool_name="Edit", tool_use_id=tid,
                   latency_us=rng.randint(100, 600), data={})
                if tests and rng.random() < 0.7:
                    tests = tests[: max(0, len(tests) - rng.randint(1, 3))]
                if not tests and rng.random() < 0.5:
                    mod = rng.randint(0, 40)
                    tests = ["tests/test_mod%d.py::test_case_%d" % (mod, k) for k in range(rng.randint(1, 9))]
            elif r < 0.98:                    # plain commands
                cmd = rng.choice(("ls", "git status", "git diff", "cat src/mod%d.py" % mod,
                                  "grep -rn TODO src", "sed -n 1,80p src/mod%d.py" % mod))
                fam, core = self._sig(cmd, cwd)
                ev(kind="hook", hook_event="PreToolUse", tool_name="Bash", tool_use_id=tid, command=cmd,
                   family=fam, core_hash=core, decision="pass", latency_us=rng.randint(200, 2500),
                   data={"tool_input": {"description": "look"}})
                ev(kind="hook", hook_event="PostToolUse", tool_name="Bash", tool_use_id=tid, command=cmd,
                   family=fam, core_hash=core, exit_code=0, output_bytes=rng.randint(50, 20000),
                   latency_us=rng.randint(200, 900), data={"duration_ms": 15.0, "interrupted": False})
            else:                             # a denial
                cmd = "rm -rf ~/.ssh"
                fam, core = self._sig(cmd, cwd)
                ev(kind="hook", hook_event="PreToolUse", tool_name="Bash", tool_use_id=tid, command=cmd,
                   family=fam, core_hash=core, decision="deny", decision_detail="secret-path",
                   latency_us=rng.randint(200, 900), data={"safety": {"rule": "secret-path"}})
        while seq < n_events - 1:
            ev(kind="hook", hook_event="UserPromptSubmit", latency_us=rng.randint(50, 200), data={})
        ev(kind="hook", hook_event="SessionEnd", latency_us=rng.randint(50, 200), data={"reason": "exit"})

    def flush(self, conn):
        cols = self.cols
        conn.executemany("INSERT INTO events (%s) VALUES (%s)" % (", ".join(cols), ", ".join("?" * len(cols))),
                         self.events)
        conn.executemany("INSERT INTO runs (%s) VALUES (%s)" % (", ".join(self.run_cols),
                                                                ", ".join("?" * len(self.run_cols))), self.runs)
        conn.executemany("INSERT OR IGNORE INTO sessions (session_id, harness, first_ts, cwd) VALUES (?,?,?,?)",
                         self.sessions)
        conn.executemany("INSERT INTO outcomes (event_uid, session_id, seq, detector, tool_use_id, core_hash, reason, "
                         "signal, policy_epoch, recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?)", self.outcomes)
        n = len(self.events)
        self.events, self.runs, self.outcomes, self.sessions = [], [], [], []
        return n


def generate(path, sessions, events, seed=7, log=print):
    from reflex.ledger.db import open_ledger
    db = open_ledger(path)
    conn = db.conn
    conn.execute("PRAGMA synchronous = OFF")
    g = Gen(seed)
    t0 = time.perf_counter()
    total = 0
    conn.execute("BEGIN")
    for i in range(sessions):
        g.session(i, events, 1.79e9 + i * 3600.0)
        if len(g.events) >= 50000:
            total += g.flush(conn)
    total += g.flush(conn)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    log("generated %d events in %.1f s (%.0f MB)" % (total, time.perf_counter() - t0, os.path.getsize(path) / 1e6))
    return total


def _ctx(args, env):
    return [sys.executable, "-m", "reflex.entry"] + args


def timed(args, env, wait4=False):
    t0 = time.perf_counter()
    p = subprocess.Popen(_ctx(args, env), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if wait4:
        out = p.stdout.read()
        err = p.stderr.read()
        _pid, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        return wall, p.returncode, out, err, ru.ru_maxrss / 1024.0
    out, err = p.communicate()
    return time.perf_counter() - t0, p.returncode, out, err, None


def run(sessions=1000, events=1000, repeat=10, keep=None, log=print):
    tmp = keep or tempfile.mkdtemp(prefix="ctx-bench-stats-")
    os.makedirs(tmp, exist_ok=True)
    ledger = os.path.join(tmp, "ledger.db")
    env = dict(os.environ, CTX_HOME=os.path.join(tmp, "ctxhome"), NO_COLOR="1")
    env.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(_common.REPO, "..", "shared", "tiktoken"))
    if not os.path.exists(ledger):
        n_events = generate(ledger, sessions, events, log=log)
    else:
        import sqlite3
        n_events = sqlite3.connect(ledger).execute("SELECT count(*) FROM events").fetchone()[0]
        log("reusing %s (%d events)" % (ledger, n_events))
    rng = random.Random(11)
    picks = ["bench-%04d" % rng.randrange(sessions) for _ in range(repeat)]
    stats_ms, text_ms, cli_ms = [], [], []
    # Same-run baseline: the click CLI's own start (`ctx --version`), which every `ctx stats` pays.
    for _ in range(max(3, repeat)):
        wall, rc, out, err, _ = timed(["--version"], env)
        cli_ms.append(wall * 1000)
    for sid in picks:
        wall, rc, out, err, _ = timed(["stats", "--ledger", ledger, "--session", sid, "--json"], env)
        if rc != 0:
            raise SystemExit("ctx stats failed: %s" % err.decode()[-2000:])
        stats_ms.append(wall * 1000)
        card = json.loads(out)
        assert card["session"]["id"] == sid and card["session"]["events"] == events
    for _ in range(3):
        wall, rc, out, err, _ = timed(["stats", "--ledger", ledger, "--last"], env)
        if rc != 0:
            raise SystemExit("ctx stats --last failed: %s" % err.decode()[-2000:])
        text_ms.append(wall * 1000)
    wall, rc, out, err, all_mb = timed(["stats", "--ledger", ledger, "--json"], env, wait4=True)
    if rc != 0:
        raise SystemExit("ctx stats (all sessions) failed: %s" % err.decode()[-2000:])
    all_s = wall
    assert json.loads(out)["sessions"] == sessions
    out_toml = os.path.join(tmp, "epoch.toml")
    wall, rc, out, err, rss = timed(["policy", "compile", "--ledger", ledger, "--out", out_toml, "--plan-value"],
                                    env, wait4=True)
    if rc != 0:
        raise SystemExit("ctx policy compile failed: %s" % err.decode()[-2000:])
    compile_s, compile_mb = wall, rss
    with open(out_toml, "rb") as f:
        epoch_bytes = f.read()
    result = {
        "machine": _common.machine(), "sessions": sessions, "events_per_session": events, "events": n_events,
        "ledger_mb": round(os.path.getsize(ledger) / 1e6, 1),
        "stats_session_json_ms": {"n": len(stats_ms), "median": round(statistics.median(stats_ms), 1),
                                  "max": round(max(stats_ms), 1), "target": TARGET_STATS_MS},
        "stats_last_text_ms": {"n": len(text_ms), "median": round(statistics.median(text_ms), 1),
                               "max": round(max(text_ms), 1), "target": TARGET_STATS_MS},
        "cli_start_ms": {"n": len(cli_ms), "median": round(statistics.median(cli_ms), 1)},
        "stats_all_sessions": {"wall_s": round(all_s, 2), "peak_rss_mb": round(all_mb, 1), "target": None},
        "policy_compile": {"wall_s": round(compile_s, 2), "peak_rss_mb": round(compile_mb, 1),
                           "target_s": TARGET_COMPILE_S, "target_mb": TARGET_COMPILE_MB,
                           "epoch_bytes": len(epoch_bytes)},
    }
    result["pass"] = (max(stats_ms) < TARGET_STATS_MS and max(text_ms) < TARGET_STATS_MS
                      and compile_s < TARGET_COMPILE_S and compile_mb < TARGET_COMPILE_MB)
    if keep is None:
        shutil.rmtree(tmp, ignore_errors=True)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--events", type=int, default=1000, help="events per session")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--keep", default=None, help="directory to keep (and reuse) the generated ledger in")
    a = ap.parse_args()
    r = run(a.sessions, a.events, a.repeat, a.keep)
    s, t, c = r["stats_session_json_ms"], r["stats_last_text_ms"], r["policy_compile"]
    rows = [("ctx stats --session ID --json", "%.0f ms median, %.0f ms max" % (s["median"], s["max"]),
             "< %d ms" % TARGET_STATS_MS),
            ("ctx stats --last", "%.0f ms median, %.0f ms max" % (t["median"], t["max"]), "< %d ms" % TARGET_STATS_MS),
            ("ctx stats --json (all sessions)", "%.1f s, peak RSS %.0f MB" % (
                r["stats_all_sessions"]["wall_s"], r["stats_all_sessions"]["peak_rss_mb"]), "(no target)"),
            ("ctx policy compile", "%.1f s, peak RSS %.0f MB" % (c["wall_s"], c["peak_rss_mb"]),
             "< %d s, < %d MB" % (TARGET_COMPILE_S, TARGET_COMPILE_MB))]
    print("ledger: %d events, %d sessions, %.0f MB" % (r["events"], r["sessions"], r["ledger_mb"]))
    w = max(len(x[0]) for x in rows)
    for name, got, target in rows:
        print("  %s  %-34s %s" % (name.ljust(w), got, target))
    print("  (baseline: ctx --version %.0f ms median)" % r["cli_start_ms"]["median"])
    print("PASS" if r["pass"] else "FAIL")
    print("wrote", _common.write_json("bench_stats.json", r))
    # The report judges the targets (an unmet one fails `python -m evals`); exit 1 is for a
    # benchmark that could not measure.
    sys.exit(0)


if __name__ == "__main__":
    main()
