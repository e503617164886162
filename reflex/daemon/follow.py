"""Counting a run's raw tokens while the command is still running.

Exact o200k counting runs at ~15 MB/s per core; done after the command exits, it
sits between the agent and its answer.  `ctx run` tells the daemon where its capture
file is before it starts the command (run.start), and a follower thread reads the
file as it grows, feeding an exact StreamCounter (reflex.tokens).

A capture is bounded (reflex.shim.capture): its first `stable` bytes never change once
written, but past them a long output wraps around a ring that is rewritten at the
end.  So the follower keeps a checkpoint of its counter at exactly `stable` bytes:
at run.finish, if the output was kept whole, everything it counted stands and
only what it has not reached yet is counted; if it was elided, counting resumes from
the checkpoint.  Only the first COUNT_LIMIT bytes are ever counted (the tail of a
huge output never is), and the digest header says when that is less than the
output.  The result is exact for what it covers.  The follower never changes the file; if it fails or lags, the
count is completed (or done whole) after the fact.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

POLL_S = 0.02
READ = 256 * 1024  # small enough that a stop request is seen promptly
# Raw tokens are counted on at most this many leading bytes of an output.  Exact o200k
# counting runs at 1-15 MB/s per core here (one-character lines are the slow end), and an
# output dumped in a blink leaves it all to do after the exit: a megabyte keeps that under
# a second.  The digest header says when the count covers less than the output.
COUNT_LIMIT = 1 << 20
MAX_FOLLOWERS = 64


class Follower:
    def __init__(self, path: str, stable: int | None = None, count_limit: int = COUNT_LIMIT) -> None:
        from reflex.tokens import StreamCounter
        self.path = path
        self.stable = stable
        self.count_limit = count_limit
        self.counter = StreamCounter()
        self.offset = 0
        self.checkpoint: tuple | None = None  # counter state at exactly `stable` bytes (StreamCounter.snapshot)
        self.failed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ctxd-follow", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with open(self.path, "rb") as f:
                while not self._stop.is_set():
                    want = min(READ, self.count_limit - self.offset)
                    if self.stable is not None and self.offset < self.stable:
                        want = min(want, self.stable - self.offset)
                    chunk = f.read(want) if want > 0 else b""
                    if not chunk:
                        if os.fstat(f.fileno()).st_nlink == 0:
                            return  # the run was abandoned and its capture removed
                        self._stop.wait(POLL_S)
                        continue
                    self.counter.feed(chunk)
                    self.offset += len(chunk)
                    if self.offset == self.stable:
                        self.checkpoint = self.counter.snapshot()
        except Exception:
            self.failed = True

    def finish(self, raw: bytes, unchanged: int, counted: int, timeout: float = 5.0) -> int | None:
        """The exact token count of raw[:counted], or None if following failed.

        `raw` is the final capture; its first `unchanged` bytes are as they were while the
        command ran (all of them when the output was kept whole, the head when it was
        elided)."""
        self._stop.set()
        self._thread.join(timeout)
        if self._thread.is_alive() or self.failed:
            return None
        counter = self.counter
        limit = min(unchanged, counted)
        if self.offset > limit:
            if self.checkpoint is None or self.stable != limit:
                return None
            counter.restore(self.checkpoint)
            self.offset = limit
        counter.feed(raw[self.offset:counted])
        return counter.finish()


class Followers:
    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self._by_uid: dict[str, Follower] = {}
        self._lock = threading.Lock()

    def start(self, uid: str, path: str, stable: int | None = None) -> bool:
        with self._lock:
            if len(self._by_uid) >= MAX_FOLLOWERS or uid in self._by_uid:
                return False
            self._by_uid[uid] = Follower(path, stable)
        return True

    def finish(self, uid: str, raw: bytes, unchanged: int, counted: int) -> int | None:
        with self._lock:
            f = self._by_uid.pop(uid, None)
        if f is None:
            return None
        try:
            return f.finish(raw, unchanged, counted)
        except Exception as e:
            self.log("follower for %s failed: %r" % (uid, e))
            return None
