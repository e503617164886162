"""Turning a ctx run capture into a blob and a digest (runs in a worker thread).

The raw bytes are stored exactly as the command produced them, before any
digesting, so a digest bug can never lose output: if the engine fails, the
run is still recorded and the agent gets the raw output (print_raw).
"""

import traceback


class RunStore:
    def __init__(self, ctx):
        self.ctx = ctx

    def finish(self, capture, family, exit_code, command, density, reason, view, cwd):
        """-> (blob id, size, Digest | None, error text | None, extra data for the run event)."""
        with open(capture, "rb") as f:
            raw = f.read()
        bid = self.ctx.blobs.put(raw)
        from .. import blobs
        handle = blobs.handle_of(bid)
        try:
            from ..digest import build_digest
            d = build_digest(raw, family=family, exit_code=exit_code, command=command, handle=handle,
                             density=density, reason=reason, requested_view=view, cwd=cwd)
        except Exception as e:  # never lose a run to a digest bug
            self.ctx.log("digest failed for %s (%s): %r\n%s" % (handle, family, e, traceback.format_exc()))
            return bid, len(raw), None, "%s: %s" % (type(e).__name__, e), {}
        return bid, len(raw), d, None, self._baselines(raw, exit_code, command, view)

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
