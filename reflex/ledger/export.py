"""`ctx ledger export`: the ledger as JSONL (one event per line, global order)."""

import json
import sqlite3

from reflex.ledger import schema


COLUMNS = ("id",) + schema.EVENT_COLUMNS


def events_query(session=None):
    """(sql, args) selecting COLUMNS of every event (or one session's), in global order."""
    sql = "SELECT %s FROM events" % ", ".join(COLUMNS)
    args = ()
    if session:
        sql += " WHERE session_id = ?"
        args = (session,)
    return sql + " ORDER BY id", args


def iter_events(ledger_path, session=None):
    conn = sqlite3.connect("file:%s?mode=ro" % ledger_path, uri=True)
    cols = COLUMNS
    sql, args = events_query(session)
    try:
        for row in conn.execute(sql, args):
            r = dict(zip(cols, row))
            try:
                r["data"] = json.loads(r["data"])
            except (TypeError, ValueError):
                pass
            yield r
    finally:
        conn.close()


def export_jsonl(ledger_path, out, session=None):
    n = 0
    for r in iter_events(ledger_path, session):
        out.write(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n")
        n += 1
    return n
