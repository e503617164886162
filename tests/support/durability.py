"""Durability under kill -9: hook events from several clients while a killer SIGKILLs the daemon.

The core of evals/bench_durability.py (10,000 events) and tests/daemon/test_durability.py (a
small run): the real shim library, real daemons on a real socket, real SIGKILLs.
"""

import json
import multiprocessing as mp
import os
import random
import signal
import sqlite3
import threading
import time

from tests.support import daemons

HOOK_TIMEOUT_S = 5.0


def _payload(client_id, i):
    return json.dumps({
        "session_id": "dur-%d" % client_id, "hook_event_name": "PreToolUse" if i % 2 == 0 else "PostToolUse",
        "cwd": "/tmp", "tool_name": "Bash", "tool_input": {"command": "pytest -q" if i % 3 else "ls"},
        "tool_use_id": "toolu_%d_%d" % (client_id, i),
        "tool_response": {"stdout": "x", "stderr": "", "interrupted": False},
    }).encode()


def _client(client_id, n, q, pace_s=0.002):
    from reflex import paths as paths_mod
    from reflex.shim import hook
    paths = paths_mod.resolve()
    worst = 0.0
    for i in range(n):
        t0 = time.perf_counter()
        hook.deliver(paths, "claude", _payload(client_id, i))
        worst = max(worst, time.perf_counter() - t0)
        # Hooks arrive between tool calls, not back to back; a little pacing keeps the run
        # long enough for kills to land on a daemon that is serving, not only on one starting.
        time.sleep(pace_s)
    q.put((client_id, worst))


def run(events=10000, clients=8, seed=7, min_gap=0.15, max_gap=0.6, log=print):
    """Returns a result dict; the caller decides what 'pass' means."""
    paths = daemons.isolated_home("ctx-durability-")
    rng = random.Random(seed)
    proc = daemons.start_daemon(paths)
    per = events // clients
    q = mp.Queue()
    procs = [mp.Process(target=_client, args=(i, per, q)) for i in range(clients)]
    kills = []
    stop = threading.Event()

    def killer():
        from reflex.shim import client as client_mod
        while not stop.is_set():
            # wait for a daemon that answers, let it serve for a random while, then kill it
            try:
                up = client_mod.request_json(paths, "ping", connect_timeout=0.05, reply_timeout=0.5)[0].get("ok")
            except client_mod.Unavailable:
                up = False
            if not up:
                stop.wait(0.02)
                continue
            if stop.wait(rng.uniform(min_gap, max_gap)):
                return
            from reflex.daemon.control import lock_pid
            pid = lock_pid(paths)
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                    kills.append(time.time())
                except OSError:
                    pass

    t0 = time.time()
    for p in procs:
        p.start()
    kt = threading.Thread(target=killer, daemon=True)
    kt.start()
    worst = [q.get() for _ in procs]
    for p in procs:
        p.join()
    stop.set()
    kt.join()
    wall = time.time() - t0
    # Bring a daemon up (if the last kill left none) and let it drain the spool.
    from reflex.shim import client
    from reflex.shim import spool
    client.spawn_daemon(paths)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            up = client.request_json(paths, "ping", connect_timeout=0.2, reply_timeout=1)[0].get("ok")
        except client.Unavailable:
            up = False
        if up and not spool.pending(paths.spool):
            break
        if not up:
            client.spawn_daemon(paths)  # rate-limited to one attempt a second
        time.sleep(0.2)
    daemons.stop_daemon(paths, proc)
    try:
        proc.wait(1)
    except Exception:
        pass
    from reflex.ledger.verify import verify
    rep = verify(paths.ledger, paths.blobs)
    conn = sqlite3.connect(paths.ledger)
    counts = dict(conn.execute("SELECT tool_use_id, count(*) FROM events WHERE session_id LIKE 'dur-%' "
                               "GROUP BY tool_use_id").fetchall())
    spooled = conn.execute("SELECT count(*) FROM events WHERE spooled=1").fetchone()[0]
    conn.close()
    expected = {"toolu_%d_%d" % (c, i) for c in range(clients) for i in range(per)}
    missing = sorted(expected - set(counts))
    dupes = sorted(k for k, v in counts.items() if v > 1)
    res = {"events": per * clients, "clients": clients, "kills": len(kills),
           "wall_s": round(wall, 2), "verify_ok": rep.ok, "verify_problems": rep.problems[:5],
           "missing": len(missing), "missing_sample": missing[:5], "duplicated": len(dupes),
           "spooled_events": spooled, "live_events": per * clients - spooled, "remaining_spool": len(spool.pending(paths.spool)),
           "worst_hook_call_s": round(max(w for _, w in worst), 3), "hook_timeout_s": HOOK_TIMEOUT_S}
    res["pass"] = (rep.ok and not missing and not dupes and res["worst_hook_call_s"] < HOOK_TIMEOUT_S
                   and res["kills"] > 0)
    return res
