"""One session's scorecard: what ctx did, what it cost, what landed, where the agent looped.

    from reflex.analysis.stats.scorecard import scorecard_from_ledger
    card = scorecard_from_ledger(path, session_id)      # or session_id=None for the newest

The JSON (``ctx stats --session ID --json``) is stable: fields are only ever added.
Schema "ctx-scorecard/v1":

    schema        "ctx-scorecard/v1"
    session       id, model, reader (haiku|sonnet|opus|other), cwd, first_ts, last_ts, events,
                  boundaries (SessionStart/SessionEnd/compaction seen), ended (SessionEnd seen)
    commands      total (Bash calls), by_decision {pass, rewrite, deny, none} (every call but
                  retrievals), rewrites_held_back (digestible calls passed through untouched
                  because the harness would not have run them unasked: permission-neutrality),
                  retrievals (ctx get/search calls), edits (Edit/Write/... calls)
    runs          total, digested (a digest, not raw), passthrough, failing, by_family,
                  by_profile, by_density ({name: count}; by_family values are
                  {runs, digested, failing})
    interventions per class: rewrite (PreToolUse rewrites), deny, digest_with_omissions (a
                  digest that omitted or truncated), hints (a digest with ctx get hints) ->
                  {count, applied (rewrite only), landed, censored, rate, not_landed
                  [tool_use_ids]}.  rate = landed / (count - censored), null when nothing is
                  uncensored.  Landed: the run's evidence had a positive outcome (retrieved,
                  narrowed, landed, validated_after_edit, discriminated; see reflex.analysis.evidence);
                  for hints only retrieved, a narrowing to a named test or an edit of a named
                  file count; a deny lands when the next call is neither denied nor the same
                  command (remediation taken).
    detectors     source ("ledger": the outcomes table; "replayed": this ledger has no outcome
                  rows at all, so the session was folded again with the default policy),
                  total, by_detector {name: n}, policy_epochs (the epochs the firings were
                  decided under), firings [{seq, detector, reason, tool_use_id, core_hash,
                  policy_epoch}]
    evidence      by_outcome {outcome: n}, censored_runs, runs
    tokens        raw (o200k tokens of the full outputs ctx stored), delivered {ctx_runs
                  (digest tokens that reached the model, after the harness's own cut),
                  other_calls_est (output of calls ctx did not run, harness cut applied,
                  bytes/4: an estimate), total}, harness_baseline (what the harness alone
                  would have delivered for the same runs; reflex.harness.claude.truncation),
                  saved (harness_baseline - ctx_runs over the runs with a known baseline;
                  may be negative; 0 without digests), saved_pct, baseline {runs_counted,
                  exact, estimated, unknown (the command sliced its own output: no baseline),
                  excluded_search, cut_failure, cut_success}
    rounds        reissues, requeries (re-issues with the worktree unchanged), retries (after a
                  deny), denied, extra (requeries + denied), by_signature [{core_hash, family,
                  command, issues, reissues, requeries, trajectory [failing count per run],
                  verdict (fixed|falling|flat|rising|single|none), tool_use_ids}]
    cost          price_per_extra_round, price_basis, delivered_tokens, extra_rounds,
                  total (delivered + extra x price), requeries_after_digest, digest_net
                  (saved - price x requeries_after_digest: negative = the digests cost more
                  rounds than they saved)
    latency       hook_us {n, p50, p95, max, note} (events.latency_us: the daemon's processing
                  of each hook event, not the shim's process start or the socket),
                  run_overhead_ms {n, p50, p95, max, note} (harness duration of a rewritten call
                  minus the command's own duration measured by ctx run)
    series        runs [{seq, command, family, raw_tokens, delivered_tokens, harness_tokens,
                  failed_count, density}] in order, hook_latency_us [every hook's daemon-side time]
    anomalies     repeated_signatures, zero_landing_interventions, thrash, starvation_streaks
                  (reflex.analysis.stats.anomalies), thresholds

Percentiles are nearest-rank.  Nothing here reads a clock: the same ledger gives the same card.
"""

