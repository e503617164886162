"""`ctx stats` across sessions and projects: totals, per family, per profile, per reader, landing
rates, the profiles whose digests get starved most, and anomalies that recur across sessions.

    from reflex.analysis.stats.aggregate import aggregate_ledger
    agg = aggregate_ledger(path, since=cutoff_ts, project="/path/to/repo")

Every session is read through the same timeline, evidence and scorecard code as
`ctx stats --session`, so a total here is the sum of the per-session numbers.  JSON schema
"ctx-stats-aggregate/v1":

    schema, ledger, filters {since, project}, sessions, price_per_extra_round
    totals        commands, runs, digested, raw_tokens, delivered_ctx, delivered_total (with the
                  other calls' estimate), harness_baseline, saved, saved_pct, requeries, denied,
                  extra_rounds, cost_total; the runs outside any session are in them
    outside_sessions  runs, digested, raw_tokens, delivered_tokens, harness_baseline, saved: the
                  `ctx run`s no harness session owns (typed by hand, run by a script); they are
                  no session (not in `sessions`, `per_session`, `by_reader`) and cost no model
                  round; by_harness lists them as "(no session)" 
    by_family     {family: {runs, digested, failing, raw_tokens, delivered_tokens,
                  harness_baseline, saved, requeried}}   (requeried: runs with an
                  equivalent_requery outcome)
    by_profile    {profile: {runs, saved, starved, starved_rate}}  (starved = requeried)
    by_reader     {haiku|sonnet|opus|other: {sessions, runs, saved, requeries}}
    interventions {class: {count, landed, censored, rate}}
    starved_profiles  [{profile, starved, runs, rate}] most starved first (top 10)
    detectors     {by_detector}  (the outcomes table; empty when the daemon recorded none)
    evidence      {by_outcome}
    anomalies     sessions_with_streaks, sessions_with_thrash, sessions_with_zero_landings,
                  recurring_signatures [{core_hash, command, sessions, issues}] (a core
                  signature flagged as repeated in 2 or more sessions: debt with coordinates)
    per_session   [{...}] the rows `--csv` writes (CSV_FIELDS)
"""

from __future__ import annotations

import os
import time

from reflex.analysis import evidence as evidence_mod
from reflex.analysis.stats import scorecard as sc
from reflex.analysis.stats.ledger_read import harness_of
from reflex.analysis.stats.timeline import build

SCHEMA = "ctx-stats-aggregate/v1"
CSV_FIELDS = ("session_id", "first_ts", "cwd", "model", "reader", "events", "commands", "runs", "digested",
              "raw_tokens", "delivered_ctx", "delivered_total", "harness_baseline", "saved", "requeries",
              "denied", "extra_rounds", "cost_total", "rewrite_rate", "hints_rate", "starvation_streaks", "thrash",
              "harness")
# by_harness's row for the runs no harness session owns.
OUTSIDE = "(no session)"
_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, now: float | None = None) -> float:
    """'7d', '12h', '30m', '2w' (before now) or an ISO date/time ('2026-11-01', '2026-11-01T12:00')."""
    text = text.strip()
    if text and text[-1] in _UNITS and text[:-1].isdigit():
        return (time.time() if now is None else now) - int(text[:-1]) * _UNITS[text[-1]]
    from datetime import datetime, timezone
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError("--since wants 7d, 12h, 30m, 2w or an ISO date such as 2026-11-01, not %r" % text) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def _in_project(cwd, project) -> bool:
    if not project:
        return True
    if not cwd:
        return False
    root = os.path.realpath(project)
    path = os.path.realpath(cwd)
    return path == root or path.startswith(root.rstrip("/") + "/")


def _add(d: dict, key, **vals):
    cur = d.setdefault(key, {k: 0 for k in vals})
    for k, v in vals.items():
        cur[k] = cur.get(k, 0) + v


