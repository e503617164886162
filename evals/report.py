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


# Set by build(): the outputs this run produced and the code they must have measured.  Anything
# else in evals/out/ (a previous run, another checkout's tree) is never shown as current.
_FRESH = {"files": None, "code_tree": None}


def _load(name):
    if _FRESH["files"] is not None and name not in _FRESH["files"]:
        return None
    try:
        with open(os.path.join(OUT, name)) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return None
    if _FRESH["code_tree"] is not None and d.get("code_tree") != _FRESH["code_tree"]:
        return None
    return d


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


def harness_hooks_rows():
    d = _load("bench_harness_hooks.json")
    if not d:
        return [row(12, "hook round trip per harness", None, note="not measured")]
    a = d["arms"]
    base = _get(a, "python -S -c pass.median_ms")
    out = []
    for name in ("claude", "codex", "gemini", "copilot", "qwen", "opencode", "droid", "cursor"):
        if "ctx hook %s" % name not in a:
            continue
        v = _get(a, "ctx hook %s.median_ms" % name)
        out.append(row(12, "hook round trip, `ctx hook %s` (median, daemon warm)" % name, v, "ms",
                       "python -S -c pass", base, note="" if d.get("all_answered_cleanly") else
                       "a hook exited non-zero or wrote to stderr: see bench_harness_hooks.json"))
    return out


