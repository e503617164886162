"""`ctx ledger verify`: re-derive everything the ledger promises.

Checks, each reported separately so the message says what is wrong:
  sqlite      PRAGMA integrity_check
  schema      every migration applied; append-only triggers present
  head        the chain head anchored outside the database (head.py) is
              still in it with the same hash (a truncated or replaced tail);
              no contradicted head was kept by the writer; and it is there at
              all once the ledger holds an event: the writer anchors a head
              before it takes its first event, so a ledger with events and no
              head had its head deleted (`require_head=False`, the CLI's
              `--no-head`, for a ledger known never to have had one)
  chain       each row's prev_hash is its predecessor's hash and its hash
              re-derives from its content (an edit, a deletion or a
              reordering breaks the chain at that row)
  sequence    per session, seq runs 1..n without gaps or repeats
  runs        every runs row matches its run event; its blob verifies
              (a blob that retention removed, as its `evictions` row says,
              is counted as evicted; one missing without such a row was
              deleted by something else and is a problem)
Nothing here writes to the ledger.
"""

import json
import sqlite3

from reflex import blobs as blobs_mod
from reflex.ledger import chain, head, schema
from reflex.ledger.evictions import eviction_records_since, missing_blob


class Report:
    def __init__(self):
        self.problems = []
        self.counts = {}
        self.notes = []

    @property
    def ok(self):
        return not self.problems

    def problem(self, check, msg):
        self.problems.append((check, msg))

    def as_dict(self):
        return {"ok": self.ok, "counts": self.counts, "notes": self.notes,
                "problems": [{"check": c, "detail": m} for c, m in self.problems]}


def missing_head_noted(rep, conn, ledger_path, require_head):
    """No head file: a note for an empty ledger (or when told there never was one), else a problem."""
    try:
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    except sqlite3.DatabaseError:
        events = 0  # the schema check reports it
    where = head.head_path(ledger_path)
    if events and require_head:
        rep.problem("head", "no head anchor next to the ledger (%s), which holds %d events: the daemon anchors a "
                    "head before its first event, so it was deleted, and a truncated tail would not show. For a "
                    "ledger that never had one (copied without it, or written by another tool), verify with "
                    "--no-head" % (where, events))
        return
    rep.notes.append("no head anchor next to the ledger (%s): a truncated tail would not show; the daemon "
                     "writes it after every commit" % where)


def verify(ledger_path, blob_root=None, *, max_reports=50, require_head=True):
    rep = Report()
    # The head first, then the database: a commit landing in between only puts
    # the database ahead of the head, which is allowed.
    absent = False
    try:
        anchored = head.read(ledger_path)
        absent = anchored is None
    except head.HeadError as e:
        anchored = None
        rep.problem("head", str(e))
    for kept in head.kept_mismatches(ledger_path):
        rep.problem("head", "the daemon found the ledger contradicting its anchored head and kept that head as %s "
                    "(see the daemon log); remove the file once this is understood" % kept)
    try:
        conn = sqlite3.connect("file:%s?mode=ro" % ledger_path, uri=True)
        result = conn.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.DatabaseError as e:
        rep.problem("sqlite", "cannot open %s: %s" % (ledger_path, e))
        return rep
    if result != [("ok",)]:
        rep.problem("sqlite", "; ".join(r[0] for r in result[:5]))
    try:
        applied = {r[0] for r in conn.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", (schema.MIGRATION_SET,))}
    except sqlite3.DatabaseError as e:
        rep.problem("schema", "no migration table: %s" % e)
        return rep
    missing = [m.name for m in schema.migrations._migrations if m.name not in applied]
    if missing:
        rep.problem("schema", "migrations not applied: %s" % ", ".join(missing))
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    for t in schema.APPEND_ONLY_TABLES:
        for op in ("update", "delete", "replace"):
            if "%s_no_%s" % (t, op) not in triggers:
                rep.problem("schema", "append-only trigger %s_no_%s is missing" % (t, op))
    if absent:
        missing_head_noted(rep, conn, ledger_path, require_head)
    if anchored is not None:
        why = head.contradiction(conn, anchored)
        if why:
            rep.problem("head", why)
        else:
            rep.counts["head_id"] = anchored["id"]
            rep.counts["events_after_head"] = conn.execute(
                "SELECT count(*) FROM events WHERE id > ?", (anchored["id"],)).fetchone()[0]
    cols = ("id",) + schema.EVENT_COLUMNS
    prev = chain.GENESIS
    seqs = {}
    n = 0
    bad = 0
    for row in conn.execute("SELECT %s FROM events ORDER BY id" % ", ".join(cols)):
        n += 1
        r = dict(zip(cols, row))
        if r["prev_hash"] != prev:
            bad += 1
            if bad <= max_reports:
                rep.problem("chain", "event id %d (uid %s): prev_hash does not match the previous row "
                            "(a row was removed, inserted or reordered before it)" % (r["id"], r["uid"]))
        if chain.link(r["prev_hash"], r) != r["hash"]:
            bad += 1
            if bad <= max_reports:
                rep.problem("chain", "event id %d (uid %s): content does not match its hash "
                            "(the row was modified)" % (r["id"], r["uid"]))
        prev = r["hash"]
        last = seqs.get(r["session_id"], 0)
        if r["seq"] != last + 1:
            rep.problem("sequence", "session %s: seq %d follows %d" % (r["session_id"], r["seq"], last))
        seqs[r["session_id"]] = r["seq"]
    rep.counts["events"] = n
    rep.counts["sessions"] = len(seqs)
    store = blobs_mod.BlobStore(blob_root) if blob_root else None
    legacy_before = eviction_records_since(conn)
    runs = 0
    evicted = 0
    for handle, blob, uid, size in conn.execute(
            "SELECT r.handle, r.blob, r.event_uid, r.raw_bytes FROM runs r ORDER BY r.id"):
        runs += 1
        ev = conn.execute("SELECT kind, data FROM events WHERE uid = ?", (uid,)).fetchone()
        data = json.loads(ev[1] or "{}") if ev is not None else {}
        # A run is a `ctx run` event, or a post hook that digested a command ctx let through.
        if ev is not None and ev[0] == "hook" and isinstance(data.get("post_digest"), dict):
            data = data["post_digest"]
        elif ev is None or ev[0] != "run":
            rep.problem("runs", "run %s has no run event %s" % (handle, uid))
            continue
        if data.get("blob") != blob or data.get("handle") != handle:
            rep.problem("runs", "run %s disagrees with its event about its blob" % handle)
        if store is not None:
            try:
                got = sum(len(chunk) for chunk in store.chunks(blob))  # streamed: old blobs can be huge
                if got != size:
                    rep.problem("runs", "run %s: blob has %d bytes, ledger says %d" % (handle, got, size))
            except blobs_mod.BlobMissing:
                how = missing_blob(conn, blob, uid, legacy_before)
                if how == "deleted":
                    rep.problem("runs", "run %s: its blob is missing and retention never evicted it "
                                "(deleted outside ctx)" % handle)
                else:
                    evicted += 1
            except blobs_mod.BlobDamaged as e:
                rep.problem("runs", "run %s: blob damaged: %s" % (handle, e))
    rep.counts["runs"] = runs
    rep.counts["blobs_evicted"] = evicted
    conn.close()
    return rep