class Aggregator:
    def __init__(self, *, round_price=sc.PRICE_PER_EXTRA_ROUND):
        self.round_price = round_price
        self.sessions = 0
        self.totals = {k: 0 for k in ("commands", "runs", "digested", "raw_tokens", "delivered_ctx",
                                      "delivered_total", "harness_baseline", "saved", "requeries", "denied",
                                      "extra_rounds", "cost_total")}
        self.by_family: dict = {}
        self.by_profile: dict = {}
        self.by_reader: dict = {}
        self.by_harness: dict = {}
        self.interventions: dict = {}
        self.by_outcome = {o: 0 for o in evidence_mod.OUTCOMES}
        self.streaks = self.thrash = self.zero = 0
        self.recurring: dict = {}
        self.per_session: list = []
        self.outside = {k: 0 for k in ("runs", "digested", "raw_tokens", "delivered_tokens", "harness_baseline",
                                       "saved")}

    def add(self, tl, harness=None):
        ev = evidence_mod.session_evidence(tl)
        card = sc.scorecard(tl, [], "none", round_price=self.round_price, ev=ev)
        self.sessions += 1
        t = self.totals
        tok = card["tokens"]
        t["commands"] += card["commands"]["total"]
        t["runs"] += card["runs"]["total"]
        t["digested"] += card["runs"]["digested"]
        t["raw_tokens"] += tok["raw"]
        t["delivered_ctx"] += tok["delivered"]["ctx_runs"]
        t["delivered_total"] += tok["delivered"]["total"]
        t["harness_baseline"] += tok["harness_baseline"]
        t["saved"] += tok["saved"]
        t["requeries"] += card["rounds"]["requeries"]
        t["denied"] += card["rounds"]["denied"]
        t["extra_rounds"] += card["rounds"]["extra"]
        t["cost_total"] += card["cost"]["total"]
        requeried = {o.run_uid for o in ev.outcomes if o.outcome == "equivalent_requery"}
        for o in ev.outcomes:
            self.by_outcome[o.outcome] += 1
        for c in tl.runs():
            r = c.run
            delivered, baseline, _how, _cut = sc.run_tokens(c)
            saved = (baseline - delivered) if baseline is not None else 0
            starved = 1 if r.uid in requeried else 0
            _add(self.by_family, r.family or "other", runs=1, digested=int(r.digested), failing=int(r.failing),
                 raw_tokens=r.raw_tokens or 0, delivered_tokens=delivered, harness_baseline=baseline or 0,
                 saved=saved, requeried=starved)
            _add(self.by_profile, r.profile or "none", runs=1, saved=saved, starved=starved)
        reader = card["session"]["reader"]
        _add(self.by_reader, reader, sessions=1, runs=card["runs"]["total"], saved=tok["saved"],
             requeries=card["rounds"]["requeries"])
        _add(self.by_harness, harness or "unknown", sessions=1, commands=card["commands"]["total"],
             runs=card["runs"]["total"], digested=card["runs"]["digested"], saved=tok["saved"],
             requeries=card["rounds"]["requeries"], denied=card["rounds"]["denied"])
        for cls, v in card["interventions"].items():
            _add(self.interventions, cls, count=v["count"], landed=v["landed"], censored=v["censored"])
        an = card["anomalies"]
        self.streaks += 1 if an["starvation_streaks"] else 0
        self.thrash += 1 if an["thrash"] else 0
        self.zero += 1 if an["zero_landing_interventions"] else 0
        for a in an["repeated_signatures"]:
            r = self.recurring.setdefault(a["core_hash"], {"core_hash": a["core_hash"], "command": a["command"],
                                                           "sessions": 0, "issues": 0})
            r["sessions"] += 1
            r["issues"] += a["issues"]
        iv = card["interventions"]
        self.per_session.append({
            "session_id": tl.session_id, "first_ts": tl.first_ts, "cwd": tl.cwd, "model": tl.model,
            "reader": reader, "events": tl.events, "commands": card["commands"]["total"],
            "runs": card["runs"]["total"], "digested": card["runs"]["digested"], "raw_tokens": tok["raw"],
            "delivered_ctx": tok["delivered"]["ctx_runs"], "delivered_total": tok["delivered"]["total"],
            "harness_baseline": tok["harness_baseline"], "saved": tok["saved"],
            "requeries": card["rounds"]["requeries"], "denied": card["rounds"]["denied"],
            "extra_rounds": card["rounds"]["extra"], "cost_total": card["cost"]["total"],
            "rewrite_rate": iv["rewrite"]["rate"], "hints_rate": iv["hints"]["rate"],
            "starvation_streaks": len(an["starvation_streaks"]), "thrash": len(an["thrash"]), "harness": harness})

    def add_outside(self, tl):
        """The runs no harness session owns: their tokens and families count, but they are no
        session, and no model read them in a turn (no rounds, no landings)."""
        o, t = self.outside, self.totals
        for c in tl.runs():
            r = c.run
            delivered, baseline, _how, _cut = sc.run_tokens(c)
            saved = (baseline - delivered) if baseline is not None else 0
            vals = {"runs": 1, "digested": int(r.digested), "raw_tokens": r.raw_tokens or 0,
                    "delivered_tokens": delivered, "harness_baseline": baseline or 0, "saved": saved}
            for k, v in vals.items():
                o[k] += v
            for k, v in (("commands", 1), ("runs", 1), ("digested", vals["digested"]),
                         ("raw_tokens", vals["raw_tokens"]), ("delivered_ctx", delivered),
                         ("delivered_total", delivered), ("harness_baseline", vals["harness_baseline"]),
                         ("saved", saved), ("cost_total", delivered)):
                t[k] += v
            _add(self.by_family, r.family or "other", runs=1, digested=int(r.digested), failing=int(r.failing),
                 raw_tokens=r.raw_tokens or 0, delivered_tokens=delivered, harness_baseline=baseline or 0,
                 saved=saved, requeried=0)
            _add(self.by_profile, r.profile or "none", runs=1, saved=saved, starved=0)
        if o["runs"]:
            self.by_harness[OUTSIDE] = {"sessions": 0, "commands": o["runs"], "runs": o["runs"],
                                        "digested": o["digested"], "saved": o["saved"], "requeries": 0, "denied": 0}

    def result(self, *, ledger=None, since=None, project=None, detectors=None, harness=None) -> dict:
        t = dict(self.totals)
        t["saved_pct"] = round(100.0 * t["saved"] / t["harness_baseline"], 1) if t["harness_baseline"] else None
        by_profile = {}
        for k, v in sorted(self.by_profile.items()):
            by_profile[k] = dict(v, starved_rate=round(v["starved"] / v["runs"], 4) if v["runs"] else None)
        starved = [{"profile": k, "starved": v["starved"], "runs": v["runs"], "rate": v["starved_rate"]}
                   for k, v in by_profile.items() if v["starved"]]
        starved.sort(key=lambda p: (-p["starved"], p["profile"]))
        iv = {}
        for cls in ("rewrite", "deny", "digest_with_omissions", "hints"):
            v = self.interventions.get(cls, {"count": 0, "landed": 0, "censored": 0})
            iv[cls] = dict(v, rate=sc._rate(v["landed"], v["count"], v["censored"]))
        recurring = sorted((r for r in self.recurring.values() if r["sessions"] >= 2),
                           key=lambda r: (-r["sessions"], -r["issues"], r["core_hash"]))
        filters = {"since": since, "project": project}
        if harness:
            filters["harness"] = harness
        return {"schema": SCHEMA, "ledger": ledger, "filters": filters, "by_harness": dict(sorted(self.by_harness.items())),
                "sessions": self.sessions, "price_per_extra_round": self.round_price, "totals": t,
                "outside_sessions": dict(self.outside),
                "by_family": dict(sorted(self.by_family.items())), "by_profile": by_profile,
                "by_reader": dict(sorted(self.by_reader.items())), "interventions": iv,
                "starved_profiles": starved[:10], "detectors": {"by_detector": detectors or {}},
                "evidence": {"by_outcome": self.by_outcome},
                "anomalies": {"sessions_with_streaks": self.streaks, "sessions_with_thrash": self.thrash,
                              "sessions_with_zero_landings": self.zero, "recurring_signatures": recurring[:50]},
                "per_session": self.per_session}


