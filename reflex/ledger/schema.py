"""The ledger's schema, declared once as named migrations.

Tables are created explicitly (STRICT, typed, NOT NULL where it matters),
never inferred from the first record.  Append-only is enforced by the database
itself: triggers abort any UPDATE or DELETE, and any INSERT that collides with
an existing row's key (SQLite's REPLACE conflict resolution deletes the old row
without firing DELETE triggers, so `INSERT OR REPLACE` would otherwise rewrite
a row past them), so a bug (or a hand-run statement) cannot rewrite history.
The chain's head is also anchored outside the database (ledger/head.py).  A migration's name is its identity: never rename or
reuse one; add a new one.  ledgers/schema.sql is generated from this module
(`python -m reflex.ledger.schema > ledgers/schema.sql`) and a test keeps it
in sync.
"""

from reflex.ledger.sqlite import sqlite_utils

MIGRATION_SET = "ctx-ledger"
SCHEMA_VERSION = 3

migrations = sqlite_utils.Migrations(MIGRATION_SET)

APPEND_ONLY_TABLES = ("sessions", "events", "runs", "outcomes", "evidence_outcomes", "evictions")


def _append_only(db, table):
    for op in ("UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON {table} "
            f"BEGIN SELECT RAISE(ABORT, 'ledger is append-only: {op} on {table} refused'); END"
        )


@migrations()
def m001_initial(db):
    db.execute("""
        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            harness TEXT NOT NULL,
            first_ts REAL NOT NULL,
            cwd TEXT
        ) STRICT""")
    # One row per thing that happened.  `id` is the global order; (session_id,
    # seq) the per-session order the fold consumes.  `hash` chains every row
    # to its predecessor (blake3 over the previous hash and the row's canonical
    # JSON), so `ctx ledger verify` can tell a consistent ledger from an edited
    # or truncated one.
    db.execute("""
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            ts REAL NOT NULL,
            recorded_at REAL NOT NULL,
            harness TEXT NOT NULL,
            kind TEXT NOT NULL,
            hook_event TEXT,
            tool_name TEXT,
            tool_use_id TEXT,
            cwd TEXT,
            command TEXT,
            family TEXT,
            core_hash TEXT,
            decision TEXT,
            decision_detail TEXT,
            exit_code INTEGER,
            output_bytes INTEGER,
            rewrite_applied INTEGER,
            spooled INTEGER NOT NULL DEFAULT 0,
            latency_us INTEGER,
            data TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL,
            UNIQUE (session_id, seq)
        ) STRICT""")
    db.execute("CREATE INDEX events_tool_use ON events (tool_use_id)")
    db.execute("CREATE INDEX events_kind ON events (kind)")
    # A run's output lives in the blob store; this row is its index entry.
    # It is written in the same transaction as its `run` event and `verify`
    # checks the two agree.
    db.execute("""
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            event_uid TEXT NOT NULL UNIQUE REFERENCES events(uid),
            handle TEXT NOT NULL,
            blob TEXT NOT NULL,
            session_id TEXT NOT NULL,
            command TEXT NOT NULL,
            cwd TEXT,
            exit_code INTEGER,
            duration_ms REAL,
            raw_bytes INTEGER NOT NULL,
            family TEXT,
            core_hash TEXT,
            profile TEXT,
            density TEXT,
            raw_tokens INTEGER,
            delivered_tokens INTEGER,
            worktree_hash TEXT,
            meta TEXT NOT NULL
        ) STRICT""")
    db.execute("CREATE INDEX runs_handle ON runs (handle)")
    db.execute("CREATE INDEX runs_core ON runs (session_id, core_hash)")
    for table in ("sessions", "events", "runs"):  # frozen: a migration never changes
        _append_only(db, table)


