"""Opening ledgers for reading: read-only, migrated first when old, clear errors when damaged.

Readers (`ctx stats`, `ctx policy compile`) never write a ledger's history.  Two things may
still happen on open, both safe:

* a ledger from an older schema (a migration of reflex.ledger.schema not applied) is migrated
  first with open_ledger, then read; when it cannot be migrated (a read-only copy from a
  teammate) it is read as it is: every table a reader needs beyond ``events`` is optional.
* a file that is not a SQLite database, or whose pages are damaged, raises LedgerReadError
  with a message that says so and points at `ctx ledger verify`; nothing is written to it.
"""

from __future__ import annotations

import os
import sqlite3
from typing import NamedTuple

from reflex.errors import UserError

SQLITE_MAGIC = b"SQLite format 3\x00"
# Tables every current ledger has; one missing means an older schema (checked cheaply, so a
# current ledger never pays for importing the migration machinery).
CURRENT_TABLES = frozenset({"sessions", "events", "runs", "outcomes", "evidence_outcomes"})
EVENT_READ_COLUMNS = ("uid", "session_id", "seq", "ts", "kind", "hook_event", "tool_name", "tool_use_id", "cwd",
                      "command", "family", "core_hash", "decision", "decision_detail", "exit_code",
                      "output_bytes", "rewrite_applied", "latency_us", "data", "harness")


class Snapshot(NamedTuple):
    """A ledger's events up to one event (Reader.snapshot)."""
    last_id: int            # the last event's id (0: no events)
    events: int             # events with id <= last_id
    head: str               # that event's hash: the chain head (reflex.ledger.chain.GENESIS when empty)


class LedgerReadError(UserError):
    """A ledger that cannot be read; the message says why and what to run."""


# SQLite's answers that are about the disk or the other processes, not the ledger's pages.
_NOT_DAMAGE = ("SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM", "SQLITE_BUSY",
               "SQLITE_LOCKED", "SQLITE_NOMEM")


def _damaged(path, e) -> LedgerReadError:
    name = getattr(e, "sqlite_errorname", None) or ""
    if name.startswith(_NOT_DAMAGE):
        # A full disk or an unwritable directory (even a read-only reader of a WAL ledger writes its
        # -shm file next to it) must not send the user repairing a ledger that is fine.
        return LedgerReadError("cannot read %s: %s (%s). The disk or the filesystem refused, not the ledger: is the "
                               "disk full, or its directory not writable? Nothing was written to it."
                               % (path, e, name))
    return LedgerReadError("%s is damaged or not a ctx ledger: %s. Nothing was written to it; "
                           "`ctx ledger verify --ledger %s` says what is wrong." % (path, e, path))


def check_header(path) -> None:
    if not os.path.exists(path):
        raise LedgerReadError("no ledger at %s" % path)
    if os.path.isdir(path):
        raise LedgerReadError("%s is a directory, not a ledger" % path)
    with open(path, "rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise LedgerReadError("%s is not a ctx ledger: not a SQLite database (its first bytes are %r). "
                              "Nothing was written to it; `ctx ledger verify --ledger %s` says more."
                              % (path, head[:16], path))


