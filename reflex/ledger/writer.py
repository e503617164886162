"""The single ledger writer: one thread, group commit, ack after commit.

Every handler in the daemon submits records here and waits for the returned
future; the thread drains whatever has queued up, writes it in one
transaction, commits, and only then resolves the futures.  So an answer the
daemon gives always describes an event that is already durable, and one
commit is amortised over all the events that arrived while the previous one
was being written (that is where the throughput comes from).

Sequence numbers and the hash chain are assigned here, the only place rows
are ordered, so both are gap-free by construction.  A uid that is already in
the ledger is acknowledged as a duplicate and not written again: that is what
makes spool ingestion exactly-once.  After every commit the chain's head is
anchored in a file next to the ledger (head.py), so a truncated tail shows.

The head file is written by a second thread (_HeadAnchor), not the writer: a
write and rename of it costs ~0.45 ms on ext4 (the rename of a replaced file
starts the new file's writeback), as much as a commit.  The anchor writes
the newest head posted to it, at most once per ANCHOR_INTERVAL, so under load
it skips heads a later commit already passed; the head is only ever one the
database has committed, and lags it by at most that interval and one file
write (a crash there is the window head.py already allows for).
Closing the writer writes the last head before it returns.
"""

import queue
import threading
import time
from concurrent.futures import Future

from reflex.ledger import chain, head, schema
from reflex.ledger.db import open_ledger


class Submission:
    __slots__ = ("event", "run", "session", "outcomes", "evictions", "future")

    def __init__(self, event, run=None, session=None, outcomes=None, evictions=None):
        self.event = event
        self.run = run
        self.session = session
        self.outcomes = outcomes
        self.evictions = evictions
        self.future = Future()


class Written:
    __slots__ = ("uid", "session_id", "seq", "duplicate", "rowid")

    def __init__(self, uid, session_id, seq, duplicate, rowid=None):
        self.uid = uid
        self.session_id = session_id
        self.seq = seq
        self.duplicate = duplicate
        self.rowid = rowid


_STOP = object()
_EVENT_SQL = "INSERT INTO events (%s) VALUES (%s)" % (
    ", ".join(schema.EVENT_COLUMNS), ", ".join("?" * len(schema.EVENT_COLUMNS)))
_RUN_SQL = "INSERT INTO runs (%s) VALUES (%s)" % (
    ", ".join(schema.RUN_COLUMNS), ", ".join("?" * len(schema.RUN_COLUMNS)))
_OUTCOME_COLUMNS = ("event_uid", "session_id", "seq", "detector", "tool_use_id", "core_hash", "reason",
                    "signal", "policy_epoch", "recorded_at")
_OUTCOME_SQL = "INSERT INTO outcomes (%s) VALUES (%s)" % (", ".join(_OUTCOME_COLUMNS),
                                                          ", ".join("?" * len(_OUTCOME_COLUMNS)))
_EVENT_KEYS = frozenset(schema.EVENT_COLUMNS) - {"seq", "prev_hash", "hash"}
_RUN_KEYS = frozenset(schema.RUN_COLUMNS)
# Not INSERT OR IGNORE: the ledger refuses any INSERT that collides with a row (schema m003).
_SESSION_SQL = ("INSERT INTO sessions (session_id, harness, first_ts, cwd) SELECT ?, ?, ?, ? "
                "WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE session_id = ?)")
_EVICTION_SQL = "INSERT INTO evictions (blob, bytes, reason, evicted_at) VALUES (?, ?, ?, ?)"


def _make_storable(record):
    """Replace lone surrogates in a record's strings with their \\uXXXX spelling, in place.

    Payloads may carry them (JSON allows "\\ud800"; argv decoded with
    surrogateescape has them), SQLite text must be UTF-8, and one such string
    must not make its event unwritable.  In place, so the fold sees what the
    ledger holds."""
    if not record:
        return
    for key, value in record.items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                record[key] = value.encode("utf-8", "backslashreplace").decode("utf-8")


ANCHOR_INTERVAL = 0.02    # seconds: the most the head lags the last commit by under a steady load


