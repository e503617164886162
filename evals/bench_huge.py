"""Huge and endless outputs through `ctx run`, against the bare command in the same run.

1. A 1 GB output (`--size`; `--quick`: 100 MB) through `ctx run` (the fast launcher, as
   rewrites use it), per workload (numbered lines from `seq`, one-character lines from
   `yes`), each with a fresh daemon:
   - bare command time, twice: stdout to /dev/null, and to a pipe drained by a reader
     (what a harness does); ctx run time; the ratios; and the CPU time of each (with
     the daemon's for ctx run), steadier than wall time when other work shares the cores;
   - digest latency after the command's exit: as the agent sees it (ctx run's wall time
     minus the command's own duration, which ctx run records) and daemon-side (store +
     count + digest, from the run's ledger row); target < 2 s;
   - daemon peak RSS (VmHWM from /proc) and its growth over the warm daemon; target
     <= 200 MB;
   - what the agent got (bytes on stdout; the header says what was kept and counted);
   - `ctx get` wall time for the first, middle and last lines and the whole handle
     (every answer one page); target < 2 s;
   - the capture directory's largest size on disk during the run (sampled every 20 ms)
     and the stored blob (raw and compressed); target: never more than the limit.
2. `producer | head -N` against the same pipeline in bare bash, for producers that do
   not stop on their own: one that takes 0.6 s to start (the issue's
   `npm run spam 2>&1 | head -5` took 0.6 s without ctx), a Python loop, and plain `yes`
   (whose bare pipeline takes a few ms, so its ratio measures ctx's fixed cost).
   Target: <= 1.5x the bare pipeline for the producers that take time to start.

Every child runs under RLIMIT_FSIZE (the capture limit and a margin), so a regression
fails the benchmark instead of filling the disk.

Usage: python evals/bench_huge.py [--quick] [--size BYTES] [--runs N]
"""

import argparse
import json
import os
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

FSIZE = 256 * 1024 * 1024

WORKLOADS = {
    # name: command producing about `size` bytes (parenthesised: one producer, no slicer to split off)
    "numbered lines (seq)": lambda size: "(seq 1 %d | head -c %d)" % (size // 7 + 1000, size),
    "one-character lines (yes)": lambda size: "(yes | head -c %d)" % size,
}

PIPELINES = {
    # name: (command, whether the ratio target applies)
    "producer that starts in 0.6 s, then writes forever | head -5":
        ("sleep 0.6; yes 'npm WARN spam spam spam' | head -5", True),
    "python loop writing forever | head -5":
        ("python3 -S -c 'while True: print(\"spam spam spam\")' | head -5", True),
    "yes | head -5": ("yes | head -5", False),
    "true (ctx run's fixed cost, no pipeline)": ("true", False),
}


def _limit():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(argv, stdout=subprocess.DEVNULL, env=None, timeout=600, cpu=None):
    """Wall time of a command; its CPU time (with its descendants) is appended to `cpu` when given."""
    c0 = _children_cpu()
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, env=env, preexec_fn=_limit, timeout=timeout)
    t = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(_children_cpu() - c0)
    return t, p


def _bare_to_pipe(command, cpu=None):
    """The bare command with its stdout drained by a reader, as a harness reads it."""
    c0 = _children_cpu()
    t0 = time.perf_counter()
    p = subprocess.Popen(["/bin/bash", "-c", command], stdout=subprocess.PIPE, preexec_fn=_limit)
    while p.stdout.read(1 << 20):
        pass
    p.wait()
    if cpu is not None:
        cpu.append(_children_cpu() - c0)
    return time.perf_counter() - t0


