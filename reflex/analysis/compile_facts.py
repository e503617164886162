"""Per-run compile facts: the part of `ctx policy compile` that needs a session's whole story.

The compile has two halves.  The first is a sequential join inside one session: pair each hook
event with its `ctx run`, parse shell signatures, find the next issue of the same command, decide
which evidence outcomes a run earned (reflex.analysis.stats.timeline, reflex.analysis.evidence).  The second adds
those per-run verdicts up across every session of a team, by command family and reader, and turns
the totals into decisions (reflex.analysis.compile._emit).

`run_facts(tl)` is the first half's output: one RunFact per run, carrying exactly what the second
half reads.  The SQLite compile folds them straight into cells (`fold`); a team dataset stores them
as rows (reflex.analysis.dataset) and an SQL engine does the same fold as a GROUP BY
(reflex.analysis.compile_sql).  Both call this one function, so they cannot drift apart.

The same facts carry what the team scorecard reports per run (tokens, landing, re-run), so
`ctx stats --dataset` needs no second pass over events.
"""

from __future__ import annotations

from dataclasses import dataclass

from reflex.analysis import evidence as evidence_mod
from reflex.analysis.stats.scorecard import reader_of, run_tokens

DENSIFIED = ("dense", "inline")
OUTCOME_COLUMNS = ("o_retrieved", "o_narrowed", "o_landed", "o_validated_after_edit", "o_discriminated",
                   "o_reversed", "o_equivalent_requery", "o_redundant", "o_abandoned")
# A session's facts as table rows (a team dataset's facts table, reflex.analysis.dataset; the
# store of ended sessions' facts, reflex.analysis.facts_store): (column, kind: s text, i integer).
# One "session" row per session, then one "run" row per RunFact.
FACT_COLUMNS = (("ledger", "s"), ("session_id", "s"), ("through_id", "i"), ("facts_version", "i"),
                ("row_kind", "s"), ("harness", "s"), ("project", "s"), ("model", "s"), ("reader", "s"),
                ("family", "s"), ("digested", "i"), ("first_density", "s"), ("requeried", "i"), ("densified", "i"),
                ("hinted", "i"), ("followed", "i"), ("positive", "i"), ("negative", "i"), ("rerun", "i"),
                ("raw_tokens", "i"), ("delivered_tokens", "i"), ("saved_tokens", "i")) + tuple(
                    (c, "i") for c in OUTCOME_COLUMNS)
FACTS_VERSION = 1      # bump when RunFact's meaning changes: old dataset facts are then refused


def hint_followed(outs) -> bool:
    """The agent used what the digest pointed at: retrieved it, re-ran a named failing test, or edited
    a file the evidence named."""
    return any(o.outcome == "retrieved" or (o.outcome == "narrowed" and o.data.get("test"))
               or (o.outcome == "landed" and o.confidence >= 1.0) for o in outs)


@dataclass(frozen=True, slots=True)
class RunFact:
    family: str
    reader: str
    digested: bool                 # a digest (not raw output, not a failed digest) reached the agent
    first_density: str | None      # the density of a session's first digest of its signature, else None
    requeried: bool                # an equivalent_requery outcome (the digest starved the agent)
    densified: bool                # digested at dense/inline
    hinted: bool                   # digested with hints
    followed: bool                 # ... and the hints were followed (only meaningful when hinted)
    outcomes: frozenset
    rerun: bool                    # not the first run of its signature in its epoch
    raw_tokens: int
    delivered_tokens: int
    saved_tokens: int              # harness baseline - delivered, when the baseline is known


def run_facts(tl) -> list[RunFact]:
    """One RunFact per run of a family, in call order (what reflex.analysis.compile.add_session folds)."""
    ev = evidence_mod.session_evidence(tl)
    by_run = ev.by_run()
    reader = reader_of(tl.model)
    seen_first: set = set()
    seen_sig: set = set()
    out = []
    for c in tl.calls:
        r = c.run
        if r is None or not r.family:
            continue
        outs = by_run.get(r.uid, [])
        kinds = frozenset(o.outcome for o in outs)
        key = (c.epoch, r.core_hash)
        rerun = key in seen_sig
        seen_sig.add(key)
        first = None
        if r.digested and key not in seen_first:
            seen_first.add(key)
            first = r.density or "normal"
        delivered, baseline, _how, _cut = run_tokens(c)
        out.append(RunFact(
            family=r.family, reader=reader, digested=r.digested, first_density=first,
            requeried=r.digested and "equivalent_requery" in kinds,
            densified=r.digested and r.density in DENSIFIED,
            hinted=r.digested and bool(r.hints), followed=r.digested and bool(r.hints) and hint_followed(outs),
            outcomes=kinds, rerun=rerun, raw_tokens=r.raw_tokens or 0, delivered_tokens=delivered,
            saved_tokens=(baseline - delivered) if baseline is not None else 0))
    return out


def fold(cells: dict, facts, new_cell) -> None:
    """Add one session's facts to cells[(family, reader)] (new_cell() makes an empty Cell)."""
    seen_family: set = set()
    for f in facts:
        cell = cells.get((f.family, f.reader))
        if cell is None:
            cell = cells[(f.family, f.reader)] = new_cell()
        if f.family not in seen_family:
            seen_family.add(f.family)
            cell.sessions += 1
        cell.runs += 1
        for k in f.outcomes:
            cell.outcomes[k] = cell.outcomes.get(k, 0) + 1
        cell.positive += 1 if f.outcomes & evidence_mod.POSITIVE else 0
        cell.negative += 1 if f.outcomes & evidence_mod.NEGATIVE else 0
        if f.first_density is not None:
            slot = cell.first.setdefault(f.first_density, [0, 0])
            slot[0] += 1
            slot[1] += 1 if f.requeried else 0
        if f.densified:
            cell.densified[0] += 1
            cell.densified[1] += 1 if f.requeried else 0
        if f.hinted:
            cell.hints[0] += 1
            cell.hints[1] += 1 if f.followed else 0


def session_fact_rows(sid: str, rows) -> list[dict]:
    """One session's facts as rows of FACT_COLUMNS (all but ledger and through_id, which say where
    they are stored): its "session" row, then a "run" row per run_facts.  rows: the session's
    events over its whole history, as dicts with at least EVENT_READ_COLUMNS, in seq order."""
    from reflex.analysis.stats.timeline import build
    positive, negative = evidence_mod.POSITIVE, evidence_mod.NEGATIVE
    tl = build(sid, rows)
    # An older ledger may not say which harness a session ran under: those were all Claude Code.
    harness = next((r["harness"] for r in rows if r["kind"] == "hook" and r.get("harness")), None) or "claude"
    common = {"session_id": sid, "facts_version": FACTS_VERSION, "harness": harness, "project": tl.cwd,
              "model": tl.model, "reader": reader_of(tl.model)}
    out = [dict(common, row_kind="session")]
    for f in run_facts(tl):
        row = dict(common, row_kind="run", family=f.family, digested=int(f.digested), first_density=f.first_density,
                   requeried=int(f.requeried), densified=int(f.densified), hinted=int(f.hinted),
                   followed=int(f.followed), rerun=int(f.rerun), raw_tokens=f.raw_tokens,
                   delivered_tokens=f.delivered_tokens, saved_tokens=f.saved_tokens,
                   positive=int(bool(f.outcomes & positive)), negative=int(bool(f.outcomes & negative)))
        for c in OUTCOME_COLUMNS:
            row[c] = int(c[2:] in f.outcomes)
        out.append(row)
    return out
