"""Durability: kill -9 the daemon at random moments during a multi-session run.

8 client processes (one session each) deliver hook events through the shim's
own code path while a killer sends SIGKILL to whichever daemon is running at
random intervals; the clients' fallback (spool + spawn) restarts it.  Then:
`ctx ledger verify` must pass, every event must be in the ledger exactly once
(spool + ledger together), and no hook call may take longer than the hook
timeout installed in settings (5 s).

Usage: python evals/bench_durability.py [--events 10000] [--clients 8] [--seed 7]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402
from tests.support.durability import run  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--min-gap", type=float, default=0.15, help="seconds between kills, at least")
    ap.add_argument("--max-gap", type=float, default=0.6)
    a = ap.parse_args()
    res = run(a.events, a.clients, a.seed, a.min_gap, a.max_gap)
    res["machine"] = _common.machine()
    print(json.dumps(res, indent=2))
    print("wrote", _common.write_json("bench_durability.json", res))
    return 0 if res["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
