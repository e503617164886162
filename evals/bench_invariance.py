"""Safety invariance campaign: the same decision daemon-up and daemon-down on N generated payloads.

Each payload comes from tests/support/payloads.py (a tool call the safety plane judges,
with its surrounding fields missing, of the wrong type, 50,000 deep, not UTF-8, cut...).
Daemon-down is local_decision.decide, what the shim runs when no daemon answers; daemon-up
is hook.deliver against a real daemon on a real socket.  A call that fell back instead of
reaching the daemon is counted apart (it would compare the shim with itself).

  mismatches      payloads whose two decisions differ (target: 0)
  cost            median/p99 ms per decision for the generated payloads against the same
                  tool calls sent plainly (the baseline, measured in the same run)
  pathological    local decision time for hostile shapes at the 8 MiB cap, against a plain
                  payload of the same size

Usage: python evals/bench_invariance.py [--payloads N] [--seed S] [--pathological-rounds R]
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402


WORKERS = 4          # concurrent hook calls: the daemon group-commits them, as it does for a busy agent
QUEUE = 64           # payloads generated ahead of the workers (some are 100 KB deep arrays)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--payloads", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--pathological-rounds", type=int, default=3)
    args = ap.parse_args()

    paths = _common.setup_env("ctx-bench-inv-")
    import queue
    import threading

    from hypothesis import HealthCheck, Phase, given, seed, settings

    from reflex.shim import hook
    from reflex.shim import fallback as local_decision
    from reflex.harness.claude import payload as payload_mod
    from tests.support.payloads import CALLS, outcome, payloads
    hook.REPLY_TIMEOUT = 60.0  # compare decisions, not patience: a fallback is counted apart
    proc = _common.start_daemon(paths, wait=60)
    env = hook.local_env(paths)  # what deliver computes for each call, once
    lock = threading.Lock()
    stats = {"n": 0, "mismatches": [], "deny": 0, "problems": {}, "up_s": [], "down_s": []}

    def fallback_lines():
        try:
            with open(paths.log) as f:
                return [line.split("hook fallback (claude): ", 1)[1][:160] for line in f if "hook fallback" in line]
        except OSError:
            return []

    def fallbacks():
        return len(fallback_lines())

    def one(data, truncated):
        t0 = time.perf_counter()
        down = outcome(local_decision.decide("claude", data, truncated, env)[0])
        t1 = time.perf_counter()
        up = outcome(hook.deliver(paths, "claude", data, truncated)[0])
        t2 = time.perf_counter()
        return up, down, t2 - t1, t1 - t0

    def record(data, truncated):
        up, down, u, d = one(data, truncated)
        problem = payload_mod.read(data, truncated).problem
        key = problem.code if problem else "valid"
        with lock:
            stats["n"] += 1
            stats["up_s"].append(u)
            stats["down_s"].append(d)
            stats["deny"] += down[0] == "deny"
            stats["problems"][key] = stats["problems"].get(key, 0) + 1
            if up != down:
                stats["mismatches"].append({"payload": data[:400].decode("utf-8", "backslashreplace"),
                                            "up": up, "down": down} if len(stats["mismatches"]) < 50 else None)

    try:
        # The baseline: every call of the table, plainly wrapped, many times over.
        plain_up, plain_down = [], []
        for i in range(max(200, args.payloads // 100)):
            tool, tool_input = CALLS[i % len(CALLS)]
            data = json.dumps({"session_id": "sess-plain", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
                               "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
                               "tool_input": tool_input, "tool_use_id": "toolu_%d" % i}).encode("utf-8", "surrogatepass")
            _, _, u, d = one(data, False)
            plain_up.append(u)
            plain_down.append(d)
        fallbacks_before = fallbacks()

        work = queue.Queue(QUEUE)

        def worker():
            while True:
                item = work.get()
                if item is None:
                    return
                record(*item)

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(WORKERS)]
        for t in threads:
            t.start()

        @seed(args.seed)
        @settings(max_examples=args.payloads, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(payloads(cwds=("/tmp", _common.REPO)))
        def campaign(case):
            work.put(case)

        t0 = time.time()
        campaign()
        for _ in threads:
            work.put(None)
        for t in threads:
            t.join()
        seconds = time.time() - t0
        why_fell_back = fallback_lines()[fallbacks_before:]
        fell_back = len(why_fell_back)
        pathological = _pathological(local_decision, payload_mod, env, args.pathological_rounds)
    finally:
        _common.stop_daemon(paths, proc)

    def ms(xs):
        return _common.summary_ms(xs) if xs else None
    result = {
        "machine": _common.machine(), "seed": args.seed, "payloads": stats["n"], "seconds": round(seconds, 1),
        "workers": WORKERS,
        # A call that fell back compared the shim with itself; with a 60 s reply budget there
        # should be none, and if there are any the campaign does not count as passed.
        "compared": stats["n"] - fell_back, "fallbacks": fell_back,
        # An "internal" refusal is a daemon bug on that payload; a timeout is the machine.
        "fallback_reasons": _count(why_fell_back),
        "mismatches": len(stats["mismatches"]), "mismatch_examples": [m for m in stats["mismatches"] if m][:20],
        "denied": stats["deny"], "payload_problems": stats["problems"],
        "up": ms(stats["up_s"]), "down": ms(stats["down_s"]),
        "baseline_up": ms(plain_up), "baseline_down": ms(plain_down),
        "pathological": pathological,
    }
    path = _common.write_json("bench_invariance.json", result)
    print(json.dumps({k: v for k, v in result.items() if k != "mismatch_examples"}, indent=2, sort_keys=True))
    print("wrote", path)
    return 1 if result["mismatches"] or result["fallbacks"] else 0


def _count(lines):
    out = {}
    for line in lines:
        key = line.split(":", 3)[:3]
        out[":".join(key)] = out.get(":".join(key), 0) + 1
    return out


def _pathological(local_decision, payload_mod, env, rounds):
    """Local decision time at the size cap: hostile shapes against a plain payload as large."""
    head = b'{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cat .env",'
    size = payload_mod.MAX_PAYLOAD - 200
    shapes = {
        "plain 8 MiB string (baseline)": head + b'"x":"' + b"a" * size + b'"}}',
        "8 MiB deep array": head + b'"x":' + b"[" * (size // 2) + b"]" * (size // 2) + b"}}",
        "deep, then 2M empty arrays": head + b'"x":' + b"[" * 100 + b"[]," * (size // 3 - 100) + b"[]"
        + b"]" * 100 + b"}}",
        "deep, then 1M short strings": head + b'"x":' + b"[" * 100 + b'"a",' * (size // 4 - 100) + b'"a"'
        + b"]" * 100 + b"}}",
        "cut inside 4M numbers": head.replace(b'"command":"cat .env",', b"") + b'"x":[' + b"1," * (size // 2 + 200),
        "not closed, 8 MiB of tokens": head + b'"x":{' + b'"k":1,' * (size // 6),
    }
    out = {}
    for name, data in shapes.items():
        data, truncated = data[:payload_mod.MAX_PAYLOAD], len(data) > payload_mod.MAX_PAYLOAD
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            tag = local_decision.decide("claude", data, truncated, env)[2]
            times.append(time.perf_counter() - t0)
        out[name] = {"median_ms": round(statistics.median(times) * 1000, 1), "decision": tag, "bytes": len(data)}
    return out


if __name__ == "__main__":
    sys.exit(main())