def aggregate_ledger(path, *, since: float | None = None, project: str | None = None,
                     round_price=sc.PRICE_PER_EXTRA_ROUND, harness: str | None = None) -> dict:
    from reflex.analysis.stats.ledger_read import Reader
    agg = Aggregator(round_price=round_price)
    with Reader(path) as reader:
        keep = None
        if reader.has("sessions") and project:
            keep = [sid for sid, cwd in reader.query("SELECT session_id, cwd FROM sessions") if _in_project(cwd, project)]
        kept_ids = set()
        for sid, rows in reader.iter_sessions(keep):
            tl = build(sid, rows)
            if since is not None and (tl.last_ts is None or tl.last_ts < since):
                continue
            if project and not _in_project(tl.cwd, project):
                continue
            label = harness_of(rows)
            if harness and label != harness:
                continue
            agg.add(tl, label)
            kept_ids.add(sid)
        if not harness:
            outside = [r for r in reader.outside_rows() if r.get("kind") == "run"
                       and (since is None or (r.get("ts") or 0) >= since) and _in_project(r.get("cwd"), project)]
            if outside:
                agg.add_outside(build("-", outside))
        detectors = {}
        if reader.has_outcome_rows():
            for sid, det, n in reader.query("SELECT session_id, detector, count(*) FROM outcomes "
                                            "GROUP BY session_id, detector"):
                if sid in kept_ids:
                    detectors[det] = detectors.get(det, 0) + n
    return agg.result(ledger=os.fspath(path), since=since, project=project,
                      detectors=dict(sorted(detectors.items())), harness=harness)
