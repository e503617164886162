"""The daemon's long-lived context: ledger writer, blob store, config, caches.

Handlers receive this object; it owns every expensive resource so that they
are loaded once per daemon, not once per call.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reflex import blobs, config as config_mod
from reflex.harness.claude import permissions
from reflex.ledger.writer import LedgerWriter, Written

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from reflex.paths import Paths
    from reflex.signature.model import Signature
    from reflex.worktree.registry import WorktreeRegistry


WORKTREE_SETTLE_S = 0.3
SPARE_SEARCH_AFTER_S = 10.0
# A directory is only watched when it looks like a project: watching / or ~ or
# /tmp (where an agent sometimes runs one-off commands) would scan and watch
# huge unrelated trees and spend the daemon's CPU on other programs' churn.
PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "package.json", "go.mod", "Cargo.toml",
                   "Makefile", "mix.exs", "pom.xml", "build.gradle", "Gemfile", "composer.json", ".hg")


def _watchable(root: str, home: str) -> bool:
    if not root or root in ("/", home, "/tmp", "/var/tmp", os.environ.get("TMPDIR", "/tmp")):
        return False
    return any(os.path.exists(os.path.join(root, m)) for m in PROJECT_MARKERS)  # > the watcher's debounce (50 ms, at most 150 ms) plus delivery


class DaemonContext:
    def __init__(self, paths: Paths, *, log: Callable[[str], None]) -> None:
        self.paths = paths
        self.log = log
        self.warm_s: float | None = None   # seconds the start-up warm-up took, once it is done
        self.cfg = config_mod.load(paths.config)
        self.launcher = self.cfg.get("launcher") or config_mod.default_launcher()
        self.home_dir = os.path.expanduser("~")
        self.blobs = blobs.BlobStore(paths.blobs)
        self.writer = LedgerWriter(paths.ledger, log=log)
        self._reader_local = threading.local()
        # path -> (when stat was last checked, stat stamp, parsed settings)
        self._settings_cache: dict[str, tuple[float, tuple[int, int, int] | None, dict[str, Any] | None]] = {}
        self._sig: Callable[[str, str | None], Signature] | None = None
        self._wt: WorktreeRegistry | None = None
        self._wt_pool: ThreadPoolExecutor | None = None
        self._wt_ready: set[str] = set()
        self._wt_starting: set[str] = set()
        self._watchable_cache: dict[str, tuple[float, bool]] = {}
        from reflex.daemon.reflexes import ReflexHub
        self.reflexes = ReflexHub(self)
        self.fold_stats: dict[str, float] = {"events": 0, "seconds": 0.0}
        from reflex.daemon.follow import Followers
        self.followers = Followers(log)
        from reflex.daemon.session_facts import SessionFacts
        after = self.cfg.get("session_facts_after_s")
        self.session_facts = SessionFacts(paths.ledger, log=log, enabled=self.cfg.get("session_facts") is not False,
                                          after_s=after if isinstance(after, (int, float)) else 30.0)

    def start(self) -> DaemonContext:
        self.writer.start()
        return self

    def close(self) -> None:
        """Shutdown order: stop the watchers, then flush and close the ledger."""
        self.session_facts.close()
        if self._wt_pool is not None:
            self._wt_pool.shutdown(wait=True)
        if self._wt is not None:
            self._wt.close()
        self.writer.close()

    # -- reads ---------------------------------------------------------
    def reader(self) -> sqlite3.Connection:
        """A per-thread read connection (WAL readers never block the writer)."""
        conn: sqlite3.Connection | None = getattr(self._reader_local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.paths.ledger, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 5000")
            self._reader_local.conn = conn
        return conn

    def recorded_rewrite(self, tool_use_id: str) -> tuple[str, str] | None:
        row = self.reader().execute(
            "SELECT command, decision_detail FROM events WHERE tool_use_id = ? AND decision = 'rewrite' "
            "ORDER BY id DESC LIMIT 1", (tool_use_id,)).fetchone()
        return (row[0], row[1]) if row else None

    # -- policy inputs -------------------------------------------------------
    def read_settings(self, path: str) -> dict[str, Any] | None:
        """A settings file's JSON object (or None), re-read only when its stat changes.

        The stat itself is rate-limited to once a second per file: Claude Code hot-reloads
        settings on its side, and a second's lag is far below a human edit."""
        now = time.monotonic()
        cached = self._settings_cache.get(path)
        if cached and now - cached[0] < 1.0:
            return cached[2]
        stamp: tuple[int, int, int] | None
        try:
            st = os.stat(path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        data: dict[str, Any] | None
        if cached and cached[1] == stamp:
            data = cached[2]
        else:
            data = permissions.load_settings(path) if stamp else None
        if len(self._settings_cache) > 4096:
            self._settings_cache.clear()
        self._settings_cache[path] = (now, stamp, data)
        return data

    def permission_context(self, *, project_dir: str | None, home: str | None, payload_mode: str | None,
                           argv: list[str] | None, config_dir: str | None) -> permissions.PermissionContext:
        found: permissions.PermissionContext = permissions.gather(
            project_dir=project_dir, home=home, payload_mode=payload_mode, argv=argv, config_dir=config_dir,
            read=self.read_settings)
        return found

    def rewrite_mode(self) -> str:
        """auto | allow | off.  The old "ask" and "omit" answered headless sessions with a refusal of
        every rewritten command; they now mean auto (doctor says so)."""
        mode = self.cfg.get("rewrite_permission") or "auto"
        return mode if mode in ("auto", "allow", "off") else "auto"

    def signature(self, command: str, cwd: str | None) -> Signature | None:
        try:
            if self._sig is None:
                from reflex.signature import signature
                self._sig = signature
            return self._sig(command, cwd)
        except Exception as e:  # the module promises never to raise; don't trust, log
            self.log("signature raised on %r: %r" % (command[:200], e))
            return None

    # -- reflex state and freshness (filled in by the reflex arc) -----------------
    def density_for(self, session_id: str | None, sig: Signature | None, family: str | None,
                    cwd: str | None = None) -> tuple[str, str | None]:
        """(density, reason) for the next digest of this signature in this session."""
        try:
            return self.reflexes.density_for(session_id, sig, family, cwd)
        except Exception as e:  # the reflex arc must never cost the agent its output
            self.log("density_for failed: %r" % (e,))
            return "normal", None

    def worktree_hash(self, cwd: str | None, root: str | None = None) -> str | None:
        """The project's worktree hash, or None while it is not (yet) reliably known.

        The first sight of a project root starts its scan in the background
        and answers None: a hook must never wait for a scan.  A root that is
        only polled (watch limit hit) answers None too, since its hash can lag.
        `root` saves the caller's already-resolved project root a second walk.
        """
        if not cwd:
            return None
        if root is None:
            from reflex import project
            root = project.project_root(cwd)
        if not self._watchable(root):
            return None
        if root not in self._wt_ready:
            if root not in self._wt_starting:
                self._wt_starting.add(root)
                self._wt_executor().submit(self._wt_start, root)
            return None
        reg = self._worktrees()
        st = reg.state(root)
        if st.mode != "watching" or st.pending or st.quiet_s < WORKTREE_SETTLE_S:
            # Unsettled: an edit may be in flight.  None makes the fold fall back to
            # edit evidence instead of trusting a hash that may lag.
            return None
        return st.hash

    def _watchable(self, root: str) -> bool:
        # Cached: deciding costs a stat per project marker, and it is asked on every hook.
        now = time.monotonic()
        hit = self._watchable_cache.get(root)
        if hit is None or now - hit[0] > 10.0:
            if len(self._watchable_cache) > 4096:
                self._watchable_cache.clear()
            hit = self._watchable_cache[root] = (now, _watchable(root, self.home_dir))
        return hit[1]

    def _worktrees(self) -> WorktreeRegistry:
        if self._wt is None:
            from reflex.worktree.registry import WorktreeRegistry
            self._wt = WorktreeRegistry(log=self.log)
        return self._wt

    def _wt_executor(self) -> ThreadPoolExecutor:
        if self._wt_pool is None:
            from concurrent.futures import ThreadPoolExecutor
            self._wt_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxd-worktree")
        return self._wt_pool

    def _wt_start(self, root: str) -> None:
        try:
            self._worktrees().hash_for(root)
            self._wt_ready.add(root)
        except Exception as e:
            self.log("worktree scan of %s failed: %r" % (root, e))

    def fold(self, ev: dict[str, Any], written: Written | None) -> list[dict[str, Any]]:
        """Fold a committed event into its session's reflex state; -> outcome rows."""
        if written is None or written.duplicate:
            return []
        row = dict(ev)
        row["seq"] = written.seq
        t0 = time.perf_counter()
        try:
            outcomes = self.reflexes.observe(row)
            if row.get("hook_event") == "SessionEnd":
                # Bound the daemon's memory: a resumed session is rebuilt from the
                # ledger on its next event (same prefix, same state).
                self.reflexes.forget(row.get("session_id"))
                self.session_facts.ended(row.get("session_id"))
            return outcomes
        except Exception as e:
            self.log("fold failed on %s: %r" % (ev.get("uid"), e))
            return []
        finally:
            self.fold_stats["events"] += 1
            self.fold_stats["seconds"] += time.perf_counter() - t0

    def warm(self) -> None:
        t0 = time.monotonic()
        try:
            self.signature("pytest -q 2>&1 | tail -5", "/")
            from reflex.safety import plane as safety  # noqa: F401 - imported to warm it
            from reflex import tokens
            tokens.count("warm")
            from reflex.digest import build_digest
            from reflex.arc import fold  # noqa: F401 - imported to warm it
            build_digest(b"warm\n", family="other", exit_code=0, command="true", handle="r:000000000000")
            # A search process started ahead, so the first `ctx search` does not wait for one; not
            # now: a session's first hooks arrive while the daemon starts, and they come first.
            import threading
            from reflex.daemon.linesearch import WORKERS
            timer = threading.Timer(SPARE_SEARCH_AFTER_S, WORKERS.refill)
            timer.daemon = True
            timer.start()
        except Exception as e:
            self.log("warm-up failed: %r" % (e,))
        # `ctx daemon status` says when the start-up work is done (benchmarks that measure a
        # steady state wait for it; a first request before then shares the CPU with it).
        self.warm_s = round(time.monotonic() - t0, 3)

