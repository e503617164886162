"""The team page has a time axis (issue 30, item 8): "is it getting better week over week?"

A real dataset exported by `ctx ledger export --dataset` from a ledger whose sessions span four
weeks, starving less each week; `ctx stats --dataset --html` opened in a real headless chromium
(tests/analysis/test_stats_html.py's) with the network off.  The weekly charts are drawn, their
numbers are in tables under them, and a newcomer's page (one week, nothing landed or starved) is
short: no chart of zeros, one line saying what has not happened yet.
"""

import datetime as dt
import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

from tests.analysis.test_stats_html import _browser  # noqa: E402

MONDAY = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.timezone.utc).timestamp()
WEEK = 7 * 86400


def _ledger(path, plan):
    """A ledger of sessions [(week, requery)]: each session's events moved into its week."""
    from tests.analysis.test_policy_compile import ledger as make_ledger, session
    sessions = []
    for k, (week, requery) in enumerate(plan):
        rows = session("s%03d" % k, requery=requery)
        for r in rows:
            r["ts"] += MONDAY - 1000.0 + week * WEEK + k * 600
        sessions.append(rows)
    return make_ledger(path, sessions)


def _ctx(tmp_path, *args):
    env = dict(os.environ, CTX_HOME=str(tmp_path / "home"))
    p = subprocess.run([sys.executable, "-m", "reflex.entry"] + list(args), capture_output=True, text=True,
                       timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    return p


def _dataset(tmp_path, plan):
    led = _ledger(tmp_path / "ledger.db", plan)
    ds = str(tmp_path / "team")
    _ctx(tmp_path, "ledger", "export", "--ledger", led, "--format", "parquet", "--dataset", ds, "--workers", "1")
    return ds


def _rendered(tmp_path, ds):
    page = tmp_path / "team.html"
    _ctx(tmp_path, "stats", "--dataset", ds, "--html", "--out", str(page))
    dom = _browser(["--dump-dom", page.as_uri()], tmp_path).stdout
    assert 'data-rendered="yes"' in dom, dom[-2000:]
    painted = json.loads(re.search(r"data-painted=\"([^\"]*)\"", dom).group(1).replace("&quot;", '"'))
    return dom, painted


def _table(dom, key):
    m = re.search(r'<table class="tbl" data-table="%s">(.*?)</table>' % key, dom, re.S)
    assert m, key
    return [re.findall(r"<t[hd]>(.*?)</t[hd]>", row) for row in re.findall(r"<tr>(.*?)</tr>", m.group(1))]


def test_the_team_page_plots_week_over_week(tmp_path):
    # Four weeks, three sessions each (the third week: none); starving less each week.
    plan = [(0, 2)] * 3 + [(1, 1)] * 3 + [(3, 0)] * 3
    ds = _dataset(tmp_path, plan)
    card = json.loads(_ctx(tmp_path, "stats", "--dataset", ds, "--json").stdout)
    assert [w["week"] for w in card["weeks"]] == ["2026-11-02", "2026-11-09", "2026-11-16", "2026-11-23"]
    assert [w["sessions"] for w in card["weeks"]] == [3, 3, 0, 3]
    starving = [w["starvation_rate"] for w in card["weeks"]]
    assert starving[0] > starving[1] > starving[3] == 0 and starving[2] is None, starving
    assert sum(w["runs"] for w in card["weeks"]) == card["totals"]["runs"]

    dom, painted = _rendered(tmp_path, ds)
    drawn = {k for k, v in painted.items() if v > 500}
    assert {"weekly_tokens", "weekly_rates"} <= drawn, painted
    assert drawn == set(painted), painted                      # every chart on the page has pixels
    rates = _table(dom, "weekly_rates")
    assert rates[0][:5] == ["week of", "runs", "digested", "starved", "starvation"], rates[0]
    assert [r[0] for r in rates[1:]] == ["2026-11-02", "2026-11-09", "2026-11-16", "2026-11-23"], rates
    assert rates[1][4] == "%.1f%%" % (100 * starving[0]) and rates[3][4] == "—", rates
    assert "weeks 2026-11-02 to 2026-11-23" in dom
    assert "by week" in _ctx(tmp_path, "stats", "--dataset", ds).stdout


def test_a_newcomers_page_draws_no_zero_bars(tmp_path):
    """A newcomer's first week: two sessions of one failing run each, nothing re-run, starved
    or landed.  The charts that would be all zeros are not drawn (the weekly rates, the landings),
    one line says what has not happened yet, and what is drawn has its table."""
    from tests.analysis.test_evidence import Rows, failing
    from tests.analysis.test_policy_compile import ledger as make_ledger
    sessions = []
    for k in range(2):
        s = Rows("n%d" % k)
        s.bash("python -m pytest -q", exit=1, run=failing(3))
        s.end()
        for r in s.rows:
            r["ts"] += MONDAY - 1000.0 + k * 600
        sessions.append(s.rows)
    led = make_ledger(tmp_path / "ledger.db", sessions)
    ds = str(tmp_path / "team")
    _ctx(tmp_path, "ledger", "export", "--ledger", led, "--format", "parquet", "--dataset", ds, "--workers", "1")
    card = json.loads(_ctx(tmp_path, "stats", "--dataset", ds, "--json").stdout)
    t = card["totals"]
    assert (t["sessions"], t["runs"], t["reruns"], t["requeried"], t["landings"]) == (2, 2, 0, 0, 0), t
    assert len(card["weeks"]) == 1
    dom, painted = _rendered(tmp_path, ds)
    # one week: its numbers as a table, no line of one point
    assert "weekly_tokens" not in painted and 'data-table="weekly_tokens"' in dom and "One week so far" in dom
    assert _table(dom, "weekly_tokens")[1][:4] == ["2026-11-02", "1", "2", "2"]
    assert {"tokens", "interventions"} <= set(painted), painted
    for chart in painted:                      # every chart drawn has pixels, and its numbers under it
        assert painted[chart] > 500 and 'data-table="%s"' % chart in dom, (chart, painted)
    assert not {"weekly_rates", "trajectories", "firings"} & set(painted), painted
    nothing = re.search(r'data-nothing="yes"><h2>Not yet</h2><p class="nothing">(.*?)</p>', dom).group(1)
    assert "no landing yet" in nothing and "no re-run" in nothing, nothing


def test_a_sessions_start_is_its_first_event_either_way_the_export_finds_it(tmp_path):
    """The start the export records (the week's key) is the session's first event, whether the
    sessions with new events are found by the session index (a large export) or by their ids."""
    import sqlite3
    from reflex.analysis import dataset as D
    from reflex.analysis.stats.ledger_read import Reader
    led = _ledger(tmp_path / "ledger.db", [(0, 0), (1, 1), (3, 0)])
    with sqlite3.connect(led) as c:
        want = dict(c.execute("SELECT session_id, ts FROM events e WHERE seq = "
                              "(SELECT min(seq) FROM events x WHERE x.session_id = e.session_id)"))
        last = c.execute("SELECT max(id) FROM events").fetchone()[0]
    with Reader(led) as r:
        for events in (0, None):
            starts: dict = {}
            D._touched(r, 0, last, events=events, starts=starts)
            assert starts == want, (events, starts, want)
