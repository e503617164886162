"""Request operations: one function per `op`, each (header, body) -> Reply.

Every operation validates its own inputs and answers errors as replies; an
exception here is caught by the server, logged and answered as "internal",
so one bad request never takes the daemon down.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any

from reflex import blobs
from reflex import protocol
from reflex.harness.claude.hooks import ClaudeHandler, base_event, malformed_event
from reflex.daemon.follow import COUNT_LIMIT
from reflex.daemon.retrieval import GET_BUDGET, GET_PAGE_BYTES, Retrieval
from reflex.daemon.runs import RunStore

if TYPE_CHECKING:
    from reflex.daemon.context import DaemonContext
    from reflex.daemon.retrieval_models import Answer
    from reflex.digest import Digest
    from reflex.ledger.writer import Written
    from reflex.shim.capture import Kept

VERSION = protocol.VERSION


class Reply:
    __slots__ = ("fields", "out", "err")

    def __init__(self, fields: dict[str, Any] | None = None, out: bytes = b"", err: bytes = b"") -> None:
        self.fields: dict[str, Any] = {"ok": True}
        if fields:
            self.fields.update(fields)
        self.out = out
        self.err = err

    def encode(self) -> bytes:
        f = dict(self.fields)
        f["v"] = protocol.PROTOCOL
        f["out"] = len(self.out)
        body = self.out + self.err
        f["len"] = len(body)
        return protocol.encode_header(f) + body


def error(code: str, detail: str, **extra: Any) -> Reply:
    r = Reply({"ok": False, "error": code, "detail": detail})
    r.fields.update(extra)
    return r


class Ops:
    def __init__(self, ctx: DaemonContext, loop: asyncio.AbstractEventLoop, executor: Executor) -> None:
        self.ctx = ctx
        self.loop = loop
        self.executor = executor
        self.claude = ClaudeHandler(ctx)
        from reflex.harness.handler import HarnessHandler
        self.harnesses = HarnessHandler(ctx)
        self.retrieval = Retrieval(ctx)
        self.runs = RunStore(ctx)
        self.started = time.time()
        self.requests = 0
        self.stop_requested: Callable[[], None] | None = None      # set by the server
        self.drain_spool: Callable[[], Awaitable[None]] | None = None  # set by the server: ingest pending spool frames

    async def dispatch(self, hdr: dict[str, Any], body: bytes) -> Reply:
        # The request is checked against the protocol's schema once, here: every handler
        # below reads fields of the declared types, and a misspelled field is refused.
        try:
            req = protocol.parse_request(hdr)
        except protocol.BadRequest as e:
            return error(e.code, e.detail)
        fn: Callable[[protocol.Request, bytes], Awaitable[Reply]] = getattr(self, "op_" + req.op.replace(".", "_"))
        self.requests += 1
        return await fn(req, body)

    async def _commit(self, event: dict[str, Any], run: dict[str, Any] | None = None,
                      session: dict[str, Any] | None = None) -> Written:
        fut = self.ctx.writer.submit(event, run, session)
        written: Written = await asyncio.wrap_future(fut, loop=self.loop)
        # The fold sees exactly what the ledger holds, in commit order.
        outcomes = self.ctx.fold(event, written)
        if outcomes:
            await asyncio.wrap_future(self.ctx.writer.submit_outcomes(outcomes), loop=self.loop)
        return written

    # -- ops -----------------------------------------------------------------
    async def op_ping(self, req: protocol.Request, body: bytes) -> Reply:
        return Reply({"pid": os.getpid(), "version": VERSION, "protocol": protocol.PROTOCOL})

    async def op_status(self, req: protocol.Request, body: bytes) -> Reply:
        # The tokenizer as this process has it (doctor asks here: its own process may differ).
        from reflex.tokens import tokenizer_status
        tok_ok, tok_detail = await self.loop.run_in_executor(self.executor, tokenizer_status)
        return Reply({"pid": os.getpid(), "version": VERSION, "protocol": protocol.PROTOCOL,
                      "tokenizer": {"ok": tok_ok, "detail": tok_detail},
                      "uptime_s": round(time.time() - self.started, 3), "requests": self.requests,
                      "warm_s": self.ctx.warm_s,
                      "ledger": dict(self.ctx.writer.stats),
                      "fold": {"events": self.ctx.fold_stats["events"],
                               "mean_us": round(1e6 * self.ctx.fold_stats["seconds"]
                                                / max(1, self.ctx.fold_stats["events"]), 1)}})

    async def op_shutdown(self, req: protocol.Request, body: bytes) -> Reply:
        if self.stop_requested is not None:
            self.loop.call_soon(self.stop_requested)
        return Reply({"stopping": True})

    async def op_hook(self, req: protocol.Request, body: bytes) -> Reply:
        harness = req.get("harness")
        uid = req.get("uid")
        if not _valid_uid(uid):
            return error("bad_request", "hook frames need a uid")
        if harness != "claude" and not self.harnesses.knows(harness):
            # Unknown harness: recorded, answered with nothing.
            ev = malformed_event(base_event(uid, req.get("ts") or time.time(), harness[:32],
                                            req.get("spooled")), "unknown_harness", "", body)
            await self._commit(_finish(ev))
            return Reply(err=("ctx hook: unknown harness %r\n" % harness).encode())
        await self._spooled_first(req)
        t0 = time.perf_counter()
        handler = self.claude if harness == "claude" else self.harnesses
        out, err, ev, session = handler.handle(req.fields, body)
        if ev.get("session_id") == protocol.PROBE_SESSION:
            # ctx's own install/doctor self-test: answered, not the agent's activity, not recorded.
            return Reply({"seq": 0, "duplicate": False, "probe": True}, out=out, err=err)
        ev["latency_us"] = int((time.perf_counter() - t0) * 1e6)
        run = ev.pop("_run", None)  # a post-hook digest is recorded as a run of its own
        written = await self._commit(_finish(ev), run=run, session=session)
        return Reply({"seq": written.seq, "duplicate": written.duplicate}, out=out, err=err)

    async def _spooled_first(self, req: protocol.Request) -> None:
        """Events a shim spooled while no daemon answered (or answered too slowly) happened
        BEFORE this live one: ingest them first, so per-session order, and every decision
        the fold derives from it (a densified re-run), is what it would have been."""
        if not req.get("spooled") and self.drain_spool is not None:
            await self.drain_spool()

    async def op_run_start(self, req: protocol.Request, body: bytes) -> Reply:
        capture = req.get("capture")
        uid = req.get("uid")
        if not self._capture_ok(capture) or not _valid_uid(uid):
            return error("forbidden", "capture must be a file under %s" % self.ctx.paths.captures)
        stable = req.get("stable") if req.get("stable", 0) > 0 else None
        return Reply({"following": self.ctx.followers.start(uid, capture, stable)})

    async def op_run_finish(self, req: protocol.Request, body: bytes) -> Reply:
        capture = req.get("capture")
        if not self._capture_ok(capture):
            return error("forbidden", "capture must be a file under %s" % self.ctx.paths.captures)
        uid = req.get("uid")
        if not _valid_uid(uid):
            return error("bad_request", "run frames need a uid")
        try:
            st = os.lstat(capture)
        except FileNotFoundError:
            return error("bad_request", "capture %s does not exist" % capture)
        if not os.path.isfile(capture) or st.st_uid != os.getuid():
            return error("forbidden", "capture is not a regular file we own")
        await self._spooled_first(req)
        command = req.get("command", "")
        cwd = req.get("cwd")
        session_id = req.text("session") or "-"
        if session_id == "-":
            # A harness whose shell names no session (Gemini): the session whose rewrite ran this.
            session_id = self.harnesses.claim_run(command, cwd) or "-"
        exit_code = req.get("exit")
        slicer = req.get("slicer")
        producer = req.get("producer", command)
        duration_ms = req.get("duration_ms")
        sig = self.ctx.signature(command, cwd)
        family = sig.family if sig else "other"
        core_hash = sig.core_hash if sig else None
        density, reason = self.ctx.density_for(session_id, sig, family, cwd)
        view = body.decode("utf-8", "replace") if slicer is not None else None
        claim = {k: req.get(k) for k in ("output_bytes", "elided_bytes", "kept_head", "marker_len", "capture_error")}
        passthrough = req.get("raw") is True
        redacted = req.get("redacted", 0)
        work = await self.loop.run_in_executor(
            self.executor, self.runs.finish, capture, family, exit_code, producer, density, reason, view, cwd,
            uid, claim, passthrough, redacted > 0)
        bid, kept, digest, digest_error, baselines = work
        size = kept.stored
        handle = blobs.handle_of(bid)
        data = {"handle": handle, "blob": bid, "duration_ms": duration_ms, "density": density,
                "reason": reason, "slicer": slicer, "slicer_exit": req.get("slicer_exit"),
                "worktree_hash": self.ctx.worktree_hash(cwd) if cwd else None}
        data.update(baselines)
        if kept.elided:
            data["capture"] = _kept_summary(kept)
        if req.get("view_bytes") is not None:
            data["view_bytes"] = req.get("view_bytes")
        if redacted:
            # Counts and file names only: the values never reach the ledger.
            data["redacted"] = {"values": redacted, "files": [str(x)[:200] for x in
                                                               req.get("redacted_from", [])][:50]}
        if passthrough:
            data["passthrough"] = True
        meta: dict[str, Any] = {"elided": _kept_summary(kept)} if kept.elided else {}
        if digest is not None:
            data.update(digest_summary(digest))
            meta.update({"failures": [{"id": f.id, "span": list(f.span) if f.span else None}
                                      for f in digest.facts.failures if f.id],
                    "hints": [h.address for h in digest.hints], "counts": digest.facts.counts.model_dump(),
                    "omitted": digest.omitted, "truncated": digest.truncated})
        elif digest_error:
            data["digest_error"] = digest_error
        ev = {"uid": uid, "ts": req.get("ts") or time.time(), "harness": "ctx-run",
              "spooled": 1 if req.get("spooled") else 0, "session_id": session_id, "kind": "run",
              "cwd": cwd, "command": command, "family": family, "core_hash": core_hash,
              "decision": "none", "exit_code": exit_code, "output_bytes": kept.total, "data": data}
        run = {"event_uid": uid, "handle": handle, "blob": bid, "session_id": session_id,
               "command": command, "cwd": cwd, "exit_code": exit_code, "duration_ms": duration_ms,
               "raw_bytes": size, "family": family, "core_hash": core_hash,
               "profile": digest.profile if digest else None,
               "density": digest.density if digest else "raw",
               "raw_tokens": digest.raw_tokens if digest else None,
               "delivered_tokens": digest.tokens if digest else None,
               "worktree_hash": data["worktree_hash"], "meta": json.dumps(meta, sort_keys=True)}
        written = await self._commit(_finish(ev), run=run)
        try:
            os.unlink(capture)
        except OSError:
            pass
        self.loop.run_in_executor(self.executor, self.retrieval.prewarm, bid, size)
        if digest is None:
            # The output above is raw; say why, loudly, instead of passing it off as normal.
            why = ""
            if digest_error:
                why = " · NO DIGEST: %s; run `ctx doctor`" % (
                    "the o200k_base tokenizer is unavailable in the daemon (`ctx doctor` says why)"
                    if digest_error.startswith("TokenizerUnavailable") else digest_error[:200])
            stored = _size(size) if not kept.elided else "%s of %s (middle elided)" % (_size(size), _size(kept.total))
            footer = "[ctx] exit %s%s · %s stored as %s · full output: ctx get %s\n" % (
                exit_code, why, stored, handle, handle)
            if passthrough:
                footer = ""     # --raw: the command's own output, exactly (secret values redacted)
            return Reply({"handle": handle, "blob": bid, "print_raw": True, "seq": written.seq,
                          "duplicate": written.duplicate}, out=footer.encode())
        text = digest.text
        if not text.endswith("\n") and not (digest.passthrough and digest.reason is None):
            text += "\n"  # a header must end its line; a passthrough ends as the output did
        return Reply({"handle": handle, "blob": bid, "seq": written.seq, "duplicate": written.duplicate,
                      "tokens": digest.tokens, "raw_tokens": digest.raw_tokens},
                     out=text.encode("utf-8", "surrogateescape"))

    async def op_get(self, req: protocol.Request, body: bytes) -> Reply:
        query = _valid_text(req.get("address"))  # an undecodable argv byte arrives as a lone surrogate
        b3 = req.get("b3")
        answer, data = await self.loop.run_in_executor(
            self.executor, lambda: self.retrieval.get(query, check_b3=b3))
        await self._record_retrieval(req, "ctx get " + query, answer, {"address": query})
        return self._answer_reply(req, answer, data)

    async def op_search(self, req: protocol.Request, body: bytes) -> Reply:
        pattern = req.get("pattern")
        handle = req.get("handle")
        session = req.get("session")
        started = time.monotonic()
        # Searches wait in their own bounded queue (retrieval.py), never in the pool `ctx run` needs.
        answer, data = await self.retrieval.search_async(self.loop, pattern, handle=handle, session=session,
                                                         started=started)
        await self._record_retrieval(req, "ctx search " + pattern, answer, {"pattern": pattern, "handle": handle})
        return self._answer_reply(req, answer, data)

    def _capture_ok(self, capture: object) -> bool:
        """ctx run's capture files live under CTX_HOME/captures; no other path is read."""
        return isinstance(capture, str) and _inside(capture, self.ctx.paths.captures)

    def _answer_reply(self, req: protocol.Request, answer: Answer, data: bytes | None) -> Reply:
        if req.get("json"):
            doc = answer.to_json()
            try:
                out = (json.dumps(doc, ensure_ascii=False, sort_keys=True) + "\n").encode()
            except UnicodeEncodeError:  # a lone surrogate in the query (an undecodable argv byte)
                out = (json.dumps(doc, ensure_ascii=True, sort_keys=True) + "\n").encode()
            return Reply({"know": answer.know is not None}, out=out)
        if answer.know is not None:
            err = b""
            if answer.know.truncated:
                err = ("[ctx] one page shown (at most %d tokens, %d KiB); the rest: ctx get %s\n"
                       % (GET_BUDGET, GET_PAGE_BYTES // 1024, answer.know.next)).encode() \
                    if answer.know.next else b"[ctx] truncated\n"
            return Reply({"know": True}, out=data or b"", err=err)
        m = answer.miss
        assert m is not None  # an Answer holds exactly one of know / miss (retrieval_models)
        remedy = ("refresh: %s" % m.refresh) if m.refresh else ("try: %s" % "; ".join(m.escalate_to))
        r = error("miss", "miss(%s): %s; %s" % (m.reason, m.detail, remedy), miss=m.reason)
        return r

    async def _record_retrieval(self, req: protocol.Request, command: str, answer: Answer,
                                fields: dict[str, Any]) -> None:
        await self._spooled_first(req)
        session = req.text("session") or "-"
        uid = req.get("uid") or os.urandom(10).hex()
        data = dict(fields)
        if answer.know is not None:
            data.update(result="know", handle=answer.know.handle, span=answer.know.span,
                        truncated=answer.know.truncated)
        else:
            assert answer.miss is not None  # an Answer holds exactly one of know / miss
            data.update(result="miss", reason=answer.miss.reason, handle=answer.miss.handle)
        ev = {"uid": uid, "ts": time.time(), "harness": "ctx-retrieval", "spooled": 0, "session_id": session,
              "kind": "retrieval", "command": _valid_text(command), "cwd": req.get("cwd"),
              "decision": "none", "data": data}
        await self._commit(_finish(ev))


def digest_summary(d: Digest) -> dict[str, Any]:
    from reflex.arc.intents import declare
    intents = []
    # mypy takes sum's type from the bool on the left of `or` (the ignore below)
    if d.truncated or sum(d.omitted.values()) or (d.hints and not d.passthrough):  # type: ignore[arg-type]
        intents.append(declare("digest"))
    if d.hints and not d.passthrough:
        intents.append(declare("hints"))
    return {"intents": intents,"profile": d.profile, "density": d.density,
            "failed_ids": [f.id for f in d.facts.failures if f.id][:200],
            "failed_count": (d.facts.counts.failed or 0) + (d.facts.counts.errors or 0),
            "hints": [h.address for h in d.hints][:200], "omitted": sum(d.omitted.values()),
            "truncated": d.truncated, "raw_tokens": d.raw_tokens, "delivered_tokens": d.tokens,
            "passthrough": d.passthrough}


def _valid_text(s: str) -> str:
    """`s` with lone surrogates (undecodable bytes of an argument) replaced, so it encodes as UTF-8."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _kept_summary(kept: Kept) -> dict[str, Any]:
    return {"output_bytes": kept.total, "stored_bytes": kept.stored, "kept_head": kept.head,
            "kept_tail": kept.tail, "elided_bytes": kept.elided, "raw_tokens_counted_on_bytes": min(kept.head, COUNT_LIMIT),
            "error": kept.error}


def _valid_uid(uid: object) -> bool:
    return isinstance(uid, str) and 8 <= len(uid) <= 64


def _finish(ev: dict[str, Any]) -> dict[str, Any]:
    import json
    ev.setdefault("recorded_at", time.time())
    data = ev.get("data")
    ev["data"] = json.dumps(data if data is not None else {}, sort_keys=True, separators=(",", ":"),
                            ensure_ascii=False, default=str)
    return ev


def _inside(path: str, root: str) -> bool:
    path = os.path.realpath(path)
    root = os.path.realpath(root)
    return path.startswith(root.rstrip("/") + "/")


def _size(n: float) -> str:  # type: ignore[return]  # the loop returns at "GB" at the latest
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0
