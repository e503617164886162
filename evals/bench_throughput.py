"""Daemon throughput: hook events per second sustained over 8 concurrent clients.

Each client is a separate process driving reflex.shim.hook.deliver (the shim's own
code path: frame, socket, reply, fallback) with a realistic mix of PreToolUse
and PostToolUse payloads, one connection per event as the shim does.  After
the run, every event must be in the ledger exactly once.

Usage: python evals/bench_throughput.py [--clients 8] [--events-per-client 2500]
"""

import argparse
import json
import multiprocessing as mp
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

COMMANDS = ["pytest -q", "ls -la", "git status", "cat README.md", "python -m pytest tests/ -x",
            "npm test", "grep -rn TODO src/", "make check 2>&1 | tail -20"]


def payloads(client_id, n):
    sess = "bench-%d" % client_id
    for i in range(n):
        cmd = COMMANDS[i % len(COMMANDS)]
        tu = "toolu_%d_%d" % (client_id, i // 2)
        if i % 2 == 0:
            p = {"session_id": sess, "hook_event_name": "PreToolUse", "cwd": "/tmp", "tool_name": "Bash",
                 "tool_input": {"command": cmd, "description": "x"}, "tool_use_id": tu}
        else:
            p = {"session_id": sess, "hook_event_name": "PostToolUse", "cwd": "/tmp", "tool_name": "Bash",
                 "tool_input": {"command": cmd}, "tool_use_id": tu,
                 "tool_response": {"stdout": "ok\n" * 20, "stderr": "", "interrupted": False}}
        yield json.dumps(p).encode()


def worker(client_id, n, start_at, q):
    from reflex import paths as paths_mod
    from reflex.shim import hook
    paths = paths_mod.resolve()
    data = list(payloads(client_id, n))
    while time.time() < start_at:
        time.sleep(0.001)
    lat = []
    t0 = time.perf_counter()
    for d in data:
        s = time.perf_counter()
        out, err = hook.deliver(paths, "claude", d)
        lat.append(time.perf_counter() - s)
    q.put((client_id, time.perf_counter() - t0, lat))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--events-per-client", type=int, default=2500)
    args = ap.parse_args()
    paths = _common.setup_env()
    proc = _common.start_daemon(paths)
    q = mp.Queue()
    start_at = time.time() + 1.0
    procs = [mp.Process(target=worker, args=(i, args.events_per_client, start_at, q))
             for i in range(args.clients)]
    for p in procs:
        p.start()
    results = [q.get() for _ in procs]
    for p in procs:
        p.join()
    wall = time.time() - start_at
    # Events a client spooled (daemon busy past the shim's budget) count only
    # once the daemon has ingested them; wait for the spool to drain.
    from reflex.shim import spool
    deadline = time.time() + 60
    while spool.pending(paths.spool) and time.time() < deadline:
        time.sleep(0.2)
    _common.stop_daemon(paths, proc)
    total = args.clients * args.events_per_client
    conn = sqlite3.connect(paths.ledger)
    in_ledger = conn.execute("SELECT count(*) FROM events WHERE session_id LIKE 'bench-%'").fetchone()[0]
    spooled = conn.execute("SELECT count(*) FROM events WHERE session_id LIKE 'bench-%' AND spooled=1").fetchone()[0]
    distinct = conn.execute("SELECT count(DISTINCT uid) FROM events WHERE session_id LIKE 'bench-%'").fetchone()[0]
    conn.close()
    lat = [x for r in results for x in r[2]]
    res = {"machine": _common.machine(), "clients": args.clients, "events": total,
           "wall_s": round(wall, 3), "events_per_s": round(total / wall, 1),
           "latency": _common.summary_ms(lat), "in_ledger": in_ledger, "distinct_uids": distinct,
           "spooled_by_clients": spooled, "target_events_per_s": 2000}
    print(json.dumps(res, indent=2))
    print("wrote", _common.write_json("bench_throughput.json", res))
    ok = in_ledger == total and distinct == total
    print("every event in the ledger exactly once:", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
