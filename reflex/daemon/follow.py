"""Counting a run's raw tokens while the command is still running.

Exact o200k counting of a 5 MB output takes ~250 ms of CPU; done after the
command exits, it sits between the agent and its answer.  `ctx run` tells the
daemon where its capture file is before it starts the command (run.start), and
a follower thread reads the file as it grows, feeding an exact StreamCounter
(reflex.tokens), so at run.finish only the tail remains to be counted.  The
follower never changes the file; if it is missing or lags, the digest counts
the whole output itself (exact either way).
"""

import threading

POLL_S = 0.02
MAX_FOLLOWERS = 64


class Follower:
    def __init__(self, path):
        from ..tokens import StreamCounter
        self.path = path
        self.counter = StreamCounter()
        self.offset = 0
        self.failed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ctxd-follow", daemon=True)
        self._thread.start()

    def _run(self):
        try:
            with open(self.path, "rb") as f:
                while True:
                    chunk = f.read(1 << 20)
                    if chunk:
                        self.counter.feed(chunk)
                        self.offset += len(chunk)
                        continue
                    if self._stop.is_set():
                        return
                    self._stop.wait(POLL_S)
        except Exception:
            self.failed = True

    def finish(self, size, timeout=5.0):
        """The exact token count of the first `size` bytes, or None if following failed."""
        self._stop.set()
        self._thread.join(timeout)
        if self._thread.is_alive() or self.failed or self.offset != size:
            return None
        return self.counter.finish()


class Followers:
    def __init__(self, log):
        self.log = log
        self._by_uid = {}
        self._lock = threading.Lock()

    def start(self, uid, path):
        with self._lock:
            if len(self._by_uid) >= MAX_FOLLOWERS or uid in self._by_uid:
                return False
            self._by_uid[uid] = Follower(path)
        return True

    def finish(self, uid, size):
        with self._lock:
            f = self._by_uid.pop(uid, None)
        if f is None:
            return None
        try:
            return f.finish(size)
        except Exception as e:
            self.log("follower for %s failed: %r" % (uid, e))
            return None
