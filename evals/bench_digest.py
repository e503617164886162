"""Digest engine benchmark: latency, census recall and delivered tokens, against RTK on the same outputs.

1. Latency of build_digest (normal density, tokenizer warm as in the daemon; its load
   time is reported separately) on real outputs of ~100 KB and ~5 MB: a pytest run
   with many failures (generated once by running pytest on a generated test module,
   cached in evals/out/) and a 5 MB `find` listing (unknown format: the generic profile).
   Targets: median < 20 ms at 100 KB, < 200 ms at 5 MB.  Reported twice: counting the
   raw output's tokens after the fact (on a worker thread, alongside parsing), and with
   the count taken while the output streamed in (tokens.StreamCounter; its own cost,
   paid during the command's run, is reported next to it).
2. Per family, over evals/corpus/*/*/: census recall at the default density (share of
   the tool's own failing ids, collection errors and diagnostics the digest names, read
   back with the census grammar from tests/support/corpus.py) and tokens delivered
   vs raw; where a case has rtk.txt (RTK's output for the same command, recorded with
   the corpus), RTK's tokens (same o200k tokenizer) and RTK's recall: strict = the id
   as the tool prints it appears in rtk.txt; lenient = the test's own name (last
   component of the id) appears; diagnostics: a line of rtk.txt has the line number
   and the code, and the file's base name appears.

Every row is scored with the profile the command itself selects (reflex.digest.family_of_command,
as the hook does); rows marked held-out in the corpus (cases never looked at while the profiles
were written) are summed apart, as "<family> (held-out)".  `size` is ok when every digest of the
family is at most its raw output and at most 35% of it above 2,000 raw tokens (a listing, whose
census is its names: 60%; reflex/digest/budget.py share_target).

Usage: python evals/bench_digest.py [--quick]   (JSON to evals/out/bench_digest.json)
"""

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(REPO, "..", "shared", "tiktoken"))
OUT = os.path.join(REPO, "evals", "out")

from reflex.digest.budget import SHARE_FROM_TOKENS, share_target  # noqa: E402


# -- inputs for latency -----------------------------------------------------------------------------------

def _pytest_output(n_tests, fail_every, tb):
    """Real pytest output: a generated module of n_tests parametrized cases, every k-th failing."""
    path = os.path.join(OUT, f"bench_pytest_{n_tests}_{fail_every}_{tb}.txt")
    if os.path.exists(path):
        return open(path, "rb").read()
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_gen.py"), "w") as f:
            f.write(
                "import pytest\n\n"
                "def helper(n, depth=3):\n"
                "    if depth:\n        return helper(n, depth - 1)\n"
                f"    assert n % {fail_every} != 0, f'value {{n}} is a multiple of {fail_every}: ' + 'x' * (n % 40)\n"
                "    return n\n\n"
                f"@pytest.mark.parametrize('n', range({n_tests}))\n"
                "def test_value(n):\n    data = {'n': n, 'square': n * n, 'label': 'case-%d' % n}\n"
                "    assert helper(n) == data['n']\n"
            )
        r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--tb={tb}", "-q", d],
                           capture_output=True, cwd=d, timeout=900)
        raw = r.stdout + r.stderr
    os.makedirs(OUT, exist_ok=True)
    with open(path, "wb") as f:
        f.write(raw)
    return raw


def _find_output(size):
    path = os.path.join(OUT, f"bench_find_{size}.txt")
    if os.path.exists(path):
        return open(path, "rb").read()
    r = subprocess.run(["find", "/usr/lib", "/usr/share"], capture_output=True, timeout=300)
    raw = r.stdout[:size]
    raw = raw[: raw.rfind(b"\n") + 1]
    with open(path, "wb") as f:
        f.write(raw)
    return raw


