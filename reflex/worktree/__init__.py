"""Worktree freshness: one hash per project root, current within a debounce.

    registry.py   WorktreeRegistry: the roots the daemon tracks, and their hashes
    root.py       one tracked root: its index, its hash, its watch, its worker
    tree.py       the index behind a hash: every tracked path and its digest (stdlib)
    ignore.py     which paths do not count: a small gitignore matcher (stdlib)
    watch.py      the watchdog side: a recursive watch feeding the root's queue

Imports: the standard library and watchdog (watch.py only).
"""