class _HeadAnchor:
    """The thread that writes the ledger's head file: post() hands it the newest committed head
    and returns at once; close() writes the last one posted, then stops."""

    def __init__(self, path, log):
        self.path = path
        self._log = log
        self._cv = threading.Condition()
        self._posted = None            # (id, hash) not written yet: only the newest is kept
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="ledger-head", daemon=True)
        self._thread.start()

    def post(self, event_id, event_hash):
        with self._cv:
            self._posted = (event_id, event_hash)
            self._cv.notify()

    def close(self, timeout=30):
        with self._cv:
            self._closing = True
            self._cv.notify()
        self._thread.join(timeout)

    def _run(self):
        written_at = float("-inf")
        while True:
            with self._cv:
                while self._posted is None and not self._closing:
                    self._cv.wait()
                # At most one write per ANCHOR_INTERVAL: under load the heads committed meanwhile
                # are skipped for the newest (the lag stays bounded); a lone commit is written at once.
                due = written_at + ANCHOR_INTERVAL
                while not self._closing:          # (each post wakes this wait: wait on to `due`)
                    pause = due - time.monotonic()
                    if pause <= 0:
                        break
                    self._cv.wait(pause)
                posted, self._posted = self._posted, None
            if posted is None:                    # closing, and every head posted is written
                return
            written_at = time.monotonic()
            _write_head(self.path, posted, self._log)


def _write_head(path, posted, log):
    """Anchor (id, hash); a failure is logged: the events are committed, verify sees the head lag."""
    try:
        head.write(path, *posted)
    except OSError as e:
        log("ledger head not written: %r" % (e,))


