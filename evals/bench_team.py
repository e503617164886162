"""A team dataset at scale: compile and report on DuckDB and Spark, export, against the Python compile.

Shapes come from a real ledger: one or more developers' sessions recorded through a real daemon
and real `ctx run` of a failing pytest suite (evals/team_ledgers_example.py), exported into a small
dataset with the real exporter (reflex.analysis.dataset).  Its sessions (events and compile facts)
are the templates.  The generator then writes datasets of N events in the same layout: USERS
developers (one ledger each, on one of 4 hosts), DAYS date partitions, two exports per ledger;
each session is a template repeated 1-3 times (a longer loop of the same commands), with fresh
session ids, uids, tool_use_ids, ids and timestamps, so the SQL sees N distinct events and the
facts that go with them.  Vectorised with pyarrow: the generator is not what is measured.

Measured, each as a subprocess (interpreter start included), peak RSS summed over the process tree
(the Spark JVM is a grandchild), sampled every 100 ms:

    baseline   ctx policy compile --ledger LEDGER.db      the current Python compile, BASE events (SQLite)
    duckdb     ctx policy compile --dataset D             at each --sizes (target at 100M: <= 60 s, <= 1 GB)
    spark      ctx policy compile --dataset D --engine spark --spark-master local[2]   (--spark)
    stats      ctx stats --dataset D --json               at the largest size (target at 100M: <= 10 s)
    export     ctx ledger export --dataset  of that ledger (EXPORT events), twice
               (target for 1M: <= 10 s; the second adds 0 rows); then the DuckDB compile of the
               exported dataset, whose epoch must equal the baseline's byte for byte

Ratios: each engine's events/s over the baseline's events/s (same run).  The DuckDB and Spark
epochs of one dataset are compared byte for byte.  Datasets are deleted at the end (--keep keeps).

Usage: python evals/bench_team.py [--sizes 10000000,100000000] [--base 1000000] [--export 1000000]
                                  [--spark] [--sessions N] [--keep DIR]
--keep DIR keeps (and on a later run reuses) the generated datasets.  Writes evals/out/bench_team.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

TARGET_DUCKDB_S, TARGET_DUCKDB_MB = 60, 1024
TARGET_STATS_S = 10
TARGET_EXPORT_S = 10
MODELS = ("claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1")


# -- measuring ----------------------------------------------------------------------------------

def _tree_rss_kb(root: int) -> int:
    children: dict = {}
    rss: dict = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                parts = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(parts[1]), []).append(int(name))
            rss[int(name)] = int(parts[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, ()))
    return total


def timed(args, env, timeout=3600, cpu=None):
    """-> (wall s, rc, stdout, stderr, peak RSS MB of the whole process tree).

    cpu: a list to append the CPU seconds (user + system) of the process tree to: its waited-for
    descendants (an export's pool workers) included.  One command runs at a time here."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "reflex.entry"] + args, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_kb(p.pid))
            done.wait(0.1)
    th = threading.Thread(target=sample, daemon=True)
    th.start()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        done.set()
        return None, -9, out, err, peak[0] / 1024.0
    wall = time.perf_counter() - t0
    done.set()
    th.join()
    if cpu is not None:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall, p.returncode, out, err, peak[0] / 1024.0


# -- templates from a real ledger ----------------------------------------------------------------

def record_templates(root, sessions, log):
    """Real sessions through a real daemon, exported by the real exporter -> (events table, facts table)."""
    from tests.support.team_ledgers import Developer, careful_session, loop_session, plain_session
    import pyarrow.parquet as pq
    from reflex.analysis.dataset import export_dataset
    dev = Developer(root, "template")
    kinds = [loop_session, careful_session, plain_session]
    try:
        dev.start()
        for i in range(sessions):
            kinds[i % len(kinds)](dev, "tpl-%02d" % i, MODELS[i % len(MODELS)])
    finally:
        dev.stop()
    ds = os.path.join(root, "template-ds")
    export_dataset(dev.paths.ledger, ds, host="tpl", user="tpl")
    ev = pq.read_table(os.path.join(ds, "events")).select(_event_columns())
    facts = pq.read_table(os.path.join(ds, "facts")).select(_fact_columns())
    n = sqlite3.connect("file:%s?mode=ro" % dev.paths.ledger, uri=True).execute(
        "SELECT count(*) FROM events").fetchone()[0]
    log("templates: %d real sessions, %d events, %d facts rows" % (sessions, n, facts.num_rows))
    return ev, facts


def _event_columns():
    from reflex.analysis.dataset import events_schema
    return [f.name for f in events_schema()]


def _fact_columns():
    from reflex.analysis.dataset import FACT_COLUMNS
    return [c for c, _k in FACT_COLUMNS]


class Templates:
    def __init__(self, ev, facts):
        import numpy as np
        ev = ev.filter(_ne(ev["session_id"], "-")).sort_by([("session_id", "ascending"), ("seq", "ascending")])
        facts = facts.sort_by([("session_id", "ascending"), ("row_kind", "descending")])   # session row first
        self.ev, self.facts = ev, facts
        sids = ev["session_id"].to_pylist()
        fsids = facts["session_id"].to_pylist()
        self.names = sorted(set(sids))
        self.ev_rows = {s: np.array([i for i, x in enumerate(sids) if x == s]) for s in self.names}
        fk = facts["row_kind"].to_pylist()
        self.session_row = {s: [i for i, x in enumerate(fsids) if x == s and fk[i] == "session"][0]
                            for s in self.names}
        self.run_rows = {s: np.array([i for i, x in enumerate(fsids) if x == s and fk[i] == "run"], dtype=np.int64)
                         for s in self.names}
        seq = ev["seq"].to_numpy()
        ts = ev["ts"].to_numpy()
        self.seq0 = {s: seq[self.ev_rows[s]] - seq[self.ev_rows[s]].min() for s in self.names}
        self.len = {s: int(self.seq0[s].max()) + 1 for s in self.names}
        self.dts = {s: ts[self.ev_rows[s]] - ts[self.ev_rows[s]].min() for s in self.names}


def _ne(arr, value):
    import pyarrow.compute as pc
    return pc.not_equal(arr, value)


# -- the generator --------------------------------------------------------------------------------

class DatasetWriter:
    """Writes a generated team dataset of about `events` events into `root`."""

    def __init__(self, tpl: Templates, root, events, users, days, seed=7):
        self.tpl, self.root, self.target, self.users, self.days = tpl, root, events, users, days
        self.rng = random.Random(seed)
        self.t0 = 1_790_000_000.0

    def run(self, log=print) -> int:
        per_user = self.target // self.users
        total = 0
        for u in range(self.users):
            total += self._ledger(u, per_user)
            if u % max(1, self.users // 5) == 0:
                log("  generated ledger %d/%d (%d events so far)" % (u + 1, self.users, total))
        return total

    def _ledger(self, u, n_events) -> int:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        from blake3 import blake3
        from reflex.analysis.compile_facts import FACTS_VERSION
        from reflex.analysis.dataset import (FACT_COLUMNS, INPUT_COLUMNS, _schema, events_schema,
                                             facts_row_groups, hook_summary)
        tpl = self.tpl
        ledger = blake3(b"gen-ledger-%d" % u).hexdigest()[:16]
        host, user = "gen-host-%d" % (u % 4), "dev%03d" % u
        per_day = n_events // self.days
        next_id, sess_no, total = 1, 0, 0
        exports = [(0, self.days // 2), (self.days // 2, self.days)]
        ev_sch = events_schema()
        for first_day, end_day in exports:
            first_id = next_id
            ev_parts, fact_parts = [], []
            for day in range(first_day, end_day):
                idx, sess, seqs, tss = [], [], [], []
                fidx, fsess = [], []
                got = 0
                day_start = self.t0 + day * 86400
                while got < per_day:
                    s = tpl.names[self.rng.randrange(len(tpl.names))]
                    reps = self.rng.randint(1, 3)
                    rows = tpl.ev_rows[s]
                    for r in range(reps):
                        idx.append(rows)
                        sess.append(np.full(len(rows), sess_no))
                        seqs.append(tpl.seq0[s] + r * tpl.len[s] + 1)
                        tss.append(day_start + (sess_no % 1000) * 60 + tpl.dts[s] + r * (tpl.dts[s].max() + 5))
                    fidx.append(np.array([tpl.session_row[s]]))
                    fsess.append(np.array([sess_no]))
                    for r in range(reps):
                        fidx.append(tpl.run_rows[s])
                        fsess.append(np.full(len(tpl.run_rows[s]), sess_no))
                    got += len(rows) * reps
                    sess_no += 1
                idx, sess = np.concatenate(idx), np.concatenate(sess)
                n = len(idx)
                t = tpl.ev.take(pa.array(idx))
                ids = np.arange(next_id, next_id + n, dtype=np.int64)
                next_id += n
                first_sess = int(sess[0])
                names = pa.array(["%s-%d" % (user, k) for k in range(first_sess, int(sess[-1]) + 1)])
                sid = names.take(pa.array(sess - first_sess))
                seq = np.concatenate(seqs).astype(np.int64)
                # uid is unique per event, as in a ledger; hash/prev_hash/tool_use_id keep the template's
                # values (no query reads them; only the files' size would notice).
                uid = pc.binary_join_element_wise(ledger, pc.cast(pa.array(ids), pa.string()), "-")
                cols = {"id": pa.array(ids), "uid": uid, "session_id": sid, "seq": pa.array(seq),
                        "ts": pa.array(np.concatenate(tss)), "recorded_at": pa.array(np.concatenate(tss)),
                        "ledger": pa.array([ledger] * n, pa.string())}
                arrays = [cols.get(f.name, t[f.name]) for f in ev_sch]
                arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
                ev_parts.append((day, pa.Table.from_arrays(arrays, schema=ev_sch)))
                ft = tpl.facts.take(pa.array(np.concatenate(fidx)))
                fsid = pc.binary_join_element_wise("%s-" % user, pc.cast(pa.array(np.concatenate(fsess)), pa.string()),
                                                   "")
                fact_parts.append((ft, fsid))
                total += n
            last_id = next_id - 1
            name = "part-%s-%s-%012d-%012d.parquet" % (host, ledger, first_id, last_id)
            for day, table in ev_parts:
                date = time.strftime("%Y-%m-%d", time.gmtime(self.t0 + day * 86400))
                self._write([table], "events", date, host, user, name)
            ft = pa.concat_tables([f for f, _s in fact_parts])
            fsid = pa.chunked_array([s for _f, s in fact_parts]).combine_chunks()
            nf = ft.num_rows
            fcols = {"ledger": pa.array([ledger] * nf, pa.string()), "session_id": fsid,
                     "through_id": pa.array(np.full(nf, last_id, dtype=np.int64))}
            f_sch = _schema(FACT_COLUMNS)
            ftab = pa.Table.from_arrays([fcols.get(f.name, ft[f.name]) for f in f_sch], schema=f_sch)
            end_date = time.strftime("%Y-%m-%d", time.gmtime(self.t0 + (end_day - 1) * 86400))
            self._write(facts_row_groups(ftab), "facts", end_date, host, user, name)
            # the stats' summary of this export's events, by the exporter's own function
            self._write([hook_summary(pa.concat_tables([t for _d, t in ev_parts]), ledger, last_id)], "hooks",
                        end_date, host, user, name)
            inp = {"ledger": [ledger], "through_id": [last_id], "digest": ["b3:" + blake3(name.encode()).hexdigest()],
                   "fmt": ["sqlite"], "events": [last_id], "facts_version": [FACTS_VERSION], "exported_at": [0.0]}
            i_sch = _schema(INPUT_COLUMNS)
            self._write([pa.Table.from_arrays([pa.array(inp[f.name], f.type) for f in i_sch], schema=i_sch)],
                        "inputs", end_date, host, user, name)
        return total

    def _write(self, parts, kind, date, host, user, name):
        """One file of the dataset, each of `parts` in its own row groups (as the exporter writes)."""
        import pyarrow.parquet as pq
        d = os.path.join(self.root, kind, "date=" + date, "host=" + host, "user=" + user)
        os.makedirs(d, exist_ok=True)
        with pq.ParquetWriter(os.path.join(d, name), parts[0].schema, compression="zstd") as w:
            for t in parts:
                w.write_table(t, row_group_size=256 * 1024)


def sqlite_ledger(tpl, path, events):
    """A ledger of `events` events (the real schema, migrated by open_ledger) for the export bench."""
    import pyarrow.parquet as pq
    from reflex.ledger import schema
    from reflex.ledger.db import open_ledger
    tmp = path + ".ds"
    DatasetWriter(tpl, tmp, events, 1, days=2, seed=5).run(log=lambda *_: None)
    t = pq.read_table(os.path.join(tmp, "events")).sort_by("id")
    shutil.rmtree(tmp)
    db = open_ledger(path)
    cols = ("id",) + schema.EVENT_COLUMNS
    conn = db.conn
    conn.execute("BEGIN")
    data = [t[c].to_pylist() for c in cols]
    conn.executemany("INSERT INTO events (%s) VALUES (%s)" % (", ".join(cols), ", ".join("?" * len(cols))),
                     zip(*data))
    conn.execute("COMMIT")
    conn.close()
    return t.num_rows


def facts_store_as_the_daemon_does(ledger, env) -> dict:
    """Store the facts of the ledger's ended sessions with the daemon's own command
    (`python -m reflex.analysis.facts_store LEDGER`, ids on stdin); -> its cost."""
    import resource
    import sqlite3
    from reflex.analysis import facts_store
    with sqlite3.connect("file:%s?mode=ro" % ledger, uri=True) as c:
        ended = [r[0] for r in c.execute("SELECT DISTINCT session_id FROM events WHERE hook_event = 'SessionEnd'")]
        sessions = c.execute("SELECT count(DISTINCT session_id) FROM events WHERE session_id != '-'").fetchone()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "reflex.analysis.facts_store", ledger], input="\n".join(ended),
                       env=env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit("storing the facts failed: %s" % p.stderr[-1500:])
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"store": facts_store.store_path(ledger), "sessions": len(ended), "ledger_sessions": sessions,
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 1), "cpu_ms_per_session": round(1000 * cpu / max(1, len(ended)), 2),
            "store_mb": round(os.path.getsize(facts_store.store_path(ledger)) / 1e6, 1)}


ROUNDS = 3       # runs of each figure with a target whose median is reported


def _median(runs):
    """The median (wall, rss) of [(wall, rss)] by wall."""
    return sorted(runs)[len(runs) // 2]


def du_mb(path) -> float:
    total = 0
    for d, _s, fs in os.walk(path):
        for f in fs:
            total += os.path.getsize(os.path.join(d, f))
    return total / 1e6


# -- the run --------------------------------------------------------------------------------------

def run(sizes, base, export_n, spark, sessions, keep=None, log=print):
    root = keep or tempfile.mkdtemp(prefix="ctx-bench-team-")
    os.makedirs(root, exist_ok=True)
    env = dict(os.environ, CTX_HOME=os.path.join(root, "ctxhome"), NO_COLOR="1", USER="bench", LOGNAME="bench")
    env.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(_common.REPO, "..", "shared", "tiktoken"))
    res = {"machine": _common.machine(), "sizes": sizes, "base_events": base, "export_events": export_n,
           "engines": {}, "datasets": {}}
    free = shutil.disk_usage(root).free
    res["disk_free_gb_before"] = round(free / 1e9, 1)
    try:
        ev, facts = record_templates(root, sessions, log)
        tpl = Templates(ev, facts)
        res["templates"] = {"sessions": len(tpl.names), "events": tpl.ev.num_rows, "facts_rows": tpl.facts.num_rows}

        # baseline: the current Python compile of a real-schema SQLite ledger of BASE events
        led = os.path.join(root, "export-home", "ledger.db")
        os.makedirs(os.path.dirname(led))
        nb = sqlite_ledger(tpl, led, base)
        base_toml = os.path.join(root, "epoch-ledger.toml")
        wall, rc, out, err, mb = timed(["policy", "compile", "--ledger", led, "--out", base_toml], env)
        if rc != 0:
            raise SystemExit("baseline compile failed: %s" % err.decode()[-2000:])
        res["baseline"] = {"events": nb, "wall_s": round(wall, 2), "peak_rss_mb": round(mb, 1),
                           "events_per_s": round(nb / wall), "what": "ctx policy compile --ledger LEDGER.db"}
        log("baseline python compile: %d events in %.1f s, %.0f MB" % (nb, wall, mb))

        # export of that ledger (or one of EXPORT events), twice; then the dataset's epoch against the ledger's
        if export_n != base:
            os.unlink(led)
            ne = sqlite_ledger(tpl, led, export_n)
        else:
            ne = nb
        eds = os.path.join(root, "export-ds")
        export = ["ledger", "export", "--ledger", led, "--format", "parquet", "--dataset"]
        # The ledger as a daemon leaves it: the facts of every session that ended (SessionEnd)
        # stored beside it by the daemon's child (reflex.daemon.session_facts), run here the way
        # the daemon runs it, over all of them at once (the daemon runs it a few sessions at a
        # time, after they end).  Its cost is the daemon's, spread over the sessions' lifetimes.
        fs = facts_store_as_the_daemon_does(led, env)
        log("facts of %d ended sessions stored in %.1f s (CPU %.1f s, %.2f ms a session)"
            % (fs["sessions"], fs["wall_s"], fs["cpu_s"], fs["cpu_ms_per_session"]))
        cpu_pooled: list = []
        w1, rc1, _o, e1, mb1 = timed(export + [eds], env, cpu=cpu_pooled)
        w2, rc2, _o, e2, _mb = timed(export + [eds], env)
        # same-run baseline: the same export in one process (--workers 1).  This machine's speed
        # drifts over minutes: each is run ROUNDS times, alternating, into fresh directories, and
        # the medians are reported (every wall time is kept).
        # The CPU seconds of each (the pool's workers included) say how far 2 cores can take it.
        pooled, one, cpu_one = [(w1, mb1)], [], []
        for k in range(ROUNDS):
            for runs, extra, cpu in ((one, ["--workers", "1"], cpu_one), (pooled, [], cpu_pooled)):
                if runs is pooled and len(pooled) == ROUNDS:
                    continue
                d = "%s-%d" % (eds, k)
                w, rc, _o, e, mb = timed(export + [d] + extra, env, cpu=cpu)
                shutil.rmtree(d, ignore_errors=True)
                if rc:
                    raise SystemExit("export failed: %s" % e.decode()[-1500:])
                runs.append((w, mb))
        if rc1 or rc2:
            raise SystemExit("export failed: %s %s" % (e1.decode()[-1500:], e2.decode()[-1500:]))
        # Beside it, the cold export: the same ledger with no stored facts (one from an older ctx,
        # or whose sessions were all killed before they ended), every session's facts computed.
        store = fs["store"]
        os.replace(store, store + ".aside")
        cold, cpu_cold = [], []
        for k in range(ROUNDS):
            d = "%s-cold-%d" % (eds, k)
            w, rc, _o, e, mb = timed(export + [d], env, cpu=cpu_cold)
            shutil.rmtree(d, ignore_errors=True)
            if rc:
                raise SystemExit("export failed: %s" % e.decode()[-1500:])
            cold.append((w, mb))
        os.replace(store + ".aside", store)
        (w1, mb1), (w0, mb0) = _median(pooled), _median(one)
        wc, mbc = _median(cold)
        import duckdb
        con = duckdb.connect()
        rows = con.execute("SELECT count(*) FROM read_parquet('%s/events/*/*/*/*.parquet')" % eds).fetchone()[0]
        con.close()
        from reflex.analysis.dataset import _workers
        res["export"] = {"events": ne, "wall_s": round(w1, 2), "peak_rss_mb": round(mb1, 1), "rows_in_dataset": rows,
                         "workers": _workers(), "one_process_wall_s": round(w0, 2), "rounds": ROUNDS,
                         "walls_s": [round(w, 2) for w, _mb in pooled],
                         "one_process_walls_s": [round(w, 2) for w, _mb in one],
                         "one_process_peak_rss_mb": round(mb0, 1), "speedup_vs_one_process": round(w0 / w1, 2),
                         "cpu_s": round(statistics.median(cpu_pooled), 1), "one_process_cpu_s": round(statistics.median(cpu_one), 1),
                         "second_wall_s": round(w2, 2), "second_added_rows": 0 if "0 rows added" in e2.decode() else None,
                         "first_message": e1.decode().strip()[-300:], "second_message": e2.decode().strip()[-300:],
                         "facts_store": {k: v for k, v in fs.items() if k != "store"},
                         "cold_wall_s": round(wc, 2), "cold_peak_rss_mb": round(mbc, 1),
                         "cold_walls_s": [round(w, 2) for w, _mb in cold], "cold_cpu_s": round(statistics.median(cpu_cold), 1)}
        log("export of %d events: %.1f s (%.0f MB, %d workers; one process: %.1f s, %.0f MB; no stored facts: %.1f s); "
            "again: %.1f s, %s" % (ne, w1, mb1, _workers(), w0, mb0, wc, w2, e2.decode().strip()))
        if export_n == base:
            ds_toml = os.path.join(root, "epoch-export-ds.toml")
            wall, rc, _o, err, mb = timed(["policy", "compile", "--dataset", eds, "--out", ds_toml], env)
            with open(base_toml, "rb") as a, open(ds_toml, "rb") as b:
                same = rc == 0 and a.read() == b.read()
            res["export"]["duckdb_compile"] = {"wall_s": round(wall, 2), "peak_rss_mb": round(mb, 1), "rc": rc,
                                               "epoch_identical_to_ledger_compile": same}
            log("duckdb compile of the exported dataset: %.1f s, %.0f MB, epoch identical to the ledger's: %s"
                % (wall, mb, same))
        shutil.rmtree(eds)
        os.unlink(led)
        os.unlink(fs["store"])

        for size in sizes:
            ds = os.path.join(root, "ds-%d" % size)
            users = max(2, min(50, size // 2_000_000))
            t0 = time.perf_counter()
            done = os.path.join(ds, ".complete")
            if os.path.exists(done):      # --keep DIR from an earlier run: the generator is deterministic
                with open(done) as f:
                    n = int(f.read())
            else:
                n = DatasetWriter(tpl, ds, size, users, days=10).run(log=log)
                with open(done, "w") as f:
                    f.write(str(n))
            res["datasets"][str(size)] = {"events": n, "users": users, "days": 10, "mb_on_disk": round(du_mb(ds), 1),
                                          "generate_s": round(time.perf_counter() - t0, 1)}
            log("dataset %d: %d events, %d users, %.0f MB, generated in %.0f s" % (
                size, n, users, du_mb(ds), time.perf_counter() - t0))
            epochs = {}
            engines = [("duckdb", [])] + ([("spark", ["--engine", "spark", "--spark-master", "local[2]"])]
                                          if spark else [])
            for name, extra in engines:
                out_toml = os.path.join(root, "epoch-%s-%d.toml" % (name, size))
                wall, rc, out, err, mb = timed(["policy", "compile", "--dataset", ds, "--out", out_toml] + extra, env)
                rec = {"events": n, "wall_s": None if wall is None else round(wall, 2), "peak_rss_mb": round(mb, 1),
                       "rc": rc}
                if rc == 0:
                    rec["events_per_s"] = round(n / wall)
                    rec["speedup_vs_python"] = round((n / wall) / res["baseline"]["events_per_s"], 1)
                    with open(out_toml, "rb") as f:
                        epochs[name] = f.read()
                else:
                    rec["error"] = err.decode(errors="replace")[-1500:]
                res["engines"].setdefault(name, {})[str(size)] = rec
                log("%s compile at %d: %s s, %.0f MB (rc %s)" % (name, n, rec["wall_s"], mb, rc))
            if len(epochs) == 2:
                res["datasets"][str(size)]["epochs_identical"] = epochs["duckdb"] == epochs["spark"]
            if True:       # the scorecard at every size (target at the largest): the median of ROUNDS runs
                runs = [timed(["stats", "--dataset", ds, "--json"], env) for _k in range(ROUNDS)]
                walls = [r[0] for r in runs]
                failed = [r for r in runs if r[0] is None or r[1] != 0]
                # a failed or timed-out run is the figure: a missed target, never a hidden one
                wall, rc, out, err, mb = failed[0] if failed else sorted(runs, key=lambda r: r[0])[len(runs) // 2]
                rec = {"events": n, "wall_s": None if wall is None else round(wall, 2), "peak_rss_mb": round(mb, 1),
                       "rc": rc, "walls_s": [None if w is None else round(w, 2) for w in walls]}
                if rc == 0:
                    card = json.loads(out)
                    rec["rows"] = len(card["rows"])
                    rec["users"] = card["totals"]["users"]
                else:
                    rec["error"] = err.decode(errors="replace")[-1500:]
                res.setdefault("stats_by_size", {})[str(size)] = rec
                res["stats"] = rec
                log("stats --dataset at %d: %s s, %.0f MB" % (n, rec["wall_s"], mb))
            if not keep:
                shutil.rmtree(ds)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000000,100000000")
    ap.add_argument("--base", type=int, default=1_000_000)
    ap.add_argument("--export", type=int, default=1_000_000)
    ap.add_argument("--spark", action="store_true", help="also compile on Spark (local[2])")
    ap.add_argument("--sessions", type=int, default=3, help="real template sessions to record")
    ap.add_argument("--keep", default=None)
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",") if x]
    res = run(sizes, a.base, a.export, a.spark, a.sessions, a.keep)
    big = str(max(sizes))
    d = res["engines"]["duckdb"].get(big, {})
    st = res.get("stats", {})
    ex = res["export"]
    # A missing figure (a failed or timed-out run) is a missed target, never a hidden one.
    res["targets"] = {
        "duckdb_at_largest": {"size": int(big), "wall_s": d.get("wall_s"), "peak_rss_mb": d.get("peak_rss_mb"),
                              "target": "<= %d s and <= %d MB" % (TARGET_DUCKDB_S, TARGET_DUCKDB_MB),
                              "ok": d.get("wall_s") is not None and d["wall_s"] <= TARGET_DUCKDB_S
                              and d.get("peak_rss_mb") is not None and d["peak_rss_mb"] <= TARGET_DUCKDB_MB},
        "stats_at_largest": {"size": int(big), "wall_s": st.get("wall_s"), "target": "<= %d s" % TARGET_STATS_S,
                             "ok": st.get("wall_s") is not None and st["wall_s"] <= TARGET_STATS_S},
        "export": {"wall_s": ex["wall_s"], "events": ex["events"], "second_added_rows": ex["second_added_rows"],
                   "target": "<= %d s per 1M events; a re-export adds 0 rows" % TARGET_EXPORT_S,
                   "ok": ex["wall_s"] <= TARGET_EXPORT_S * ex["events"] / 1_000_000 and ex["second_added_rows"] == 0},
        "epoch_dataset_equals_ledger": {"ok": bool(ex.get("duckdb_compile", {}).get("epoch_identical_to_ledger_compile"))},
        "epochs_identical_across_engines": {"ok": all(v.get("epochs_identical", True) for v in res["datasets"].values())}}
    path = _common.write_json("bench_team.json", res)
    print(json.dumps(res["targets"], indent=2))
    print("wrote", path)


if __name__ == "__main__":
    main()
