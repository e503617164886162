"""The loopback HTTP transport for Claude Code `type: "http"` hooks.

POST /hook/<harness> with the hook payload as the body; the answer is the
same JSON the command shim would print (an empty 200 when there is nothing to
say).  No process is spawned per hook.  A per-install token (CTX_HOME/http-token,
sent as `Authorization: Bearer <token>` or `X-Ctx-Token`) keeps other local
processes and web pages (DNS rebinding) from talking to the daemon; a request
without it gets 401.  Claude Code treats non-2xx and connection failures as
non-blocking errors, so this transport fails open by itself.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from reflex import protocol

if TYPE_CHECKING:
    from reflex.daemon.ops import Reply


class Dispatcher(Protocol):
    """What the front needs of the daemon's server (reflex.daemon.server.Server; a protocol,
    so this module need not import the server, which imports it)."""

    inflight: set[asyncio.Task[Any]]
    last_activity: float
    log: Callable[[str], None]

    async def dispatch(self, hdr: dict[str, Any], body: bytes) -> Reply: ...

_MAX_HEADERS = 100


class HttpFront:
    def __init__(self, server: Dispatcher, token: str | None) -> None:
        self.server = server
        self.token = token

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # called by asyncio.start_server, inside its task
        self.server.inflight.add(task)
        try:
            while True:
                keep = await self._one(reader, writer)
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError):
            pass
        except Exception as e:
            self.server.log("http error: %r" % (e,))
        finally:
            self.server.inflight.discard(task)
            try:
                writer.close()
            except Exception:
                pass

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        line = await asyncio.wait_for(reader.readline(), 60)
        if not line:
            return False
        try:
            method, target, version = line.decode("latin-1").split()
        except ValueError:
            await self._send(writer, 400, b'{"error":"bad request line"}', False)
            return False
        headers: dict[str, str] = {}
        for _ in range(_MAX_HEADERS):
            h = await asyncio.wait_for(reader.readline(), 10)
            if h in (b"\r\n", b"\n", b""):
                break
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        keep = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
        try:
            n = int(headers.get("content-length", "0"))
        except ValueError:
            n = -1
        if n < 0 or n > protocol.MAX_BODY:
            await self._send(writer, 413, b'{"error":"payload too large"}', False)
            return False
        body = await asyncio.wait_for(reader.readexactly(n), 10) if n else b""
        self.server.last_activity = time.monotonic()
        if not self._authorized(headers):
            await self._send(writer, 401, b'{"error":"missing or wrong ctx token"}', keep)
            return keep
        if method != "POST" or not target.startswith("/hook/"):
            await self._send(writer, 404, b'{"error":"POST /hook/<harness>"}', keep)
            return keep
        harness = target[len("/hook/"):].split("?", 1)[0]
        hdr: dict[str, Any] = {"v": protocol.PROTOCOL, "op": "hook", "harness": harness, "uid": os.urandom(10).hex(),
               "ts": time.time(), "transport": "http"}
        reply = await self.server.dispatch(hdr, body)
        out = reply.out if reply.fields.get("ok") else b""
        await self._send(writer, 200, out, keep)
        return keep

    def _authorized(self, headers: dict[str, str]) -> bool:
        if not self.token:
            return False
        given = headers.get("x-ctx-token") or ""
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        return hmac.compare_digest(given.encode(), self.token.encode())

    async def _send(self, writer: asyncio.StreamWriter, status: int, body: bytes, keep: bool) -> None:
        reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
                  413: "Payload Too Large"}.get(status, "OK")
        head = ("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                "Connection: %s\r\n\r\n" % (status, reason, len(body), "keep-alive" if keep else "close"))
        writer.write(head.encode() + body)
        await writer.drain()


def listening_uid(port: int) -> int | None:
    """uid of the process listening on TCP `port` on loopback/any address, or None (Linux /proc)."""
    want = ":%04X" % port
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    parts = line.split()
                    # local_address, rem_address, st (0A = LISTEN), ..., uid
                    if len(parts) > 7 and parts[1].endswith(want) and parts[3] == "0A":
                        return int(parts[7])
        except OSError:
            continue
    return None