class LedgerWriter:
    def __init__(self, path, *, max_batch=512, log=None):
        self.path = path
        self.max_batch = max_batch
        self._log = log or (lambda msg: None)
        self._q = queue.SimpleQueue()
        self._anchorer = None
        self._ready = threading.Event()
        self._open_error = None
        self._thread = threading.Thread(target=self._run, name="ledger-writer", daemon=True)
        self.stats = {"events": 0, "duplicates": 0, "commits": 0, "errors": 0}

    def start(self):
        self._thread.start()
        self._ready.wait()
        if self._open_error is not None:
            raise self._open_error
        return self

    def submit(self, event, run=None, session=None):
        # A misspelled field must fail loudly, not vanish: explicit column
        # lists would otherwise just ignore it.
        unknown = set(event) - _EVENT_KEYS
        if run is not None:
            unknown |= {"run." + k for k in set(run) - _RUN_KEYS}
        for record in (event, run, session):
            _make_storable(record)
        sub = Submission(event, run, session)
        if unknown:
            sub.future.set_exception(ValueError("unknown ledger fields: %s" % ", ".join(sorted(unknown))))
            return sub.future
        self._q.put(sub)
        return sub.future

    def submit_outcomes(self, rows):
        """Append detector firings (the `outcomes` table); resolves to the number written."""
        for row in rows:
            _make_storable(row)
        sub = Submission(None, outcomes=rows)
        self._q.put(sub)
        return sub.future

    def submit_evictions(self, rows):
        """Record blobs retention is about to remove (dicts: blob, bytes, reason, evicted_at)."""
        sub = Submission(None, evictions=rows)
        self._q.put(sub)
        return sub.future

    def close(self, timeout=30):
        """Flush everything submitted so far, commit, close."""
        self._q.put(_STOP)
        self._thread.join(timeout)

    # -- the thread -----------------------------------------------------
    def _run(self):
        try:
            db = open_ledger(self.path)
        except Exception as e:  # surfaced to start()
            self._open_error = e
            self._ready.set()
            return
        conn = db.conn
        row = conn.execute("SELECT id, hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
        self._last_id, self._last_hash = row if row else (0, chain.GENESIS)
        self._anchor_at_start(conn)
        self._anchorer = _HeadAnchor(self.path, self._log)
        self._seq = {}
        self._ready.set()
        stopping = False
        while not stopping:
            first = self._q.get()
            if first is _STOP:
                break
            batch = [first]
            while len(batch) < self.max_batch:
                try:
                    nxt = self._q.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stopping = True
                    break
                batch.append(nxt)
            self._write(conn, batch)
        self._anchorer.close()
        conn.close()

    def _anchor_at_start(self, conn):
        try:
            anchored = head.read(self.path)
        except head.HeadError as e:
            anchored = {"id": -1, "hash": "unreadable"}
            self._log("ledger head: %s" % e)
        problem = head.contradiction(conn, anchored) if anchored else None
        if problem:
            kept = head.keep_as_evidence(self.path, time.time())
            self._log("LEDGER HEAD MISMATCH: %s; the old head is kept as %s and `ctx ledger verify` "
                      "reports it until it is removed" % (problem, kept))
        if problem or anchored is None or anchored["id"] != self._last_id:
            # before the first write is taken: the anchor thread is not running yet
            _write_head(self.path, (self._last_id, self._last_hash), self._log)

    def _anchor(self):
        """Hand the head just committed to the anchor thread."""
        self._anchorer.post(self._last_id, self._last_hash)

    def _next_seq(self, conn, session_id):
        seq = self._seq.get(session_id)
        if seq is None:
            row = conn.execute("SELECT MAX(seq) FROM events WHERE session_id = ?", (session_id,)).fetchone()
            seq = row[0] or 0
        seq += 1
        self._seq[session_id] = seq
        return seq

    def _write(self, conn, batch):
        if not self._write_batch(conn, batch) and len(batch) > 1:
            # Retry one by one so a single bad record fails alone.
            for sub in batch:
                self._write_batch(conn, [sub])

    def _write_batch(self, conn, batch):
        results = []
        saved_hash = self._last_hash
        saved_id = self._last_id
        saved_seq = dict(self._seq)
        try:
            conn.execute("BEGIN IMMEDIATE")
            seen = set()
            for sub in batch:
                if sub.evictions is not None:
                    conn.executemany(_EVICTION_SQL, [(r["blob"], r.get("bytes"), r["reason"], r["evicted_at"])
                                                     for r in sub.evictions])
                    results.append((sub, len(sub.evictions)))
                    continue
                if sub.event is None:
                    conn.executemany(_OUTCOME_SQL, [[r.get(c) for c in _OUTCOME_COLUMNS] for r in sub.outcomes])
                    results.append((sub, len(sub.outcomes)))
                    continue
                ev = sub.event
                uid = ev["uid"]
                dup = uid in seen or conn.execute(
                    "SELECT session_id, seq FROM events WHERE uid = ?", (uid,)).fetchone()
                if dup:
                    if dup is True:
                        results.append((sub, Written(uid, ev["session_id"], None, True)))
                    else:
                        results.append((sub, Written(uid, dup[0], dup[1], True)))
                    continue
                seen.add(uid)
                if sub.session is not None:
                    s = sub.session
                    conn.execute(_SESSION_SQL, (s["session_id"], s["harness"], s["first_ts"], s.get("cwd"),
                                                s["session_id"]))
                row = dict(ev)
                row["seq"] = self._next_seq(conn, row["session_id"])
                row.setdefault("recorded_at", time.time())
                row["prev_hash"] = self._last_hash
                row["hash"] = chain.link(self._last_hash, row)
                cur = conn.execute(_EVENT_SQL, [row.get(c) for c in schema.EVENT_COLUMNS])
                self._last_hash = row["hash"]
                self._last_id = cur.lastrowid
                if sub.run is not None:
                    conn.execute(_RUN_SQL, [sub.run.get(c) for c in schema.RUN_COLUMNS])
                results.append((sub, Written(uid, row["session_id"], row["seq"], False, cur.lastrowid)))
            conn.execute("COMMIT")
        except Exception as e:
            # The whole batch failed (disk full, constraint bug): roll back
            # the in-memory chain too, and fail every submitter so each can
            # fall back (the hook shim spools; nothing is silently dropped).
            try:
                conn.execute("ROLLBACK")
            except Exception:
                pass
            self._last_hash = saved_hash
            self._last_id = saved_id
            self._seq = saved_seq
            if len(batch) == 1:
                self.stats["errors"] += 1
                self._log("ledger write failed: %r" % (e,))
                batch[0].future.set_exception(e)
            return False
        self.stats["commits"] += 1
        if self._last_id != saved_id:
            self._anchor()
        for sub, written in results:
            if sub.event is None:
                sub.future.set_result(written)
                continue
            if written.duplicate:
                self.stats["duplicates"] += 1
            else:
                self.stats["events"] += 1
            sub.future.set_result(written)
        return True
