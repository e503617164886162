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
        """-> (blob id, size, Digest | None, error text | None)."""
        with open(capture, "rb") as f:
            raw = f.read()
        bid = self.ctx.blobs.put(raw)
        from .. import blobs
        handle = blobs.handle_of(bid)
        try:
            from ..digest import build_digest
            d = build_digest(raw, family=family, exit_code=exit_code, command=command, handle=handle,
                             density=density, reason=reason, requested_view=view, cwd=cwd)
            return bid, len(raw), d, None
        except Exception as e:  # never lose a run to a digest bug
            self.ctx.log("digest failed for %s (%s): %r\n%s" % (handle, family, e, traceback.format_exc()))
            return bid, len(raw), None, "%s: %s" % (type(e).__name__, e)
