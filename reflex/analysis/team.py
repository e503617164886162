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
delivered_tokens, saved_tokens, reruns, requeried, landings}, rows [ROW_FIELDS ...], weeks
[WEEK_FIELDS ...]}, rows ordered by user, project, harness, family; weeks (the time axis: per ISO
week a session started, from the facts' `started`, every week from the first to the last) in
order.  The HTML page is `ctx stats --html`'s (reflex.analysis.stats.html).
"""

from __future__ import annotations

import os

from reflex.analysis.compile_sql import MINE_RUNS, current_sessions, engine_failure, open_engine

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

# The time axis: per user and day a session started (the facts' `started`, days since the epoch;
# an export by an older ctx has none, and the facts file's date partition stands in), the
# sessions, and the runs' sums.  Days, not weeks: arithmetic both engines spell the same.
_DAY = "CAST(floor(%s / 86400) AS BIGINT)"
SQL_DAYS_RUNS = """
SELECT f.part_user, """ + _DAY % "{started}" + """ AS day, CASE WHEN {started} IS NULL THEN f.part_date END AS part_date,
       count(*), sum(f.digested), sum(f.raw_tokens), sum(f.delivered_tokens), sum(f.saved_tokens), sum(f.rerun),
       sum(f.requeried), sum(f.o_landed)
FROM """ + MINE_RUNS + """
GROUP BY f.part_user, """ + _DAY % "{started}" + """, CASE WHEN {started} IS NULL THEN f.part_date END"""
SQL_DAYS_SESSIONS = """
SELECT f.part_user, """ + _DAY % "{started}" + """ AS day, CASE WHEN {started} IS NULL THEN f.part_date END AS part_date,
       count(*)
FROM facts f JOIN cur c
  ON f.ledger = c.ledger AND f.session_id = c.session_id AND f.through_id = c.through_id
WHERE c.owned = 1 AND f.row_kind = 'session'
GROUP BY f.part_user, """ + _DAY % "{started}" + """, CASE WHEN {started} IS NULL THEN f.part_date END"""
WEEK_FIELDS = ("week", "users", "sessions", "runs", "digested", "raw_tokens", "delivered_tokens", "saved_tokens",
               "reruns", "requeried", "landings", "starvation_rate", "rerun_rate")
MAX_WEEKS = 104          # a longer span (a clock that was wrong) lists only the weeks that have sessions


def days_sql(eng) -> tuple[str, str]:
    """SQL_DAYS_RUNS and SQL_DAYS_SESSIONS for eng's facts (with or without `started`)."""
    started = "f.started" if "started" in eng.columns("facts") else "CAST(NULL AS DOUBLE)"
    return SQL_DAYS_RUNS.format(started=started), SQL_DAYS_SESSIONS.format(started=started)


def _monday(day) -> int:
    """The day number (days since 1970-01-01, a Thursday) of the Monday of day's ISO week."""
    return day - (day + 3) % 7


def _day_of(day, part_date) -> int | None:
    if day is not None:
        return int(day)
    try:
        import datetime as dt
        return (dt.date.fromisoformat(part_date) - dt.date(1970, 1, 1)).days
    except (TypeError, ValueError):
        return None


def weeks(runs_by_day, sessions_by_day) -> list[dict]:
    """The scorecard's time axis: one row of WEEK_FIELDS per ISO week (its Monday's date), from
    the first week with a session to the last, weeks without any included (a gap is news)."""
    import datetime as dt
    acc: dict = {}
    zero = {k: 0 for k in WEEK_FIELDS[2:11]}

    def at(who, day, part_date):
        d = _day_of(day, part_date)
        if d is None:
            return None
        w = acc.setdefault(_monday(d), dict(zero, who=set()))
        w["who"].add(who)
        return w

    for who, day, part_date, n in sessions_by_day:
        w = at(who, day, part_date)
        if w is not None:
            w["sessions"] += int(n)
    for who, day, part_date, *sums in runs_by_day:
        w = at(who, day, part_date)
        if w is not None:
            for k, v in zip(WEEK_FIELDS[3:11], sums):
                w[k] += int(v or 0)
    if not acc:
        return []
    first, last = min(acc), max(acc)
    mondays = range(first, last + 7, 7) if (last - first) // 7 < MAX_WEEKS else sorted(acc)
    out = []
    for m in mondays:
        w = acc.get(m) or dict(zero, who=set())
        row = {"week": (dt.date(1970, 1, 1) + dt.timedelta(days=m)).isoformat(), "users": len(w["who"])}
        row.update({k: w[k] for k in WEEK_FIELDS[2:11]})
        row["starvation_rate"] = round(w["requeried"] / w["digested"], 4) if w["digested"] else None
        row["rerun_rate"] = round(w["reruns"] / w["runs"], 4) if w["runs"] else None
        out.append(row)
    return out


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
        runs_sql, sessions_sql = days_sql(eng)
        runs_by_day, sessions_by_day = eng.rows(runs_sql), eng.rows(sessions_sql)
    except CompileError:
        raise
    except Exception as e:
        raise engine_failure(eng.name, dataset_dir, e) from None
    finally:
        eng.close()
    by_week = weeks(runs_by_day, sessions_by_day)
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
    return {"schema": SCHEMA, "dataset": dataset_dir, "engine": eng.name, "totals": totals, "rows": rows,
            "weeks": by_week}


def _check_summaries(dataset_dir) -> None:
    """Every committed export has its hooks summary, with today's columns (an older ctx wrote none,
    or one without the epoch's time)."""
    import glob
    from reflex.analysis.compile import CompileError
    from reflex.analysis.dataset import committed, table_glob
    if "://" in dataset_dir:
        return
    import pyarrow as pa
    import pyarrow.parquet as pq
    from reflex.analysis.dataset import HOOK_SUMMARY_COLUMNS
    want = {c for c, _k in HOOK_SUMMARY_COLUMNS}
    # A summary without every column (an export by an older ctx) counts as none.
    try:
        have = {os.path.basename(p) for p in glob.glob(table_glob(dataset_dir, "hooks"))
                if want <= set(pq.read_schema(p).names)}
    except (pa.ArrowException, OSError) as e:        # a damaged summary: name it (and any other)
        raise engine_failure("pyarrow", dataset_dir, e) from None
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
    wk = card.get("weeks") or []
    if wk:
        out += ["", "by week (a session counts in the week it started):"]
        head = ("week of", "users", "sess", "runs", "deliv", "saved", "starve", "rerun", "land")
        table = [head] + [(w["week"], str(w["users"]), str(w["sessions"]), str(w["runs"]), str(w["delivered_tokens"]),
                           str(w["saved_tokens"]), _rate(w["starvation_rate"]), _rate(w["rerun_rate"]),
                           str(w["landings"])) for w in wk]
        widths = [max(len(row[i]) for row in table) for i in range(len(head))]
        for row in table:
            out.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return "\n".join(out) + "\n"


def _rate(v) -> str:
    return "-" if v is None else "%.0f%%" % (100 * v)


def _short(p: str, n: int = 40) -> str:
    return p if len(p) <= n else "…" + p[-(n - 1):]


def _opt(v) -> str:
    return "-" if v is None else str(v)


_TABLE_CSS = ("<style>.wide{grid-column:1/-1}.tbl{border-collapse:collapse;font-size:12px;width:100%;margin-top:8px}"
              ".tbl th,.tbl td{padding:2px 6px;text-align:right;border-bottom:1px solid #eef0f4;white-space:nowrap}"
              ".tbl th{color:#5b6577;font-weight:600}.tbl th:first-child,.tbl td:first-child{text-align:left}"
              ".nothing{color:#5b6577;font-size:12px}</style>")


def _table(head, rows, key) -> str:
    """An HTML table (the chart's numbers, readable without JavaScript and by a test)."""
    import html
    out = ['<table class="tbl" data-table="%s"><tr>%s</tr>' % (key, "".join("<th>%s</th>" % html.escape(h)
                                                                          for h in head))]
    for r in rows:
        out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(_cell(v)) for v in r))
    return "".join(out) + "</table>"


