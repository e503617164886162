"""Opening a ledger: WAL once at open, schema migrated, one place for pragmas."""

import os
import sqlite3

from reflex.ledger.sqlite import sqlite_utils

from reflex.ledger import schema
from reflex.errors import UserError


class LedgerError(UserError):
    """The ledger cannot be opened or is not a ctx ledger."""


def open_ledger(path, *, migrate=True, readonly=False):
    """A sqlite_utils.Database on `path`, migrated to the current schema.

    A file that is not a SQLite database raises LedgerError instead of being
    overwritten: a corrupted ledger is evidence, never something to replace.
    """
    if readonly:
        if not os.path.exists(path):
            raise LedgerError("no ledger at %s" % path)
        conn = sqlite3.connect("file:%s?mode=ro" % path, uri=True, check_same_thread=False)
        db = sqlite_utils.Database(conn)
    else:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        db = sqlite_utils.Database(conn)
        try:
            os.chmod(path, 0o600)
        except OSError:
            pass
    try:
        db.execute("PRAGMA busy_timeout = 5000")
        if not readonly:
            db.execute("PRAGMA journal_mode = WAL")
            # NORMAL in WAL mode: a committed transaction survives a process
            # crash (kill -9); only an OS crash can lose the last commits.
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
            if migrate:
                schema.apply(db)
        else:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as e:
        conn.close()
        raise LedgerError("%s is not a usable ledger: %s" % (path, e)) from None
    return db