def post_digest_rows():
    d = _load("bench_post_digest.json")
    if not d:
        return [row(12, "post-hook digest vs rewrite", None, note="not measured")]
    out = []
    for key, c in sorted(d["cases"].items()):
        n = d["failing"]
        case = key.replace("|", "\\|")  # the agent's own pipe, inside a markdown table cell
        out.append(row(12, "%s: tokens, rewrite to ctx run (%d/%d failing ids)" % (case, c["rewrite"]["failing_named"], n),
                       c["rewrite"]["tokens"], "tokens", "harness alone", c["raw"]["tokens"]))
        out.append(row(12, "%s: tokens, digest in the post hook (%d/%d failing ids)" % (
            case, c["post_digest"]["failing_named"], n), c["post_digest"]["tokens"], "tokens", "harness alone",
            c["raw"]["tokens"], note="" if c["post_digest"]["replaced"] else "output left as is (smaller than a digest)"))
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
    targets = {"100KB": 20, "5MB": 200}  # a --quick run measures 1 MB, which has no target of its own
    for label in sorted(d.get("daemon_latency") or {}, key=lambda x: float(x[:-2]) * (1024 if x.endswith("MB") else 1)):
        target = targets.get(label)
        v = _get(d, "daemon_latency.%s.median_ms" % label)
        out.append(row(4, "digest latency in the daemon, %s output via ctx run (median, exit to digest)" % label,
                       v, "ms", target="< %d ms" % target if target else None,
                       ok=(v < target) if v and target else None,
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
            # pass.max covers the pathological inputs too: the row shows the slowest of both.
            _slowest_signature_row(d, mx),
            row(3, "family+core exact on the labeled corpus", acc, "%", target=">= 98%", ok=_get(d, "pass.accuracy"),
                note="%s commands; misses: %s" % (_get(d, "accuracy.n"), len(_get(d, "accuracy.misses", []))))]


def _slowest_signature_row(d, corpus_max_us):
    patho = d.get("pathological_ms") or {}
    name, ms = max(patho.items(), key=lambda kv: kv[1]) if patho else (None, None)
    if ms is not None and (corpus_max_us is None or ms * 1000 > corpus_max_us):
        return row(3, "signature, slowest input (corpus or pathological)", round(ms, 1), "ms", target="< 50 ms",
                   ok=_get(d, "pass.max"), note="%s; slowest corpus command %s µs" % (name, corpus_max_us))
    return row(3, "signature, slowest input (corpus or pathological)", corpus_max_us, "µs", target="< 50 ms",
               ok=_get(d, "pass.max"), note="a corpus command; slowest pathological input: %s %s ms" % (name, ms))


def safety_rows():
    d = _load("bench_safety.json")
    if not d:
        return [row(5, "safety", None, note="not measured")]
    t = d.get("per_check") or {}
    return [row(5, "safety check, median", t.get("median_us"), "µs", note="%s table cases" % d.get("cases")),
            row(5, "safety check, p99", t.get("p99_us"), "µs")]


def invariance_rows():
    d = _load("bench_invariance.json")
    if not d:
        return [row(16, "safety decision daemon-up vs daemon-down", None, note="not measured")]
    out = [row(16, "safety decisions that differ daemon-up vs daemon-down", d["mismatches"], "payloads",
               target="0 of 100,000",
               # A mismatch fails at any count; a clean run below the target's count is not a pass.
               ok=False if d["mismatches"] else (True if d["compared"] >= 100_000 else None),
               note=("too few for the target (run `--quick --full invariance`); " if d["compared"] < 100_000
                     and not d["mismatches"] else "") + "%d generated payloads compared (%d fell back, not compared%s), %d denied; problems: %s"
               % (d["compared"], d["fallbacks"],
                  ": " + "; ".join("%s x%d" % kv for kv in sorted((d.get("fallback_reasons") or {}).items()))
                  if d["fallbacks"] else "", d["denied"],
                  ", ".join("%s %d" % kv for kv in sorted(d["payload_problems"].items()))))]
    out.append(row(16, "hostile payload, daemon-up decision (median)", _get(d, "up.median_ms"), "ms",
                   "the same calls sent plainly", _get(d, "baseline_up.median_ms")))
    out.append(row(16, "hostile payload, shim's local decision (median)", _get(d, "down.median_ms"), "ms",
                   "the same calls sent plainly", _get(d, "baseline_down.median_ms")))
    patho = d.get("pathological") or {}
    base = _get(patho, "plain 8 MiB string (baseline).median_ms")
    for name, v in sorted(patho.items()):
        if "baseline" not in name:
            out.append(row(16, "shim's local decision at the 8 MiB cap: " + name, v["median_ms"], "ms",
                           "plain 8 MiB string", base, note="decision: %s" % v["decision"]))
    return out


def digest_rows():
    d = _load("bench_digest.json")
    if not d:
        return [row(4, "digest", None, note="not measured")]
    out = []
    families = d.get("families") or {}
    for fam, f in sorted(families.items()):
        out.append(row(4, "census recall, %s" % fam, f.get("ctx_recall"), "", "RTK", f.get("rtk_recall_strict"),
                       "100%", f.get("ctx_recall") == 1.0))
        if f.get("rtk_cases"):
            partial = f["rtk_cases"] != f["cases"]
            out.append(row(4, "delivered tokens, %s (raw %s%s)" % (
                fam, f.get("raw_tokens"), ", %s of %s cases have RTK's output" % (f["rtk_cases"], f["cases"])
                if partial else ""), f.get("ctx_tokens_on_rtk_cases"), "tokens", "RTK", f.get("rtk_tokens"),
                "<= RTK", f["ctx_tokens_on_rtk_cases"] <= f["rtk_tokens"],
                note="RTK's census %s%s" % (
                    "—" if f.get("rtk_recall_strict") is None else "%d%%" % round(100 * f["rtk_recall_strict"]),
                    "; on the %s case(s) where it names everything: RTK %s, ctx %s" % (
                        f["rtk_complete_cases"], f["rtk_tokens_complete"], f["ctx_tokens_rtk_complete"])
                    if f.get("rtk_complete_cases") else "")))
        else:  # RTK has no filter for this family: the digest against the raw output
            out.append(row(4, "delivered tokens, %s (RTK has no filter for it)" % fam, f.get("ctx_tokens"), "tokens",
                           "raw", f.get("raw_tokens"), "<= raw, <= 35% above 2,000", f.get("size_ok")))
    if families:
        sized = [fam for fam, f in families.items() if f.get("size_ok")]
        out.append(row(4, "runners whose every digest is <= raw and <= 35% of it above 2,000 tokens", len(sized), "",
                       "runners", len(families), "all", len(sized) == len(families),
                       note="over: " + ", ".join(sorted(set(families) - set(sized))) if len(sized) < len(families)
                       else ""))
        counted = [fam for fam, f in families.items() if f.get("counts_cases")]
        stated = [fam for fam in counted if families[fam]["counts_ok_cases"] == families[fam]["counts_cases"]]
        out.append(row(4, "runners whose every printed count is stated (and agrees with the tool's report)",
                       len(stated), "", "runners", len(counted), "all", len(stated) == len(counted),
                       note="not: " + ", ".join(sorted(set(counted) - set(stated))) if len(stated) < len(counted)
                       else ""))
    return out


def runner_table(doc):
    """One line per runner (corpus family; held-out cases apart): census, counts, tokens, RTK, versions."""
    fams = doc.get("runners")
    if not fams:
        return ["", "## Per runner", "", "Not measured in this run (bench_digest)."]
    pct = lambda x: "—" if x is None else "%d%%" % round(100 * x)  # noqa: E731
    lines = ["", "## Per runner", "",
             "Real outputs of each tool on the fixtures in evals/fixtures, truth from the tool's own structured "
             "report (evals/corpus/README.md). Census: the tool's failures, errored tests, units and "
             "diagnostics the digest names. Counts: cases whose printed counts are all in the digest's header. "
             "RTK's tokens are summed over the cases RTK has an output for. Parameter groups: the same digests "
             "with every parametrized case on its own line, against the grouped form.", "",
             "| runner | cases | census | counts stated | tokens, ctx / raw | size | parameter groups save "
             "| RTK tokens (ctx on the same cases) | RTK census | where RTK's census is complete: RTK / ctx tokens "
             "| versions |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for fam, f in sorted(fams.items()):
        counts = "%s/%s" % (f["counts_ok_cases"], f["counts_cases"]) if f.get("counts_cases") else "none printed"
        rtk = "%s (%s)" % (f["rtk_tokens"], f["ctx_tokens_on_rtk_cases"]) if f.get("rtk_cases") else "no filter"
        flat = f.get("ctx_tokens_ungrouped")
        saves = "%s tokens (%s → %s)" % (flat - f["ctx_tokens"], flat, f["ctx_tokens"]) \
            if flat and flat != f["ctx_tokens"] else "—"
        complete = "%s / %s (%s of %s cases)" % (f["rtk_tokens_complete"], f["ctx_tokens_rtk_complete"],
                                                f["rtk_complete_cases"], f["rtk_cases"]) \
            if f.get("rtk_complete_cases") else ("no case" if f.get("rtk_cases") else "—")
        lines.append("| %s | %s | %s | %s | %s / %s | %s | %s | %s | %s | %s | %s |" % (
            fam, f["cases"], pct(f.get("ctx_recall")), counts, f["ctx_tokens"], f["raw_tokens"],
            "ok" if f.get("size_ok") else "over", saves, rtk, pct(f.get("rtk_recall_strict")) if f.get("rtk_cases") else "—",
            complete, "; ".join(f.get("versions") or []).replace("|", "/")))
    return lines


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
        base = d.get("baseline") or {}
        out.append(row(5, "fold + detectors per event (median)", d.get("median_us"), "µs",
                       "fold at %s" % base["rev"] if base else None, base.get("median_us"), target="< 200 µs",
                       ok=d.get("pass"), note="p95 %s µs" % d.get("p95_us")))
        if base:
            out.append(row(17, "fold per command event (median)", _get(d, "per_kind.command.median_us"), "µs",
                           "fold at %s" % base["rev"], _get(base, "per_kind.command.median_us"),
                           note="p95 %s µs (before %s)" % (_get(d, "per_kind.command.p95_us"),
                                                          _get(base, "per_kind.command.p95_us"))))
    r = _load("bench_replay.json")
    if r:
        out.append(row(5, "replay of a %.1f MB transcript (ctx replay, wall)" % (r["bytes"] / 1e6),
                       _get(r, "command_s.median"), "s", target="< 2 s", ok=r.get("pass")))
    return out or [row(5, "fold/replay", None, note="not measured")]


def labels_rows():
    d = _load("bench_labels.json")
    if not d or not d.get("sets"):
        return [row(17, "starvation vs hand labels", None, note="not measured")]

    def fmt(x):
        return "n/a" if x is None else x

    out = []
    for name, s in d["sets"].items():
        after, before = s["after"], s.get("before")
        note = "%d re-runs labelled in %d transcripts (%s)" % (
            after["reruns_labelled"], s["transcripts"],
            ", ".join("%s %d" % kv for kv in after["by_label"].items() if kv[1]))
        for what, label in (("reruns", "re-runs"), ("firings", "firings")):
            a, b = after[what], (before or {}).get(what)
            base = d.get("baseline_rev")
            out.append(row(17, "%s: starvation precision by %s (n=%d)" % (name, label, a["precision_n"]),
                           fmt(a["precision"]), "", "before (%s), n=%d" % (base, b["precision_n"]) if b else None,
                           fmt(b["precision"]) if b else None,
                           target=">= 0.9" if name.startswith("real") else None,
                           ok=(a["precision"] is None or a["precision"] >= 0.9) if name.startswith("real") else None,
                           note=note if what == "reruns" else ""))
            out.append(row(17, "%s: starvation recall by %s (n=%d)" % (name, label, a["recall_n"]),
                           fmt(a["recall"]), "", "before (%s), n=%d" % (base, b["recall_n"]) if b else None,
                           fmt(b["recall"]) if b else None,
                           target=">= 0.8" if name.startswith("real") and what == "reruns" else None,
                           ok=(a["recall"] is not None and a["recall"] >= 0.8)
                           if name.startswith("real") and what == "reruns" else None))
        bad = after["firings"]["after_change"] + after["firings"]["on_polling_or_state"]
        out.append(row(17, "%s: firings after a change or on polling/state-changing commands" % name, bad, "",
                       target="0", ok=bad == 0))
    return out


def stats_rows():
    d = _load("bench_stats.json")
    if not d:
        return [row(6, "ctx stats", None, note="not measured")]
    sess = d.get("stats_session_ms") or d.get("stats_session_json_ms") or {}
    if not isinstance(sess, dict):
        sess = {"median": sess}
    pc = d.get("policy_compile") or {}
    cli = _get(d, "cli_start_ms.median")
    return [row(6, "ctx stats --session on %s events / %s sessions (subprocess, median)" % (
                    d.get("events"), d.get("sessions")), sess.get("median"), "ms", "ctx --version", cli,
                target="< 300 ms", ok=(sess.get("median") or 999) < 300),
            row(6, "ctx stats --last (text)", _get(d, "stats_last_text_ms.median"), "ms", "ctx --version", cli,
                target="< 300 ms", ok=(_get(d, "stats_last_text_ms.median") or 999) < 300),
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


def search_rows():
    d = _load("bench_search.json")
    if not d:
        return [row(16, "ctx search", None, note="not measured")]
    pats = d.get("patterns", {})
    limit = d.get("time_limit_s", 1.0)
    out = [row(16, "ctx search on %s MB, worst answer (redaction maps ready)" % d.get("stored_mb"),
               d.get("worst_warm_s"), "s", target="<= %.1f s" % limit, ok=d.get("worst_warm_s", 99) <= limit + 0.1,
               note="%d of %d patterns searched everything within the limit; the others say how far they got"
                    % (d.get("complete_warm", 0), len(pats))),
           row(16, "ctx search, worst answer right after a run (maps not ready)", d.get("worst_cold_s"), "s",
               target="<= %.1f s" % limit, ok=d.get("worst_cold_s", 99) <= limit + 0.1),
           row(16, "secret bytes in any search answer", len(d.get("leaks", [])), "", target="0",
               ok=not d.get("leaks"))]
    if d.get("first_after_start_s"):
        out.append(row(16, "ctx search, first answer right after a daemon start (worst of %d)"
                       % len(d["first_after_start_s"]), max(d["first_after_start_s"]), "s",
                       note="shares the CPU with the daemon's own warm-up (tokenizer, imports: %s s); the "
                            "figures above wait for it" % "/".join(str(x) for x in d.get("daemon_warm_up_s") or ())))
    for name, r in pats.items():
        g = _get(r, "grep.seconds")
        pr = r.get("python_re") or {}
        note = "complete" if _get(r, "warm.complete") else "stopped at the limit after %s MB" % _get(
            r, "warm.searched_mb")
        note += "; Python re (the old engine): %s" % (
            "%.3g s" % pr["seconds"] if pr.get("seconds") is not None else "> %g s (stopped)" % pr.get(
                "timed_out_after_s", 0))
        out.append(row(16, "search %s: %s" % (r.get("kind"), name), _get(r, "warm.seconds"), "s", "grep -E -c", g,
                       note=note))
    h = d.get("hooks")
    if h:
        out.append(row(16, "hook latency p99 while searches run", _get(h, "searching.p99_ms"), "ms",
                       "no search running", _get(h, "idle.p99_ms"), target="ratio <= 1.25",
                       ok=h.get("ratio_p99", 99) <= 1.25))
        out.append(row(16, "hook latency p50 while searches run", _get(h, "searching.p50_ms"), "ms",
                       "no search running", _get(h, "idle.p50_ms")))
    return out


def ledger_guard_rows():
    d = _load("bench_ledger_guard.json")
    if not d:
        return [row(16, "ledger writer with its guards", None, note="not measured")]
    a = d["arms"]
    base = _get(a, "unguarded.events_per_s_median")
    return [row(16, "ledger writer, no-replace triggers + head file", _get(a, "guarded.events_per_s_median"),
                "events/s", "unguarded writer", base, target="ratio >= 0.8",
                ok=(_get(a, "guarded.ratio_vs_unguarded") or 0) >= 0.8),
            row(16, "ledger writer, no-replace triggers only", _get(a, "no head.events_per_s_median"), "events/s",
                "unguarded writer", base)]


def secrets_rows():
    d = _load("bench_secrets.json")
    rc = (d or {}).get("ctx_run") or {}
    if "census_big_kept_ms" not in rc:
        return [row(16, "ctx run census with its listings kept", None, note="not measured")]
    return [row(16, "ctx run census of a %d-file project, listings kept" % rc["census_big_project_files"],
                rc["census_big_kept_ms"], "ms", "a fresh walk", rc["census_big_ms"], "<= 0.25x",
                rc["census_big_kept_ms"] <= 0.25 * rc["census_big_ms"] and not rc["census_big_truncated"],
                note="the same %d secret files found both ways" % rc["census_big_files"]),
            row(16, "ctx run census of this repository, listings kept", rc["census_this_repo_kept_ms"], "ms",
                "a fresh walk", rc["census_this_repo_ms"])]


def timeline_rows():
    d = _load("bench_timeline.json")
    if not d:
        return [row(15, "compile timeline, file-write check", None, note="not measured")]
    cur, base = d["current"], d["baseline"]
    return [row(15, "compile timeline, file-write check per real Bash command (%d)" % d["commands"],
                cur["us_per_command"], "µs", "before the /dev/null gate (%s)" % d["baseline_rev"],
                base["us_per_command"], "<= %sx" % d["target_ratio"], d["pass"],
                note="%d parsed (before: %d); commands that write: %d (before: %d)"
                % (cur["parses"], base["parses"], cur["writes"], base["writes"]))]


def savings_rows():
    d = _load("bench_savings.json")
    if not d:
        return [row(29, "real sessions: tool-result tokens ctx acts on", None, note="not measured")]
    t = d["targets"]
    out = []
    for split in ("dev", "heldout"):
        sp = d["splits"].get(split)
        if not sp:
            continue
        base = sp["baseline"]
        out.append(row(29, "real sessions (%s): share of tool-result tokens ctx acts on" % split,
                       round(100 * sp["acted_share"], 1), "%", "before issue 29 (%s)" % d["baseline_rev"],
                       round(100 * base["acted_share"], 1), ">= %d%%" % round(100 * t["acted_share_min"]),
                       sp["acted_share"] >= t["acted_share_min"]))
        out.append(row(29, "real sessions (%s): delivered / received, calls acted on" % split, sp["ratio"], "x",
                       "before issue 29 (%s)" % d["baseline_rev"], base["ratio"], "<= %sx" % t["ratio_max"],
                       sp["ratio"] is not None and sp["ratio"] <= t["ratio_max"],
                       note="%d calls larger than received (target %d)" % (sp["larger"], t["larger"])))
    out.append(row(29, "real sessions: dev set replayed with --savings (%d tool results)" % d["dev_calls"],
                   d["dev_replay_s"], "s", target="< %d s" % t["dev_replay_s_max"],
                   ok=d["dev_replay_s"] < t["dev_replay_s_max"],
                   note="Read handled by the read memo" if d.get("read_handled") else "Read not handled"))
    return out


def adversarial_rows():
    d = _load("bench_adversarial.json")
    if not d:
        return [row(31, "adversarial suite by class", None, note="not measured")]
    out = []
    for cls, r in d["classes"].items():
        out.append(row(31, "adversarial: %s (cases passed)" % cls, r["passed"], "of %d" % r["cases"],
                       target="all but skipped", ok=r["failed"] == 0,
                       note=("%d skipped (a tool not installed)" % r["skipped"]) if r["skipped"] else ""))
    t = d["totals"]
    out.append(row(31, "adversarial suite: failing cases (leaks or broken guarantees)", t["failed"], "",
                   target="0", ok=d["pass"], note="%d cases, %d passed, %d skipped; %s s"
                   % (t["cases"], t["passed"], t["skipped"], d["wall_s"])))
    return out


def team_rows():
    d = _load("bench_team.json")
    if not d:
        return [row(15, "team dataset compile", None, note="not measured")]
    b = d.get("baseline") or {}
    base = "Python compile, %s events (%s s, %s MB)" % (b.get("events"), b.get("wall_s"), b.get("peak_rss_mb"))
    out = []
    sizes = sorted(int(s) for s in (d.get("datasets") or {}))
    for engine in ("duckdb", "spark"):
        for size in sizes:
            r = _get(d, "engines.%s.%d" % (engine, size))
            if not r:
                continue
            big = size == max(sizes) and size >= 100_000_000
            target = "<= 60 s, <= 1 GB" if engine == "duckdb" and big else None
            ok = ((r.get("wall_s") or 1e9) <= 60 and (r.get("peak_rss_mb") or 1e9) <= 1024) if target else None
            out.append(row(15, "policy compile --dataset, %s, %s events: events/s" % (engine, r.get("events")),
                           r.get("events_per_s"), "events/s", base, b.get("events_per_s"), target, ok,
                           "%s s, peak RSS %s MB%s" % (r.get("wall_s"), r.get("peak_rss_mb"),
                                                      "" if r.get("rc") == 0 else ", FAILED rc %s" % r.get("rc"))))
    for size in sizes:
        same = _get(d, "datasets.%d.epochs_identical" % size)
        if same is not None:
            out.append(row(15, "DuckDB and Spark epochs byte-identical at %d events" % size, same, "", target="true",
                           ok=same is True))
    st = d.get("stats") or {}
    out.append(row(15, "ctx stats --dataset (DuckDB), %s events" % st.get("events"), st.get("wall_s"), "s",
                   target="<= 10 s at 100M" if (st.get("events") or 0) >= 100_000_000 else None,
                   ok=((st.get("wall_s") or 1e9) <= 10) if (st.get("events") or 0) >= 100_000_000 else None,
                   note="peak RSS %s MB%s" % (st.get("peak_rss_mb"), _of_runs(st.get("walls_s")))))
    ex = d.get("export") or {}
    full = (ex.get("events") or 0) >= 1_000_000
    out.append(row(15, "ledger export --dataset, %s events%s" % (ex.get("events"), ", ended sessions' facts stored by the daemon"
                                                                 if ex.get("facts_store") else ""), ex.get("wall_s"), "s",
                   "the same export in one process (--workers 1)", ex.get("one_process_wall_s"),
                   target="<= 10 s for 1M" if full else None,
                   ok=((ex.get("wall_s") or 1e9) <= 10) if full else None,
                   note="peak RSS %s MB with %s workers (one process: %s MB)%s%s%s"
                   % (ex.get("peak_rss_mb"), ex.get("workers"), ex.get("one_process_peak_rss_mb"),
                      _cpu_note(ex), _of_runs(ex.get("walls_s")),
                      _of_runs(ex.get("one_process_walls_s"), "one process "))))
    fs = ex.get("facts_store") or {}
    if fs:
        out.append(row(15, "ledger export --dataset, %s events, no stored facts (cold)" % ex.get("events"),
                       ex.get("cold_wall_s"), "s",
                       note="every session's facts computed by the export; the row above is the ledger as a daemon "
                       "leaves it: the facts of its %s ended sessions (of %s) stored after they ended, %s ms of CPU "
                       "a session (%s s in all, %s MB); CPU %s s%s"
                       % (fs.get("sessions"), fs.get("ledger_sessions"), fs.get("cpu_ms_per_session"), fs.get("cpu_s"),
                          fs.get("store_mb"), ex.get("cold_cpu_s"), _of_runs(ex.get("cold_walls_s")))))
    out.append(row(15, "ledger export --dataset again: rows added", ex.get("second_added_rows"), "rows", target="0",
                   ok=ex.get("second_added_rows") == 0))
    return out


def _cpu_note(ex) -> str:
    """The export's CPU seconds (its workers included): divided by the workers, the shortest wall
    time that much work can take here."""
    if ex.get("cpu_s") is None:
        return ""
    return "; CPU %s s (%s workers: >= %.1f s of wall), one process %s s" % (
        ex["cpu_s"], ex.get("workers"), ex["cpu_s"] / max(1, ex.get("workers") or 1), ex.get("one_process_cpu_s"))


def _of_runs(walls, what="") -> str:
    """A median's note: the wall time of every run it was taken over."""
    if not walls or len(walls) < 2:
        return ""
    return "; %smedian of %d runs: %s s" % (what, len(walls), ", ".join("-" if w is None else "%g" % w for w in walls))


EXTRACTORS = [hook_rows, harness_hooks_rows, post_digest_rows, throughput_rows, durability_rows, run_rows, huge_rows, signature_rows, safety_rows, invariance_rows, digest_rows,
              worktree_rows, fold_rows, labels_rows, stats_rows, peers_rows, referee_rows, search_rows,
              ledger_guard_rows, secrets_rows, timeline_rows, savings_rows, adversarial_rows, team_rows]


def build(runs, meta, fresh_files=None):
    """Rows from the outputs of this run only (`fresh_files`), each stamped with meta["code_tree"]."""
    _FRESH.update(files=set(fresh_files) if fresh_files is not None else None, code_tree=meta.get("code_tree"))
    rows = []
    for ex in EXTRACTORS:
        bench = ex.__name__[:-len("_rows")]
        try:
            new = ex()
        except Exception as e:  # a malformed bench JSON is one row, not a lost report
            new = [row(0, ex.__name__, None, note="extractor failed: %r" % e)]
        for r in new:
            r["bench"] = bench
        rows.extend(new)
    digest = _load("bench_digest.json") or {}
    return {"meta": meta, "runs": {k: {kk: vv for kk, vv in v.items() if kk != "stdout_tail"} for k, v in runs.items()},
            "rows": rows, "runners": digest.get("families")}


def _fmt(v):
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return "%.3g" % v if abs(v) < 1000 else "%.0f" % v
    return str(v)


def harness_table(doc):
    """One line per harness: what ctx does there (from each codec's declared capabilities, which
    the e2e suites check against the real CLIs), how it was tested, and this run's figures."""
    from reflex.analysis.replay import FORMATS
    from reflex.harness import codecs
    try:
        from tests.support.agent_clis import PINNED
    except Exception:  # noqa: BLE001  (pytest missing: the pins are only a label here)
        PINNED = {}
    by_fig = {r["figure"]: r for r in doc["rows"]}
    lines = ["", "## Per harness", "",
             "| harness | rewrite to `ctx run` | deny | digest from the post hook | ledger | `ctx replay` | "
             "hook round trip (median) | referee tokens, ctx / raw | tested on |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]

    def referee(label):
        ratios = []
        for fixture in ("scores", "inventory"):
            r = by_fig.get("referee %s%s/ctx: tokens delivered" % (label, fixture))
            if r and r.get("value") is not None and r.get("baseline_value"):
                ratios.append("%s %s/%s" % (fixture, r["value"], r["baseline_value"]))
        return ", ".join(ratios) or "not measured"

    def latency(name):
        r = by_fig.get("hook round trip, `ctx hook %s` (median, daemon warm)" % name)
        return "%s ms" % _fmt(r["value"]) if r and r.get("value") is not None else "not measured"

    lines.append("| claude | yes (where the harness would run the command unasked) | yes | no (digest by rewrite) | "
                 "yes | the ledger, and its transcripts | %s | %s | real CLI (claude-agent-sdk's bundled Claude Code) |" % (
                     latency("claude"), referee("")))
    for name in codecs.NAMES:
        caps = codecs.get(name).CAPS
        rewrite = ("yes, only together with allow" if caps.rewrite_needs_allow else "yes") if caps.can_rewrite else \
            "no"
        post = "replaces the output" if caps.post_replaces_output else (
            "adds context" if caps.adds_context else "no")
        pin = PINNED.get(name)
        lines.append("| %s | %s | %s | %s | yes | %s | %s | %s | %s |" % (
            name, rewrite, "yes" if caps.can_deny else "no", post,
            "the ledger, and its own session files" if name in FORMATS else "the ledger", latency(name),
            referee(name + " "),
            "real CLI %s %s" % pin if pin else "documented payloads"))
    return lines


def _command_flags(mode):
    """The flags of the `python -m evals` run a mode string describes."""
    if not mode.startswith("quick"):
        return ""
    if "(full size: " in mode:
        return " --quick --full %s" % mode.split("(full size: ", 1)[1].rstrip(")").replace(", ", ",")
    return " --quick"


def markdown(doc):
    m = doc["meta"]
    lines = ["# ctx evaluation report", "",
             "Generated by `python -m evals%s` on %s (%s run) from code tree `%s` (`git rev-parse HEAD:reflex` "
             "when committed). Every figure below comes from the JSON the benchmarks wrote in this run, stamped "
             "with that tree; ratios compare two values measured in the same run." % (
                 _command_flags(m.get("mode") or ""), m.get("date"), m.get("mode"), m.get("code_tree")),
             ""]
    if m.get("seconds") is not None:
        lines += ["The run took %s s on %s CPUs." % (m["seconds"], m.get("cpus")), ""]
    if m.get("partial"):
        lines += ["**Partial run**: only %s ran; every other figure reads \"not measured\"." % ", ".join(
            m.get("ran") or []), ""]
    failed = [n for n, r in doc["runs"].items() if r["status"] not in ("ok", "not run (--quick)")]
    unmet = [r["figure"] for r in doc["rows"] if r["ok"] is False]
    if failed or unmet:
        lines += ["**Not all green**: %s." % "; ".join(
            (["failed benchmarks: " + ", ".join(failed)] if failed else []) +
            (["targets not met: " + ", ".join(unmet)] if unmet else [])), ""]
    lines += [
             "Machine: %s CPUs, %s. Versions: %s." % (
                 m.get("cpus"), m["versions"].get("platform"),
                 ", ".join("%s %s" % (k, v) for k, v in sorted(m["versions"].items()) if k != "platform" and v)),
             ]
    lines += ["", "| issue | figure | value | baseline | ratio | target | met | note |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in doc["rows"]:
        base = "%s: %s" % (r["baseline"], _fmt(r["baseline_value"])) if r["baseline"] else "—"
        lines.append("| %s | %s | %s %s | %s | %s | %s | %s | %s |" % (
            r["issue"], r["figure"], _fmt(r["value"]), r["unit"], base, _fmt(r["ratio"]), r["target"] or "—",
            _fmt(r["ok"]), r["note"].replace("|", "/")))
    lines += runner_table(doc)
    lines += harness_table(doc)
    lines += ["", "## Benchmark runs", "", "| benchmark | status | seconds |", "| --- | --- | --- |"]
    for name, r in doc["runs"].items():
        lines.append("| %s | %s | %s |" % (name, r["status"], r.get("seconds", "—")))
    return "\n".join(lines) + "\n"