def _cell(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return "%.1f%%" % (100 * v)
    if isinstance(v, int):
        return "{:,}".format(v)
    return str(v)


def _chart_card(chart_id, title, caption, table, wide=False) -> str:
    import html
    return ('<div class="card%s"><h2>%s</h2><p>%s</p><canvas id="%s" role="img" aria-label="%s"></canvas>%s</div>'
            % (" wide" if wide else "", html.escape(title), html.escape(caption), chart_id, html.escape(title), table))


def _line(labels, datasets, y_title, percent=False):
    y = {"beginAtZero": True, "title": {"display": True, "text": y_title}}
    if not percent:
        y["ticks"] = {"precision": 0}
    return {"type": "line", "data": {"labels": labels, "datasets": [
        dict(d, tension=0, fill=False, borderColor=d["backgroundColor"], pointRadius=4, spanGaps=True)
        for d in datasets]}, "options": {"scales": {"y": y}}}


def _pct(v):
    return None if v is None else round(100 * v, 1)


def page(card: dict) -> str:
    """The `ctx stats --html` page (same layout, same self-contained Chart.js) for a team: first
    the time axis (is it getting better week over week?), then per user and per family.  Each
    chart has its numbers in a table under it; a chart with nothing but zeros is not drawn, and
    one line says what has not happened yet (a newcomer's page is short, not empty bars)."""
    from reflex.analysis.stats.html import _PALETTE, _bar, _kpi, _page
    by_user: dict = {}
    for r in card["rows"]:
        u = by_user.setdefault(r["user"], {"raw": 0, "delivered": 0, "saved": 0, "reruns": 0, "requeried": 0,
                                            "landings": 0, "runs": 0, "sessions": 0})
        u["raw"] += r["raw_tokens"]
        u["delivered"] += r["delivered_tokens"]
        u["saved"] += r["saved_tokens"]
        u["reruns"] += r["reruns"]
        u["requeried"] += r["requeried"]
        u["landings"] += r["landings"]
        u["runs"] += r["runs"]
        u["sessions"] += r["sessions"]
    users = sorted(by_user)
    fams: dict = {}
    for r in card["rows"]:
        if r["family"]:
            f = fams.setdefault(r["family"], [0, 0, 0])
            f[0] += r["delivered_tokens"]
            f[1] += r["saved_tokens"]
            f[2] += r["runs"]
    lat = [r for r in card["rows"] if r["hook_latency_p50_us"] is not None]
    lat_groups = sorted({(r["user"], _short(r["project"], 24), r["hook_latency_p50_us"], r["hook_latency_p95_us"])
                         for r in lat})
    wk = card.get("weeks") or []
    labels = [w["week"] for w in wk]
    one = len(wk) == 1
    since = " One week so far: the chart of the trend comes with the second." if one else ""
    charts: dict = {}
    cards: list = [_TABLE_CSS]
    nothing: list = []

    def add(chart_id, spec, title, caption, table, wide=False, what=None):
        if not any(any(v for v in d["data"] if v) for d in spec["data"]["datasets"]):
            if what:
                nothing.append(what)
        elif spec["type"] == "line" and len(spec["data"]["labels"]) == 1:
            # One week: a line of one point is a dot in empty space; its table says it all.
            import html
            cards.append('<div class="card wide"><h2>%s</h2><p>%s</p>%s</div>'
                         % (html.escape(title), html.escape(caption), table))
        else:
            charts[chart_id] = spec
            cards.append(_chart_card(chart_id, title, caption, table, wide))

    add("weekly_tokens", _line(labels, [
        {"label": "raw output", "data": [w["raw_tokens"] for w in wk], "backgroundColor": _PALETTE["raw"]},
        {"label": "delivered by ctx", "data": [w["delivered_tokens"] for w in wk],
         "backgroundColor": _PALETTE["delivered"]},
        {"label": "saved vs the harness alone", "data": [w["saved_tokens"] for w in wk],
         "backgroundColor": _PALETTE["harness"]}], "o200k tokens"),
        "Week over week: tokens", "Per week a session started (weeks begin on Monday): what commands printed, what "
        "ctx delivered, what it saved against the harness alone." + since,
        _table(("week of", "users", "sessions", "runs", "raw", "delivered", "saved"),
               [(w["week"], w["users"], w["sessions"], w["runs"], w["raw_tokens"], w["delivered_tokens"],
                 w["saved_tokens"]) for w in wk], "weekly_tokens"), wide=True, what="no runs through ctx yet")
    add("weekly_rates", _line(labels, [
        {"label": "starvation (digests asked for again, nothing changed) %",
         "data": [_pct(w["starvation_rate"]) for w in wk], "backgroundColor": _PALETTE["affordance"]},
        {"label": "re-runs per run %", "data": [_pct(w["rerun_rate"]) for w in wk],
         "backgroundColor": _PALETTE["fail"]}], "% of runs", percent=True),
        "Week over week: starvation and re-runs", "Lower is better: the share of digests the agent had to ask "
        "for again with nothing changed, and of runs repeating a command already run." + since,
        _table(("week of", "runs", "digested", "starved", "starvation", "re-runs", "re-run rate", "landings"),
               [(w["week"], w["runs"], w["digested"], w["requeried"], w["starvation_rate"], w["reruns"],
                 w["rerun_rate"], w["landings"]) for w in wk], "weekly_rates"),
        wide=True, what="no digest asked for again and no re-run in any week")
    add("tokens", _bar(users, [
        {"label": "raw output", "data": [by_user[u]["raw"] for u in users], "backgroundColor": _PALETTE["raw"]},
        {"label": "delivered by ctx", "data": [by_user[u]["delivered"] for u in users],
         "backgroundColor": _PALETTE["delivered"]},
        {"label": "saved vs the harness alone", "data": [by_user[u]["saved"] for u in users],
         "backgroundColor": _PALETTE["harness"]}], y_title="o200k tokens"),
        "Tokens per user", "Raw output, what ctx delivered, and what it saved against the harness alone.",
        _table(("user", "sessions", "runs", "raw", "delivered", "saved"),
               [(u, by_user[u]["sessions"], by_user[u]["runs"], by_user[u]["raw"], by_user[u]["delivered"],
                 by_user[u]["saved"]) for u in users], "tokens"))
    add("trajectories", _bar(users, [
        {"label": "re-runs", "data": [by_user[u]["reruns"] for u in users], "backgroundColor": _PALETTE["fail"]},
        {"label": "starved (asked again, nothing changed)", "data": [by_user[u]["requeried"] for u in users],
         "backgroundColor": _PALETTE["affordance"]}], y_title="runs"),
        "Re-runs and starvation per user",
        "Runs of a command already run in the epoch; digests asked for again with nothing changed.",
        _table(("user", "runs", "re-runs", "starved"),
               [(u, by_user[u]["runs"], by_user[u]["reruns"], by_user[u]["requeried"]) for u in users],
               "trajectories"))
    add("firings", _bar(users, [{"label": "landings", "data": [by_user[u]["landings"] for u in users],
                                 "backgroundColor": _PALETTE["landing"]}], y_title="runs"),
        "Landings per user", "Runs whose evidence was followed by a change to the worktree.",
        _table(("user", "runs", "landings"), [(u, by_user[u]["runs"], by_user[u]["landings"]) for u in users],
               "firings"), what="no landing yet (evidence followed by a change to the worktree)")
    add("latency", _bar(["%s · %s" % (u, p) for u, p, _a, _b in lat_groups], [
        {"label": "p50 µs", "data": [a for _u, _p, a, _b in lat_groups], "backgroundColor": _PALETTE["harness"]},
        {"label": "p95 µs", "data": [b for _u, _p, _a, b in lat_groups], "backgroundColor": _PALETTE["fail"]}],
        y_title="µs"),
        "Hook latency per user and project", "Daemon-side processing time, p50 and p95.",
        _table(("user · project", "p50 µs", "p95 µs"), [("%s · %s" % (u, p), a, b) for u, p, a, b in lat_groups],
               "latency"), what="no hook latency recorded")
    add("interventions", _bar(sorted(fams), [
        {"label": "delivered", "data": [fams[f][0] for f in sorted(fams)], "backgroundColor": _PALETTE["delivered"]},
        {"label": "saved", "data": [fams[f][1] for f in sorted(fams)], "backgroundColor": _PALETTE["harness"]}],
        y_title="o200k tokens"),
        "Tokens by family", "Delivered and saved, per command family.",
        _table(("family", "runs", "delivered", "saved"), [(f, fams[f][2], fams[f][0], fams[f][1]) for f in sorted(fams)],
               "interventions"))
    if nothing:
        import html
        cards.append('<div class="card wide" data-nothing="yes"><h2>Not yet</h2><p class="nothing">%s.</p></div>'
                     % html.escape("; ".join(nothing)))
    t = card["totals"]
    kpis = [_kpi(t["users"], "users", "users"), _kpi(t["sessions"], "sessions", "sessions"),
            _kpi(t["runs"], "runs through ctx", "runs"), _kpi(t["raw_tokens"], "raw tokens", "raw_tokens"),
            _kpi(t["delivered_tokens"], "tokens delivered", "delivered_tokens"),
            _kpi(t["saved_tokens"], "saved vs the harness alone", "saved"),
            _kpi(t["reruns"], "re-runs", "reruns"), _kpi(t["landings"], "landings", "landings")]
    epochs = sorted({r["policy_epoch"] for r in card["rows"] if r["policy_epoch"]})
    span = " · weeks %s to %s" % (wk[0]["week"], wk[-1]["week"]) if len(wk) > 1 else (
        " · week of %s" % wk[0]["week"] if wk else "")
    return _page("ctx team stats · %d users, %d sessions" % (t["users"], t["sessions"]),
                 "%s%s · policy epochs in force: %s" % (card["dataset"], span, ", ".join(epochs) or "none recorded"),
                 kpis, cards, charts)


CSV_FIELDS = ROW_FIELDS
