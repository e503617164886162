"""`ctx stats --html`: one self-contained page with the scorecard's plots.

The page embeds everything it needs — the data as JSON, the styles, and Chart.js (MIT,
reflex/data/vendor/) inlined — so it opens from a file, offline, with no network fetch at view
time.  Chart.js was chosen because it is the most widely kept charting library of its kind,
one dependency-free file, and draws every plot here (bars, lines, scatter, stacked bars)
without plugins; its licence travels beside it.

Two pages share one layout: a session's (from a scorecard, ctx-scorecard/v1) and the
aggregate one (ctx-stats-aggregate/v1, one bar per session).  Each figure is also written as
text in the DOM (key numbers, a caption per plot), so the page says what it shows without
JavaScript, and a test can check the figures in a real browser.
"""

from __future__ import annotations

import html
import json
import os

VENDOR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data", "vendor")
CHART_JS = os.path.join(VENDOR, "chart.umd.min.js")

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1100px;color:#1d2433;
background:#fafbfc}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:0 0 6px}
.sub{color:#5b6577;margin-bottom:18px}
.kpis{display:flex;flex-wrap:wrap;gap:10px;margin-bottom:18px}
.kpi{background:#fff;border:1px solid #e3e7ee;border-radius:8px;padding:10px 14px;min-width:130px}
.kpi b{display:block;font-size:20px}.kpi span{color:#5b6577;font-size:12px}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:14px}
.card{background:#fff;border:1px solid #e3e7ee;border-radius:8px;padding:12px 14px}
.card p{color:#5b6577;font-size:12px;margin:4px 0 8px}
canvas{width:100%!important;height:260px!important}
.empty{color:#8a93a3;font-style:italic;padding:40px 0;text-align:center}
"""

_PALETTE = {"raw": "#c9cfd9", "harness": "#8aa4c8", "delivered": "#2f7d4f", "fail": "#c0392b",
            "landing": "#2f7d4f", "starvation": "#c0392b", "affordance": "#d98c1f", "friction": "#7b4fb0"}


def _kpi(value, label, key):
    return '<div class="kpi" data-kpi="%s"><b>%s</b><span>%s</span></div>' % (
        html.escape(key), html.escape(_num(value)), html.escape(label))


def _num(v):
    if v is None:
        return "—"
    if isinstance(v, float):
        return "%.1f" % v
    if isinstance(v, int):
        return "{:,}".format(v)
    return str(v)


def _card(chart_id, title, caption):
    return ('<div class="card"><h2>%s</h2><p>%s</p><canvas id="%s" role="img" aria-label="%s"></canvas></div>'
            % (html.escape(title), html.escape(caption), chart_id, html.escape(title)))


def _page(title, subtitle, kpis, cards, charts):
    js = open(CHART_JS, encoding="utf-8").read()
    data = json.dumps(charts, sort_keys=True).replace("</", "<\\/")
    return """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>%(title)s</title><style>%(css)s</style></head>
<body><h1>%(title)s</h1><div class="sub">%(subtitle)s</div>
<div class="kpis">%(kpis)s</div><div class="grid">%(cards)s</div>
<script>%(js)s</script>
<script>
const CHARTS = %(data)s;
for (const [id, spec] of Object.entries(CHARTS)) {
  const el = document.getElementById(id);
  if (!el) continue;
  const empty = !spec.data.datasets.some(d => d.data && d.data.length);
  if (empty) { el.outerHTML = '<div class="empty" data-empty="' + id + '">nothing to plot in this ledger</div>'; continue; }
  spec.options = Object.assign({animation: false, maintainAspectRatio: false, responsive: true}, spec.options || {});
  new Chart(el, spec);
}
// What was drawn, for people reading the DOM and for the browser test: painted pixels per chart.
const painted = {};
for (const c of document.querySelectorAll("canvas")) {
  const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) n++;
  painted[c.id] = n;
}
document.body.dataset.painted = JSON.stringify(painted);
document.body.dataset.rendered = "yes";
</script></body></html>
""" % {"title": html.escape(title), "subtitle": html.escape(subtitle), "css": _CSS, "kpis": "".join(kpis),
       "cards": "".join(cards), "js": js, "data": data}


def _bar(labels, datasets, stacked=False, y_title=None, x_title=None):
    scales = {"x": {"stacked": stacked, "title": {"display": bool(x_title), "text": x_title or ""}},
              "y": {"stacked": stacked, "beginAtZero": True, "ticks": {"precision": 0},
                    "title": {"display": bool(y_title), "text": y_title or ""}}}
    return {"type": "bar", "data": {"labels": labels, "datasets": datasets}, "options": {"scales": scales}}


def session_page(card: dict) -> str:
    """The page of one session's scorecard."""
    s, tok, series = card["session"], card["tokens"], card.get("series") or {"runs": [], "hook_latency_us": []}
    runs = series["runs"]
    labels = ["#%d %s" % (r["seq"], (r["command"] or "")[:28]) for r in runs]
    charts = {
        "tokens": _bar(labels, [
            {"label": "raw output", "data": [r["raw_tokens"] for r in runs], "backgroundColor": _PALETTE["raw"]},
            {"label": "harness alone", "data": [r["harness_tokens"] for r in runs],
             "backgroundColor": _PALETTE["harness"]},
            {"label": "delivered by ctx", "data": [r["delivered_tokens"] for r in runs],
             "backgroundColor": _PALETTE["delivered"]}], y_title="o200k tokens"),
    }
    traj = card["rounds"]["by_signature"]
    charts["trajectories"] = {"type": "line", "data": {
        "labels": list(range(1, 1 + max([len(t["trajectory"]) for t in traj] or [0]))),
        "datasets": [{"label": (t["command"] or "")[:40], "data": t["trajectory"], "tension": 0}
                     for t in traj if t["trajectory"]]},
        "options": {"scales": {"x": {"title": {"display": True, "text": "run of the signature"}},
                               "y": {"beginAtZero": True, "ticks": {"precision": 0},
                                     "title": {"display": True, "text": "failing"}}}}}
    firings = card["detectors"]["firings"]
    kinds = sorted({f["detector"] for f in firings})
    charts["firings"] = {"type": "scatter", "data": {"datasets": [
        {"label": k, "data": [{"x": f["seq"], "y": k} for f in firings if f["detector"] == k],
         "backgroundColor": _PALETTE.get(k.split("_")[0], "#555"), "pointRadius": 6} for k in kinds]},
        "options": {"scales": {"x": {"title": {"display": True, "text": "event sequence"}},
                               "y": {"type": "category", "labels": kinds, "offset": True}}}}
    lat = [v / 1000.0 for v in series["hook_latency_us"] if isinstance(v, (int, float))]
    edges = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500]
    buckets = [0] * (len(edges) + 1)
    for v in lat:
        buckets[sum(1 for e in edges if v > e)] += 1
    bucket_labels = ["≤%g ms" % edges[0]] + ["%g–%g ms" % (a, b) for a, b in zip(edges, edges[1:])] + \
                    [">%g ms" % edges[-1]]
    charts["latency"] = _bar(bucket_labels, [{"label": "hook calls", "data": buckets if lat else [],
                                              "backgroundColor": _PALETTE["harness"]}], y_title="calls")
    iv = card["interventions"]
    classes = [c for c in iv if iv[c]["count"]]
    charts["interventions"] = _bar([c.replace("_", " ") for c in classes], [
        {"label": "landed", "data": [iv[c]["landed"] for c in classes], "backgroundColor": _PALETTE["landing"]},
        {"label": "not landed", "data": [iv[c]["count"] - iv[c]["landed"] - iv[c]["censored"] for c in classes],
         "backgroundColor": _PALETTE["fail"]},
        {"label": "censored", "data": [iv[c]["censored"] for c in classes], "backgroundColor": _PALETTE["raw"]}],
        stacked=True, y_title="interventions")
    kpis = [_kpi(card["commands"]["total"], "Bash calls", "commands"),
            _kpi(card["runs"]["total"], "runs through ctx", "runs"),
            _kpi(tok["raw"], "raw tokens", "raw_tokens"),
            _kpi(tok["delivered"]["ctx_runs"], "tokens delivered", "delivered_tokens"),
            _kpi(tok["saved"], "saved vs the harness alone", "saved"),
            _kpi(card["rounds"]["requeries"], "re-runs with nothing changed", "requeries"),
            _kpi(card["detectors"]["total"], "detector firings", "firings")]
    cards = [_card("tokens", "Tokens per run: raw, the harness alone, delivered",
                   "Each ctx run's output in o200k tokens: all of it, what the harness would have shown "
                   "(its own truncation), and what ctx delivered."),
             _card("trajectories", "Failure count per signature",
                   "Failing tests at each run of the same command: falling means the loop is working."),
             _card("firings", "Detector firings over the session",
                   "When starvation, affordance, friction and landing detectors fired (by event sequence)."),
             _card("latency", "Hook latency",
                   "Daemon-side processing time of every hook event, bucketed."),
             _card("interventions", "Interventions and landings",
                   "Rewrites, denials, digests with omissions and hints: how many landed.")]
    title = "ctx stats · session %s" % s["id"]
    subtitle = "%s · %s events · %s" % (s.get("model") or "model unknown", _num(s.get("events")), s.get("cwd") or "")
    return _page(title, subtitle, kpis, cards, charts)


def aggregate_page(agg: dict) -> str:
    """The page across sessions: one bar per session, plus the family and intervention totals."""
    rows = agg["per_session"]
    labels = [(r["session_id"] or "")[:10] for r in rows]
    charts = {
        "tokens": _bar(labels, [
            {"label": "raw output", "data": [r["raw_tokens"] for r in rows], "backgroundColor": _PALETTE["raw"]},
            {"label": "harness alone", "data": [r["harness_baseline"] for r in rows],
             "backgroundColor": _PALETTE["harness"]},
            {"label": "delivered by ctx", "data": [r["delivered_ctx"] for r in rows],
             "backgroundColor": _PALETTE["delivered"]}], y_title="o200k tokens"),
        "trajectories": _bar(labels, [
            {"label": "re-runs with nothing changed", "data": [r["requeries"] for r in rows],
             "backgroundColor": _PALETTE["fail"]},
            {"label": "denied", "data": [r["denied"] for r in rows], "backgroundColor": _PALETTE["affordance"]}],
            stacked=True, y_title="extra rounds"),
    }
    det = agg["detectors"]["by_detector"]
    charts["firings"] = _bar(list(det), [{"label": "firings", "data": list(det.values()),
                                          "backgroundColor": _PALETTE["starvation"]}])
    fam = agg["by_family"]
    charts["latency"] = _bar(list(fam), [
        {"label": "harness alone", "data": [v["harness_baseline"] for v in fam.values()],
         "backgroundColor": _PALETTE["harness"]},
        {"label": "delivered", "data": [v["delivered_tokens"] for v in fam.values()],
         "backgroundColor": _PALETTE["delivered"]}], y_title="o200k tokens")
    iv = agg["interventions"]
    classes = [c for c in iv if iv[c]["count"]]
    charts["interventions"] = _bar([c.replace("_", " ") for c in classes], [
        {"label": "landed", "data": [iv[c]["landed"] for c in classes], "backgroundColor": _PALETTE["landing"]},
        {"label": "not landed", "data": [iv[c]["count"] - iv[c]["landed"] - iv[c]["censored"] for c in classes],
         "backgroundColor": _PALETTE["fail"]}], stacked=True)
    t = agg["totals"]
    kpis = [_kpi(agg["sessions"], "sessions", "sessions"), _kpi(t["runs"], "runs through ctx", "runs"),
            _kpi(t["raw_tokens"], "raw tokens", "raw_tokens"), _kpi(t["delivered_ctx"], "tokens delivered",
                                                                     "delivered_tokens"),
            _kpi(t["saved"], "saved vs the harness alone", "saved"),
            _kpi(t["requeries"], "re-runs with nothing changed", "requeries")]
    cards = [_card("tokens", "Tokens per session", "Raw output, the harness alone, and what ctx delivered."),
             _card("trajectories", "Extra rounds per session", "Re-runs with nothing changed, and denials."),
             _card("firings", "Detector firings", "All firings recorded in the ledger, by detector."),
             _card("latency", "Tokens by family", "The harness alone against ctx, per command family."),
             _card("interventions", "Interventions and landings", "How many of each class landed.")]
    return _page("ctx stats · %d sessions" % agg["sessions"], agg.get("ledger") or "", kpis, cards, charts)
