"""`ctx stats --dataset DIR`: the team scorecard, per user x project x harness x command family.

Read from a team dataset (reflex.analysis.dataset) with DuckDB, without scanning its events:

* the runs, from each session's latest compile facts (the same rows, and the same "latest export
  wins / a session is read from one ledger" rules, as `ctx policy compile --dataset`; the
  snapshot chosen per session is materialized once, reflex.analysis.compile_sql.current_sessions):
  sessions, runs, tokens raw / delivered / saved (against the harness alone, as `ctx stats` counts
  them), re-runs (a run of a signature already run in its epoch), starvation (digests re-asked for
  with nothing changed: equivalent_requery) and landings (evidence outcome `landed`);
* the hook events, from the per-export summaries the exporter writes (the `hooks` table:
  reflex.analysis.dataset.hook_summary), by their session's project: hook latency percentiles
  (nearest rank, as `ctx stats` does; p50/p95/p99 in microseconds) from summed value counts, and
  the policy epoch in force (the one the newest hook event recorded: newest by time, since one
  user's ledgers on two machines have unrelated event ids).

A session's project is the directory its first event ran in; its harness the harness of its hook
events (ledgers older than the harness column were all Claude Code: "claude").

JSON schema "ctx-team-scorecard/v1": {schema, dataset, totals {users, sessions, runs, raw_tokens,
delivered_tokens, saved_tokens, reruns, requeried, landings}, rows [ROW_FIELDS ...]}, rows ordered
by user, project, harness, family.  The HTML page is `ctx stats --html`'s (reflex.analysis.stats.html).
"""

from __future__ import annotations

import os

from reflex.analysis.compile_sql import MINE_RUNS, current_sessions, open_engine

SCHEMA = "ctx-team-scorecard/v1"
ROW_FIELDS = ("user", "project", "harness", "family", "sessions", "runs", "digested", "raw_tokens",
              "delivered_tokens", "saved_tokens", "reruns", "requeried", "starvation_rate", "landings",
              "hook_latency_p50_us", "hook_latency_p95_us", "hook_latency_p99_us", "hook_events", "policy_epoch")

# Per session first (its runs of a family), then per group: no count(DISTINCT) over the run rows.
SQL_RUNS = """
WITH per_session AS (
  SELECT f.part_user AS who, coalesce(f.project, '') AS project, coalesce(f.harness, 'claude') AS harness,
         f.family, f.session_id, count(*) AS runs, sum(f.digested) AS digested,
         sum(f.raw_tokens) AS raw_tokens, sum(f.delivered_tokens) AS delivered_tokens,
         sum(f.saved_tokens) AS saved_tokens, sum(f.rerun) AS reruns, sum(f.requeried) AS requeried,
         sum(f.o_landed) AS landings
  FROM """ + MINE_RUNS + """
  GROUP BY f.part_user, coalesce(f.project, ''), coalesce(f.harness, 'claude'), f.family, f.session_id
)
SELECT who, project, harness, family, count(*) AS sessions, sum(runs), sum(digested), sum(raw_tokens),
       sum(delivered_tokens), sum(saved_tokens), sum(reruns), sum(requeried), sum(landings)
FROM per_session
GROUP BY who, project, harness, family"""

SQL_SESSIONS = """
SELECT f.part_user AS who, coalesce(f.project, '') AS project, coalesce(f.harness, 'claude') AS harness,
       count(*) AS sessions
FROM facts f JOIN cur c
  ON f.ledger = c.ledger AND f.session_id = c.session_id AND f.through_id = c.through_id
WHERE c.owned = 1 AND f.row_kind = 'session'
GROUP BY f.part_user, coalesce(f.project, ''), coalesce(f.harness, 'claude')"""