def latency(raw, family, runs):
    from blake3 import blake3

    from reflex.digest import build_digest
    from reflex.digest.text import _cached

    from reflex import tokens

    handle = "r:" + blake3(raw).hexdigest()[:12]
    times, pre_times, stream_times = [], [], []
    digest = None
    for _ in range(runs):
        _cached.cache_clear()  # the daemon sees each output once: no warm line index
        t = time.perf_counter()
        digest = build_digest(raw, family=family, exit_code=1, command=family, handle=handle)
        times.append((time.perf_counter() - t) * 1000)
        # The daemon can count raw tokens while the output streams in (tokens.StreamCounter),
        # leaving only parsing and rendering after the command exits.
        t = time.perf_counter()
        counter = tokens.StreamCounter()
        for at in range(0, len(raw), 65536):
            counter.feed(raw[at : at + 65536])
        raw_tokens = counter.finish()
        stream_times.append((time.perf_counter() - t) * 1000)
        _cached.cache_clear()
        t = time.perf_counter()
        pre = build_digest(raw, family=family, exit_code=1, command=family, handle=handle, raw_tokens=raw_tokens)
        pre_times.append((time.perf_counter() - t) * 1000)
        assert pre.text == digest.text
    return {"bytes": len(raw), "runs": runs, "median_ms": round(statistics.median(times), 2),
            "min_ms": round(min(times), 2),
            "median_ms_raw_counted_while_streaming": round(statistics.median(pre_times), 2),
            "stream_count_ms_during_run": round(statistics.median(stream_times), 2),
            "raw_tokens": digest.raw_tokens, "digest_tokens": digest.tokens,
            "failures": len(digest.facts.failures)}


# -- census recall ---------------------------------------------------------------------------------------------

def _name(test_id, family):
    if family == "go":
        return test_id.split(" ", 1)[-1]
    if " > " in test_id:
        return test_id.split(" > ")[-1]
    if family == "generic":
        return test_id.split(" ", 1)[-1]
    return test_id.split("::")[-1]


def _units(truth):
    """What a census must name besides failing ids: modules that did not collect, packages that
    failed with no failing test, files a linter could not parse."""
    return truth["collection_errors"] + truth.get("failed_units", []) + truth.get("not_linted", [])


def rtk_recall(text, truth, family):
    ids = truth["failed"] + truth.get("errored_tests", []) + _units(truth)
    strict = sum(1 for t in ids if t in text)
    lenient = sum(1 for t in ids if _name(t, family) in text)
    diag = 0
    lines = text.split("\n")
    for d in truth["diagnostics"]:
        base = os.path.basename(d["file"])
        code = d["code"] or ""
        if base in text and any(re.search(rf"(?<!\d){d['line']}(?!\d)", s) and code in s for s in lines):
            diag += 1
    n = len(ids) + len(truth["diagnostics"])
    return {"strict": (strict + diag) / n if n else None, "lenient": (lenient + diag) / n if n else None}


def ours_recall(dg, truth, family):
    from tests.support import corpus as grammar

    text = dg.text
    if dg.passthrough:
        return 1.0 if truth["failed"] or truth["diagnostics"] else None  # the whole output is there
    ids = truth["failed"] + truth.get("errored_tests", []) + _units(truth)
    lines = grammar.failure_lines(text)
    got = 0
    for t in truth.get("display_ids") or truth["failed"] + truth.get("errored_tests", []):
        if family == "generic" or truth.get("ids_printed") == "leaf":
            got += _name(t, family) in text
        else:
            got += grammar.listed(t, lines)
    got += sum(1 for c in _units(truth) if c in text)
    if truth.get("locations_printed") is False:  # counts by code only (ruff --statistics)
        got += len(truth["diagnostics"]) - sum(n for _code, n in grammar.codes_stated(truth["diagnostics"], text))
    else:
        found, codes = grammar.diagnostic_locations(text)
        for d in truth["diagnostics"]:
            got += grammar.diagnostic_listed(d, found)
    n = len(ids) + len(truth["diagnostics"])
    return got / n if n else None


def _recall(dg, truth, family):
    """The runner census's recall (failing ids, diagnostics), else the items' (issue 29's tools)."""
    r = ours_recall(dg, truth, family)
    return items_recall(dg, truth) if r is None else r


