"""Turning a ctx run capture into a blob and a digest (runs in a worker thread).

The raw bytes are stored exactly as the command produced them, before any
digesting, so a digest bug can never lose output: if the engine fails, the
run is still recorded and the agent gets the raw output (print_raw).
"""

import traceback


class RunStore:
    def __init__(self, ctx):
        self.ctx = ctx

    def finish(self, capture, family, exit_code, command, density, reason, view, cwd, uid=None,
               passthrough=False, rewritten=False):
        """-> (blob id, size, Digest | None, error text | None, extra data for the run event).

        passthrough: `ctx run --raw`, stored but not digested. rewritten: ctx run replaced
        secret values in the capture after the follower may have counted the original bytes,
        so its count is dropped."""
        import time
        t0 = time.perf_counter()
        with open(capture, "rb") as f:
            raw = f.read()
        bid = self.ctx.blobs.put(raw)
        t1 = time.perf_counter()
        from .. import blobs
        handle = blobs.handle_of(bid)
        raw_tokens = self.ctx.followers.finish(uid, len(raw)) if uid else None
        if rewritten:
            raw_tokens = None
        if passthrough:
            return bid, len(raw), None, None, {}
        t2 = time.perf_counter()
        try:
            from ..digest import build_digest
            d = build_digest(raw, family=family, exit_code=exit_code, command=command, handle=handle,
                             density=density, reason=reason, requested_view=view, cwd=cwd,
                             raw_tokens=raw_tokens)
        except Exception as e:  # never lose a run to a digest bug
            self.ctx.log("digest failed for %s (%s): %r\n%s" % (handle, family, e, traceback.format_exc()))
            return bid, len(raw), None, "%s: %s" % (type(e).__name__, e), {}
        t3 = time.perf_counter()
        extra = self._baselines(raw, exit_code, command, view)
        extra["timing_ms"] = {"store": round((t1 - t0) * 1000, 2), "follow": round((t2 - t1) * 1000, 2),
                              "digest": round((t3 - t2) * 1000, 2), "counted_while_running": raw_tokens is not None}
        return bid, len(raw), d, None, extra

    def _baselines(self, raw, exit_code, command, view):
        """What the harness alone would have delivered (the savings baseline, counted exactly)."""
        extra = {}
        try:
            from .. import tokens
            from ..stats.tokens_delivered import harness_tokens
            text = raw.decode("utf-8", "replace")
            if view is not None:
                # The agent's own slicer would have delivered this view without ctx.
                extra["view_tokens"] = tokens.count(view)
                extra["harness_tokens"] = harness_tokens(view, exit_code, command)
            else:
                extra["harness_tokens"] = harness_tokens(text, exit_code, command)
        except Exception as e:
            self.ctx.log("baseline count failed: %r" % (e,))
        return extra