# Hook latency and the epoch in force, from the per-export hook summaries the exporter writes
# (reflex.analysis.dataset.hook_summary): latency value counts, so the nearest-rank percentiles
# (as `ctx stats` computes them) are exact, and per group the epoch of the newest hook event that
# recorded one: per ledger the one with the highest id (ids are a ledger's order), across a user's
# ledgers (two machines: unrelated ids) the newest of those by time.  A summary
# belongs to the export named by its file, like its events: committed when through_id <= li's.
SQL_HOOKS = """
WITH h AS (
  SELECT s.part_user AS who, coalesce(s.project, '') AS project, coalesce(s.harness, 'claude') AS harness,
         s.ledger, s.latency_us, s.n, s.epoch_id, s.epoch_ts, s.policy_epoch
  FROM hooks s JOIN li ON s.ledger = li.ledger AND s.through_id <= li.through_id
),
lat AS (
  SELECT who, project, harness, latency_us, sum(n) AS n FROM h WHERE latency_us IS NOT NULL
  GROUP BY who, project, harness, latency_us
),
cum AS (
  SELECT who, project, harness, latency_us,
         sum(n) OVER (PARTITION BY who, project, harness ORDER BY latency_us
                      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto,
         sum(n) OVER (PARTITION BY who, project, harness) AS total
  FROM lat
),
pct AS (
  SELECT who, project, harness, """ + ", ".join(
    "min(CASE WHEN upto * 100 >= %d * total THEN latency_us END) AS p%d" % (q, q) for q in (50, 95, 99)) + """,
         max(total) AS n
  FROM cum GROUP BY who, project, harness
),
ep_ledger AS (
  SELECT who, project, harness, ledger, max(epoch_id) AS epoch_id, max_by(epoch_ts, epoch_id) AS epoch_ts,
         max_by(policy_epoch, epoch_id) AS epoch
  FROM h WHERE latency_us IS NULL GROUP BY who, project, harness, ledger
),
ep AS (
  SELECT who, project, harness, epoch FROM (
    SELECT who, project, harness, epoch,
           row_number() OVER (PARTITION BY who, project, harness
                              ORDER BY CASE WHEN epoch_id IS NULL THEN 1 ELSE 0 END, epoch_ts DESC, ledger DESC)
             AS newest
    FROM ep_ledger) AS x
  WHERE newest = 1
)
SELECT ep.who, ep.project, ep.harness, pct.p50, pct.p95, pct.p99, coalesce(pct.n, 0), ep.epoch
FROM ep LEFT JOIN pct ON ep.who = pct.who AND ep.project = pct.project AND ep.harness = pct.harness"""


def team_scorecard(dataset_dir, *, engine: str = "duckdb", **engine_kw) -> dict:
    """The scorecard of every committed export in dataset_dir (see the module docstring)."""
    from reflex.analysis.compile import CompileError
    dataset_dir = os.fspath(dataset_dir)
    _check_summaries(dataset_dir)
    eng = open_engine(engine, dataset_dir, **engine_kw)
    try:
        current_sessions(eng)
        runs = eng.rows(SQL_RUNS)
        sessions = eng.rows(SQL_SESSIONS)
        hooks = eng.rows(SQL_HOOKS)
    except CompileError:
        raise
    except Exception as e:
        raise CompileError("%s could not read the dataset %s: %s" % (eng.name, dataset_dir, e)) from None
    finally:
        eng.close()
    hook_by = {(w, p, h): (p50, p95, p99, n, ep) for w, p, h, p50, p95, p99, n, ep in hooks}
    rows = []
    groups_with_runs = set()
    for who, project, harness, family, n_sess, n_runs, dig, raw, deliv, saved, reruns, req, landed in runs:
        groups_with_runs.add((who, project, harness))
        p50, p95, p99, n, ep = hook_by.get((who, project, harness), (None, None, None, 0, None))
        rows.append({"user": who, "project": project, "harness": harness, "family": family,
                     "sessions": int(n_sess), "runs": int(n_runs), "digested": int(dig or 0),
                     "raw_tokens": int(raw or 0), "delivered_tokens": int(deliv or 0),
                     "saved_tokens": int(saved or 0), "reruns": int(reruns or 0), "requeried": int(req or 0),
                     "starvation_rate": round(int(req or 0) / int(dig), 4) if dig else None,
                     "landings": int(landed or 0), "hook_latency_p50_us": p50, "hook_latency_p95_us": p95,
                     "hook_latency_p99_us": p99, "hook_events": int(n or 0), "policy_epoch": ep})
    for who, project, harness, n_sess in sessions:
        if (who, project, harness) in groups_with_runs:
            continue
        # Sessions that ran nothing through ctx still show up, with their hooks' latency.
        p50, p95, p99, n, ep = hook_by.get((who, project, harness), (None, None, None, 0, None))
        rows.append({"user": who, "project": project, "harness": harness, "family": None, "sessions": int(n_sess),
                     "runs": 0, "digested": 0, "raw_tokens": 0, "delivered_tokens": 0, "saved_tokens": 0,
                     "reruns": 0, "requeried": 0, "starvation_rate": None, "landings": 0,
                     "hook_latency_p50_us": p50, "hook_latency_p95_us": p95, "hook_latency_p99_us": p99,
                     "hook_events": int(n or 0), "policy_epoch": ep})
    rows.sort(key=lambda r: (r["user"], r["project"], r["harness"], r["family"] or ""))
    totals = {k: sum(r[k] for r in rows) for k in ("runs", "raw_tokens", "delivered_tokens", "saved_tokens",
                                                     "reruns", "requeried", "landings")}
    totals["sessions"] = sum(int(n) for _w, _p, _h, n in sessions)
    totals["users"] = len({r["user"] for r in rows})
    return {"schema": SCHEMA, "dataset": dataset_dir, "engine": eng.name, "totals": totals, "rows": rows}


