"""Request operations: one function per `op`, each (header, body) -> Reply.

Every operation validates its own inputs and answers errors as replies; an
exception here is caught by the server, logged and answered as "internal",
so one bad request never takes the daemon down.
"""

import asyncio
import os
import time

from .. import blobs, wire
from .claude import ClaudeHandler

VERSION = "0.1.0"


class Reply:
    __slots__ = ("fields", "out", "err")

    def __init__(self, fields=None, out=b"", err=b""):
        self.fields = {"ok": True}
        if fields:
            self.fields.update(fields)
        self.out = out
        self.err = err

    def encode(self):
        f = dict(self.fields)
        f["v"] = wire.PROTOCOL
        f["out"] = len(self.out)
        body = self.out + self.err
        f["len"] = len(body)
        return wire.encode_header(f) + body


def error(code, detail, **extra):
    r = Reply({"ok": False, "error": code, "detail": detail})
    r.fields.update(extra)
    return r


class Ops:
    def __init__(self, ctx, loop, executor):
        self.ctx = ctx
        self.loop = loop
        self.executor = executor
        self.claude = ClaudeHandler(ctx)
        self.started = time.time()
        self.requests = 0
        self.stop_requested = None  # set by the server
        self.drain_spool = None     # set by the server: ingest pending spool frames

    async def dispatch(self, hdr, body):
        op = hdr.get("op")
        fn = getattr(self, "op_" + str(op).replace(".", "_"), None)
        if fn is None:
            return error("unknown_op", "unknown op %r" % op)
        self.requests += 1
        return await fn(hdr, body)

    async def _commit(self, event, run=None, session=None):
        fut = self.ctx.writer.submit(event, run, session)
        return await asyncio.wrap_future(fut, loop=self.loop)

    # -- ops -----------------------------------------------------------------
    async def op_ping(self, hdr, body):
        return Reply({"pid": os.getpid(), "version": VERSION, "protocol": wire.PROTOCOL})

    async def op_status(self, hdr, body):
        return Reply({"pid": os.getpid(), "version": VERSION, "protocol": wire.PROTOCOL,
                      "uptime_s": round(time.time() - self.started, 3), "requests": self.requests,
                      "ledger": dict(self.ctx.writer.stats)})

    async def op_shutdown(self, hdr, body):
        if self.stop_requested is not None:
            self.loop.call_soon(self.stop_requested)
        return Reply({"stopping": True})

    async def op_hook(self, hdr, body):
        harness = hdr.get("harness")
        uid = hdr.get("uid")
        if not isinstance(uid, str) or not (8 <= len(uid) <= 64):
            return error("bad_request", "hook frames need a uid")
        if harness != "claude":
            # Unknown harness: recorded, answered with nothing.
            ev = {"uid": uid, "ts": hdr.get("ts") or time.time(), "harness": str(harness)[:32],
                  "spooled": 1 if hdr.get("spooled") else 0, "session_id": "-", "kind": "malformed",
                  "decision": "none", "data": {"code": "unknown_harness", "bytes": len(body)}}
            await self._commit(_finish(ev, 0))
            return Reply(err=("ctx hook: unknown harness %r\n" % harness).encode())
        if not hdr.get("spooled") and self.drain_spool is not None:
            # Events a shim spooled while no daemon answered happened BEFORE
            # this one: ingest them first so per-session order is preserved.
            await self.drain_spool()
        t0 = time.perf_counter()
        out, err, ev, session = self.claude.handle(hdr, body)
        ev["latency_us"] = int((time.perf_counter() - t0) * 1e6)
        written = await self._commit(_finish(ev), session=session)
        return Reply({"seq": written.seq, "duplicate": written.duplicate}, out=out, err=err)

    async def op_run_finish(self, hdr, body):
        capture = hdr.get("capture")
        if not isinstance(capture, str) or not _inside(capture, self.ctx.paths.captures):
            return error("forbidden", "capture must be a file under %s" % self.ctx.paths.captures)
        uid = hdr.get("uid")
        if not isinstance(uid, str) or not (8 <= len(uid) <= 64):
            return error("bad_request", "run frames need a uid")
        try:
            st = os.lstat(capture)
        except FileNotFoundError:
            return error("bad_request", "capture %s does not exist" % capture)
        if not os.path.isfile(capture) or st.st_uid != os.getuid():
            return error("forbidden", "capture is not a regular file we own")
        stored = await self.loop.run_in_executor(self.executor, self._store_capture, capture)
        bid, size = stored
        handle = blobs.handle_of(bid)
        command = str(hdr.get("command") or "")
        cwd = hdr.get("cwd") if isinstance(hdr.get("cwd"), str) else None
        sig = self.ctx.signature(command, cwd)
        session_id = hdr.get("session") if isinstance(hdr.get("session"), str) and hdr.get("session") else "-"
        exit_code = hdr.get("exit") if isinstance(hdr.get("exit"), int) else None
        duration_ms = hdr.get("duration_ms") if isinstance(hdr.get("duration_ms"), (int, float)) else None
        ev = {"uid": uid, "ts": hdr.get("ts") or time.time(), "harness": "ctx-run",
              "spooled": 1 if hdr.get("spooled") else 0, "session_id": session_id, "kind": "run",
              "cwd": cwd, "command": command, "family": sig.family if sig else None,
              "core_hash": sig.core_hash if sig else None, "decision": "none", "exit_code": exit_code,
              "output_bytes": size,
              "data": {"handle": handle, "blob": bid, "duration_ms": duration_ms}}
        run = {"event_uid": uid, "handle": handle, "blob": bid, "session_id": session_id,
               "command": command, "cwd": cwd, "exit_code": exit_code, "duration_ms": duration_ms,
               "raw_bytes": size, "family": ev["family"], "core_hash": ev["core_hash"],
               "profile": None, "density": "raw", "raw_tokens": None, "delivered_tokens": None,
               "worktree_hash": None, "meta": "{}"}
        written = await self._commit(_finish(ev), run=run)
        try:
            os.unlink(capture)
        except OSError:
            pass
        footer = "[ctx] exit %s · %s stored as %s · full output: ctx get %s\n" % (
            exit_code, _size(size), handle, handle)
        return Reply({"handle": handle, "blob": bid, "print_raw": True, "seq": written.seq,
                      "duplicate": written.duplicate}, out=footer.encode())

    def _store_capture(self, capture):
        with open(capture, "rb") as f:
            data = f.read()
        return self.ctx.blobs.put(data), len(data)

    async def op_get(self, hdr, body):
        address = hdr.get("address")
        if not isinstance(address, str) or not address.startswith("r:"):
            return error("bad_request", "expected a handle like r:7f3a2c9d01ab")
        handle = address.split(":L", 1)[0].split("#", 1)[0]
        row = self.ctx.reader().execute(
            "SELECT blob FROM runs WHERE handle = ? ORDER BY id DESC LIMIT 1", (handle,)).fetchone()
        if row is None:
            return error("not_found", "no run with handle %s" % handle, miss="abstain")
        try:
            data = await self.loop.run_in_executor(self.executor, self.ctx.blobs.get, row[0])
        except blobs.BlobMissing:
            return error("not_found", "the output of %s is no longer stored" % handle, miss="evicted")
        except blobs.BlobDamaged as e:
            return error("damaged", str(e), miss="denatured")
        return Reply({"blob": row[0]}, out=data)


def _finish(ev, default_exit=None):
    import json
    ev.setdefault("recorded_at", time.time())
    data = ev.get("data")
    ev["data"] = json.dumps(data if data is not None else {}, sort_keys=True, separators=(",", ":"),
                            ensure_ascii=False, default=str)
    return ev


def _inside(path, root):
    path = os.path.realpath(path)
    root = os.path.realpath(root)
    return path.startswith(root.rstrip("/") + "/")


def _size(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0
