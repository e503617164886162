"""The daemon process: socket and HTTP listeners, spool ingestion, lifecycle.

Lifecycle (the order matters, see each step):
  1. the caller holds the single-instance lock (see __main__), so any socket
     file already at our path belongs to a dead daemon and may be unlinked;
  2. the ledger writer starts (migrations run before anything is accepted);
  3. the spool is ingested, in order, before the socket is published, so
     events the shims spooled while we were down land before new ones;
  4. bind to a temporary name, chmod 0600, rename into place (clients never
     see a socket that is not yet listening), write the status file;
  5. serve; re-scan the spool every second (a shim may have timed out on a
     busy daemon and spooled); exit after `idle_seconds` with no request;
  6. stop: stop accepting, remove the status file, unlink our socket (only if
     it is still ours: same inode), drain in-flight requests, flush and close
     the ledger.
"""

import asyncio
import json
import os
import signal
import socket
import struct
import time
from concurrent.futures import ThreadPoolExecutor

from .. import config as config_mod, paths as paths_mod, spool, wire
from .context import DaemonContext
from .ops import VERSION, Ops, error

READ_TIMEOUT = 10.0
SPOOL_SCAN_S = 1.0
RETENTION_EVERY_S = 600.0


class Server:
    def __init__(self, paths, *, log, idle_seconds=None, http_port=None):
        self.paths = paths
        self.log = log
        self.ctx = DaemonContext(paths, log=log)
        self.idle_seconds = idle_seconds if idle_seconds is not None else float(
            self.ctx.cfg.get("idle_seconds") or 1800)
        self.http_port = http_port if http_port is not None else int(self.ctx.cfg.get("http_port") or 0)
        self.executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ctxd-work")
        self.inflight = set()
        self.last_activity = time.monotonic()
        self.socket_inode = None
        self.stopping = None

    # -- entry ----------------------------------------------------------------
    def run(self):
        asyncio.run(self._main())

    async def _main(self):
        loop = asyncio.get_running_loop()
        self.stopping = asyncio.Event()
        self.ops = Ops(self.ctx, loop, self.executor)
        self.ops.stop_requested = self.stopping.set
        self.spool_lock = asyncio.Lock()
        self._spool_seen = -1
        self.ops.drain_spool = self._drain_if_pending
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self.stopping.set)
        self.ctx.start()
        ingested = await self._ingest_spool()
        if ingested:
            self.log("ingested %d spooled frames at start" % ingested)
        unix_server = await self._listen_unix()
        http_server = await self._listen_http() if self.http_port else None
        self._write_status(http_server)
        self.log("listening on %s (pid %d, http %s)" % (self.paths.socket, os.getpid(),
                                                        self.http_port or "off"))
        housekeeping = asyncio.create_task(self._housekeeping())
        # Load the parsers now, off the loop, so the first hook of a session
        # does not pay their import (~70 ms for tree-sitter).
        loop.run_in_executor(self.executor, self.ctx.warm)
        # Refresh the hot path's bytecode (an upgrade or edit leaves it stale, and
        # PYTHONDONTWRITEBYTECODE would otherwise make every hook compile from source).
        from .. import launcher
        loop.run_in_executor(self.executor, launcher.precompile)
        await self.stopping.wait()
        # -- shutdown, in order ------------------------------------------------
        unix_server.close()
        if http_server is not None:
            http_server.close()
        self._remove_status()
        self._unlink_own_socket()
        housekeeping.cancel()
        if self.inflight:
            await asyncio.wait(self.inflight, timeout=10)
        self.executor.shutdown(wait=True)
        self.ctx.close()
        self.log("stopped")

    # -- listeners --------------------------------------------------------------
    async def _listen_unix(self):
        paths_mod.ensure_private_dir(self.paths.run_dir)
        final = self.paths.socket
        tmp = "%s.%d.tmp" % (final, os.getpid())
        for p in (tmp, final):
            # We hold the instance lock: whatever socket is here is stale.
            try:
                if os.path.exists(p) or os.path.islink(p):
                    os.unlink(p)
            except OSError:
                pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(tmp)
        finally:
            os.umask(old)
        os.chmod(tmp, 0o600)
        sock.listen(512)
        server = await asyncio.start_unix_server(self._on_unix, sock=sock, limit=wire.MAX_HEADER)
        os.rename(tmp, final)
        self.socket_inode = os.stat(final).st_ino
        return server

    async def _listen_http(self):
        from .http import HttpFront
        front = HttpFront(self, token=_read_token(self.paths.http_token))
        try:
            return await asyncio.start_server(front.handle, "127.0.0.1", self.http_port, limit=wire.MAX_HEADER)
        except OSError as e:
            self.log("http transport disabled: cannot bind 127.0.0.1:%d: %s" % (self.http_port, e))
            self.http_port = 0
            return None

    async def _on_unix(self, reader, writer):
        task = asyncio.current_task()
        self.inflight.add(task)
        try:
            sock = writer.get_extra_info("socket")
            if not _peer_is_us(sock):
                writer.write(error("forbidden", "peer uid differs from the daemon's").encode())
                return
            reply = await self._serve_frame(reader)
            writer.write(reply)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception as e:  # never let one connection hurt the daemon
            self.log("connection error: %r" % (e,))
        finally:
            self.inflight.discard(task)
            try:
                writer.close()
            except Exception:
                pass

    async def _serve_frame(self, reader):
        self.last_activity = time.monotonic()
        try:
            line = await asyncio.wait_for(reader.readline(), READ_TIMEOUT)
        except (asyncio.LimitOverrunError, ValueError):
            return error("too_large", "header exceeds %d bytes" % wire.MAX_HEADER).encode()
        except asyncio.TimeoutError:
            return error("bad_request", "timed out reading the header").encode()
        try:
            hdr = json.loads(line)
            if not isinstance(hdr, dict):
                raise ValueError("header is not an object")
        except ValueError as e:
            return error("bad_request", "unparseable header: %s" % e).encode()
        if hdr.get("v") != wire.PROTOCOL:
            return error("protocol", "protocol %r not supported; restart the client or daemon" % hdr.get("v"),
                         want=wire.PROTOCOL, version=VERSION).encode()
        n = hdr.get("len") or 0
        if not isinstance(n, int) or n < 0:
            return error("bad_request", "bad body length").encode()
        if n > wire.MAX_BODY:
            return error("too_large", "body of %d bytes exceeds %d" % (n, wire.MAX_BODY)).encode()
        try:
            body = await asyncio.wait_for(reader.readexactly(n), READ_TIMEOUT) if n else b""
        except asyncio.TimeoutError:
            return error("bad_request", "timed out reading the body").encode()
        return (await self.dispatch(hdr, body)).encode()

    async def dispatch(self, hdr, body):
        try:
            return await self.ops.dispatch(hdr, body)
        except Exception as e:
            self.log("op %r failed: %r" % (hdr.get("op"), e))
            return error("internal", "%s: %s" % (type(e).__name__, e))

    # -- spool -------------------------------------------------------------------
    async def _ingest_spool(self):
        count = 0
        for path in spool.pending(self.paths.spool):
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            head, body = spool.split_frame(data)
            try:
                hdr = json.loads(head)
                if not isinstance(hdr, dict):
                    raise ValueError("not an object")
            except ValueError as e:
                self.log("unreadable spool frame %s: %s; kept aside" % (path, e))
                _set_aside(path)
                continue
            hdr["spooled"] = True
            reply = await self.dispatch(hdr, body)
            if reply.fields.get("ok"):
                os.unlink(path)
                count += 1
            elif reply.fields.get("error") == "internal":
                # e.g. the ledger is full: leave it for the next scan.
                self.log("spool frame %s not ingested: %s" % (path, reply.fields.get("detail")))
                break
            else:
                self.log("spool frame %s rejected: %s; kept aside" % (path, reply.fields.get("detail")))
                _set_aside(path)
        return count

    async def _drain_if_pending(self):
        # One stat per live event instead of a listdir: the spool directory's
        # mtime moves whenever a shim adds a frame (or we remove one).
        try:
            stamp = os.stat(self.paths.spool).st_mtime_ns
        except OSError:
            stamp = None
        if stamp == self._spool_seen and not self.spool_lock.locked():
            return
        self._spool_seen = stamp
        if not self.spool_lock.locked() and not spool.pending(self.paths.spool):
            return
        async with self.spool_lock:  # waits for an ingestion already under way
            n = await self._ingest_spool() if spool.pending(self.paths.spool) else 0
        if n:
            self.log("ingested %d spooled frames before a live event" % n)

    def _retention(self):
        cfg = self.ctx.cfg
        # Recorded (committed) before the files go: a missing blob without a record was not us.
        removed = self.ctx.blobs.evict(max_bytes=cfg.get("blob_max_bytes"),
                                       max_age_s=(cfg.get("blob_max_age_days") or 0) * 86400 or None,
                                       record=lambda rows: self.ctx.writer.submit_evictions(rows).result(60))
        if removed:
            self.log("retention evicted %d blobs" % len(removed))
        return removed

    async def _housekeeping(self):
        last_retention = 0.0
        while True:
            await asyncio.sleep(SPOOL_SCAN_S)
            try:
                if spool.pending(self.paths.spool) and not self.spool_lock.locked():
                    self.last_activity = time.monotonic()
                    async with self.spool_lock:
                        n = await self._ingest_spool()
                    if n:
                        self.log("ingested %d spooled frames" % n)
            except Exception as e:
                self.log("spool scan failed: %r" % (e,))
            if time.monotonic() - last_retention > RETENTION_EVERY_S:
                last_retention = time.monotonic()
                try:
                    await asyncio.get_running_loop().run_in_executor(self.executor, self._retention)
                except Exception as e:
                    self.log("retention failed: %r" % (e,))
            if self.idle_seconds and time.monotonic() - self.last_activity > self.idle_seconds \
                    and not self.inflight:
                self.log("idle for %ds; exiting" % self.idle_seconds)
                self.stopping.set()
                return

    # -- status and socket ownership ---------------------------------------------
    def _write_status(self, http_server):
        config_mod.write_json_atomic(self.paths.status, {
            "pid": os.getpid(), "socket": self.paths.socket, "version": VERSION,
            "protocol": wire.PROTOCOL, "started_at": time.time(), "ledger": self.paths.ledger,
            "http_port": self.http_port if http_server is not None else 0,
        })

    def _remove_status(self):
        try:
            with open(self.paths.status) as f:
                if json.load(f).get("pid") != os.getpid():
                    return
            os.unlink(self.paths.status)
        except (OSError, ValueError):
            pass

    def _unlink_own_socket(self):
        # Only the daemon that owns a socket unlinks it: a successor may
        # already have renamed its own socket into place.
        try:
            if os.stat(self.paths.socket).st_ino == self.socket_inode:
                os.unlink(self.paths.socket)
        except OSError:
            pass


def _peer_is_us(sock):
    if sock is None:
        return False
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def _read_token(path):
    try:
        with open(path) as f:
            return f.read().strip() or None
    except OSError:
        return None


def _set_aside(path):
    try:
        os.rename(path, path + ".rejected")
    except OSError:
        pass
