"""Worktree freshness: one hash per project root, current within a debounce.

Every run records the hash of the worktree it ran against, and the detectors
and retrieval compare hashes: equal means "nothing the project tracks changed
in between" (starvation, `miss(stale)`).  So a query must be O(1) - a string
read - and the hash must follow edits within ~200 ms.

How (the index and the hash themselves are in reflex.worktree_tree):

- The first `hash_for(root)` scans the root synchronously and starts a
  watchdog observer on it.  The observer starts *before* the scan, so a change
  racing the scan is both seen by it or not, and replayed from its event.
- Watchdog handlers only enqueue (an exception inside a handler silently stops
  all dispatch).  One worker thread per root drains the queue, debounced
  (`debounce_s` of quiet, at most `max_delay_s` after the first event), and
  re-stats the paths the events name; it never trusts an event's claims, so
  replays and reorderings are harmless.
- A full rescan (a fresh index swapped in) replaces incremental updates when
  the event queue overflows, when watchdog reports a kernel queue overflow
  (it only logs it, so we listen to its logger), after an internal error, and
  every `reconcile_s` as a safety net (a differing result is logged as drift).
- When the watch cannot be established (inotify watch or instance limit,
  ENOSPC/EMFILE, no watchdog) or covers fewer directories than the tree has
  (watchdog silently skips subdirectories past the watch limit), the root
  falls back to a polling rescan every max(`poll_interval_s`, 10 x scan
  time), with one clear log line.  `state().mode` says which.
- A root that does not exist hashes to MISSING_HASH (stable) and is looked at
  again at most every `missing_recheck_s`; a root that disappears goes back to
  that state.  A root with more than `max_entries` tracked entries (someone
  opened $HOME) is not tracked at all: its hash reads as always changed.
- Ignore rules are re-read when a .gitignore or .git/info/exclude changes;
  the global excludes file and ignore files above the root are read once.

Nothing here raises into the caller: an unexpected failure is logged and
answered with a fresh, never-repeating hash, so it reads as "changed" (the
conservative answer for both staleness and starvation).
"""

import errno
import logging
import os
import queue
import threading
import time
import weakref
from dataclasses import dataclass

from reflex import worktree_ignore, worktree_tree

MISSING_HASH = "wt:" + "0" * 32
MOVE_PAIR_S = 0.02

_STOP = object()
_WAKE = object()
_logger = logging.getLogger("reflex.worktree")


def unknown_hash():
    """A hash equal to nothing, for answers we could not compute."""
    return "wt:" + os.urandom(16).hex()


@dataclass(frozen=True)
class WorktreeState:
    root: str
    hash: str
    mode: str                 # watching | polling | missing | too-large | closed
    files: int
    dirs: int
    generation: int           # +1 on every hash change
    last_change: float        # wall clock of the last hash change (or the first scan)
    initial_scan_s: float
    last_scan_s: float
    full_rescans: int
    last_rescan_reason: str
    events: int               # watchdog events received
    overflows: int
    watches: int              # inotify watches held (-1 when unknown or not watching)
    ignored_dirs: int
    error: str


def full_scan_hash(root, *, exclude=(), always_ignored=worktree_tree.DEFAULT_ALWAYS_IGNORED, environ=None):
    """The hash a fresh scan of `root` gives, without watching (MISSING_HASH if absent)."""
    root = os.path.realpath(root)
    if not os.path.isdir(root):
        return MISSING_HASH
    index = _new_index(root, worktree_ignore.find_repo(root, environ), exclude, always_ignored, None)
    index.scan_all()
    return index.hash()


def _excluded_rels(root, exclude):
    rels = set()
    for path in exclude:
        real = os.path.realpath(path)
        if real != root and real.startswith(root + os.sep):
            rels.add(os.path.relpath(real, root).replace(os.sep, "/"))
    return rels


def _new_index(root, repo, exclude, always_ignored, log, max_entries=300_000):
    return worktree_tree.TreeIndex(root, repo, _excluded_rels(root, exclude), always_ignored, log, max_entries)


