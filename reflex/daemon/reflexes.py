"""The reflex arc inside the daemon: one SessionReflex per session, fed from the ledger's rows.

The daemon folds exactly what it commits: each committed row is turned into
fold events by reflex.arc.ledger_events.events_from_row, the same function
`ctx replay --format events` and the restart rebuild use, so the live state,
the rebuilt state and the replayed state cannot drift apart.  A session seen
for the first time since the daemon started is rebuilt from the ledger
before its new event is applied (same prefix, same state).

Policy epochs: the newest *.toml in <project>/.ctx/policies/ wins, then
CTX_HOME/policies/, then the shipped default.  Files are re-checked when
their mtime changes; a file that fails validation is logged and skipped, and
the previous epoch stays in force.  Every outcome row records the epoch that
produced it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from reflex import project as project_mod
from reflex.digest.budget import DENSITIES  # the density ladder, least to most

if TYPE_CHECKING:
    from reflex.arc.fold import SessionReflex
    from reflex.arc.policy import Policy
    from reflex.paths import Paths
    from reflex.signature.model import Signature


class HubContext(Protocol):
    """What the hub reads from the daemon's context (a DaemonContext, which owns the hub; a
    protocol, so this module need not import the context, which imports it)."""

    paths: Paths
    log: Callable[[str], None]

    def reader(self) -> sqlite3.Connection: ...


class ReflexHub:
    def __init__(self, ctx: HubContext) -> None:
        self.ctx = ctx
        self.sessions: dict[str, SessionReflex] = {}
        # directory -> (stamp, Policy, epoch id)
        self._policy_cache: dict[str, tuple[tuple[tuple[str, int | None], ...], Policy | None, str | None]] = {}
        self._default: tuple[Policy, str] | None = None

    # -- policy ----------------------------------------------------------------
    def policy_for(self, cwd: str | None) -> tuple[Policy, str]:
        """(Policy, epoch id) in force for a working directory."""
        from reflex.arc.policy import PolicyError, default_policy, load_policy
        dirs = []
        if cwd:
            dirs.append(os.path.join(project_mod.project_root(cwd), ".ctx", "policies"))
        dirs.append(self.ctx.paths.policies)
        for d in dirs:
            files = _epoch_files(d)
            if not files:
                continue
            stamp = tuple((f, _mtime(f)) for f in files)
            cached = self._policy_cache.get(d)
            if cached and cached[0] == stamp:
                if cached[1] is not None and cached[2] is not None:
                    return cached[1], cached[2]
                continue
            chosen: tuple[Policy, str] | None = None
            for f in reversed(files):  # newest name last: epochs sort by their file names
                try:
                    pol = load_policy(f)
                except PolicyError as e:
                    self.ctx.log("policy epoch rejected, keeping the previous one: %s" % e)
                    continue
                chosen = (pol, "%s@%s" % (os.path.basename(f), pol.epoch.name))
                break
            if chosen is None and cached and cached[1] is not None and cached[2] is not None:
                chosen = (cached[1], cached[2])  # a bad newer file never replaces a good epoch
            self._policy_cache[d] = (stamp, chosen[0] if chosen else None, chosen[1] if chosen else None)
            if chosen:
                return chosen
        if self._default is None:
            pol = default_policy()
            self._default = (pol, "default@%s" % pol.epoch.name)
        return self._default

    # -- sessions --------------------------------------------------------------
    def session(self, session_id: str, cwd: str | None = None) -> SessionReflex:
        sr = self.sessions.get(session_id)
        if sr is not None:
            return sr
        from reflex.arc.fold import SessionReflex
        from reflex.arc.ledger_events import events_from_row
        policy, epoch = self.policy_for(cwd)
        sr = SessionReflex(policy=policy, session_id=session_id)
        sr.epoch = epoch  # type: ignore[attr-defined]  # the hub's own tag on the reflex, read back in observe
        # Rebuild from what the ledger already holds for this session (a
        # daemon restart mid-session): same prefix, same state.
        for row in self._rows(session_id):
            for ev in events_from_row(row):
                sr.apply(ev)
        self.sessions[session_id] = sr
        return sr

    def _rows(self, session_id: str) -> Iterator[dict[str, Any]]:
        cur = self.ctx.reader().execute("SELECT * FROM events WHERE session_id = ? ORDER BY id", (session_id,))
        cols = [c[0] for c in cur.description]
        for r in cur:
            yield dict(zip(cols, r))

    def observe(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Fold one committed row; returns outcome rows for the firings it caused."""
        sid = row.get("session_id")
        if not sid or sid == "-":
            return []
        from reflex.arc.ledger_events import events_from_row
        sr = self.session(sid, row.get("cwd"))
        out = []
        for ev in events_from_row(row):
            for f in sr.apply(ev):
                out.append({"event_uid": row["uid"], "session_id": sid, "seq": row.get("seq") or 0,
                            "detector": f.detector, "tool_use_id": f.tool_use_id, "core_hash": f.core_hash,
                            "reason": f.reason, "signal": json.dumps(f.signal, sort_keys=True, default=str),
                            "policy_epoch": getattr(sr, "epoch", None), "recorded_at": time.time()})
        return out

    def density_for(self, session_id: str | None, sig: Signature | None, family: str | None,
                    cwd: str | None = None) -> tuple[str, str | None]:
        """(density, reason) for the next digest: the session's reflex state for this
        signature, raised to inline when the command itself asks for detail."""
        core_hash = sig.core_hash if sig is not None else None
        if not session_id or session_id == "-" or not core_hash:
            policy, _ = self.policy_for(cwd)
            density, reason = _start_density(policy, family), None
        else:
            density, reason = self.session(session_id, cwd).density_for(core_hash, family)
        return requested_detail(sig, density, reason)

    def forget(self, session_id: str | None) -> None:
        if session_id is not None:
            self.sessions.pop(session_id, None)


# An explicit request for detail is honoured on the first run, not only after a
# starved re-run: `--tb=long` / `-vv` asks for the tracebacks, so they are
# inlined (RTK overrode exactly this request and its users re-ran to get it).
_DETAIL = {("tb", "long"), ("tb", "native"), ("tb", "auto"), ("verbose", "2"), ("verbose", "3")}


def requested_detail(sig: Signature | None, density: str, reason: str | None) -> tuple[str, str | None]:
    if sig is None or density not in DENSITIES:
        return density, reason
    asked = [d for d in sig.decorations if (d.kind, d.value) in _DETAIL]
    if not asked or DENSITIES.index(density) >= DENSITIES.index("inline"):
        return density, reason
    flag = "--tb=%s" % asked[0].value if asked[0].kind == "tb" else "-" + "v" * int(asked[0].value)
    why = "detail requested (%s)" % flag
    return "inline", ("%s; %s" % (reason, why)) if reason else why


def _start_density(policy: Policy, family: str | None) -> str:
    fam = policy.families.get(family) if family else None
    if fam is not None and fam.density:
        return fam.density
    return policy.density.start


def _epoch_files(d: str) -> list[str]:
    try:
        return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".toml"))
    except OSError:
        return []


def _mtime(f: str) -> int | None:
    try:
        return os.stat(f).st_mtime_ns
    except OSError:
        return None