def _check_summaries(dataset_dir) -> None:
    """Every committed export has its hooks summary, with today's columns (an older ctx wrote none,
    or one without the epoch's time)."""
    import glob
    from reflex.analysis.compile import CompileError
    from reflex.analysis.dataset import committed, table_glob
    if "://" in dataset_dir:
        return
    import pyarrow.parquet as pq
    from reflex.analysis.dataset import HOOK_SUMMARY_COLUMNS
    want = {c for c, _k in HOOK_SUMMARY_COLUMNS}
    # A summary without every column (an export by an older ctx) counts as none.
    have = {os.path.basename(p) for p in glob.glob(table_glob(dataset_dir, "hooks"))
            if want <= set(pq.read_schema(p).names)}
    missing = [c for c in committed(dataset_dir) if os.path.basename(c["path"]) not in have]
    if missing:
        raise CompileError("%s: %d export(s) have no hook summaries (exported by an older ctx): re-export the "
                           "ledgers into a fresh dataset" % (dataset_dir, len(missing)))


def text(card: dict) -> str:
    t = card["totals"]
    out = ["ctx team scorecard · %s" % card["dataset"],
           "%d users · %d sessions · %d runs · tokens raw %s, delivered %s, saved %s · re-runs %d · starved %d · "
           "landings %d" % (t["users"], t["sessions"], t["runs"], "{:,}".format(t["raw_tokens"]),
                            "{:,}".format(t["delivered_tokens"]), "{:,}".format(t["saved_tokens"]), t["reruns"],
                            t["requeried"], t["landings"]), ""]
    head = ("user", "project", "harness", "family", "sess", "runs", "raw", "deliv", "saved", "rerun", "starve",
            "land", "p50us", "p95us", "epoch")
    table = [head]
    for r in card["rows"]:
        table.append((r["user"], _short(r["project"]), r["harness"], r["family"] or "-", str(r["sessions"]),
                      str(r["runs"]), str(r["raw_tokens"]), str(r["delivered_tokens"]), str(r["saved_tokens"]),
                      str(r["reruns"]), "-" if r["starvation_rate"] is None else "%.0f%%" % (100 * r["starvation_rate"]),
                      str(r["landings"]), _opt(r["hook_latency_p50_us"]), _opt(r["hook_latency_p95_us"]),
                      r["policy_epoch"] or "-"))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return "\n".join(out) + "\n"


def _short(p: str, n: int = 40) -> str:
    return p if len(p) <= n else "…" + p[-(n - 1):]


def _opt(v) -> str:
    return "-" if v is None else str(v)