def _norm_dist(dist):
    name, _, ver = dist.rpartition("-")
    return re.sub(r"[-_.]+", "-", name).lower() + "-" + ver


def item_names(truth):
    """What the census of a tool that is not a runner must name, from the truth its corpus
    generator took from the tool's structured form (git's porcelain and --numstat, rg --json,
    tree -J, pip's report): commit hashes (short), changed paths, refs, matches' file and line,
    listed names, installed packages.  Empty for a runner's case."""
    names = []
    g = truth.get("git") or {}
    names += [c["hash"][:7] for c in g.get("commits", [])]
    names += [p["path"] for p in g.get("paths", [])]
    names += [f["path"].split(" -> ")[-1] for f in g.get("files", [])]
    names += [r["ref"] for r in g.get("refs", [])]
    names += list(g.get("conflicts", [])) + list(g.get("blocked", []))
    names += [h for h, code in (g.get("hooks") or {}).items() if code]
    for m in truth.get("matches") or []:
        path, _, line = m.rpartition(":")
        names.append((path, "L" + line) if line.isdigit() else (path or m,))  # `grep -r` without -n: the file
    for listed in (truth.get("names") or {}).values():
        names += [e["name"] if isinstance(e, dict) else e for e in listed]
    names += [("pkg", d) for d in truth.get("installed") or []]
    if "installed" in truth:  # an install's failure: what it could not install, as the tool named it
        names += [e.lstrip("./") for e in truth.get("errors") or []]
        names += [truth["npm_error_code"]] if truth.get("npm_error_code") else []
    return names


def items_recall(dg, truth):
    """Share of item_names(truth) the digest names (the whole output, for a passthrough)."""
    names = item_names(truth)
    if not names:
        return None
    if dg.passthrough:
        return 1.0
    text, low = dg.text, dg.text.lower()
    got = 0
    for n in names:
        if isinstance(n, tuple) and n[0] == "pkg":
            # pip's report says `Pygments-2.21.0`, its output `pygments-2.21.0`: the name normalized
            got += n[1].lower() in low or _norm_dist(n[1]) in low
        elif isinstance(n, tuple):
            got += all(part in text for part in n)
        else:
            got += n in text
    return got / len(names)


def counts_check(dg, truth):
    """Every count the runner printed is stated in the digest's header, and agrees with the tool's own
    structured report where that report has the same count (failed, passed).  None: the output
    printed no count (a passthrough, or a tool with no summary)."""
    reported = dg.facts.counts.reported()
    if dg.passthrough or not reported:
        return None
    from reflex.digest.layout import total_is_implied

    header = dg.text.split("\n", 1)[0]
    # A total equal to the sum of the outcomes says nothing they do not; the header leaves it out.
    implied = total_is_implied(dg.facts.counts)
    stated = all(re.search(rf"(?<![\d.]){n}(?![\d.])", header) or (k == "total" and implied)
                 for k, n in reported.items())
    agrees = True
    errored = truth.get("errored_tests", [])
    if "failed" in reported and not errored and "display_ids" not in truth:
        agrees = reported["failed"] + reported.get("cancelled", 0) == \
            truth["failed_count"] + truth.get("subtests_failed", 0)
    if "passed" in reported and "display_ids" not in truth:
        agrees = agrees and reported["passed"] == truth["passed_count"]
    return stated and agrees


def ungrouped_tokens(raw, meta, family, cwd):
    """The same digest with parametrized cases listed one by one (no parameter groups): what
    grouping saves is measured, not assumed."""
    from unittest import mock

    from blake3 import blake3

    from reflex.digest import build_digest, census

    with mock.patch.object(census, "_param_base", lambda f: None):
        return build_digest(raw, family=family, exit_code=meta["exit_code"], command=meta["command"],
                            handle="r:" + blake3(raw).hexdigest()[:12], cwd=cwd).tokens


