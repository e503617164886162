"""After sessions end, have their compile facts stored beside the ledger (off the agent's path).

A team dataset export (`ctx ledger export --dataset`) spends most of its time computing each
session's compile facts from its whole history.  A session that has ended rarely changes again,
so the daemon has its facts computed once, soon after it ends: ended sessions are collected for
`after_s` seconds, then one child process (`python -m reflex.analysis.facts_store LEDGER`, at a
lower priority) computes and stores them all.  The daemon never imports reflex.analysis: the
child does the work, and its failure is only logged (an export computes whatever is not stored,
so nothing is lost; reflex.analysis.facts_store says why a stored fact is never stale).

At most one child runs at a time; sessions that end meanwhile wait for the next.  Sessions still
waiting when the daemon stops are left to the export.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable

FACTS_TIMEOUT_S = 900.0


class SessionFacts:
    def __init__(self, ledger_path: str, *, after_s: float, log: Callable[[str], None], enabled: bool = True) -> None:
        self.ledger_path = ledger_path
        self.after_s = max(0.0, float(after_s))
        self.log = log
        self.enabled = enabled
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._timer: threading.Timer | None = None
        self._running: subprocess.Popen[str] | None = None
        self._closed = False
        self.stored_jobs = 0          # children that finished well (`ctx daemon status` reads nothing else)

    def ended(self, session_id: str | None) -> None:
        """A session's SessionEnd is in the ledger."""
        if not self.enabled or not session_id or session_id == "-":
            return
        with self._lock:
            if self._closed:
                return
            self._pending.append(session_id)
            self._arm()

    def _arm(self) -> None:
        if self._timer is None:
            self._timer = threading.Timer(self.after_s, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed or not self._pending:
                return
            if self._running is not None and self._running.poll() is None:
                self._arm()              # one child at a time: these wait for the next
                return
            ids, self._pending = list(dict.fromkeys(self._pending)), []
            try:
                proc = subprocess.Popen([sys.executable, "-m", "reflex.analysis.facts_store", "--nice", self.ledger_path],
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, start_new_session=True)
            except OSError as e:
                self.log("session facts: cannot start the child: %r" % (e,))
                return
            self._running = proc
        threading.Thread(target=self._feed, args=(proc, ids), name="ctxd-facts", daemon=True).start()

    def _feed(self, proc: subprocess.Popen[str], ids: list[str]) -> None:
        try:
            _out, err = proc.communicate("".join(i + "\n" for i in ids), timeout=FACTS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            _out, err = proc.communicate()
        except OSError as e:
            self.log("session facts: %r" % (e,))
            return
        if proc.returncode == 0:
            self.stored_jobs += 1
        else:
            self.log("session facts of %d session(s) not stored (exit %s): %s"
                     % (len(ids), proc.returncode, (err or "").strip()[-800:]))

    def close(self) -> None:
        """No new children; a running one finishes on its own (it reads the ledger, writes its store)."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
