"""What the ledger's guards cost the writer: the no-replace triggers and the head file.

Same run, interleaved rounds (the arms' order rotating), three arms on fresh ledgers:
  guarded     the writer as shipped (schema m003 triggers, head anchored after commits)
  no head     the same, head file not written (the writer's anchor is a no-op)
  unguarded   no head file, and the m003 no-replace triggers dropped: what the writer cost before
Each round submits N events from T threads (the daemon's shape: many submitters, one writer,
group commit) and waits for every ack.  Figures: events/s per arm and the ratio to unguarded.

Usage: python evals/bench_ledger_guard.py [--events N] [--threads T] [--rounds R]
"""

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402


def one_round(arm, n, threads):
    from reflex.ledger import schema
    from reflex.ledger.writer import LedgerWriter
    path = os.path.join(tempfile.mkdtemp(prefix="ctx-bench-guard-"), "ledger.db")
    w = LedgerWriter(path).start()
    w.submit({"uid": "warm-0000", "session_id": "s", "ts": 1.0, "harness": "claude", "kind": "hook",
              "spooled": 0, "data": "{}"}).result()
    if arm in ("no head", "unguarded"):
        w._anchor = lambda: None
    if arm == "unguarded":
        w.close()
        conn = sqlite3.connect(path)
        for t in schema.APPEND_ONLY_TABLES:
            conn.execute("DROP TRIGGER IF EXISTS %s_no_replace" % t)
        conn.commit()
        conn.close()
        w = LedgerWriter(path).start()  # m003 is recorded as applied: the triggers stay dropped
        w._anchor = lambda: None
    per = n // threads
    t0 = time.perf_counter()

    def submitter(k):
        futs = [w.submit({"uid": "u-%d-%06d" % (k, i), "session_id": "s%d" % (i % 7), "ts": 1.0,
                          "harness": "claude", "kind": "hook", "spooled": 0, "data": "{}"}) for i in range(per)]
        for f in futs:
            f.result()

    ts = [threading.Thread(target=submitter, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    dt = time.perf_counter() - t0
    w.close()
    return per * threads / dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    arms = ("guarded", "no head", "unguarded")
    rates = {a: [] for a in arms}
    for r in range(args.rounds):
        # the arms' order rotates each round: no arm always runs first (or last) in a round
        for a in arms[r % 3:] + arms[:r % 3]:
            rates[a].append(one_round(a, args.events, args.threads))
    base = statistics.median(rates["unguarded"])
    result = {"machine": _common.machine(), "events": args.events, "threads": args.threads, "rounds": args.rounds,
              "arms": {}}
    for a in arms:
        med = statistics.median(rates[a])
        result["arms"][a] = {"events_per_s_median": round(med, 1), "ratio_vs_unguarded": round(med / base, 3),
                             "rounds": [round(x, 1) for x in rates[a]]}
        print("%-10s %9.0f events/s  x%.3f of unguarded" % (a, med, med / base))
    print("wrote", _common.write_json("bench_ledger_guard.json", result))


if __name__ == "__main__":
    main()