def page(card: dict) -> str:
    """The `ctx stats --html` page (same layout, same self-contained Chart.js) for a team."""
    from reflex.analysis.stats.html import _PALETTE, _bar, _card, _kpi, _page
    by_user: dict = {}
    for r in card["rows"]:
        u = by_user.setdefault(r["user"], {"raw": 0, "delivered": 0, "saved": 0, "reruns": 0, "requeried": 0,
                                            "landings": 0, "runs": 0})
        u["raw"] += r["raw_tokens"]
        u["delivered"] += r["delivered_tokens"]
        u["saved"] += r["saved_tokens"]
        u["reruns"] += r["reruns"]
        u["requeried"] += r["requeried"]
        u["landings"] += r["landings"]
        u["runs"] += r["runs"]
    users = sorted(by_user)
    fams: dict = {}
    for r in card["rows"]:
        if r["family"]:
            f = fams.setdefault(r["family"], [0, 0])
            f[0] += r["delivered_tokens"]
            f[1] += r["saved_tokens"]
    lat = [r for r in card["rows"] if r["hook_latency_p50_us"] is not None]
    lat_groups = sorted({(r["user"], _short(r["project"], 24), r["hook_latency_p50_us"], r["hook_latency_p95_us"])
                         for r in lat})
    charts = {
        "tokens": _bar(users, [
            {"label": "raw output", "data": [by_user[u]["raw"] for u in users], "backgroundColor": _PALETTE["raw"]},
            {"label": "delivered by ctx", "data": [by_user[u]["delivered"] for u in users],
             "backgroundColor": _PALETTE["delivered"]},
            {"label": "saved vs the harness alone", "data": [by_user[u]["saved"] for u in users],
             "backgroundColor": _PALETTE["harness"]}], y_title="o200k tokens"),
        "trajectories": _bar(users, [
            {"label": "re-runs", "data": [by_user[u]["reruns"] for u in users], "backgroundColor": _PALETTE["fail"]},
            {"label": "starved (asked again, nothing changed)", "data": [by_user[u]["requeried"] for u in users],
             "backgroundColor": _PALETTE["affordance"]}], y_title="runs"),
        "firings": _bar(users, [{"label": "landings", "data": [by_user[u]["landings"] for u in users],
                                 "backgroundColor": _PALETTE["landing"]}], y_title="runs"),
        "latency": _bar(["%s · %s" % (u, p) for u, p, _a, _b in lat_groups], [
            {"label": "p50 µs", "data": [a for _u, _p, a, _b in lat_groups], "backgroundColor": _PALETTE["harness"]},
            {"label": "p95 µs", "data": [b for _u, _p, _a, b in lat_groups], "backgroundColor": _PALETTE["fail"]}],
            y_title="µs"),
        "interventions": _bar(sorted(fams), [
            {"label": "delivered", "data": [fams[f][0] for f in sorted(fams)], "backgroundColor": _PALETTE["delivered"]},
            {"label": "saved", "data": [fams[f][1] for f in sorted(fams)], "backgroundColor": _PALETTE["harness"]}],
            y_title="o200k tokens"),
    }
    t = card["totals"]
    kpis = [_kpi(t["users"], "users", "users"), _kpi(t["sessions"], "sessions", "sessions"),
            _kpi(t["runs"], "runs through ctx", "runs"), _kpi(t["raw_tokens"], "raw tokens", "raw_tokens"),
            _kpi(t["delivered_tokens"], "tokens delivered", "delivered_tokens"),
            _kpi(t["saved_tokens"], "saved vs the harness alone", "saved"),
            _kpi(t["reruns"], "re-runs", "reruns"), _kpi(t["landings"], "landings", "landings")]
    cards = [_card("tokens", "Tokens per user", "Raw output, what ctx delivered, and what it saved against the "
                   "harness alone."),
             _card("trajectories", "Re-runs and starvation per user",
                   "Runs of a command already run in the epoch; digests asked for again with nothing changed."),
             _card("firings", "Landings per user", "Runs whose evidence was followed by a change to the worktree."),
             _card("latency", "Hook latency per user and project", "Daemon-side processing time, p50 and p95."),
             _card("interventions", "Tokens by family", "Delivered and saved, per command family.")]
    epochs = sorted({r["policy_epoch"] for r in card["rows"] if r["policy_epoch"]})
    return _page("ctx team stats · %d users, %d sessions" % (t["users"], t["sessions"]),
                 "%s · policy epochs in force: %s" % (card["dataset"], ", ".join(epochs) or "none recorded"),
                 kpis, cards, charts)


CSV_FIELDS = ROW_FIELDS
