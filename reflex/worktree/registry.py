"""Worktree freshness: one hash per project root, current within a debounce.

Every run records the hash of the worktree it ran against; detectors and
retrieval compare hashes - equal means "nothing the project tracks changed in
between" (starvation, `miss(stale)`).  So a query must be O(1), a string
read, and the hash must follow an edit within ~200 ms.

    reg = WorktreeRegistry(debounce_s=0.05, log=print)
    h = reg.hash_for(root)          # "wt:<32 hex>"; the first call scans and starts watching
    reg.state(root)                 # WorktreeState: counts, mode, generation, scan stats
    reg.changed_since(root, h)      # hash_for(root) != h
    reg.close()                     # stops observers and workers

The parts: reflex.worktree.ignore (which paths do not count: the project's
gitignore rules), reflex.worktree.tree (the index and the order-independent
hash of every tracked file's path and bytes - content, read only when its
stat data moved; harness records count by path; the tradeoffs are there),
reflex.worktree.watch (watchdog, and what it does not tell handlers),
reflex.worktree.root (one root's tracker: watch first, scan, then a debounced
worker; rescans on overflow; polling when the watch cannot be had).

Answers, never exceptions:
- a root that does not exist hashes to MISSING_HASH (stable, logged once) and
  is looked at again at most every `missing_recheck_s`; a root that
  disappears goes back to that state;
- a root with more than `max_entries` tracked entries (someone opened $HOME),
  an internal failure, or a closed registry answer a fresh random hash each
  call, so they read as "changed" - the conservative answer for staleness and
  for starvation alike;
- `state().mode` says how current the hash is: "watching" (within the
  debounce), "polling" (within a poll interval), "missing", "too-large",
  "closed".

ctx's own home (CTX_HOME and the run dir) is excluded when it lies inside a
root: the ledger is written on every run and must not look like an edit.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping

from reflex.worktree import ignore as worktree_ignore
from reflex.worktree import tree as worktree_tree
from reflex.worktree import watch
from reflex.worktree.root import (
    MISSING_HASH,
    RootTracker,
    WorktreeState,
    new_index,
    unknown_hash,
)

__all__ = ["MISSING_HASH", "WorktreeRegistry", "WorktreeState", "full_scan_hash", "unknown_hash"]

_logger = logging.getLogger("reflex.worktree.registry")


def full_scan_hash(root: str, *, exclude: Iterable[str] = (),
                   always_ignored: Iterable[str] = worktree_tree.DEFAULT_ALWAYS_IGNORED,
                   environ: Mapping[str, str] | None = None, max_entries: int = 300_000) -> str:
    """The hash a fresh scan of `root` gives, without watching (MISSING_HASH if absent)."""
    root = os.path.realpath(root)
    if not os.path.isdir(root):
        return MISSING_HASH
    index = new_index(root, worktree_ignore.find_repo(root, environ), exclude, always_ignored, None, max_entries)
    index.scan_all()
    return index.hash()


class WorktreeRegistry:
    """Worktree hashes for any number of project roots (see the module docstring)."""

    def __init__(self, debounce_s: float = 0.05, log: Callable[[str], object] | None = None, *,
                 max_delay_s: float = 0.15, queue_max: int = 100_000, poll_interval_s: float = 2.0,
                 health_s: float = 2.0, reconcile_s: float = 600.0, missing_recheck_s: float = 1.0,
                 init_timeout_s: float = 120.0, exclude: Iterable[str] | None = None,
                 always_ignored: Iterable[str] = worktree_tree.DEFAULT_ALWAYS_IGNORED,
                 environ: Mapping[str, str] | None = None, force_polling: bool = False,
                 max_entries: int = 300_000) -> None:
        self.debounce_s = debounce_s
        self.max_delay_s = max(max_delay_s, debounce_s)
        self.queue_max = queue_max
        self.poll_interval_s = poll_interval_s
        self.health_s = health_s
        self.reconcile_s = reconcile_s
        self.missing_recheck_s = missing_recheck_s
        self.init_timeout_s = init_timeout_s
        self.always_ignored = frozenset(always_ignored)
        self.environ = environ
        self.force_polling = force_polling
        self.max_entries = max_entries
        self._log = log
        if exclude is None:
            from reflex import paths as paths_mod
            resolved = paths_mod.resolve(environ)
            exclude = (resolved.home, resolved.run_dir)
        self.exclude = tuple(exclude)
        self._lock = threading.Lock()
        self._roots: dict[str, RootTracker] = {}
        self._canon: dict[str | os.PathLike[str], str] = {}
        self._closed = False
        watch.overflow_tap.listeners.add(self)

    def emit(self, msg: str) -> None:
        try:
            if self._log is not None:
                self._log(msg)
            else:
                _logger.warning(msg)
        except Exception:
            pass

    # -- the contract -------------------------------------------------------

    def hash_for(self, root: str | os.PathLike[str]) -> str:
        """'wt:<hex>' for `root`; O(1) once the root has been scanned."""
        try:
            return self._root(root).hash or unknown_hash()
        except Exception as exc:
            self.emit("worktree: hash_for(%r) failed (%s: %s)" % (root, type(exc).__name__, exc))
            return unknown_hash()

    def state(self, root: str | os.PathLike[str]) -> WorktreeState:
        try:
            return self._root(root).snapshot()
        except Exception as exc:
            self.emit("worktree: state(%r) failed (%s: %s)" % (root, type(exc).__name__, exc))
            return WorktreeState(str(root), unknown_hash(), "closed" if self._closed else "missing",
                                 0, 0, 0, 0.0, 0.0, 0.0, 0, "", 0, 0, -1, 0, "%s: %s" % (type(exc).__name__, exc))

    def changed_since(self, root: str | os.PathLike[str], wt_hash: str) -> bool:
        return self.hash_for(root) != wt_hash

    def close(self) -> None:
        with self._lock:
            self._closed = True
            roots = list(self._roots.values())
        for r in roots:
            try:
                r.stop()
            except Exception as exc:
                self.emit("worktree: stopping %s failed (%s)" % (r.root, exc))
        watch.overflow_tap.listeners.discard(self)

    # -- internals ----------------------------------------------------------

    def _root(self, root: str | os.PathLike[str]) -> RootTracker:
        if self._closed:
            raise RuntimeError("worktree registry is closed")  # its hashes are no longer maintained
        canon = self._canon.get(root)
        if canon is None:
            canon = os.path.realpath(os.path.abspath(os.path.expanduser(os.fspath(root))))
            if os.path.isdir(canon):
                self._canon[root] = canon  # a missing root is re-resolved: it may appear as a symlink
        r = self._roots.get(canon)
        if r is None or (r.mode == "missing" and r.ready.is_set()
                         and time.monotonic() - r.checked_at >= self.missing_recheck_s):
            r = self._replace(canon, r)
        if not r.ready.is_set() and not r.ready.wait(self.init_timeout_s):
            raise TimeoutError("initial scan of %s still running" % canon)
        return r

    def _replace(self, canon: str, old: RootTracker | None) -> RootTracker:
        with self._lock:
            current = self._roots.get(canon)
            if current is not old and current is not None:
                return current  # another thread got here first
            if self._closed:
                raise RuntimeError("worktree registry is closed")
            if old is not None:
                old.checked_at = time.monotonic()
                if not os.path.isdir(canon):
                    return old
                old.stop(mode="missing")
            r = RootTracker(self, canon, generation=old.generation + 1 if old else 0)
            self._roots[canon] = r
        r.start()
        return r

    def backend_overflow(self) -> None:
        for r in list(self._roots.values()):
            r.backend_overflow()