def corpus_table():
    from blake3 import blake3

    from reflex import tokens
    from reflex.digest import build_digest, family_of_command
    from tests.support.corpus import recorded_cwd

    cases = []
    for meta_path in sorted(glob.glob(os.path.join(REPO, "evals", "corpus", "*", "*", "meta.json"))):
        d = os.path.dirname(meta_path)
        meta = json.load(open(meta_path))
        raw = open(os.path.join(d, "output.txt"), "rb").read()
        # The profile is chosen from the command, as the hook and ctx run choose it.
        family = family_of_command(meta["command"])
        dg = build_digest(raw, family=family, exit_code=meta["exit_code"],
                          command=meta["command"], handle="r:" + blake3(raw).hexdigest()[:12],
                          cwd=recorded_cwd(meta))
        row = {"case": f"{meta['family']}/{meta['case']}", "family": meta["family"], "raw_bytes": len(raw),
               "ctx_tokens_ungrouped": ungrouped_tokens(raw, meta, family, recorded_cwd(meta)),
               "raw_tokens": dg.raw_tokens, "ctx_tokens": dg.tokens, "ctx_passthrough": dg.passthrough,
               "ctx_truncated": dg.truncated, "ctx_recall": _recall(dg, meta["truth"], meta["family"]),
               "held_out": bool(meta.get("held_out")), "tool_version": meta["tool_version"],
               "ctx_counts": dg.facts.counts.reported(), "counts_ok": counts_check(dg, meta["truth"]),
               "ctx_over_raw": round(dg.tokens / dg.raw_tokens, 3) if dg.raw_tokens else None,
               "size_ok": dg.tokens <= dg.raw_tokens and (dg.raw_tokens <= SHARE_FROM_TOKENS
                                                             or dg.tokens <= share_target(meta["family"]) * dg.raw_tokens)}
        rtk_path = os.path.join(d, "rtk.txt")
        if os.path.exists(rtk_path):
            rtk_text = open(rtk_path, encoding="utf-8", errors="replace").read()
            row["rtk_tokens"] = tokens.count(rtk_text)
            rec = rtk_recall(rtk_text, meta["truth"], meta["family"])
            row["rtk_recall_strict"], row["rtk_recall_lenient"] = rec["strict"], rec["lenient"]
        cases.append(row)
    families = {}
    for row in cases:
        key = row["family"] + (" (held-out)" if row["held_out"] else "")
        f = families.setdefault(key, {"cases": 0, "raw_tokens": 0, "ctx_tokens": 0, "rtk_tokens": 0,
                                                "rtk_cases": 0, "ctx_tokens_rtk_cases": 0, "recall": [],
                                                "rtk_strict": [], "rtk_lenient": [], "size_ok": True,
                                                "counts_ok": [], "versions": set()})
        if row["counts_ok"] is not None:
            f["counts_ok"].append(row["counts_ok"])
        f["size_ok"] = f["size_ok"] and row["size_ok"]
        f["versions"].add(row["tool_version"])
        f["cases"] += 1
        f["raw_tokens"] += row["raw_tokens"]
        f["ctx_tokens"] += row["ctx_tokens"]
        f["ctx_tokens_ungrouped"] = f.get("ctx_tokens_ungrouped", 0) + row["ctx_tokens_ungrouped"]
        if row["ctx_recall"] is not None:
            f["recall"].append(row["ctx_recall"])
        if "rtk_tokens" in row:
            f["rtk_cases"] += 1
            f["rtk_tokens"] += row["rtk_tokens"]
            f["ctx_tokens_rtk_cases"] += row["ctx_tokens"]
            if row["rtk_recall_strict"] == 1.0:  # RTK named everything: a like-for-like token comparison
                f["rtk_complete_cases"] = f.get("rtk_complete_cases", 0) + 1
                f["rtk_tokens_complete"] = f.get("rtk_tokens_complete", 0) + row["rtk_tokens"]
                f["ctx_tokens_rtk_complete"] = f.get("ctx_tokens_rtk_complete", 0) + row["ctx_tokens"]
            for key, name in (("rtk_recall_strict", "rtk_strict"), ("rtk_recall_lenient", "rtk_lenient")):
                if row[key] is not None:
                    f[name].append(row[key])
    summary = {}
    for fam, f in families.items():
        mean = lambda xs: round(sum(xs) / len(xs), 3) if xs else None  # noqa: E731
        summary[fam] = {"cases": f["cases"], "raw_tokens": f["raw_tokens"], "ctx_tokens": f["ctx_tokens"],
                        "ctx_recall": mean(f["recall"]), "rtk_cases": f["rtk_cases"],
                        "ctx_tokens_on_rtk_cases": f["ctx_tokens_rtk_cases"], "rtk_tokens": f["rtk_tokens"],
                        "rtk_recall_strict": mean(f["rtk_strict"]), "rtk_recall_lenient": mean(f["rtk_lenient"]),
                        "size_ok": f["size_ok"], "versions": sorted(f["versions"]),
                        # cases whose printed counts are all stated (and agree with the tool's report)
                        "counts_cases": len(f["counts_ok"]), "counts_ok_cases": sum(f["counts_ok"]),
                        # the same digests with parametrized cases one per line
                        "ctx_tokens_ungrouped": f["ctx_tokens_ungrouped"],
                        # the cases where RTK's output names every failure and diagnostic
                        "rtk_complete_cases": f.get("rtk_complete_cases", 0),
                        "rtk_tokens_complete": f.get("rtk_tokens_complete", 0),
                        "ctx_tokens_rtk_complete": f.get("ctx_tokens_rtk_complete", 0)}
    return cases, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer latency runs")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)

    t = time.perf_counter()
    from reflex import tokens
    tokens.count("warm up")
    load_ms = (time.perf_counter() - t) * 1000

    small = _pytest_output(400, 3, "short")  # ~100 KB
    # --quick: a tenth of the big outputs (generating 24,000 real pytest tests takes minutes on a
    # loaded machine); the report labels the row by the bytes it measured.
    big = _pytest_output(2400 if args.quick else 24000, 4, "short")  # ~0.5 / ~5 MB
    find_big = _find_output(500_000 if args.quick else 5_000_000)
    runs_small, runs_big = (3, 1) if args.quick else (30, 7)
    lat = {
        "tokenizer_load_ms": round(load_ms, 1),
        "pytest_100k": latency(small, "pytest", runs_small),
        "pytest_5m": latency(big, "pytest", runs_big),
        "generic_5m": latency(find_big, "other", runs_big),
    }
    cases, summary = corpus_table()
    result = {"latency": lat, "families": summary, "cases": cases,
              "targets": {"median_ms_100k": 20, "median_ms_5m": 200}}
    import _common
    _common.write_json("bench_digest.json", result)

    print(f"tokenizer load {lat['tokenizer_load_ms']} ms (excluded below)")
    for k in ("pytest_100k", "pytest_5m", "generic_5m"):
        v = lat[k]
        print(f"{k:12} {v['bytes'] / 1e3:6.0f} KB  median {v['median_ms']:6.1f} ms (min {v['min_ms']:6.1f})  "
              f"raw counted while streaming: {v['median_ms_raw_counted_while_streaming']:6.1f} ms "
              f"[stream count {v['stream_count_ms_during_run']:.0f} ms]  {v['raw_tokens']:>8} → {v['digest_tokens']} tok")
    print()
    print(f"{'family':20} {'cases':>5} {'raw tok':>8} {'ctx tok':>8} {'recall':>6} {'size':>4} | {'rtk cases':>9} "
          f"{'ctx tok':>8} {'rtk tok':>8} {'rtk strict':>10} {'rtk lenient':>11}")
    for fam, s in sorted(summary.items()):
        fmt = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
        print(f"{fam:20} {s['cases']:5} {s['raw_tokens']:8} {s['ctx_tokens']:8} {fmt(s['ctx_recall']):>6} "
              f"{'ok' if s['size_ok'] else 'BIG':>4} | "
              f"{s['rtk_cases']:9} {s['ctx_tokens_on_rtk_cases']:8} {s['rtk_tokens']:8} "
              f"{fmt(s['rtk_recall_strict']):>10} {fmt(s['rtk_recall_lenient']):>11}")


if __name__ == "__main__":
    main()