class Reader:
    """A read-only connection to one ledger and what its schema offers."""

    def __init__(self, path, *, migrate=True):
        self.path = os.fspath(path)
        check_header(self.path)
        self.migrated = False
        self.tables = self._tables()
        if "events" not in self.tables:
            self.close()
            raise LedgerReadError("%s is a SQLite database but not a ctx ledger (no events table)" % self.path)
        if migrate and not CURRENT_TABLES <= self.tables:
            self._migrate()

    def _connect(self):
        try:
            conn = sqlite3.connect("file:%s?mode=ro" % self.path, uri=True)
            conn.execute("PRAGMA busy_timeout = 5000")
            return conn
        except sqlite3.DatabaseError as e:
            raise _damaged(self.path, e) from None

    def _tables(self):
        self.conn = self._connect()
        try:
            return frozenset(r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'"))
        except sqlite3.DatabaseError as e:
            self.conn.close()
            raise _damaged(self.path, e) from None

    def _migrate(self):
        from reflex.ledger.db import LedgerError, open_ledger
        self.conn.close()
        try:
            db = open_ledger(self.path)
            db.conn.close()
            self.migrated = True
        except (LedgerError, sqlite3.DatabaseError, OSError):
            pass   # read-only copy: read it as it is
        self.tables = self._tables()

    def close(self):
        try:
            self.conn.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def has(self, table) -> bool:
        return table in self.tables

    def query(self, sql, args=()):
        try:
            return self.conn.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as e:
            raise _damaged(self.path, e) from None

    def iterate(self, sql, args=()):
        try:
            cur = self.conn.execute(sql, args)
            while True:
                chunk = cur.fetchmany(2000)
                if not chunk:
                    return
                yield from chunk
        except sqlite3.DatabaseError as e:
            raise _damaged(self.path, e) from None

    # -- sessions ----------------------------------------------------------------------------
    def session_rows(self, session_id) -> list[dict]:
        cols = EVENT_READ_COLUMNS
        rows = self.query("SELECT %s FROM events WHERE session_id = ? ORDER BY seq" % ", ".join(cols),
                          (session_id,))
        return [dict(zip(cols, r)) for r in rows]

    def last_session(self) -> str | None:
        """The session of the newest event that belongs to a session."""
        r = self.query("SELECT session_id FROM events WHERE session_id != '-' ORDER BY id DESC LIMIT 1")
        return r[0][0] if r else None

    def session_ids(self) -> list[str]:
        if self.has("sessions"):
            ids = [r[0] for r in self.query("SELECT session_id FROM sessions ORDER BY session_id")]
            if ids:
                return ids
        return [r[0] for r in self.query("SELECT DISTINCT session_id FROM events WHERE session_id != '-' "
                                         "ORDER BY session_id")]

    def iter_sessions(self, session_ids=None, through=None):
        """(session_id, rows) per session, streamed in (session_id, seq) order; through: only the
        events up to that id (a snapshot()'s last_id)."""
        cols = EVENT_READ_COLUMNS
        wanted = set(session_ids) if session_ids is not None else None
        cur_id, rows = None, []
        bound, args = ("", ()) if through is None else (" AND id <= ?", (through,))
        for r in self.iterate("SELECT %s FROM events WHERE session_id != '-'%s ORDER BY session_id, seq"
                              % (", ".join(cols), bound), args):
            d = dict(zip(cols, r))
            sid = d["session_id"]
            if sid != cur_id:
                if cur_id is not None and rows:
                    yield cur_id, rows
                cur_id, rows = sid, []
            if wanted is None or sid in wanted:
                rows.append(d)
        if cur_id is not None and rows:
            yield cur_id, rows

    def outside_rows(self) -> list[dict]:
        """The events that belong to no harness session (session_id '-'): `ctx run` and
        `ctx get/search` typed by hand or run by a script, with no agent session id set."""
        cols = EVENT_READ_COLUMNS
        return [dict(zip(cols, r)) for r in self.iterate(
            "SELECT %s FROM events WHERE session_id = '-' ORDER BY seq" % ", ".join(cols))]

    def has_outcome_rows(self) -> bool:
        return self.has("outcomes") and bool(self.query("SELECT 1 FROM outcomes LIMIT 1"))

    def outcome_rows(self, session_id) -> list[dict]:
        if not self.has("outcomes"):
            return []
        cols = ("seq", "detector", "tool_use_id", "core_hash", "reason", "signal", "policy_epoch")
        rows = self.query("SELECT %s FROM outcomes WHERE session_id = ? ORDER BY seq, id" % ", ".join(cols),
                          (session_id,))
        return [dict(zip(cols, r)) for r in rows]

    def snapshot(self) -> Snapshot:
        """The ledger's events up to its last one, pinned by that event.

        A live daemon keeps appending while a reader works, so a reader that counts, reads and
        names the ledger in separate queries would describe three different ledgers.  The three
        answers here come from one read transaction; events are append-only and their ids grow
        with every commit, so whatever reads up to last_id afterwards sees the same state.
        (count(*) of the whole table reads a covering index, in milliseconds; bounded by id it
        would read the table.)  `head` is the last event's hash: the head of the ledger's hash
        chain, which commits to every event before it (`ctx ledger verify` re-derives the chain).
        It names the events, not the file: a WAL checkpoint, a VACUUM or a runs row the daemon
        adds later change the file's bytes but not its head."""
        from reflex.ledger.chain import GENESIS
        own = not self.conn.in_transaction
        try:
            if own:
                self.conn.execute("BEGIN")
        except sqlite3.DatabaseError as e:
            raise _damaged(self.path, e) from None
        try:
            last = self.query("SELECT id, hash FROM events ORDER BY id DESC LIMIT 1")
            if not last:
                return Snapshot(0, 0, GENESIS)
            return Snapshot(last[0][0], self.query("SELECT count(*) FROM events")[0][0], last[0][1])
        finally:
            if own:
                self.conn.execute("COMMIT")


# Ledger labels of events ctx itself produced inside a session (not the agent's harness).
CTX_LABELS = frozenset({"ctx-run", "ctx-retrieval"})


def harness_of(rows) -> str | None:
    """The agent harness of a session's ledger rows (claude, codex, gemini, copilot, ...)."""
    for r in rows:
        h = r.get("harness")
        if isinstance(h, str) and h and h not in CTX_LABELS:
            return h
    return None