@migrations()
def m002_outcomes(db):
    # Detector firings (the reflex arc's outcome rows): which detector fired
    # on which event, and the signal that made it fire.  Written by the
    # daemon as it folds each event; recomputable by `ctx replay`.
    db.execute("""
        CREATE TABLE outcomes (
            id INTEGER PRIMARY KEY,
            event_uid TEXT NOT NULL REFERENCES events(uid),
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            detector TEXT NOT NULL,
            tool_use_id TEXT,
            core_hash TEXT,
            reason TEXT NOT NULL,
            signal TEXT NOT NULL,
            policy_epoch TEXT,
            recorded_at REAL NOT NULL
        ) STRICT""")
    db.execute("CREATE INDEX outcomes_session ON outcomes (session_id, seq)")
    # evidence_outcome/v1: what became of each piece of evidence ctx delivered
    # (landed, narrowed, retrieved, redundant...), joined offline from runs,
    # retrievals and follow-up commands.  Keyed so recomputing over the same
    # ledger yields the same rows (INSERT OR IGNORE on `key`).
    db.execute("""
        CREATE TABLE evidence_outcomes (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            schema TEXT NOT NULL,
            session_id TEXT NOT NULL,
            run_uid TEXT,
            event_uid TEXT,
            outcome TEXT NOT NULL,
            reason TEXT NOT NULL,
            confidence REAL NOT NULL,
            family TEXT,
            core_hash TEXT,
            data TEXT NOT NULL,
            recorded_at REAL NOT NULL
        ) STRICT""")
    db.execute("CREATE INDEX evidence_outcomes_session ON evidence_outcomes (session_id)")
    for table in ("outcomes", "evidence_outcomes"):
        _append_only(db, table)


def _no_replace(db, table, keys):
    """Refuse an INSERT whose key collides with an existing row (`keys`: each unique key's columns)."""
    collides = " OR ".join(
        "EXISTS (SELECT 1 FROM %s WHERE %s)" % (table, " AND ".join("%s = NEW.%s" % (c, c) for c in key))
        for key in keys)
    db.execute(
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_replace BEFORE INSERT ON {table} WHEN {collides} "
        f"BEGIN SELECT RAISE(ABORT, 'ledger is append-only: INSERT over an existing {table} row refused'); END"
    )


@migrations()
def m003_no_replace_and_evictions(db):
    # INSERT OR REPLACE / OR IGNORE / UPSERT all start as an INSERT that collides
    # with a key: refuse every such INSERT (writers check for existence first).
    # `rowid` covers sessions, whose primary key is not the rowid (a REPLACE can target either).
    _no_replace(db, "sessions", (("rowid",), ("session_id",)))
    _no_replace(db, "events", (("id",), ("uid",), ("session_id", "seq")))
    _no_replace(db, "runs", (("id",), ("event_uid",)))
    _no_replace(db, "outcomes", (("id",),))
    _no_replace(db, "evidence_outcomes", (("id",), ("key",)))
    # What retention removed from the blob store, recorded before the files go:
    # a run whose blob is missing reads as `evicted` only when a row here says
    # retention removed it; otherwise the blob was deleted by something else and
    # the run reads as `denatured`.
    db.execute("""
        CREATE TABLE evictions (
            id INTEGER PRIMARY KEY,
            blob TEXT NOT NULL,
            bytes INTEGER,
            reason TEXT NOT NULL,
            evicted_at REAL NOT NULL
        ) STRICT""")
    db.execute("CREATE INDEX evictions_blob ON evictions (blob)")
    _append_only(db, "evictions")
    _no_replace(db, "evictions", (("id",),))


EVENT_COLUMNS = (
    "uid", "session_id", "seq", "ts", "recorded_at", "harness", "kind", "hook_event",
    "tool_name", "tool_use_id", "cwd", "command", "family", "core_hash", "decision",
    "decision_detail", "exit_code", "output_bytes", "rewrite_applied", "spooled",
    "latency_us", "data", "prev_hash", "hash",
)
# Columns covered by the hash chain: everything but the chain itself and the
# storage rowid.
HASHED_COLUMNS = tuple(c for c in EVENT_COLUMNS if c not in ("prev_hash", "hash"))
RUN_COLUMNS = (
    "event_uid", "handle", "blob", "session_id", "command", "cwd", "exit_code",
    "duration_ms", "raw_bytes", "family", "core_hash", "profile", "density",
    "raw_tokens", "delivered_tokens", "worktree_hash", "meta",
)


def apply(db):
    """Bring `db` (a sqlite_utils.Database) up to the current schema."""
    migrations.apply(db)


def dump_sql():
    """The schema as SQL, from a freshly migrated in-memory database."""
    db = sqlite_utils.Database(memory=True)
    apply(db)
    rows = db.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
        "AND name NOT LIKE 'sqlite_%' AND name != '_sqlite_migrations' ORDER BY type DESC, name"
    ).fetchall()
    out = ["-- ctx ledger schema (generated by `python -m reflex.ledger.schema`; do not edit)",
           "-- migration set %r, schema version %d" % (MIGRATION_SET, SCHEMA_VERSION), ""]
    for _type, _name, sql in rows:
        out.append(sql.strip() + ";")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(dump_sql(), end="")
