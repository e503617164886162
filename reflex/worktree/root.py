"""One tracked root: its index, its hash, its watch and the worker that
keeps the three in step (the registry in reflex.worktree.registry owns the trackers).

- `start()` runs in the first caller's thread: it starts the watch *before*
  the initial scan, so a change racing the scan is replayed from its event.
- Watch events are queued (see reflex.worktree.watch); one worker thread per
  root drains them, debounced (`debounce_s` of quiet, at most `max_delay_s`
  after the first event), and re-stats the paths they name.  It never trusts
  an event's claims, so replayed and reordered events are harmless.
- A full rescan (a fresh index swapped in) replaces incremental updates when
  the queue overflows, when watchdog reports a kernel overflow, when
  .git/info/exclude changes, after an internal error, and every
  `reconcile_s` as a safety net (a differing result is logged as drift).
- When the watch cannot be established, or holds fewer inotify watches than
  the tree has directories (twice in a row, so a directory caught mid-creation
  does not count), the root is polled: a full rescan every
  max(`poll_interval_s`, 10 x last scan time).
- Only the worker mutates the index, under `lock`; `hash` is replaced whole,
  so readers take it without a lock.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from reflex.worktree import ignore as worktree_ignore
from reflex.worktree import tree as worktree_tree
from reflex.worktree import watch

MISSING_HASH = "wt:" + "0" * 32

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver

_STOP = object()
_WAKE = object()

# What the watch handler enqueues: (event type, source path, destination path, is a directory);
# the queue also carries the _STOP and _WAKE sentinels.
WatchEvent = tuple[str, "str | bytes", "str | bytes", bool]


class Settings(Protocol):
    """What a tracker reads from the registry that owns it (a WorktreeRegistry; a protocol,
    so this module need not import the registry, which imports it)."""

    queue_max: int
    debounce_s: float
    max_delay_s: float
    poll_interval_s: float
    health_s: float
    reconcile_s: float
    max_entries: int
    always_ignored: frozenset[str]
    exclude: tuple[str, ...]
    environ: Mapping[str, str] | None
    force_polling: bool

    def emit(self, msg: str) -> None: ...


def unknown_hash() -> str:
    """A hash equal to nothing, for answers we could not compute: reads as "changed"."""
    return "wt:" + os.urandom(16).hex()


@dataclass(frozen=True)
class WorktreeState:
    root: str
    hash: str | None          # None once the root cannot be tracked (mode too-large or missing)
    mode: str                 # watching | polling | missing | too-large | closed
    files: int
    dirs: int
    generation: int           # +1 on every hash change
    last_change: float        # wall clock of the last hash change (or the first scan)
    initial_scan_s: float
    last_scan_s: float
    full_rescans: int
    last_rescan_reason: str
    events: int               # watch events processed
    overflows: int
    watches: int              # inotify watches held (-1 when unknown or not watching)
    ignored_dirs: int
    error: str
    # How long the tree has been quiet (no watch event queued or being applied).  A hash read
    # while events are still in flight may lag an edit made milliseconds ago; callers that
    # compare hashes (the starvation detector) treat an unsettled hash as unknown.
    quiet_s: float = 0.0
    pending: bool = False


def _excluded_rels(root: str, exclude: Iterable[str]) -> set[str]:
    rels = set()
    for path in exclude:
        real = os.path.realpath(path)
        if real != root and real.startswith(root + os.sep):
            rels.add(os.path.relpath(real, root).replace(os.sep, "/"))
    return rels


def new_index(root: str, repo: worktree_ignore.Repo, exclude: Iterable[str], always_ignored: Iterable[str],
              log: Callable[[str], None] | None, max_entries: int = 300_000,
              content_cache: worktree_tree.ContentCache | None = None) -> worktree_tree.TreeIndex:
    return worktree_tree.TreeIndex(root, repo, _excluded_rels(root, exclude), always_ignored, log, max_entries,
                                   content_cache)


class RootTracker:
    """One root: its index, hash, observer and worker thread."""

    def __init__(self, reg: Settings, root: str, generation: int = 0) -> None:
        self.reg = reg
        self.root = root
        self.root_prefix = root.rstrip(os.sep) + os.sep
        self.ready = threading.Event()
        self.lock = threading.Lock()
        self.stop_evt = threading.Event()
        self.queue: queue.Queue[object] = queue.Queue(maxsize=reg.queue_max)
        self.overflow = False
        self.rescan_reason = ""
        self.index: worktree_tree.TreeIndex | None = None
        self.content_cache: worktree_tree.ContentCache = {}
        self.repo: worktree_ignore.Repo | None = None
        self.observer: BaseObserver | None = None
        self.worker: threading.Thread | None = None
        self.hash: str | None = MISSING_HASH
        self.mode = "starting"
        self.generation = generation
        self.last_change = time.time()
        self.checked_at = time.monotonic()
        self.initial_scan_s = self.last_scan_s = 0.0
        self.last_full = time.monotonic()
        self.full_rescans = self.events = self.overflows = 0
        self.last_rescan_reason = self.error = ""
        self.watches = -1
        self.short_checks = 0

    def log(self, msg: str) -> None:
        self.reg.emit(msg)

    # -- lifecycle (start runs in the first caller's thread) ----------------

    def start(self) -> None:
        try:
            if not os.path.isdir(self.root):
                self.mode = "missing"
                self.log("worktree: root %s does not exist; hash is the missing sentinel" % self.root)
                return
            self.repo = worktree_ignore.find_repo(self.root, self.reg.environ)
            watching = False if self.reg.force_polling else self._start_watch()
            t0 = time.perf_counter()
            index = self._build_index()
            self.initial_scan_s = self.last_scan_s = time.perf_counter() - t0
            with self.lock:
                self.index = index
                self._publish(initial=True)
            if watching and not self._watch_covers(retry=True):
                self._fall_back("inotify watch limit reached: %s of %d directories watched"
                                % (self.watches, index.dirs + 1))
                watching = False
            elif not watching and self.mode != "polling":
                self._fall_back("watching disabled")
            if watching:
                self.mode = "watching"
            self.worker = threading.Thread(target=self._run, name="ctx-worktree", daemon=True)
            self.worker.start()
        except worktree_tree.TreeTooLarge as exc:
            self._give_up("too-large", exc)
        except Exception as exc:
            self._give_up("missing", exc)  # "missing" is looked at again later
        finally:
            self.ready.set()

    def _give_up(self, mode: str, exc: BaseException) -> None:
        watch.stop_observer(self.observer)
        self.observer = None
        self.error = "%s: %s" % (type(exc).__name__, exc)
        self.mode = mode
        self.hash = None  # hash_for answers a fresh unknown hash each time: "changed"
        self.log("worktree: cannot track %s (%s); its hash reads as always changed" % (self.root, self.error))

    def _build_index(self) -> worktree_tree.TreeIndex:
        assert self.repo is not None  # start() finds the repository before the first scan
        # One content cache per root across full rescans: a rescan re-reads only what moved.
        index = new_index(self.root, self.repo, self.reg.exclude, self.reg.always_ignored, self.log,
                          self.reg.max_entries, self.content_cache)
        index.scan_all()
        return index

    def _start_watch(self) -> bool:
        try:
            self.observer = watch.start_observer(self.root, self)
            return True
        except watch.WatchFailed as exc:
            self._fall_back(str(exc))
            return False

    def _watch_covers(self, retry: bool = False) -> bool:
        """Does the watch reach every directory we track?  (watchdog swallows
        ENOSPC below the root, leaving those directories silently unwatched.)"""
        assert self.index is not None  # asked only after the initial scan
        for attempt in range(2 if retry else 1):
            self.watches = watch.watch_count(self.observer) if self.observer else -1
            needed = self.index.dirs + 1 - self.index.unreadable
            if self.watches < 0 or self.watches >= needed:
                return True
            if attempt == 0 and retry:
                time.sleep(0.05)  # directories created during the scan get their watch on their event
        return False

    def _fall_back(self, why: str) -> None:
        watch.stop_observer(self.observer)
        self.observer = None
        self.watches = -1
        self.mode = "polling"
        self.error = why
        self.log("worktree: %s on %s; falling back to polling rescans every %.1fs or more"
                 % (why, self.root, self.reg.poll_interval_s))

    def stop(self, mode: str = "closed") -> None:
        self.stop_evt.set()
        try:
            self.queue.put_nowait(_STOP)
        except queue.Full:
            pass
        watch.stop_observer(self.observer)
        self.observer = None
        worker = self.worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(5)
        self.mode = mode

    # -- producers (any thread) ---------------------------------------------

    def enqueue(self, item: object) -> None:
        self.last_activity = time.monotonic()
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            self.overflow = True

    def backend_overflow(self) -> None:
        if self.mode in ("starting", "watching"):
            self.request_rescan("watchdog queue overflow")

    def request_rescan(self, reason: str) -> None:
        self.rescan_reason = reason
        self.enqueue(_WAKE)

    # -- the worker ---------------------------------------------------------

    def _run(self) -> None:
        while not self.stop_evt.is_set():
            try:
                try:
                    if not self._cycle():
                        return
                except worktree_tree.TreeTooLarge:
                    raise
                except Exception as exc:
                    self.log("worktree: worker error on %s (%s: %s); rescanning"
                             % (self.root, type(exc).__name__, exc))
                    self._full_rescan("worker error")
            except worktree_tree.TreeTooLarge as exc:
                with self.lock:
                    self._give_up("too-large", exc)
                return
            except Exception:
                self.stop_evt.wait(1.0)  # the rescan failed too: try again, slowly

    def _cycle(self) -> bool:
        if self.mode == "polling":
            timeout = max(self.reg.poll_interval_s, 10 * self.last_scan_s)
        else:
            timeout = self.reg.health_s
        try:
            item = self.queue.get(timeout=timeout)
        except queue.Empty:
            self._on_idle()
            return not self.stop_evt.is_set()
        batch = [item]
        first = last = time.monotonic()
        while item is not _STOP:
            wait = min(last + self.reg.debounce_s, first + self.reg.max_delay_s) - time.monotonic()
            if wait <= 0:
                break
            try:
                item = self.queue.get(timeout=wait)
            except queue.Empty:
                break
            batch.append(item)
            last = time.monotonic()
        if self.stop_evt.is_set():
            return False
        self._process(batch)
        return _STOP not in batch

    def _process(self, batch: list[object]) -> None:
        if self.overflow or self.rescan_reason:
            # Clear the flags before draining and scanning: anything lost after
            # this point sets them again and earns another rescan.
            reason = "event queue overflow" if self.overflow else self.rescan_reason
            self.overflows += self.overflow
            self.overflow, self.rescan_reason = False, ""
            self._drain()
            self._full_rescan(reason)
            return
        touched: dict[str, bool] = {}
        root_gone = False
        if self._repo_rules_touched(batch):
            self.repo = worktree_ignore.find_repo(self.root, self.reg.environ)
            self._drain()
            self._full_rescan("info/exclude changed")
            return
        for item in batch:
            if item is _STOP or item is _WAKE:
                continue
            self.events += 1
            kind, src, dest, is_dir = cast(WatchEvent, item)
            if kind == "moved":
                root_gone |= self._touch(touched, src, False)
                self._touch(touched, dest, is_dir)
            elif kind == "created":
                self._touch(touched, src, is_dir)
            elif kind == "deleted":
                root_gone |= self._touch(touched, src, False)
            elif not is_dir:
                self._touch(touched, src, False)
        if root_gone and not os.path.isdir(self.root):
            self._root_gone()
            return
        if touched:
            assert self.index is not None  # the worker starts after the initial scan
            with self.lock:
                for rel, subtree in sorted(touched.items(), key=lambda kv: kv[0].count("/")):
                    self.index.apply(rel, subtree)
                self._publish()

    def _repo_rules_touched(self, batch: list[object]) -> bool:
        exclude = self.root_prefix + os.path.join(".git", "info", "exclude")
        return any(item is not _STOP and item is not _WAKE and exclude in cast(WatchEvent, item)[1:3]
                   for item in batch)

    def _touch(self, touched: dict[str, bool], path: str | bytes, subtree: bool) -> bool:
        """Record `path` (an absolute path from watchdog); True if it is the root itself."""
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not path.startswith(self.root_prefix):
            return path.rstrip(os.sep) == self.root
        rel = path[len(self.root_prefix):]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if rel:
            touched[rel] = touched.get(rel, False) or subtree
        return False

    def _drain(self) -> None:
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                return
            if item is _STOP:
                self.stop_evt.set()

    def _on_idle(self) -> None:
        if not os.path.isdir(self.root):
            self._root_gone()
            return
        if self.mode == "polling":
            self._full_rescan("poll", quiet=True)
            return
        observer = self.observer
        if observer is None or not watch.observer_alive(observer):
            self.log("worktree: watcher on %s stopped; restarting it" % self.root)
            watch.stop_observer(observer)
            self.observer = None
            if not self._start_watch():
                self._full_rescan("watcher lost")
                return
            self._full_rescan("watcher restarted")
        if self._watch_covers():
            self.short_checks = 0
        else:
            self.short_checks += 1
            if self.short_checks >= 2:  # twice in a row: not a directory caught mid-creation
                assert self.index is not None  # the worker starts after the initial scan
                self._fall_back("inotify watch limit reached: %d of %d directories watched"
                                % (self.watches, self.index.dirs + 1))
                self._full_rescan("watch limit")
                return
        if time.monotonic() - self.last_full >= self.reg.reconcile_s:
            before = self.hash
            self._full_rescan("reconcile", quiet=True)
            if self.hash != before and self.queue.empty():
                self.log("worktree: reconcile on %s found drift (%s -> %s)" % (self.root, before, self.hash))

    def _full_rescan(self, reason: str, quiet: bool = False) -> None:
        t0 = time.perf_counter()
        index = self._build_index()
        elapsed = time.perf_counter() - t0
        with self.lock:
            self.index = index
            self.last_scan_s = elapsed
            self.last_full = time.monotonic()
            self.full_rescans += 1
            self.last_rescan_reason = reason
            self._publish()
        if not quiet:
            self.log("worktree: full rescan of %s (%s): %d files in %.3fs" % (self.root, reason, index.files, elapsed))

    def _publish(self, initial: bool = False) -> None:
        assert self.index is not None  # published only after a scan
        new = self.index.hash()
        if new != self.hash or initial:
            self.hash = new
            if not initial:
                self.generation += 1
            self.last_change = time.time()

    def _root_gone(self) -> None:
        self.log("worktree: root %s disappeared; hash is the missing sentinel" % self.root)
        watch.stop_observer(self.observer)
        self.observer = None
        with self.lock:
            self.hash = MISSING_HASH
            self.generation += 1
            self.last_change = time.time()
            self.mode = "missing"
        self.checked_at = time.monotonic()
        self.stop_evt.set()

    def snapshot(self) -> WorktreeState:
        with self.lock:
            index = self.index
            return WorktreeState(
                root=self.root, hash=self.hash, mode=self.mode,
                files=index.files if index else 0, dirs=index.dirs if index else 0,
                generation=self.generation, last_change=self.last_change,
                initial_scan_s=self.initial_scan_s, last_scan_s=self.last_scan_s,
                full_rescans=self.full_rescans, last_rescan_reason=self.last_rescan_reason,
                events=self.events, overflows=self.overflows, watches=self.watches,
                ignored_dirs=len(index.ignored_dirs) if index else 0, error=self.error,
                quiet_s=time.monotonic() - getattr(self, "last_activity", 0.0),
                pending=not self.queue.empty())