def _watch_filter():
    from watchdog import events as ev
    # No opened/closed-no-write/access: reads (grep -r, a test run) would flood
    # the queue; with a filter watchdog leaves them out of the inotify mask.
    return [ev.FileCreatedEvent, ev.DirCreatedEvent, ev.FileDeletedEvent, ev.DirDeletedEvent,
            ev.FileMovedEvent, ev.DirMovedEvent, ev.FileModifiedEvent, ev.FileAttribEvent,
            ev.FileClosedEvent]


def _make_tap(target):
    from watchdog.events import FileSystemEventHandler

    class _EventTap(FileSystemEventHandler):
        """Only enqueues: an exception here would stop watchdog's dispatch for good."""

        def dispatch(self, event):
            try:
                target.enqueue((event.event_type, event.src_path, event.dest_path, event.is_directory))
            except Exception:
                target.overflow = True

    return _EventTap()


class _OverflowTap(logging.Handler):
    """watchdog reports a kernel queue overflow only as a log line: turn it into rescans."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.registries = weakref.WeakSet()

    def emit(self, record):
        try:
            if "overflow" in str(record.msg).lower():
                for reg in list(self.registries):
                    reg._backend_overflow()
        except Exception:
            pass


_overflow_tap = _OverflowTap()
logging.getLogger("watchdog.observers").addHandler(_overflow_tap)


class _Root:
    """One watched root: its index, hash, observer and worker thread."""

    def __init__(self, reg, root, generation=0):
        self.reg = reg
        self.root = root
        self.root_prefix = root.rstrip(os.sep) + os.sep
        self.ready = threading.Event()
        self.lock = threading.Lock()
        self.stop_evt = threading.Event()
        self.queue = queue.Queue(maxsize=reg.queue_max)
        self.overflow = False
        self.rescan_reason = ""
        self.index = None
        self.repo = None
        self.observer = None
        self.worker = None
        self.hash = MISSING_HASH
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

    def log(self, msg):
        self.reg._emit(msg)

    # -- lifecycle (start runs in the first caller's thread) ----------------

    def start(self):
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

    def _give_up(self, mode, exc):
        self._stop_observer(self.observer)
        self.observer = None
        self.error = "%s: %s" % (type(exc).__name__, exc)
        self.mode = mode
        self.hash = None  # hash_for answers a fresh unknown hash each time: "changed"
        self.log("worktree: cannot track %s (%s); its hash reads as always changed" % (self.root, self.error))

    def _build_index(self):
        index = _new_index(self.root, self.repo, self.reg.exclude, self.reg.always_ignored, self.log,
                           self.reg.max_entries)
        index.scan_all()
        return index

    def _start_watch(self):
        try:
            from watchdog.observers import Observer
            observer = Observer()
            observer.start()
        except Exception as exc:
            self._fall_back(self._watch_error(exc))
            return False
        try:
            observer.schedule(_make_tap(self), self.root, recursive=True, event_filter=_watch_filter())
        except Exception as exc:
            self._stop_observer(observer)
            self._fall_back(self._watch_error(exc))
            return False
        self.observer = observer
        self._tune_move_pairing(observer)
        return True

    def _watch_error(self, exc):
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return "inotify watch limit reached (fs.inotify.max_user_watches=%s)" % _read_limit("max_user_watches")
        if isinstance(exc, OSError) and exc.errno == errno.EMFILE:
            return "inotify instance limit reached (fs.inotify.max_user_instances=%s)" % _read_limit(
                "max_user_instances")
        return "cannot watch (%s: %s)" % (type(exc).__name__, exc)

    @staticmethod
    def _tune_move_pairing(observer):
        # watchdog holds an unpaired IN_MOVED_FROM for 0.5 s to pair it with its
        # IN_MOVED_TO, and everything queued behind it waits too - so every
        # atomic-rename save would take >200 ms to show.  We re-stat both ends
        # of a move anyway, so an unpaired move costs us nothing.
        for emitter in list(observer.emitters):
            grouper = getattr(getattr(emitter, "_inotify", None), "_move_event_grouper", None)
            delayed = getattr(grouper, "_queue", None)
            if delayed is not None and hasattr(delayed, "delay"):
                delayed.delay = MOVE_PAIR_S

    def _watch_count(self):
        observer = self.observer
        if observer is None:
            return -1
        try:
            return sum(len(em._inotify._active_callbacks_by_path) for em in list(observer.emitters))
        except Exception:
            return -1  # not inotify, or watchdog internals moved: cannot tell, trust it

    def _watch_covers(self, retry=False):
        """Does the watch reach every directory we track?  (watchdog swallows
        ENOSPC below the root, leaving those directories silently unwatched.)"""
        for attempt in range(2 if retry else 1):
            self.watches = self._watch_count()
            needed = self.index.dirs + 1 - self.index.unreadable
            if self.watches < 0 or self.watches >= needed:
                return True
            if attempt == 0 and retry:
                time.sleep(0.05)  # directories created during the scan get their watch on their event
        return False

    def _fall_back(self, why):
        self._stop_observer(self.observer)
        self.observer = None
        self.watches = -1
        self.mode = "polling"
        self.error = why
        self.log("worktree: %s on %s; falling back to polling rescans every %.1fs or more"
                 % (why, self.root, self.reg.poll_interval_s))

    @staticmethod
    def _stop_observer(observer):
        if observer is None:
            return
        try:
            observer.stop()
            if observer.is_alive():
                observer.join(5)
        except Exception:
            pass

    def stop(self, mode="closed"):
        self.stop_evt.set()
        try:
            self.queue.put_nowait(_STOP)
        except queue.Full:
            pass
        self._stop_observer(self.observer)
        self.observer = None
        worker = self.worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(5)
        self.mode = mode

    # -- producers (any thread) ---------------------------------------------

    def enqueue(self, item):
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            self.overflow = True

    def request_rescan(self, reason):
        self.rescan_reason = reason
        self.enqueue(_WAKE)

    # -- the worker ---------------------------------------------------------

    def _run(self):
        while not self.stop_evt.is_set():
            try:
                if not self._cycle():
                    return
            except Exception as exc:
                self.log("worktree: worker error on %s (%s: %s); rescanning" % (self.root, type(exc).__name__, exc))
                try:
                    self._full_rescan("worker error")
                except Exception:
                    self.stop_evt.wait(1.0)

    def _cycle(self):
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

    def _process(self, batch):
        if self.overflow or self.rescan_reason:
            # Clear the flags before draining and scanning: anything lost after
            # this point sets them again and earns another rescan.
            reason = "event queue overflow" if self.overflow else self.rescan_reason
            self.overflows += self.overflow
            self.overflow, self.rescan_reason = False, ""
            self._drain()
            self._full_rescan(reason)
            return
        touched = {}
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
            kind, src, dest, is_dir = item
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
            with self.lock:
                for rel, subtree in sorted(touched.items(), key=lambda kv: kv[0].count("/")):
                    self.index.apply(rel, subtree)
                self._publish()

    def _repo_rules_touched(self, batch):
        exclude = self.root_prefix + os.path.join(".git", "info", "exclude")
        return any(item is not _STOP and item is not _WAKE and exclude in (item[1], item[2]) for item in batch)

    def _touch(self, touched, path, subtree):
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

    def _drain(self):
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                return
            if item is _STOP:
                self.stop_evt.set()

    def _on_idle(self):
        if not os.path.isdir(self.root):
            self._root_gone()
            return
        if self.mode == "polling":
            self._full_rescan("poll", quiet=True)
            return
        observer = self.observer
        alive = observer is not None and observer.is_alive() and all(
            em.is_alive() for em in list(observer.emitters))
        if not alive:
            self.log("worktree: watcher on %s stopped; restarting it" % self.root)
            self._stop_observer(observer)
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
                self._fall_back("inotify watch limit reached: %d of %d directories watched"
                                % (self.watches, self.index.dirs + 1))
                self._full_rescan("watch limit")
                return
        if time.monotonic() - self.last_full >= self.reg.reconcile_s:
            before = self.hash
            self._full_rescan("reconcile", quiet=True)
            if self.hash != before and self.queue.empty():
                self.log("worktree: reconcile on %s found drift (%s -> %s)" % (self.root, before, self.hash))

    def _full_rescan(self, reason, quiet=False):
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

    def _publish(self, initial=False):
        new = self.index.hash()
        if new != self.hash or initial:
            self.hash = new
            if not initial:
                self.generation += 1
            self.last_change = time.time()

    def _root_gone(self):
        self.log("worktree: root %s disappeared; hash is the missing sentinel" % self.root)
        self._stop_observer(self.observer)
        self.observer = None
        with self.lock:
            self.hash = MISSING_HASH
            self.generation += 1
            self.last_change = time.time()
            self.mode = "missing"
        self.checked_at = time.monotonic()
        self.stop_evt.set()

    def snapshot(self):
        with self.lock:
            index = self.index
            return WorktreeState(
                root=self.root, hash=self.hash, mode=self.mode,
                files=index.files if index else 0, dirs=index.dirs if index else 0,
                generation=self.generation, last_change=self.last_change,
                initial_scan_s=self.initial_scan_s, last_scan_s=self.last_scan_s,
                full_rescans=self.full_rescans, last_rescan_reason=self.last_rescan_reason,
                events=self.events, overflows=self.overflows, watches=self.watches,
                ignored_dirs=len(index.ignored_dirs) if index else 0, error=self.error)


def _read_limit(name):
    try:
        with open("/proc/sys/fs/inotify/" + name) as f:
            return f.read().strip()
    except OSError:
        return "?"


class WorktreeRegistry:
    """Worktree hashes for any number of project roots (see the module docstring)."""

    def __init__(self, debounce_s=0.05, log=None, *, max_delay_s=0.15, queue_max=100_000,
                 poll_interval_s=2.0, health_s=2.0, reconcile_s=600.0, missing_recheck_s=1.0,
                 init_timeout_s=120.0, exclude=None, always_ignored=worktree_tree.DEFAULT_ALWAYS_IGNORED,
                 environ=None, force_polling=False, max_entries=300_000):
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
        self._roots = {}
        self._canon = {}
        self._closed = False
        _overflow_tap.registries.add(self)

    def _emit(self, msg):
        try:
            if self._log is not None:
                self._log(msg)
            else:
                _logger.warning(msg)
        except Exception:
            pass

    # -- the contract -------------------------------------------------------

    def hash_for(self, root):
        """'wt:<hex>' for `root`; O(1) once the root has been scanned."""
        try:
            return self._root(root).hash or unknown_hash()
        except Exception as exc:
            self._emit("worktree: hash_for(%r) failed (%s: %s)" % (root, type(exc).__name__, exc))
            return unknown_hash()

    def state(self, root):
        try:
            return self._root(root).snapshot()
        except Exception as exc:
            self._emit("worktree: state(%r) failed (%s: %s)" % (root, type(exc).__name__, exc))
            return WorktreeState(str(root), unknown_hash(), "closed" if self._closed else "missing",
                                 0, 0, 0, 0.0, 0.0, 0.0, 0, "", 0, 0, -1, 0, "%s: %s" % (type(exc).__name__, exc))

    def changed_since(self, root, wt_hash):
        return self.hash_for(root) != wt_hash

    def close(self):
        with self._lock:
            self._closed = True
            roots = list(self._roots.values())
        for r in roots:
            try:
                r.stop()
            except Exception as exc:
                self._emit("worktree: stopping %s failed (%s)" % (r.root, exc))
        _overflow_tap.registries.discard(self)

    # -- internals ----------------------------------------------------------

    def _root(self, root):
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

    def _replace(self, canon, old):
        with self._lock:
            current = self._roots.get(canon)
            if current is not old:
                return current  # another thread got here first
            if self._closed:
                raise RuntimeError("worktree registry is closed")
            if old is not None:
                old.checked_at = time.monotonic()
                if not os.path.isdir(canon):
                    return old
                old.stop(mode="missing")
            r = _Root(self, canon, generation=old.generation + 1 if old else 0)
            self._roots[canon] = r
        r.start()
        return r

    def _backend_overflow(self):
        for r in list(self._roots.values()):
            if r.mode == "watching":
                r.request_rescan("watchdog queue overflow")
