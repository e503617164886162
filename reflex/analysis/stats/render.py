"""The terminal view of scorecards and aggregates: for people, not parsers (use --json).

Aligned tables, a sparkline per failure trajectory, colour only when writing to a terminal
(and never with NO_COLOR set).  Every function returns text; nothing here prints.
"""

from __future__ import annotations

import os

SPARKS = "▁▂▃▄▅▆▇█"
_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


def use_colour(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Style:
    def __init__(self, colour: bool):
        self.colour = colour

    def __call__(self, text, *styles) -> str:
        if not self.colour or not styles:
            return str(text)
        return "\x1b[%sm%s\x1b[0m" % (";".join(_CODES[s] for s in styles), text)


def sparkline(values) -> str:
    vals = [v for v in values if v is not None]
    if not vals:
        return ""
    top = max(vals)
    if top <= 0:
        return SPARKS[0] * len(vals)
    return "".join(SPARKS[min(len(SPARKS) - 1, int(round(v / top * (len(SPARKS) - 1))))] for v in vals)


def num(n) -> str:
    if n is None:
        return "-"
    if isinstance(n, float):
        return "{:,.1f}".format(n)
    return "{:,}".format(n)


def pct(rate) -> str:
    return "-" if rate is None else "%d%%" % round(rate * 100)


def _visible_len(s: str) -> int:
    out, i = 0, 0
    while i < len(s):
        if s[i] == "\x1b":
            j = s.find("m", i)
            i = j + 1 if j >= 0 else len(s)
            continue
        out += 1
        i += 1
    return out


def table(headers, rows, right=(), indent="  ") -> list[str]:
    """Aligned columns; indices in `right` are right-aligned (numbers)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(_visible_len(row[i]) for row in cells) for i in range(len(headers))]
    out = []
    for row in cells:
        parts = []
        for i, c in enumerate(row):
            pad = " " * (widths[i] - _visible_len(c))
            parts.append(pad + c if i in right else c + pad)
        out.append((indent + "  ".join(parts)).rstrip())
    return out


def _short(text, n=48) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _ids(ids, n=6) -> str:
    ids = list(ids)
    more = len(ids) - n
    return ", ".join(ids[:n]) + (" (+%d)" % more if more > 0 else "")


def _us(v) -> str:
    if v is None:
        return "-"
    return "%dµs" % v if v < 1000 else "%.1fms" % (v / 1000.0)


def scorecard_text(card: dict, colour: bool = False) -> str:
    st = Style(colour)
    s = card["session"]
    lines = [st("ctx stats · session %s" % s["id"], "bold") + " · %s%s (%s) · %s events%s" % (
        "%s · " % s["harness"] if s.get("harness") else "", s["model"] or "model unknown", s["reader"],
        num(s["events"]), " · ended" if s["ended"] else "")]
    if s.get("cwd"):
        lines.append(st("  %s" % s["cwd"], "dim"))
    c = card["commands"]
    d = c["by_decision"]
    lines.append("commands   %s Bash calls: %s rewritten · %s passed · %s denied · %s retrievals · %s edits" % (
        num(c["total"]), num(d["rewrite"]), num(d["pass"]), num(d["deny"]), num(c["retrievals"]), num(c["edits"])))
    if c.get("rewrites_held_back"):
        lines.append("           %s digestible call(s) passed through untouched: the harness would not have run "
                     "them unasked, so it decided (ctx never changes whether a command runs)"
                     % num(c["rewrites_held_back"]))
    r = card["runs"]
    lines.append("runs       %s (%s digested, %s passthrough, %s failing)" % (
        num(r["total"]), num(r["digested"]), num(r["passthrough"]), num(r["failing"])))
    for why, n in (r.get("not_digested") or {}).items():
        lines.append(st("           %s run(s) NOT digested: %s (run `ctx doctor`)" % (num(n), why), "bold"))
    if r["by_family"]:
        lines += table(["family", "runs", "digested", "failing"],
                       [[f, num(v["runs"]), num(v["digested"]), num(v["failing"])] for f, v in r["by_family"].items()],
                       right=(1, 2, 3))
    t = card["tokens"]
    saved = t["saved"]
    saved_txt = "%s%s" % (num(saved), "" if t["saved_pct"] is None else " (%s%%)" % t["saved_pct"])
    lines.append("tokens     raw %s · delivered %s (+%s other calls, est.) · harness alone %s · saved %s" % (
        num(t["raw"]), num(t["delivered"]["ctx_runs"]), num(t["delivered"]["other_calls_est"]),
        num(t["harness_baseline"]), st(saved_txt, "red" if saved < 0 else "green" if saved > 0 else "dim")))
    b = t["baseline"]
    lines.append(st("           baseline: %s runs counted (%s exact, %s estimated), %s unknown (own slicer), "
                    "%s searches excluded" % (b["runs_counted"], b["exact"], b["estimated"], b["unknown"],
                                              b["excluded_search"]), "dim"))
    co = card["cost"]
    net = co["digest_net"]
    lines.append("cost       %s delivered + %s extra rounds × %s = %s · digest net %s" % (
        num(co["delivered_tokens"]), num(co["extra_rounds"]), num(co["price_per_extra_round"]), num(co["total"]),
        st(num(net), "red" if net < 0 else "green" if net > 0 else "dim")))
    lines.append(st("           an extra round (a requery or a denial) is priced at %s tokens: one more model turn "
                    "(--json: cost.price_basis; --round-price to change)" % num(co["price_per_extra_round"]), "dim"))
    lines.append("interventions")
    rows = []
    for cls, v in card["interventions"].items():
        name = cls.replace("_", " ") + (" (%s applied)" % v["applied"] if "applied" in v else "")
        rate = v["rate"]
        colour_rate = st(pct(rate), "green" if rate and rate >= 0.5 else "yellow" if rate is not None else "dim")
        rows.append([name, num(v["count"]), num(v["landed"]), num(v["censored"]), colour_rate])
    lines += table(["class", "count", "landed", "censored", "rate"], rows, right=(1, 2, 3, 4))
    det = card["detectors"]
    by = " · ".join("%s %d" % (k, n) for k, n in det["by_detector"].items()) or "none"
    epochs = ", ".join(det.get("policy_epochs") or ()) or "-"
    lines.append("detectors  (%s; policy epoch %s) %s" % (det["source"], epochs, by))
    if det["firings"]:
        lines += table(["seq", "detector", "tool_use_id", "reason"],
                       [[f["seq"], f["detector"], f["tool_use_id"] or "-", _short(f["reason"], 70)]
                        for f in det["firings"][:20]], right=(0,))
        if len(det["firings"]) > 20:
            lines.append(st("  … %d more (--json)" % (len(det["firings"]) - 20), "dim"))
    ev = card["evidence"]
    lines.append("evidence   " + (" · ".join("%s %d" % (k.replace("_", " "), n) for k, n in ev["by_outcome"].items() if n)
                                  or "no outcomes") + " · %d censored of %d runs" % (ev["censored_runs"], ev["runs"]))
    ro = card["rounds"]
    lines.append("rounds     %s re-issues: %s requeries (nothing changed), %s retries after a deny, %s denied" % (
        num(ro["reissues"]), num(ro["requeries"]), num(ro["retries"]), num(ro["denied"])))
    if ro["by_signature"]:
        rows = []
        for sg in ro["by_signature"][:15]:
            traj = sg["trajectory"]
            rows.append([_short(sg["command"], 40), num(sg["issues"]), num(sg["requeries"]),
                         " → ".join(str(x) for x in traj) or "-", sparkline(traj),
                         st(sg["verdict"], "green" if sg["verdict"] in ("fixed", "falling") else
                            "red" if sg["verdict"] in ("flat", "rising") else "dim")])
        lines += table(["signature", "issues", "requeries", "failing per run", "", "verdict"], rows, right=(1, 2))
    la = card["latency"]
    h, o = la["hook_us"], la["run_overhead_ms"]
    lines.append("latency    hook p50 %s · p95 %s · max %s (daemon-side, n=%d) · ctx run overhead p50 %s · p95 %s · "
                 "max %s (n=%d)" % (_us(h["p50"]), _us(h["p95"]), _us(h["max"]), h["n"],
                                    _ms(o["p50"]), _ms(o["p95"]), _ms(o["max"]), o["n"]))
    lines.append("anomalies")
    lines += anomaly_lines(card["anomalies"], st)
    return "\n".join(lines) + "\n"


def _ms(v) -> str:
    return "-" if v is None else "%.1fms" % v


def anomaly_lines(an: dict, st) -> list[str]:
    out = []
    warn = st("!", "yellow", "bold")
    for a in an["repeated_signatures"]:
        out.append("  %s repeated signature  %s ×%d (%d requeries): %s" % (
            warn, _short(a["command"]), a["issues"], a["requeries"], _ids(a["tool_use_ids"])))
    for a in an["zero_landing_interventions"]:
        out.append("  %s zero landings       %s on %s ×%d: %s" % (
            warn, a["class"].replace("_", " "), _short(a["command"]), a["count"], _ids(a["tool_use_ids"])))
    for a in an["thrash"]:
        out.append("  %s thrash              %s / %s ×%d (%d changes within): %s" % (
            warn, _short(a["variants"][0], 30), _short(a["variants"][1], 30), a["length"], a["changes_within"],
            _ids(a["tool_use_ids"])))
    for a in an["starvation_streaks"]:
        out.append("  %s starvation streak   %s: %d re-runs after %s: %s" % (
            warn, _short(a["command"]), a["length"], a["first_view"], _ids(a["tool_use_ids"])))
    if not out:
        out.append(st("  none", "dim"))
    return out


def aggregate_text(agg: dict, colour: bool = False) -> str:
    st = Style(colour)
    t = agg["totals"]
    f = agg["filters"]
    head = "ctx stats · %s sessions" % num(agg["sessions"])
    if f.get("since") or f.get("project") or f.get("harness"):
        head += " · " + " · ".join("%s %s" % (k, v) for k, v in sorted(f.items()) if v)
    lines = [st(head, "bold")]
    lines.append("commands   %s · runs %s (%s digested) · requeries %s · denied %s" % (
        num(t["commands"]), num(t["runs"]), num(t["digested"]), num(t["requeries"]), num(t["denied"])))
    outside = agg.get("outside_sessions") or {}
    if outside.get("runs"):
        lines.append("           of which %s `ctx run` outside any harness session (by hand or a script): "
                     "%s digested · saved %s" % (num(outside["runs"]), num(outside["digested"]), num(outside["saved"])))
    saved = t["saved"]
    lines.append("tokens     raw %s · delivered %s · harness alone %s · saved %s%s" % (
        num(t["raw_tokens"]), num(t["delivered_ctx"]), num(t["harness_baseline"]),
        st(num(saved), "red" if saved < 0 else "green" if saved > 0 else "dim"),
        "" if t["saved_pct"] is None else " (%s%%)" % t["saved_pct"]))
    lines.append("cost       %s delivered (all calls, est.) + %s extra rounds × %s = %s" % (
        num(t["delivered_total"]), num(t["extra_rounds"]), num(agg["price_per_extra_round"]), num(t["cost_total"])))
    if agg["by_family"]:
        lines.append("per family")
        lines += table(["family", "runs", "digested", "failing", "raw", "delivered", "harness", "saved", "requeried"],
                       [[k, num(v["runs"]), num(v["digested"]), num(v["failing"]), num(v["raw_tokens"]),
                         num(v["delivered_tokens"]), num(v["harness_baseline"]), num(v["saved"]), num(v["requeried"])]
                        for k, v in agg["by_family"].items()], right=tuple(range(1, 9)))
    if agg["by_profile"]:
        lines.append("per profile")
        lines += table(["profile", "runs", "saved", "starved", "starved rate"],
                       [[k, num(v["runs"]), num(v["saved"]), num(v["starved"]), pct(v["starved_rate"])]
                        for k, v in agg["by_profile"].items()], right=(1, 2, 3, 4))
    if agg.get("by_harness"):
        lines.append("per harness")
        lines += table(["harness", "sessions", "commands", "runs", "digested", "saved", "requeries", "denied"],
                       [[k, num(v["sessions"]), num(v["commands"]), num(v["runs"]), num(v["digested"]),
                         num(v["saved"]), num(v["requeries"]), num(v["denied"])]
                        for k, v in agg["by_harness"].items()], right=tuple(range(1, 8)))
    if agg["by_reader"]:
        lines.append("per reader")
        lines += table(["reader", "sessions", "runs", "saved", "requeries"],
                       [[k, num(v["sessions"]), num(v["runs"]), num(v["saved"]), num(v["requeries"])]
                        for k, v in agg["by_reader"].items()], right=(1, 2, 3, 4))
    lines.append("landings")
    lines += table(["class", "count", "landed", "censored", "rate"],
                   [[k.replace("_", " "), num(v["count"]), num(v["landed"]), num(v["censored"]), pct(v["rate"])]
                    for k, v in agg["interventions"].items()], right=(1, 2, 3, 4))
    if agg["starved_profiles"]:
        lines.append("most starved digests")
        lines += table(["profile", "starved", "of runs", "rate"],
                       [[p["profile"], num(p["starved"]), num(p["runs"]), pct(p["rate"])]
                        for p in agg["starved_profiles"]], right=(1, 2, 3))
    det = agg["detectors"]
    lines.append("detectors  " + (" · ".join("%s %d" % kv for kv in det["by_detector"].items()) or "none recorded"))
    an = agg["anomalies"]
    lines.append("anomalies  %d sessions with starvation streaks · %d with thrash · %d with zero-landing interventions"
                 % (an["sessions_with_streaks"], an["sessions_with_thrash"], an["sessions_with_zero_landings"]))
    for r in an["recurring_signatures"][:10]:
        lines.append("  %s %s repeated in %d sessions (%d issues)" % (
            st("!", "yellow", "bold"), _short(r["command"]), r["sessions"], r["issues"]))
    return "\n".join(lines) + "\n"