def _proc_cpu(pid):
    """CPU seconds a process (the daemon) has used so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _vm_hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmHWM:\s*(\d+)", f.read()).group(1))


def _daemon_pid(paths):
    from reflex.daemon import control as daemon_control
    return daemon_control.lock_pid(paths)


class DirSampler:
    """Largest size on disk of a directory, sampled every 20 ms."""

    def __init__(self, path):
        self.path = path
        self.peak = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            total = 0
            try:
                for n in os.listdir(self.path):
                    try:
                        total += os.stat(os.path.join(self.path, n)).st_blocks * 512
                    except OSError:
                        pass
            except OSError:
                pass
            self.peak = max(self.peak, total)
            self._stop.wait(0.02)

    def stop(self):
        self._stop.set()
        self._t.join()
        return self.peak


def _last_run(paths):
    conn = sqlite3.connect(paths.ledger)
    try:
        row = conn.execute("SELECT r.handle, r.blob, r.raw_bytes, e.data, e.output_bytes FROM runs r "
                           "JOIN events e ON e.uid = r.event_uid ORDER BY r.id DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    return {"handle": row[0], "blob": row[1], "raw_bytes": row[2], "data": json.loads(row[3]),
            "output_bytes": row[4]}


def huge(paths, fast, workload, size, runs):
    command = WORKLOADS[workload](size)
    proc = _common.start_daemon(paths)
    try:
        _timed([fast, "run", "--", "seq 1 2000"])  # warm: tokenizer, parsers
        pid = _daemon_pid(paths)
        rss_warm = _vm_hwm_kb(pid)
        bare_null, bare_pipe, ctx_t, after_exit, daemon_side, peaks = [], [], [], [], [], []
        cpu_null, cpu_pipe, cpu_ctx, cpu_daemon = [], [], [], []
        out_bytes = 0
        header = ""
        for _ in range(runs):
            bare_null.append(_timed(["/bin/bash", "-c", command], cpu=cpu_null)[0])
            bare_pipe.append(_bare_to_pipe(command, cpu=cpu_pipe))
            sampler = DirSampler(paths.captures)
            d0 = _proc_cpu(pid)
            t, p = _timed([fast, "run", "--", command], stdout=subprocess.PIPE, cpu=cpu_ctx)
            cpu_daemon.append(_proc_cpu(pid) - d0)
            peaks.append(sampler.stop())
            if p.returncode != 0:
                raise SystemExit("ctx run failed: %s" % p.stderr.decode(errors="replace")[-500:])
            ctx_t.append(t)
            run = _last_run(paths)
            after_exit.append(t - run["data"]["duration_ms"] / 1000.0)
            timing = run["data"].get("timing_ms") or {}
            daemon_side.append((timing.get("store", 0) + timing.get("follow", 0) + timing.get("digest", 0)) / 1000.0)
            out_bytes = len(p.stdout)
            header = p.stdout.split(b"\n", 1)[0].decode(errors="replace")
        rss_peak = _vm_hwm_kb(pid)
        gets = get_latencies(fast, paths, run)
        blob_file = os.path.join(paths.blobs, run["blob"][3:5], run["blob"][5:] + ".z")
        med = statistics.median
        return {
            "command": command, "output_bytes": run["output_bytes"], "runs": runs,
            "bare_to_devnull_s": round(med(bare_null), 3), "bare_to_pipe_s": round(med(bare_pipe), 3),
            "ctx_run_s": round(med(ctx_t), 3),
            "ratio_vs_bare_pipe": round(med(ctx_t) / med(bare_pipe), 3),
            "ratio_vs_bare_devnull": round(med(ctx_t) / med(bare_null), 3),
            # CPU seconds: steadier than wall time on a machine shared by other work.
            "cpu_s": {"bare_to_devnull": round(med(cpu_null), 3), "bare_to_pipe": round(med(cpu_pipe), 3),
                      "ctx_run_and_command": round(med(cpu_ctx), 3), "daemon": round(med(cpu_daemon), 3)},
            "cpu_ratio_vs_bare_pipe": round((med(cpu_ctx) + med(cpu_daemon)) / med(cpu_pipe), 3),
            "digest_after_exit_s": {"median": round(med(after_exit), 3), "max": round(max(after_exit), 3)},
            "daemon_side_s": {"median": round(med(daemon_side), 3), "max": round(max(daemon_side), 3)},
            "daemon_rss_mb": {"warm": round(rss_warm / 1024, 1), "peak": round(rss_peak / 1024, 1),
                              "growth": round((rss_peak - rss_warm) / 1024, 1)},
            "agent_stdout_bytes": out_bytes, "header": header,
            "capture": run["data"].get("capture"),
            "capture_dir_peak_bytes": max(peaks), "stored_blob_bytes": run["raw_bytes"],
            "stored_blob_compressed_bytes": os.path.getsize(blob_file),
            "get_s": gets,
        }
    finally:
        _common.stop_daemon(paths, proc)


def get_latencies(fast, paths, run):
    """Wall time of `ctx get` (a process, as the agent runs it) for addresses across the stored output."""
    h = run["handle"]
    _, probe = _timed([fast, "get", h + ":L999999999-999999999", "--json"], stdout=subprocess.PIPE)
    n_lines = int(re.search(r"holds (\d+) lines", json.loads(probe.stdout)["miss"]["detail"]).group(1))
    mid = n_lines // 2
    addresses = {"first lines": h + ":L1-100", "middle lines (across the elided part)": "%s:L%d-%d" % (h, mid, mid + 100),
                 "last lines": "%s:L%d-%d" % (h, max(1, n_lines - 99), n_lines), "whole handle (first page)": h}
    out = {}
    for label, address in addresses.items():
        xs = []
        for _ in range(3):
            t, p = _timed([fast, "get", address], stdout=subprocess.PIPE)
            if p.returncode != 0:
                raise SystemExit("ctx get %s failed: %s" % (address, p.stderr.decode(errors="replace")))
            xs.append(t)
        out[label] = {"median_s": round(statistics.median(xs), 3), "max_s": round(max(xs), 3),
                      "bytes": len(p.stdout)}
    return out


def _with_tee(command, scratch):
    """The bare pipeline with ctx's tee stage inserted (no ctx run, no daemon): the tee's own cost."""
    from reflex.shim import capture
    from reflex.safety import pipesplit
    from reflex.shim import run as runner
    point = pipesplit.split_point(command)
    if point is None:
        return None
    producer, pipe, slicer, _ = point
    cap = os.path.join(scratch, "tee.out")
    stats = cap + ".kept"
    for f in (cap, stats):
        with open(f, "wb"):
            pass
    return "%s %s %s | %s" % (producer, pipe, runner._tee_command(cap, capture.LIMIT, stats), slicer)


def pipelines(paths, fast, runs):
    proc = _common.start_daemon(paths)
    out = {}
    scratch = os.path.join(paths.home, "scratch")
    os.makedirs(scratch, exist_ok=True)
    try:
        _timed([fast, "run", "--", "seq 1 10 | head -1"])
        for name, (command, target) in PIPELINES.items():
            bare, ctx, teed = [], [], []
            for _ in range(runs):
                t, p = _timed(["/bin/bash", "-c", command], stdout=subprocess.PIPE, timeout=120)
                bare.append(t)
                tee_text = _with_tee(command, scratch)
                if tee_text:
                    teed.append(_timed(["/bin/bash", "-c", tee_text], stdout=subprocess.PIPE, timeout=120)[0])
                t, q = _timed([fast, "run", "--", command], stdout=subprocess.PIPE, timeout=120)
                ctx.append(t)
                if q.returncode != p.returncode or not q.stdout.endswith(p.stdout):
                    raise SystemExit("%s: ctx run differs from bash (exit %d vs %d)" % (name, q.returncode,
                                                                                       p.returncode))
            b, c = statistics.median(bare), statistics.median(ctx)
            out[name] = {"command": command, "bare_s": round(b, 4), "ctx_run_s": round(c, 4),
                         "ratio": round(c / b, 3), "overhead_ms": round((c - b) * 1000, 1),
                         "bare_with_tee_s": round(statistics.median(teed), 4) if teed else None,
                         "target_applies": target, "runs": runs}
    finally:
        _common.stop_daemon(paths, proc)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="100 MB instead of 1 GB, fewer repeats")
    ap.add_argument("--size", type=int, default=None)
    ap.add_argument("--runs", type=int, default=None)
    args = ap.parse_args()
    size = args.size or (100 * 1000 * 1000 if args.quick else 1 << 30)
    runs = args.runs or (1 if args.quick else 3)
    paths = _common.setup_env("ctx-bench-huge-")
    from reflex.shim import capture
    from reflex.shim import launcher
    fast = launcher.write_launcher(paths)
    res = {"machine": _common.machine(), "size": size, "capture_limit": capture.LIMIT, "workloads": {}}
    for name in WORKLOADS:
        r = huge(paths, fast, name, size, runs)
        res["workloads"][name] = r
        print("%s: %d bytes" % (name, r["output_bytes"]))
        print("  bare %.2f s (/dev/null) %.2f s (pipe), ctx run %.2f s: %.2fx the piped bare command" % (
            r["bare_to_devnull_s"], r["bare_to_pipe_s"], r["ctx_run_s"], r["ratio_vs_bare_pipe"]))
        print("  CPU: bare %.2f s (/dev/null) %.2f s (pipe), ctx run + command %.2f s + daemon %.2f s: %.2fx" % (
            r["cpu_s"]["bare_to_devnull"], r["cpu_s"]["bare_to_pipe"], r["cpu_s"]["ctx_run_and_command"],
            r["cpu_s"]["daemon"], r["cpu_ratio_vs_bare_pipe"]))
        print("  digest %.2f s after exit (daemon side %.2f s); daemon RSS peak %.0f MB (+%.0f MB)" % (
            r["digest_after_exit_s"]["median"], r["daemon_side_s"]["median"], r["daemon_rss_mb"]["peak"],
            r["daemon_rss_mb"]["growth"]))
        print("  agent got %d bytes; capture dir peak %d bytes; blob %d bytes (%d compressed)" % (
            r["agent_stdout_bytes"], r["capture_dir_peak_bytes"], r["stored_blob_bytes"],
            r["stored_blob_compressed_bytes"]))
        for k, v in r["get_s"].items():
            print("  ctx get %-40s %.3f s (%d bytes)" % (k, v["median_s"], v["bytes"]))
        print("  header: %s" % r["header"])
    res["pipelines"] = pipelines(paths, fast, 3 if args.quick else 7)
    for name, r in res["pipelines"].items():
        print("%-62s bare %.3f s, ctx run %.3f s: %.2fx (+%.0f ms)%s" % (
            name, r["bare_s"], r["ctx_run_s"], r["ratio"], r["overhead_ms"],
            "; bare with ctx's tee inserted %.3f s" % r["bare_with_tee_s"] if r["bare_with_tee_s"] else ""))
    print("wrote", _common.write_json("bench_huge.json", res))


if __name__ == "__main__":
    main()
