"""Turning a ctx run capture into a blob and a digest (runs in a worker thread).

The bytes are stored as the capture holds them, before any digesting, so a digest
bug can never lose output: if the engine fails, the run is still recorded and the
agent gets the captured output (print_raw).

Everything here is bounded by the capture limit (reflex.shim.capture): `ctx run` never
writes more, and a capture file that is larger anyway (an older client, a run
spooled before the limit existed) is read as its head and tail only, with the same
marker, so the daemon never holds more than the limit of one output in memory and
never counts the tokens of more than its first megabyte (follow.COUNT_LIMIT).  The
digest header says what was kept and what was counted.
"""

from __future__ import annotations

import os
import traceback
from typing import TYPE_CHECKING, Any

from reflex.shim import capture as capture_mod
from reflex.daemon.follow import COUNT_LIMIT

if TYPE_CHECKING:
    from reflex.daemon.context import DaemonContext
    from reflex.digest import Digest

# A marker line is under 200 bytes; what the daemon reads of a capture is bounded by this much more.
MARKER_ROOM = 512
VIEW_COUNT_CHARS = 256 * 1024


def read_capture(path: str, claim: dict[str, Any] | None, limit: int) -> tuple[bytes, capture_mod.Kept]:
    """-> (stored bytes, Kept).  Reads at most limit + MARKER_ROOM bytes of the file.

    `claim`: what ctx run says it kept (its run.finish fields); trusted only as far as
    the file agrees with it."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size <= limit + MARKER_ROOM:
            raw = f.read(limit + MARKER_ROOM)
            return raw, _checked_claim(raw, claim)
        head, tail = capture_mod.split_limit(limit)
        first = f.read(head)
        f.seek(size - tail)
        last = f.read(tail)
    last = last[capture_mod.tail_start(last):]
    total = max(size, _int(claim, "output_bytes") or 0)
    elided = total - len(first) - len(last)
    note = (b"" if first.endswith(b"\n") else b"\n") + capture_mod.marker("output", total, elided, len(first),
                                                                          len(last))
    return first + note + last, capture_mod.Kept(total, len(first), len(note), len(last), elided)


def _checked_claim(raw: bytes, claim: dict[str, Any] | None) -> capture_mod.Kept:
    whole = capture_mod.Kept(len(raw), len(raw))
    elided = _int(claim, "elided_bytes")
    if not elided:
        return whole
    head, marker_len, total = _int(claim, "kept_head"), _int(claim, "marker_len"), _int(claim, "output_bytes")
    if head is None or marker_len is None or total is None or head + marker_len > len(raw):
        return whole
    if not raw[head:head + marker_len].lstrip(b"\n").startswith(capture_mod.MARKER_PREFIX):
        return whole
    tail = len(raw) - head - marker_len
    return capture_mod.Kept(total, head, marker_len, tail, elided, (claim or {}).get("capture_error"))


def _int(d: dict[str, Any] | None, key: str) -> int | None:
    v = (d or {}).get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


class RunStore:
    def __init__(self, ctx: DaemonContext) -> None:
        self.ctx = ctx
        self.limit = capture_mod.limit_from_env()

    def finish(self, capture: str, family: str, exit_code: int | None, command: str, density: str,
               reason: str | None, view: str | None, cwd: str | None, uid: str | None = None,
               claim: dict[str, Any] | None = None, passthrough: bool = False, rewritten: bool = False,
               ) -> tuple[str, capture_mod.Kept, Digest | None, str | None, dict[str, Any]]:
        """-> (blob id, Kept, Digest | None, error text | None, extra data for the run event).

        passthrough: `ctx run --raw`, stored but not digested. rewritten: ctx run replaced
        secret values in the capture after the follower may have counted the original bytes,
        so its count is dropped."""
        import time
        t0 = time.perf_counter()
        raw, kept = read_capture(capture, claim, self.limit)
        bid = self.ctx.blobs.put(raw)
        t1 = time.perf_counter()
        from reflex import blobs
        handle = blobs.handle_of(bid)
        unchanged = kept.head if kept.elided else len(raw)
        # Raw tokens are counted on a bounded prefix, mostly while the command ran (follow.py);
        # never on the tail of an elided output.
        counted = min(kept.head if kept.elided else len(raw), COUNT_LIMIT)
        raw_tokens = self.ctx.followers.finish(uid, raw, unchanged, counted) if uid else None
        if rewritten:
            raw_tokens = None  # the follower counted bytes that redaction has since replaced
        if passthrough:
            return bid, kept, None, None, {}
        counted_while_running = raw_tokens is not None
        if raw_tokens is None and counted < len(raw):
            from reflex.digest import layout
            raw_tokens = layout.count_raw(raw[:counted])
        t2 = time.perf_counter()
        try:
            from reflex.digest import build_digest
            d = build_digest(raw, family=family, exit_code=exit_code, command=command, handle=handle,
                             density=density, reason=reason, requested_view=view, cwd=cwd,
                             raw_tokens=raw_tokens, kept=kept if kept.elided else None,
                             counted_bytes=counted if counted < len(raw) else None)
        except Exception as e:  # never lose a run to a digest bug
            self.ctx.log("digest failed for %s (%s): %r\n%s" % (handle, family, e, traceback.format_exc()))
            return bid, kept, None, "%s: %s" % (type(e).__name__, e), {}
        t3 = time.perf_counter()
        extra = self._baselines(raw, exit_code, command, view)
        extra["timing_ms"] = {"store": round((t1 - t0) * 1000, 2), "follow": round((t2 - t1) * 1000, 2),
                              "digest": round((t3 - t2) * 1000, 2), "counted_while_running": counted_while_running}
        return bid, kept, d, None, extra

    def _baselines(self, raw: bytes, exit_code: int | None, command: str, view: str | None) -> dict[str, Any]:
        """What the harness alone would have delivered (the savings baseline, counted exactly)."""
        extra: dict[str, Any] = {}
        try:
            from reflex import tokens
            from reflex.harness.claude.truncation import harness_tokens
            text = raw.decode("utf-8", "replace")
            if view is not None:
                # The agent's own slicer would have delivered this view without ctx (counted
                # only when small: the harness baseline below is what stats use).
                if len(view) <= VIEW_COUNT_CHARS:
                    extra["view_tokens"] = tokens.count(view)
                extra["harness_tokens"] = harness_tokens(view, exit_code, command)
            else:
                extra["harness_tokens"] = harness_tokens(text, exit_code, command)
        except Exception as e:
            self.ctx.log("baseline count failed: %r" % (e,))
        return extra