from __future__ import annotations

from reflex.analysis import evidence as evidence_mod
from reflex.analysis.stats import anomalies as anomalies_mod
from reflex.harness.claude import truncation as td
from reflex.analysis.stats.timeline import Timeline, build

SCHEMA = "ctx-scorecard/v1"
PRICE_PER_EXTRA_ROUND = 2000
PRICE_BASIS = ("an extra round is one more model turn: the assistant's tool call (100-300 output tokens) and "
               "a tool result of typical size for the loop (ctx's pytest digests run 300-2,000 tokens; the "
               "harness-truncated failing pytest observed on Claude Code 2.1.332 was 2,883), not counting the "
               "cached context it re-reads; override with --round-price")
BYTES_PER_TOKEN_EST = 4.0
READERS = ("haiku", "sonnet", "opus")
DECISIONS = ("pass", "rewrite", "deny", "none")


def reader_of(model: str | None) -> str:
    """haiku | sonnet | opus | other, from SessionStart's model id."""
    m = (model or "").lower()
    for r in READERS:
        if r in m:
            return r
    return "other"


def percentiles(xs) -> dict:
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return {"n": 0, "p50": None, "p95": None, "max": None}

    def rank(q):
        k = max(1, -(-q * len(xs) // 100))      # nearest rank, ceil(q/100 * n)
        return xs[int(k) - 1]
    return {"n": len(xs), "p50": rank(50), "p95": rank(95), "max": xs[-1]}


def _rate(landed, count, censored):
    d = count - censored
    return round(landed / d, 4) if d > 0 else None


def _id(c) -> str:
    return c.tool_use_id or "seq:%d" % c.seq


def run_tokens(c) -> tuple[int, int | None, str, bool]:
    """(delivered, harness baseline or None, how the baseline is known, whether the harness
    would have cut the raw output) for a call that ctx ran.

    how: "exact" (the daemon recorded harness_tokens), "estimated" (proportional model),
    "unknown" (no baseline recorded, e.g. a sliced run from an older daemon),
    "search" (a search is never counted as saved)."""
    r = c.run
    failed = td.is_failure(r.exit_code, r.command)
    if r.delivered_tokens is not None:
        delivered = r.delivered_tokens
        if c.harness_cut:      # the harness cut the digest itself
            delivered = td.estimate_harness_tokens(delivered, int(delivered * BYTES_PER_TOKEN_EST), failed)
    elif c.output_bytes is not None:
        delivered = int(round(td.kept_chars(c.output_bytes, failed)[0] / BYTES_PER_TOKEN_EST))
    else:
        delivered = r.raw_tokens or 0
    cut = bool(r.raw_bytes) and td.kept_chars(r.raw_bytes, failed)[1]
    if r.family == "search":
        return delivered, None, "search", cut
    if r.harness_tokens is not None:
        # The daemon counted what the harness alone would have delivered (for a sliced
        # run: the agent's own slice of the output, cut as the harness cuts).
        return delivered, r.harness_tokens, "exact", cut
    if r.slicer:
        return delivered, None, "unknown", cut
    if r.raw_tokens is not None and r.raw_bytes:
        return delivered, td.estimate_harness_tokens(r.raw_tokens, r.raw_bytes, failed), "estimated", cut
    return delivered, None, "unknown", cut


def other_tokens(c) -> int:
    """Estimated tokens of a call ctx did not run (passed through, a retrieval): cost, never saving."""
    if c.decision == "deny" or c.output_bytes is None:
        return 0
    kept, _cut = td.kept_chars(c.output_bytes, bool(c.failed))
    return int(round(kept / BYTES_PER_TOKEN_EST))


def _tokens(tl: Timeline) -> dict:
    raw = ctx_tok = base = saved = other = 0
    how = {"exact": 0, "estimated": 0, "unknown": 0, "search": 0}
    cut_fail = cut_ok = 0
    for c in tl.calls:
        if c.run is None:
            other += other_tokens(c)
            continue
        r = c.run
        raw += r.raw_tokens or 0
        delivered, baseline, kind, cut = run_tokens(c)
        ctx_tok += delivered
        how[kind] += 1
        if baseline is None:
            continue
        if cut:
            if td.is_failure(r.exit_code, r.command):
                cut_fail += 1
            else:
                cut_ok += 1
        base += baseline
        saved += baseline - delivered
    counted = how["exact"] + how["estimated"]
    return {"raw": raw, "delivered": {"ctx_runs": ctx_tok, "other_calls_est": other, "total": ctx_tok + other},
            "harness_baseline": base, "saved": saved,
            "saved_pct": round(100.0 * saved / base, 1) if base else None,
            "baseline": {"runs_counted": counted, "exact": how["exact"], "estimated": how["estimated"],
                         "unknown": how["unknown"], "excluded_search": how["search"],
                         "cut_failure": cut_fail, "cut_success": cut_ok},
            "method": ("ctx runs: o200k counts recorded by the daemon; baseline: the harness model of "
                       "reflex.harness.claude.truncation (exact when the run recorded harness_tokens, else "
                       "proportional); other calls: output bytes / %g" % BYTES_PER_TOKEN_EST)}


def _trajectory(values) -> str:
    if not values:
        return "none"
    if len(values) == 1:
        return "single"
    first, last = values[0], values[-1]
    if last == 0 and first > 0:
        return "fixed"
    if last < first:
        return "falling"
    if last > first:
        return "rising"
    return "flat"


def _rounds(tl: Timeline, by_core: dict) -> dict:
    reissues = requeries = retries = 0
    sigs = []
    for core, calls in by_core.items():
        classes = [anomalies_mod.reissue_class(tl, a, b) for a, b in zip(calls, calls[1:])]
        reissues += len(classes)
        req = classes.count("requery")
        requeries += req
        retries += classes.count("retry")
        traj = [c.run.failed_count for c in calls if c.run is not None and c.run.failed_count is not None]
        if len(calls) < 2 and len(traj) < 2:
            continue
        sigs.append({"core_hash": core, "family": calls[0].family, "command": calls[0].command,
                     "issues": len(calls), "reissues": len(classes), "requeries": req,
                     "trajectory": traj, "verdict": _trajectory(traj),
                     "tool_use_ids": [_id(c) for c in calls][:anomalies_mod.MAX_IDS]})
    sigs.sort(key=lambda d: (-d["issues"], d["core_hash"]))
    denied = sum(1 for c in tl.calls if c.decision == "deny")
    return {"reissues": reissues, "requeries": requeries, "retries": retries, "denied": denied,
            "extra": requeries + denied, "by_signature": sigs}


def _interventions(tl: Timeline, ev) -> tuple[dict, dict]:
    by_run = ev.by_run()
    censored = set(ev.censored)
    detail: dict = {"rewrite": [], "deny": [], "digest_with_omissions": [], "hints": []}
    applied = 0

    def run_landed(c, hints_only=False):
        if c.run is None:
            return None
        outs = by_run.get(c.run.uid, [])
        if not outs and c.run.uid in censored:
            return None
        if hints_only:
            return any(o.outcome == "retrieved" or (o.outcome == "narrowed" and o.data.get("test"))
                       or (o.outcome == "landed" and o.confidence >= 1.0) for o in outs)
        return any(o.outcome in evidence_mod.POSITIVE for o in outs)

    issued = [c for c in tl.calls if not c.is_retrieval]
    for i, c in enumerate(issued):
        if c.decision == "rewrite":
            if c.rewrite_applied == 1 or c.run is not None:
                applied += 1
            detail["rewrite"].append((c, run_landed(c)))
        elif c.decision == "deny":
            nxt = next((x for x in issued[i + 1:] if x.epoch == c.epoch), None)
            if nxt is None:
                landed = None
            else:
                landed = nxt.decision != "deny" and " ".join(nxt.command.split()) != " ".join(c.command.split())
            detail["deny"].append((c, landed))
        r = c.run
        if r is not None and r.digested:
            if r.omitted > 0 or r.truncated:
                detail["digest_with_omissions"].append((c, run_landed(c)))
            if r.hints:
                detail["hints"].append((c, run_landed(c, hints_only=True)))
    out = {}
    for cls, items in detail.items():
        count = len(items)
        landed = sum(1 for _c, x in items if x)
        cens = sum(1 for _c, x in items if x is None)
        d = {"count": count, "landed": landed, "censored": cens, "rate": _rate(landed, count, cens),
             "not_landed": [_id(c) for c, x in items if x is False][:anomalies_mod.MAX_IDS]}
        if cls == "rewrite":
            d["applied"] = applied
        out[cls] = d
    return out, detail


def _detectors(firings, source) -> dict:
    by: dict = {}
    for f in firings:
        by[f["detector"]] = by.get(f["detector"], 0) + 1
    epochs = sorted({f["policy_epoch"] for f in firings if f.get("policy_epoch")})
    return {"source": source, "total": len(firings), "by_detector": dict(sorted(by.items())),
            "policy_epochs": epochs, "firings": firings}


def replay_firings(session_id, rows) -> list[dict]:
    """Detector firings recomputed by folding the session's events (default policy)."""
    from reflex.arc.fold import SessionReflex
    from reflex.arc.ledger_events import events_from_rows
    events = events_from_rows(rows).get(session_id, [])
    sr = SessionReflex(None, session_id)
    out = []
    for e in events:
        for f in sr.apply(e):
            out.append({"seq": f.seq, "detector": f.detector, "reason": f.reason, "tool_use_id": f.tool_use_id,
                        "core_hash": f.core_hash, "policy_epoch": sr.policy.epoch.name})
    return out


def ledger_firings(outcome_rows) -> list[dict]:
    return [{"seq": o["seq"], "detector": o["detector"], "reason": o["reason"], "tool_use_id": o["tool_use_id"],
             "core_hash": o["core_hash"], "policy_epoch": o.get("policy_epoch")} for o in outcome_rows]


def _series(tl: Timeline) -> dict:
    """Per-run and per-hook values behind the totals (what `ctx stats --html` plots)."""
    runs = []
    for c in tl.runs():
        r = c.run
        runs.append({"seq": c.seq, "command": c.command, "family": r.family, "raw_tokens": r.raw_tokens,
                     "delivered_tokens": r.delivered_tokens, "harness_tokens": r.harness_tokens,
                     "failed_count": r.failed_count, "density": r.density})
    return {"runs": runs, "hook_latency_us": list(tl.hook_latency_us)}


def _not_digested(runs) -> dict:
    """{why: count} for runs whose digest failed (e.g. the tokenizer could not be loaded)."""
    out: dict = {}
    for c in runs:
        err = c.run.digest_error
        if err:
            why = "tokenizer unavailable" if str(err).startswith("TokenizerUnavailable") else str(err)[:80]
            out[why] = out.get(why, 0) + 1
    return dict(sorted(out.items()))


def scorecard(tl: Timeline, firings, firing_source="ledger", *, round_price=PRICE_PER_EXTRA_ROUND,
              ev=None) -> dict:
    """The scorecard of one session's timeline; `firings` as ledger_firings/replay_firings give them."""
    ev = ev if ev is not None else evidence_mod.session_evidence(tl)
    by_core = anomalies_mod.issues_by_core(tl)
    decisions = {d: 0 for d in DECISIONS}
    for c in tl.calls:
        if not c.is_retrieval:
            decisions[c.decision if c.decision in decisions else "none"] += 1
    runs = tl.runs()
    by_family: dict = {}
    by_profile: dict = {}
    by_density: dict = {}
    for c in runs:
        r = c.run
        f = by_family.setdefault(r.family or "other", {"runs": 0, "digested": 0, "failing": 0})
        f["runs"] += 1
        f["digested"] += 1 if r.digested else 0
        f["failing"] += 1 if r.failing else 0
        by_profile[r.profile or "none"] = by_profile.get(r.profile or "none", 0) + 1
        by_density[r.density or "none"] = by_density.get(r.density or "none", 0) + 1
    interventions, detail = _interventions(tl, ev)
    tokens = _tokens(tl)
    rounds = _rounds(tl, by_core)
    by_outcome = {o: 0 for o in evidence_mod.OUTCOMES}
    for o in ev.outcomes:
        by_outcome[o.outcome] += 1
    digested_uids = {c.run.uid for c in runs if c.run.digested}
    req_after_digest = sum(1 for o in ev.outcomes if o.outcome == "equivalent_requery" and o.run_uid in digested_uids)
    extra = rounds["extra"]
    overhead = [c.post_duration_ms - c.run.duration_ms for c in runs
                if c.post_duration_ms is not None and c.run.duration_ms is not None]
    return {
        "schema": SCHEMA,
        "session": {"id": tl.session_id, "model": tl.model, "reader": reader_of(tl.model), "cwd": tl.cwd,
                    "first_ts": tl.first_ts, "last_ts": tl.last_ts, "events": tl.events,
                    "boundaries": len(tl.boundaries), "ended": tl.ended},
        "commands": {"total": len(tl.calls), "by_decision": decisions,
                     "rewrites_held_back": sum(1 for c in tl.calls if c.held_back),
                     "retrievals": sum(1 for c in tl.calls if c.is_retrieval), "edits": len(tl.edits)},
        "runs": {"total": len(runs), "digested": sum(1 for c in runs if c.run.digested),
                 "passthrough": sum(1 for c in runs if c.run.passthrough),
                 "failing": sum(1 for c in runs if c.run.failing),
                 "not_digested": _not_digested(runs),
                 "by_family": dict(sorted(by_family.items())), "by_profile": dict(sorted(by_profile.items())),
                 "by_density": dict(sorted(by_density.items()))},
        "interventions": interventions,
        "detectors": _detectors(firings, firing_source),
        "evidence": {"by_outcome": by_outcome, "censored_runs": len(ev.censored), "runs": ev.runs},
        "tokens": tokens,
        "rounds": rounds,
        "series": _series(tl),
        "cost": {"price_per_extra_round": round_price, "price_basis": PRICE_BASIS,
                 "delivered_tokens": tokens["delivered"]["total"], "extra_rounds": extra,
                 "total": tokens["delivered"]["total"] + extra * round_price,
                 "requeries_after_digest": req_after_digest,
                 "digest_net": tokens["saved"] - round_price * req_after_digest},
        "latency": {
            "hook_us": dict(percentiles(tl.hook_latency_us),
                            note="daemon-side processing of each hook event (events.latency_us); excludes the "
                                 "shim's process start and the socket round trip"),
            "run_overhead_ms": dict({k: (round(v, 1) if isinstance(v, float) else v)
                                     for k, v in percentiles(overhead).items()},
                                    note="harness-measured duration of a ctx-run call minus the command's own "
                                         "duration (ctx run's timer): capture, digest, daemon round trip"),
        },
        "anomalies": anomalies_mod.anomalies(tl, by_core, detail),
    }


def scorecard_from_reader(reader, session_id, *, round_price=PRICE_PER_EXTRA_ROUND) -> dict | None:
    rows = reader.session_rows(session_id)
    if not rows:
        return None
    tl = build(session_id, rows)
    if reader.has_outcome_rows():
        firings, source = ledger_firings(reader.outcome_rows(session_id)), "ledger"
    else:
        firings, source = replay_firings(session_id, rows), "replayed"
    card = scorecard(tl, firings, source, round_price=round_price)
    from reflex.analysis.stats.ledger_read import harness_of
    card["session"]["harness"] = harness_of(rows)
    return card


def scorecard_from_ledger(path, session_id=None, *, round_price=PRICE_PER_EXTRA_ROUND) -> dict | None:
    from reflex.analysis.stats.ledger_read import Reader
    with Reader(path) as reader:
        sid = session_id or reader.last_session()
        if sid is None:
            return None
        return scorecard_from_reader(reader, sid, round_price=round_price)
