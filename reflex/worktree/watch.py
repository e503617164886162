"""The watchdog side of worktree freshness: a recursive watch whose handler
only enqueues, plus what watchdog knows but does not tell its handlers.

watchdog (7.x, inotify backend) is relied on for events and nothing else;
three of its behaviours need working around, each in one place here:

- A kernel queue overflow (IN_Q_OVERFLOW) is only logged.  `overflow_tap`
  listens to watchdog's logger and asks the trackers to rescan.
- Past the inotify watch limit watchdog swallows ENOSPC for subdirectories
  (only the root's failure reaches `schedule`), leaving them silently
  unwatched.  `watch_count` reads how many watches it holds so the tracker
  can compare with the directories it tracks.
- An unpaired IN_MOVED_FROM (a file moved out of the tree) is held 0.5 s to
  pair it with an IN_MOVED_TO, and every event queued behind it waits too.
  The tracker re-stats both ends of any move, so pairing buys it nothing:
  `start_observer` shortens the hold to MOVE_PAIR_S.

The last two read watchdog internals; when those move, `watch_count` answers
-1 ("cannot tell", trusted) and the hold stays at 0.5 s - slower, not wrong.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any, Protocol

from reflex.errors import CtxError

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers.api import BaseObserver

MOVE_PAIR_S = 0.02


class WatchFailed(CtxError):
    """The watch could not be established; the message says why, for the log."""


class EventSink(Protocol):
    """Where the handler puts watch events (a RootTracker): it only enqueues."""

    overflow: bool

    def enqueue(self, item: object) -> None: ...


class OverflowListener(Protocol):
    def backend_overflow(self) -> None: ...


def describe(exc: BaseException) -> str:
    from reflex import platform
    # inotify's limits on Linux, kqueue's open-file limit on macOS
    return platform.watch_limit_message(exc) or "cannot watch (%s: %s)" % (type(exc).__name__, exc)


def _event_filter() -> list[type[FileSystemEvent]]:
    from watchdog import events as ev
    # No opened / closed-no-write: reads (grep -r, a test run) would flood the
    # queue; with a filter watchdog leaves them out of the inotify mask too.
    # No DirModifiedEvent: it only repeats that a child changed.
    return [ev.FileCreatedEvent, ev.DirCreatedEvent, ev.FileDeletedEvent, ev.DirDeletedEvent,
            ev.FileMovedEvent, ev.DirMovedEvent, ev.FileModifiedEvent, ev.FileAttribEvent,
            ev.FileClosedEvent]


def _make_handler(sink: EventSink) -> FileSystemEventHandler:
    from watchdog.events import FileSystemEventHandler

    class _EnqueueOnly(FileSystemEventHandler):
        """An exception in a handler stops watchdog's dispatch for good: enqueue, nothing else."""

        def dispatch(self, event: FileSystemEvent) -> None:
            try:
                sink.enqueue((event.event_type, event.src_path, event.dest_path, event.is_directory))
            except Exception:
                sink.overflow = True  # lost an event: the tracker rescans

    return _EnqueueOnly()


def start_observer(root: str, sink: EventSink) -> BaseObserver:
    """A running recursive observer on `root` feeding `sink.enqueue`; raises WatchFailed."""
    try:
        import warnings

        from watchdog.observers import Observer
        # watchdog warns when `mkdir -p` makes it add a watch twice; harmless, and noise in our logs.
        warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning,
                                module="watchdog")
        observer = Observer()
        observer.start()
    except Exception as exc:
        raise WatchFailed(describe(exc)) from exc
    try:
        observer.schedule(_make_handler(sink), root, recursive=True, event_filter=_event_filter())
    except Exception as exc:
        stop_observer(observer)
        raise WatchFailed(describe(exc)) from exc
    for emitter in list(observer.emitters):
        grouper = getattr(getattr(emitter, "_inotify", None), "_move_event_grouper", None)
        delayed = getattr(grouper, "_queue", None)
        if delayed is not None and hasattr(delayed, "delay"):
            delayed.delay = MOVE_PAIR_S
    return observer


def stop_observer(observer: BaseObserver | None) -> None:
    if observer is None:
        return
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(5)
    except Exception:
        pass


def observer_alive(observer: BaseObserver) -> bool:
    try:
        return observer.is_alive() and all(em.is_alive() for em in list(observer.emitters))
    except Exception:
        return False


def watch_count(observer: BaseObserver) -> int:
    """inotify watches the observer holds, or -1 when that cannot be read."""
    try:
        # Private to the inotify emitter (see the module docstring): any change lands in the except.
        emitters: list[Any] = list(observer.emitters)
        return sum(len(em._inotify._active_callbacks_by_path) for em in emitters)
    except Exception:
        return -1


class _OverflowTap(logging.Handler):
    """Turns watchdog's "queue overflowed" log lines into rescan requests."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.listeners: weakref.WeakSet[OverflowListener] = weakref.WeakSet()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if "overflow" in str(record.msg).lower():
                for listener in list(self.listeners):
                    listener.backend_overflow()
        except Exception:
            pass


overflow_tap = _OverflowTap()
logging.getLogger("watchdog.observers").addHandler(overflow_tap)
