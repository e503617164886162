"""Build evals/report.{md,json} from the JSON each benchmark wrote to evals/out/.

Each extractor turns one benchmark's JSON into rows:
    (issue, figure, value, baseline name, baseline value, ratio, target, ok)
A row whose data is missing says so ("not measured") instead of inventing a
number.  Ratios are computed here from the two values in the same JSON, i.e.
measured in the same run.
"""

import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")


def _load(name):
    try:
        with open(os.path.join(OUT, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _get(d, path, default=None):
    for k in path.split("."):
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def row(issue, figure, value, unit="", baseline=None, base_value=None, target=None, ok=None, note=""):
    ratio = None
    if isinstance(value, (int, float)) and isinstance(base_value, (int, float)) and base_value:
        ratio = round(value / base_value, 3)
    return {"issue": issue, "figure": figure, "value": value, "unit": unit, "baseline": baseline,
            "baseline_value": base_value, "ratio": ratio, "target": target, "ok": ok, "note": note}


def hook_rows():
    d = _load("bench_hook.json")
    if not d:
        return [row(2, "hook round trip", None, note="not measured")]
    a = d["arms"]
    fast = _get(a, "ctx hook (fast launcher).median_ms")
    out = []
    for base in ("python3 -c pass", "interp -c pass", "interp -S -c pass"):
        bv = _get(a, base + ".median_ms")
        out.append(row(2, "hook round trip, fast launcher (median)", fast, "ms", base, bv,
                       "<= 1.3x python3 -c pass" if base == "python3 -c pass" else None,
                       (fast <= 1.3 * bv) if base == "python3 -c pass" and fast and bv else None))
    out.append(row(2, "hook round trip, console script (median)", _get(a, "ctx hook (console script).median_ms"), "ms",
                   "python3 -c pass", _get(a, "python3 -c pass.median_ms")))
    rtk = _get(a, "rtk hook claude.median_ms")
    out.append(row(2, "hook round trip vs RTK's `rtk hook claude`", fast, "ms", "rtk hook claude", rtk,
                   "below RTK", (fast < rtk) if fast and rtk else None,
                   "" if rtk else "rtk not installed: skipped"))
    http = _get(a, "http transport.median_ms")
    out.append(row(2, "http transport per hook (median)", http, "ms", target="< 5 ms",
                   ok=(http < 5) if http else None))
    return out


def throughput_rows():
    d = _load("bench_throughput.json")
    if not d:
        return [row(2, "daemon throughput", None, note="not measured")]
    ok = d["events_per_s"] >= 2000 and d["in_ledger"] == d["events"] == d["distinct_uids"]
    return [row(2, "daemon throughput, %d clients" % d["clients"], d["events_per_s"], "events/s",
                target=">= 2000/s, all in ledger", ok=ok,
                note="%d events, %d in ledger, %d spooled by clients" % (d["events"], d["in_ledger"],
                                                                        d.get("spooled_by_clients", 0)))]


def durability_rows():
    d = _load("bench_durability.json")
    if not d:
        return [row(2, "durability under kill -9", None, note="not measured")]
    return [row(2, "durability: %d events, %d clients, %d kill -9" % (d["events"], d["clients"], d["kills"]),
                d["missing"] + d["duplicated"], "events lost or doubled", target="0, verify passes",
                ok=d["pass"], note="verify %s; worst hook call %.3f s (timeout %.0f s); %d spooled, %d live" % (
                    "ok" if d["verify_ok"] else "FAILED", d["worst_hook_call_s"], d["hook_timeout_s"],
                    d.get("spooled_events", 0), d.get("live_events", 0)))]


def run_rows():
    d = _load("bench_run.json")
    if not d:
        return [row(4, "ctx run overhead", None, note="not measured")]
    m = d["median_ms"]
    out = [row(4, "ctx run overhead over bare command (small output)", d["overhead_ms"], "ms",
               "python3 -c pass", m.get("python3 -c pass"), "< 1.3x python startup",
               d["overhead_ms"] < 1.3 * m.get("python3 -c pass", 0)),
           row(4, "ctx run overhead over bare command (small output)", d["overhead_ms"], "ms",
               "interp -c pass", m.get("interp -c pass"))]
    for label, target in (("100KB", 20), ("5MB", 200)):
        v = _get(d, "daemon_latency.%s.median_ms" % label)
        out.append(row(4, "digest latency in the daemon, %s output via ctx run (median, exit to digest)" % label,
                       v, "ms", target="< %d ms" % target, ok=(v < target) if v else None,
                       note="tokens counted while the command ran: %s of %s runs" % (
                           _get(d, "daemon_latency.%s.counted_while_running" % label),
                           _get(d, "daemon_latency.%s.n" % label))))
        v = _get(d, "digest_latency.%s.median_ms" % label)
        out.append(row(4, "digest after the fact, %s output (build_digest in-process, tokenizer warm)" % label, v,
                       "ms", note="the path taken when the daemon could not follow the run"))
    return out


def huge_rows():
    d = _load("bench_huge.json")
    if not d:
        return [row(5, "huge output through ctx run", None, note="not measured")]
    out = []
    for name, w in d.get("workloads", {}).items():
        mb = "%.0f MB %s" % (w["output_bytes"] / 1e6, name)
        out.append(row(5, "ctx run wall time, %s" % mb, w["ctx_run_s"], "s", "bare, stdout to a pipe",
                       w["bare_to_pipe_s"], note="bare to /dev/null: %s s" % w["bare_to_devnull_s"]))
        cpu = w.get("cpu_s")
        if cpu:
            out.append(row(5, "CPU time, ctx run + command + daemon, %s" % mb,
                           round(cpu["ctx_run_and_command"] + cpu["daemon"], 3), "s", "bare, stdout to a pipe",
                           cpu["bare_to_pipe"], note="daemon %s s; bare to /dev/null %s s" % (
                               cpu["daemon"], cpu["bare_to_devnull"])))
        v = w["digest_after_exit_s"]["median"]
        out.append(row(5, "digest latency after the command's exit, %s" % mb, v, "s", target="< 2 s", ok=v < 2,
                       note="daemon side (store + count + digest) %s s" % w["daemon_side_s"]["median"]))
        v = w["daemon_rss_mb"]["peak"]
        out.append(row(5, "daemon peak RSS, %s" % mb, v, "MB", "warm daemon", w["daemon_rss_mb"]["warm"],
                       "<= 200 MB", v <= 200))
        v = w["agent_stdout_bytes"]
        out.append(row(5, "bytes the agent got, %s" % mb, v, "B", "output", w["output_bytes"],
                       "a digest, never the raw bytes", v < 64 * 1024, note=w["header"][:160]))
        worst = max(g["max_s"] for g in w["get_s"].values())
        out.append(row(5, "ctx get, slowest of first/middle/last/whole, %s" % mb, worst, "s", target="< 2 s",
                       ok=worst < 2, note="; ".join("%s %.2f s" % (k, g["median_s"]) for k, g in w["get_s"].items())))
        v = w["capture_dir_peak_bytes"]
        out.append(row(5, "capture on disk at its largest, %s" % mb, v, "B", "capture limit", d["capture_limit"],
                       "<= limit + one marker and a block", v <= d["capture_limit"] + 8192,
                       note="stored blob %d B (%d compressed)" % (w["stored_blob_bytes"],
                                                                  w["stored_blob_compressed_bytes"])))
    for name, p in d.get("pipelines", {}).items():
        out.append(row(5, "`%s` through ctx run" % name, p["ctx_run_s"], "s", "bare bash pipeline", p["bare_s"],
                       "<= 1.5x" if p["target_applies"] else None,
                       (p["ratio"] <= 1.5) if p["target_applies"] else None,
                       note="+%.0f ms%s" % (p["overhead_ms"], "; bare pipeline with ctx's tee inserted: %s s" % (
                           p["bare_with_tee_s"]) if p.get("bare_with_tee_s") else "")))
    return out


def signature_rows():
    d = _load("bench_signature.json")
    if not d:
        return [row(3, "signature", None, note="not measured")]
    t = d.get("timing") or {}
    med, p99, mx = t.get("median_us"), t.get("p99_us"), t.get("max_us")
    acc = _get(d, "accuracy.family_core_pct")
    return [row(3, "signature, median per command", med, "µs", target="< 100 µs", ok=_get(d, "pass.median")),
            row(3, "signature, p99", p99, "µs", target="< 1 ms", ok=_get(d, "pass.p99")),
            row(3, "signature, slowest command", mx, "µs", target="< 50 ms", ok=_get(d, "pass.max")),
            row(3, "family+core exact on the labeled corpus", acc, "%", target=">= 98%", ok=_get(d, "pass.accuracy"),
                note="%s commands; misses: %s" % (_get(d, "accuracy.n"), len(_get(d, "accuracy.misses", []))))]


def safety_rows():
    d = _load("bench_safety.json")
    if not d:
        return [row(5, "safety", None, note="not measured")]
    t = d.get("per_check") or {}
    return [row(5, "safety check, median", t.get("median_us"), "µs", note="%s table cases" % d.get("cases")),
            row(5, "safety check, p99", t.get("p99_us"), "µs")]


def digest_rows():
    d = _load("bench_digest.json")
    if not d:
        return [row(4, "digest", None, note="not measured")]
    out = []
    for fam, f in sorted((d.get("families") or {}).items()):
        out.append(row(4, "census recall, %s" % fam, f.get("ctx_recall"), "", "RTK", f.get("rtk_recall_strict"),
                       "100%", f.get("ctx_recall") == 1.0))
        out.append(row(4, "delivered tokens, %s (raw %s)" % (fam, f.get("raw_tokens")), f.get("ctx_tokens_on_rtk_cases"),
                       "tokens", "RTK", f.get("rtk_tokens"), "<= RTK",
                       (f.get("ctx_tokens_on_rtk_cases") or 0) <= (f.get("rtk_tokens") or 0) if f.get("rtk_tokens") else None))
    return out


def worktree_rows():
    d = _load("bench_worktree.json")
    if not d:
        return [row(5, "worktree", None, note="not measured")]
    return [row(5, "worktree initial scan, %s files" % _get(d, "initial.files"), _get(d, "initial.first_hash_for_s"), "s",
                target="< 5 s", ok=(_get(d, "initial.first_hash_for_s") or 99) < 5),
            row(5, "worktree hash query (median)", _get(d, "query.median_us") or _get(d, "queries.median_us"), "µs",
                target="< 1 ms"),
            row(5, "edit reflected in hash (median / max)", _get(d, "edits.median_ms"), "ms", target="< 200 ms",
                ok=(_get(d, "edits.max_ms") or 999) < 200, note="max %s ms" % _get(d, "edits.max_ms"))]


def fold_rows():
    out = []
    d = _load("bench_fold.json")
    if d:
        out.append(row(5, "fold + detectors per event (median)", d.get("median_us"), "µs", target="< 200 µs",
                       ok=d.get("pass"), note="p95 %s µs" % d.get("p95_us")))
    r = _load("bench_replay.json")
    if r:
        out.append(row(5, "replay of a %.1f MB transcript (ctx replay, wall)" % (r["bytes"] / 1e6),
                       _get(r, "command_s.median"), "s", target="< 2 s", ok=r.get("pass")))
    return out or [row(5, "fold/replay", None, note="not measured")]


def labels_rows():
    d = _load("bench_labels.json")
    if not d:
        return [row(5, "starvation vs hand labels", None, note="not measured")]
    note = "%d re-runs labelled in %d real transcripts (%s); tp %d fp %d fn %d" % (
        d["reruns_labelled"], d["transcripts"], ", ".join("%s %d" % kv for kv in d["by_label"].items() if kv[1]),
        d["tp"], d["fp"], d["fn"])
    return [row(5, "starvation precision vs labels", d["precision"], "", note=note),
            row(5, "starvation recall vs labels", d["recall"], ""),
            row(5, "false starvation on re-runs after a change", d["false_starvation_after_change"], "",
                target="0", ok=d["false_starvation_after_change"] == 0)]


def stats_rows():
    d = _load("bench_stats.json")
    if not d:
        return [row(6, "ctx stats", None, note="not measured")]
    sess = d.get("stats_session_ms") or d.get("stats_session_json_ms") or {}
    if not isinstance(sess, dict):
        sess = {"median": sess}
    pc = d.get("policy_compile") or {}
    return [row(6, "ctx stats --session on %s events / %s sessions (subprocess, median)" % (
                    d.get("events"), d.get("sessions")), sess.get("median"), "ms", target="< 300 ms",
                ok=(sess.get("median") or 999) < 300),
            row(6, "ctx stats --last (text)", _get(d, "stats_last_text_ms.median"), "ms", target="< 300 ms",
                ok=(_get(d, "stats_last_text_ms.median") or 999) < 300),
            row(6, "ctx policy compile over that ledger", pc.get("wall_s"), "s", target="< 30 s, < 500 MB",
                ok=(pc.get("wall_s") or 99) < 30 and (pc.get("peak_rss_mb") or 999) < 500,
                note="peak RSS %s MB" % pc.get("peak_rss_mb"))]


def peers_rows():
    d = _load("bench_peers.json")
    if not d:
        return [row(7, "peers side by side", None, note="not measured")]
    return [row(7, r["figure"], r.get("value"), r.get("unit", ""), r.get("baseline"), r.get("baseline_value"),
                r.get("target"), r.get("ok"), r.get("note", "")) for r in d.get("rows", [])]


def referee_rows():
    d = _load("referee.json")
    if not d:
        return [row(7, "closed-loop referee", None, note="not measured")]
    return [row(7, r["figure"], r.get("value"), r.get("unit", ""), r.get("baseline"), r.get("baseline_value"),
                r.get("target"), r.get("ok"), r.get("note", "")) for r in d.get("rows", [])]


EXTRACTORS = [hook_rows, throughput_rows, durability_rows, run_rows, huge_rows, signature_rows, safety_rows, digest_rows,
              worktree_rows, fold_rows, labels_rows, stats_rows, peers_rows, referee_rows]


def build(runs, meta):
    rows = []
    for ex in EXTRACTORS:
        try:
            rows.extend(ex())
        except Exception as e:  # a malformed bench JSON is one row, not a lost report
            rows.append(row(0, ex.__name__, None, note="extractor failed: %r" % e))
    return {"meta": meta, "runs": {k: {kk: vv for kk, vv in v.items() if kk != "stdout_tail"} for k, v in runs.items()},
            "rows": rows}


def _fmt(v):
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return "%.3g" % v if abs(v) < 1000 else "%.0f" % v
    return str(v)


def markdown(doc):
    m = doc["meta"]
    lines = ["# ctx evaluation report", "",
             "Generated by `python -m evals%s` on %s (%s run). Every figure below comes from the JSON the "
             "benchmarks wrote in this run; ratios compare two values measured in the same run." % (
                 " --quick" if m.get("mode") == "quick" else "", m.get("date"), m.get("mode")), "",
             "Machine: %s CPUs, %s. Versions: %s." % (
                 m.get("cpus"), m["versions"].get("platform"),
                 ", ".join("%s %s" % (k, v) for k, v in sorted(m["versions"].items()) if k != "platform" and v)),
             "", "| issue | figure | value | baseline | ratio | target | met | note |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in doc["rows"]:
        base = "%s: %s" % (r["baseline"], _fmt(r["baseline_value"])) if r["baseline"] else "—"
        lines.append("| %s | %s | %s %s | %s | %s | %s | %s | %s |" % (
            r["issue"], r["figure"], _fmt(r["value"]), r["unit"], base, _fmt(r["ratio"]), r["target"] or "—",
            _fmt(r["ok"]), r["note"].replace("|", "/")))
    lines += ["", "## Benchmark runs", "", "| benchmark | status | seconds |", "| --- | --- | --- |"]
    for name, r in doc["runs"].items():
        lines.append("| %s | %s | %s |" % (name, r["status"], r.get("seconds", "—")))
    return "\n".join(lines) + "\n"
