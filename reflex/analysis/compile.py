"""`ctx policy compile`: ledgers in, the next policy epoch (TOML) out.  Offline, reviewed, committed.

    from reflex.analysis.compile import compile_epoch
    result = compile_epoch(["ledger.db", "team/"], plan_value=True)
    result.text                                   # the epoch, byte-identical for the same inputs

Inputs are ledger files (SQLite, as the daemon writes them), `ctx ledger export` files (JSONL,
or parquet with pyarrow) or directories of them (every *.db, *.sqlite, *.sqlite3, *.ledger,
*.jsonl, *.parquet inside, not recursive).  Every session is read through the same timeline
and evidence code as `ctx stats` (reflex.analysis.stats.timeline, reflex.analysis.evidence).

What the data decides, per command family x reader (haiku | sonnet | opus | other, from
SessionStart's model; the epoch's [tiers] maps readers to policy tiers):

* starting density.  The test is the FIRST digest of a signature in a session (later ones are
  shaped by the in-session reflexes): was it re-requested with nothing changed
  (evidence outcome equivalent_requery)?
    up one step (normal -> dense -> inline)  when n >= MIN_EVIDENCE and the Wilson 95% lower
                                             bound of the requery rate >= STARVED_HIGH (0.25)
    to inline (evidence instead of hints)    when runs with hints >= MIN_EVIDENCE and the upper
                                             bound of the hint follow-through <= IGNORED (0.20)
    down one step (normal -> lean)           when n >= 2 x MIN_EVIDENCE, the upper bound of the
                                             requery rate <= STARVED_LOW (0.10) and the lower
                                             bound of hint follow-through >= FOLLOWED (0.5)
    otherwise the base epoch's value stays.
  The family's `density` is decided on all readers pooled; a tier gets an entry in
  `families.<f>.tiers` only when its own cell has the evidence and decides differently.
* hint cap (only when the policy loader has `families.<f>.hints`): 0 where hints are ignored
  by the rule above, else unset (the digest's default).
* detector thresholds, global (the loader has no per-family thresholds):
    starvation.breaker_after = 1   when runs rendered dense/inline >= MIN_EVIDENCE and the lower
                                   bound of their requery rate >= 0.5 (densifying rarely helps)
    affordance.fire_after_ignored = 1  when all hints pooled are ignored (as above)
* [plan_value] (--plan-value; only when the loader has `plan_value`, else written as comments):

      [plan_value]
      min_evidence = 20
      [plan_value.<family>]
      runs = 35                      # runs of the family in the inputs
      rates = { landed = 0.43, ... } # per evidence outcome: runs with it, smoothed (k+1)/(n+2)
      value = 0.54                   # P(a positive outcome) - P(a negative one), both smoothed
      tiers = { small = 0.21 }       # value per policy tier with >= min_evidence runs

MIN_EVIDENCE = 20 observations in a cell before anything moves off the base epoch: below that
a Wilson interval on a rate is wider than +-0.2 and a single odd session could flip a decision.

Determinism: inputs are ordered by their digest, sessions by id; a session found in more than
one input is read once (from the input whose digest sorts first); rates are computed from
integer counts at the end; the TOML writer sorts keys and formats floats with 4 decimals.  No
clock is read: [epoch] carries only the provenance the issue declares (input digests and event
counts; `created` stays "").

An input's digest names the events compiled.  A SQLite ledger's is the hash of its last event
(Reader.snapshot): the head of its hash chain, which commits to every event before it, read with
the events it bounds, so a daemon appending meanwhile changes nothing read.  The file's bytes
would not do: WAL checkpoints, a VACUUM or rows the daemon adds to other tables change them
while the events stay the same, so the same events would compile to different epochs (and a
team dataset, which records the head it exported up to, could never match the ledger).  An
export file's digest (JSONL, Parquet) is the blake3 of its bytes: it never changes.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

from reflex.analysis import evidence as evidence_mod
from reflex.analysis.stats.timeline import build
from reflex.errors import UserError

MIN_EVIDENCE = 20
STARVED_HIGH = 0.25
STARVED_LOW = 0.10
IGNORED = 0.20
FOLLOWED = 0.5
BREAKER_HIGH = 0.5
Z = 1.96
READERS = ("haiku", "sonnet", "opus", "other")
LEDGER_EXTS = (".db", ".sqlite", ".sqlite3", ".ledger", ".jsonl", ".parquet")
DENSIFIED = ("dense", "inline")


class CompileError(UserError):
    """The inputs cannot be compiled; nothing was written."""


def wilson(k: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval of k successes in n."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + Z * Z / n
    centre = p + Z * Z / (2 * n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, (centre - half) / d), min(1.0, (centre + half) / d)


# -- inputs ----------------------------------------------------------------------------------

@dataclass
class Input:
    path: str
    digest: str
    fmt: str
    events: int = 0
    sessions: int = 0
    skipped_sessions: int = 0


def _digest(path) -> str:
    from blake3 import blake3
    h = blake3()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            h.update(chunk)
    return "b3:" + h.hexdigest()


def _fmt(path) -> str:
    with open(path, "rb") as f:
        head = f.read(16)
    if head == b"SQLite format 3\x00":
        return "sqlite"
    if head.startswith(b"PAR1"):
        return "parquet"
    if path.endswith(".jsonl") or head.lstrip()[:1] in (b"{", b""):
        return "jsonl"
    raise CompileError("%s is neither a ledger (SQLite) nor a ledger export (JSONL, parquet): it starts with %r; "
                       "`ctx ledger verify --ledger %s` says more" % (path, head, path))


def expand(paths) -> list[str]:
    out = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            found = sorted(os.path.join(p, n) for n in os.listdir(p)
                           if n.endswith(LEDGER_EXTS) and os.path.isfile(os.path.join(p, n)))
            if not found:
                raise CompileError("%s holds no ledgers (%s)" % (p, ", ".join("*" + e for e in LEDGER_EXTS)))
            out.extend(found)
        elif os.path.exists(p):
            out.append(p)
        else:
            raise CompileError("no ledger at %s" % p)
    return out


def _jsonl_sessions(path, inp):
    by: dict = {}
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except ValueError:
                raise CompileError("%s line %d is not JSON: not a ledger export" % (path, n)) from None
            if not isinstance(row, dict) or "session_id" not in row or "kind" not in row:
                raise CompileError("%s line %d is not a ledger event (no session_id/kind)" % (path, n))
            inp.events += 1
            sid = row["session_id"]
            if sid != "-":
                by.setdefault(sid, []).append(row)
    for sid in sorted(by):
        rows = by[sid]
        rows.sort(key=lambda r: (r.get("seq") or 0))
        yield sid, rows


def _parquet_sessions(path, inp):
    from reflex.ledger.parquet import read_parquet_rows
    by: dict = {}
    for row in read_parquet_rows(path):
        inp.events += 1
        if row.get("session_id") not in (None, "-"):
            by.setdefault(row["session_id"], []).append(row)
    for sid in sorted(by):
        rows = by[sid]
        rows.sort(key=lambda r: (r.get("seq") or 0))
        yield sid, rows


def _open_input(path):
    """-> (Input, iterator of (session_id, rows), closer)."""
    fmt = _fmt(path)
    if fmt == "sqlite":
        from reflex.analysis.stats.ledger_read import LedgerReadError, Reader
        try:
            reader = Reader(path)               # migrates an old schema first
            snap = reader.snapshot()            # a live daemon may append meanwhile: read up to here
        except LedgerReadError as e:
            raise CompileError(str(e)) from None
        inp = Input(path, snap.head, fmt, events=snap.events)

        def sessions():
            try:
                yield from reader.iter_sessions(through=snap.last_id)
            except LedgerReadError as e:
                raise CompileError(str(e)) from None
        return inp, sessions(), reader.close
    inp = Input(path, _digest(path), fmt)
    if fmt == "parquet":
        return inp, _parquet_sessions(path, inp), lambda: None
    return inp, _jsonl_sessions(path, inp), lambda: None


# -- accumulation ----------------------------------------------------------------------------

@dataclass
class Cell:
    sessions: int = 0
    runs: int = 0
    first: dict = field(default_factory=dict)           # density -> [n, requeried]
    densified: list = field(default_factory=lambda: [0, 0])
    hints: list = field(default_factory=lambda: [0, 0])  # runs with hints, followed
    outcomes: dict = field(default_factory=dict)        # outcome -> runs with it
    positive: int = 0
    negative: int = 0

    def merge(self, o: "Cell"):
        self.sessions += o.sessions
        self.runs += o.runs
        for d, (n, k) in o.first.items():
            cur = self.first.setdefault(d, [0, 0])
            cur[0] += n
            cur[1] += k
        for i in (0, 1):
            self.densified[i] += o.densified[i]
            self.hints[i] += o.hints[i]
        for k, v in o.outcomes.items():
            self.outcomes[k] = self.outcomes.get(k, 0) + v
        self.positive += o.positive
        self.negative += o.negative


def add_session(cells: dict, tl) -> None:
    """Fold one session's evidence into cells[(family, reader)] (via the per-run facts a team
    dataset stores too: reflex.analysis.compile_facts)."""
    from reflex.analysis.compile_facts import fold, run_facts
    fold(cells, run_facts(tl), Cell)


# -- decisions -------------------------------------------------------------------------------

def decide_density(cell: Cell, base: str, ladder) -> tuple[str, str, bool]:
    """-> (density, why, whether the cell had the evidence to decide) for one cell, judged on
    its first digests rendered at `base` and its hint follow-through."""
    i = ladder.index(base) if base in ladder else ladder.index("normal")
    n, k = cell.first.get(base, [0, 0])
    hn, hk = cell.hints
    if n >= MIN_EVIDENCE:
        lo, hi = wilson(k, n)
        if lo >= STARVED_HIGH and i + 1 < len(ladder) and ladder[i + 1] in ("dense", "inline"):
            return ladder[i + 1], "first %s digests requeried %d/%d (95%% lower bound %.2f >= %.2f)" % (
                base, k, n, lo, STARVED_HIGH), True
    if hn >= MIN_EVIDENCE and wilson(hk, hn)[1] <= IGNORED and i < ladder.index("inline"):
        return "inline", "hints followed %d/%d (95%% upper bound %.2f <= %.2f): evidence instead of hints" % (
            hk, hn, wilson(hk, hn)[1], IGNORED), True
    if n >= 2 * MIN_EVIDENCE and hn >= MIN_EVIDENCE and i > 0:
        hi = wilson(k, n)[1]
        flo = wilson(hk, hn)[0]
        if hi <= STARVED_LOW and flo >= FOLLOWED:
            return ladder[i - 1], "first %s digests requeried %d/%d (upper bound %.2f), hints followed %d/%d " \
                "(lower bound %.2f)" % (base, k, n, hi, hk, hn, flo), True
    if n < MIN_EVIDENCE and hn < MIN_EVIDENCE:
        return base, "kept: %d first %s digests, %d with hints (< %d)" % (n, base, hn, MIN_EVIDENCE), False
    return base, "kept: first %s digests requeried %d/%d, hints followed %d/%d" % (base, k, n, hk, hn), True


def hints_ignored(cell: Cell) -> bool:
    hn, hk = cell.hints
    return hn >= MIN_EVIDENCE and wilson(hk, hn)[1] <= IGNORED


def _smoothed(k, n) -> float:
    return (k + 1) / (n + 2)


def plan_value_of(cell: Cell) -> dict:
    n = cell.runs
    rates = {o: round(_smoothed(cell.outcomes.get(o, 0), n), 4) for o in evidence_mod.OUTCOMES}
    value = round(_smoothed(cell.positive, n) - _smoothed(cell.negative, n), 4)
    return {"runs": n, "value": value, "rates": rates}


# -- TOML ------------------------------------------------------------------------------------

_BARE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
INLINE_KEYS = frozenset({"tiers", "rates", "tier_hints"})


def _key(k: str) -> str:
    return k if k and set(k) <= _BARE else _str(k)


def _str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        text = ("%.4f" % v).rstrip("0")
        return text + "0" if text.endswith(".") else text
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join("%s = %s" % (_key(k), _value(v[k])) for k in sorted(v)) + " }" if v else "{}"
    raise TypeError("cannot write %r to TOML" % (v,))


def _table(path, d, out, comments):
    d = {k: v for k, v in d.items() if v is not None}
    scalars = [(k, v) for k, v in sorted(d.items())
               if not isinstance(v, dict) or (k in INLINE_KEYS and len(path) >= 1)]
    tables = [(k, v) for k, v in sorted(d.items()) if isinstance(v, dict) and not (k in INLINE_KEYS and len(path) >= 1)]
    if path and (scalars or not tables):
        out.append("")
        for line in comments.get(tuple(path), ()):
            out.append("# " + line if line else "#")
        out.append("[%s]" % ".".join(_key(p) for p in path))
    for k, v in scalars:
        out.append("%s = %s" % (_key(k), _value(v)))
    for k, v in tables:
        _table(path + [k], v, out, comments)


def to_toml(doc: dict, header=(), comments=None) -> str:
    out = ["# " + line if line else "#" for line in header]
    _table([], doc, out, comments or {})
    return "\n".join(out).lstrip("\n") + "\n"


# -- the compiler ----------------------------------------------------------------------------

@dataclass
class CompileResult:
    text: str
    inputs: list
    events: int
    sessions: int
    warnings: list


def _supports(model, name) -> bool:
    return name in getattr(model, "model_fields", {})


def compile_epoch(paths, *, plan_value=False, base=None, progress=None) -> CompileResult:
    """`progress(path, sessions_done, events_in_file)`, when given, is called every 200 sessions and
    once per file: the CLI shows it on a terminal (large ledgers take minutes)."""
    from reflex.arc.policy import LADDER, FamilyDefaults, Policy, PolicyError, default_policy, load_policy, parse_policy
    try:
        base_policy = load_policy(base) if base else default_policy()
    except PolicyError as e:
        raise CompileError("base epoch: %s" % e) from None
    files = expand(paths)
    if not files:
        raise CompileError("no ledgers given")
    opened = []
    try:
        for p in files:
            opened.append(_open_input(p))
        opened.sort(key=lambda t: (t[0].digest, t[0].path))
        uniq, seen_digest = [], set()
        for inp, sessions, close in opened:
            if inp.digest in seen_digest:      # the same events named twice (one file, or a copy of it)
                continue
            seen_digest.add(inp.digest)
            uniq.append((inp, sessions, close))
        cells: dict = {}
        seen_sessions: set = set()
        for inp, sessions, _close in uniq:
            for sid, rows in sessions:
                if sid in seen_sessions:
                    inp.skipped_sessions += 1
                    continue
                seen_sessions.add(sid)
                inp.sessions += 1
                add_session(cells, build(sid, rows))
                if progress is not None and inp.sessions % 200 == 0:
                    progress(inp.path, inp.sessions, inp.events)
            if progress is not None:
                progress(inp.path, inp.sessions, inp.events)
    finally:
        for _inp, _s, close in opened:
            close()
    inputs = [inp for inp, _s, _c in uniq]
    events = sum(i.events for i in inputs)
    return _emit(base_policy, cells, inputs, events, len(seen_sessions), plan_value,
                 Policy, FamilyDefaults, LADDER, parse_policy)


def _emit(base_policy, cells, inputs, events, n_sessions, plan_value, Policy, FamilyDefaults, LADDER, parse_policy):
    warnings = []
    doc = base_policy.model_dump(mode="json")
    reader_tier = {r: base_policy.tier_of(r) for r in READERS}
    families = sorted({f for f, _r in cells} | set(doc["families"]))
    has_hints = _supports(FamilyDefaults, "hints")
    comments: dict = {}
    pooled_all = Cell()
    for fam in families:
        fam_doc = doc["families"].setdefault(fam, {"density": None, "tiers": {}})
        pooled = Cell()
        for r in READERS:
            if (fam, r) in cells:
                pooled.merge(cells[(fam, r)])
        pooled_all.merge(pooled)
        base = base_policy.start_density(fam, None)
        density, why, _enough = decide_density(pooled, base, LADDER)
        lines = ["%s, all readers: %d sessions, %d runs; %s -> %s" % (fam, pooled.sessions, pooled.runs, why, density)]
        fam_doc["density"] = density
        tiers = dict(fam_doc.get("tiers") or {})
        for r in READERS:
            cell = cells.get((fam, r))
            tier = reader_tier[r]
            if cell is None or tier is None:
                continue
            # Each tier is judged on its own evidence against the base epoch's value for it; it
            # gets an entry only when it had the evidence and decides other than the family.
            tbase = base_policy.start_density(fam, tier)
            d, w, enough = decide_density(cell, tbase, LADDER)
            lines.append("%s x %s (tier %s): %d runs; %s -> %s" % (fam, r, tier, cell.runs, w, d))
            if enough:
                if d != density:
                    tiers[tier] = d
                else:
                    tiers.pop(tier, None)
            elif tiers.get(tier) == density:
                tiers.pop(tier, None)
        fam_doc["tiers"] = tiers
        if has_hints and hints_ignored(pooled):
            fam_doc["hints"] = 0
            lines.append("hint cap 0: hints followed %d/%d" % (pooled.hints[1], pooled.hints[0]))
        if pooled.runs:
            comments[("families", fam)] = lines
    dn, dk = pooled_all.densified
    if dn >= MIN_EVIDENCE and wilson(dk, dn)[0] >= BREAKER_HIGH:
        doc["starvation"]["breaker_after"] = 1
    comments[("starvation",)] = ["densified (dense/inline) runs requeried %d/%d; breaker_after %d" % (
        dk, dn, doc["starvation"]["breaker_after"])]
    if hints_ignored(pooled_all):
        doc["affordance"]["fire_after_ignored"] = 1
    comments[("affordance",)] = ["runs with hints %d, followed %d; fire_after_ignored %d" % (
        pooled_all.hints[0], pooled_all.hints[1], doc["affordance"]["fire_after_ignored"])]
    digests = sorted(i.digest for i in inputs)
    from blake3 import blake3
    tag = blake3("\n".join(digests).encode()).hexdigest()[:12]
    doc["epoch"] = {"name": "compiled-" + tag, "version": int(base_policy.epoch.version) + 1, "created": "",
                    "source": "compiled", "ledgers": digests, "events": events}
    pv_lines = []
    if plan_value:
        pv = {"min_evidence": MIN_EVIDENCE}
        for fam in sorted({f for f, _r in cells}):
            pooled = Cell()
            for r in READERS:
                if (fam, r) in cells:
                    pooled.merge(cells[(fam, r)])
            if not pooled.runs:
                continue
            entry = plan_value_of(pooled)
            by_tier: dict = {}
            for r in READERS:
                cell, tier = cells.get((fam, r)), reader_tier[r]
                if cell is not None and tier is not None:
                    by_tier.setdefault(tier, Cell()).merge(cell)
            entry["tiers"] = {t: plan_value_of(c)["value"] for t, c in sorted(by_tier.items())
                              if c.runs >= MIN_EVIDENCE}
            pv[fam] = entry
        if _supports(Policy, "plan_value"):
            doc["plan_value"] = pv
        else:
            warnings.append("this ctx's policy loader has no [plan_value] table: the priors are written as "
                            "comments at the end of the epoch")
            pv_lines = ["", "[plan_value] (not loadable by this ctx's policy loader; kept for review)"] + [
                "  " + ln for ln in to_toml({"plan_value": pv}).splitlines()]
    header = ["ctx policy epoch, compiled by `ctx policy compile` from %d ledger(s), %d events, %d sessions."
              % (len(inputs), events, n_sessions),
              "Deterministic: the same ledgers give these exact bytes.  Review the decisions below, then commit.",
              "Minimum evidence before a value moves off the base epoch: %d observations per cell (see "
              "reflex/analysis/compile.py)." % MIN_EVIDENCE, "", "inputs (digest, format, events, sessions read, "
              "sessions already read from another input):"]
    for i in sorted(inputs, key=lambda x: x.digest):
        header.append("  %s  %s  events=%d  sessions=%d  duplicate_sessions=%d" % (
            i.digest, i.fmt, i.events, i.sessions, i.skipped_sessions))
    text = to_toml(doc, header, comments)
    if pv_lines:
        text += "\n".join(("# " + ln).rstrip() for ln in pv_lines) + "\n"
    try:
        parse_policy(text, "<compiled epoch>")
    except Exception as e:   # a bug here must never produce a file the daemon rejects
        raise CompileError("the compiled epoch does not load: %s" % e) from None
    return CompileResult(text, inputs, events, n_sessions, warnings)


def write_atomic(path, text: str) -> None:
    """Write next to the target, then rename: a failure leaves the old file untouched."""
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, ".%s.%d.tmp" % (os.path.basename(path), os.getpid()))
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
