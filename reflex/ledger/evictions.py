"""Evicted or deleted: what the ledger says about a blob that is no longer in the store.

Retention records every blob it removes in the `evictions` table before the
file goes (schema m003, blobs.BlobStore.evict).  So a missing blob is
"evicted" when such a row exists, and "deleted" (by something other than ctx:
a person, a cleanup script, an attacker removing evidence) when none does.
Blobs of runs recorded before the ledger kept these rows cannot be told apart;
they read as "legacy" and are treated as evicted.

The record only helps against whoever can delete a blob but not write the
ledger: someone who can do both can also add an eviction row.
"""

import sqlite3

from reflex.ledger import schema


def eviction_records_since(conn):
    """When the ledger started recording evictions (unix time), or None if it does not.

    Blobs that went missing from runs recorded before then cannot be told apart
    (retention kept no record): they count as evicted."""
    try:
        row = conn.execute("SELECT applied_at FROM _sqlite_migrations WHERE migration_set = ? AND name = ?",
                           (schema.MIGRATION_SET, "m003_no_replace_and_evictions")).fetchone()
    except sqlite3.DatabaseError:
        return None
    if not row:
        return None
    from datetime import datetime
    try:
        return datetime.fromisoformat(row[0]).timestamp()
    except (TypeError, ValueError):
        return None


def missing_blob(conn, blob, event_uid, records_since):
    """"evicted" (retention's record), "legacy" (from before records were kept) or "deleted"."""
    try:
        if conn.execute("SELECT 1 FROM evictions WHERE blob = ? LIMIT 1", (blob,)).fetchone():
            return "evicted"
    except sqlite3.DatabaseError:  # an old, unmigrated ledger: no records at all
        return "legacy"
    if records_since is None:
        return "legacy"
    row = conn.execute("SELECT recorded_at FROM events WHERE uid = ?", (event_uid,)).fetchone()
    if row and row[0] is not None and row[0] < records_since:
        return "legacy"
    return "deleted"
