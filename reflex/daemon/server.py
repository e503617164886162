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

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from reflex import config as config_mod, paths as paths_mod
from reflex.shim import spool
from reflex import protocol
from reflex.daemon.context import DaemonContext
from reflex.daemon.ops import VERSION, Ops, Reply, error

READ_TIMEOUT = 10.0
SPOOL_SCAN_S = 1.0
SPOOL_TRANSIENT_MAX = 5       # scans a frame may fail "transiently" before the next frame is tried
SPOOL_CRASHES_MAX = 3         # daemon deaths while ingesting one frame before it is quarantined
                              # (more than one: a kill -9 can land on any frame, twice is chance)
SPOOL_FRAME_TIMEOUT_S = 120.0
RETENTION_EVERY_S = 600.0


class Server:
    def __init__(self, paths: paths_mod.Paths, *, log: Callable[[str], None], idle_seconds: float | None = None,
                 http_port: int | None = None) -> None:
        self.paths = paths
        self.log = log
        self.ctx = DaemonContext(paths, log=log)
        self.idle_seconds = idle_seconds if idle_seconds is not None else float(
            self.ctx.cfg.get("idle_seconds") or 1800)
        self.http_port = http_port if http_port is not None else int(self.ctx.cfg.get("http_port") or 0)
        self.executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ctxd-work")
        self.inflight: set[asyncio.Task[Any]] = set()
        self.last_activity = time.monotonic()
        self.socket_inode: int | None = None
        self.stopping: asyncio.Event | None = None
        self._transient_failures: dict[str, int] = {}
        self._died_on: dict[str, int] | None = None

    # -- entry ----------------------------------------------------------------
    def run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        loop = asyncio.get_running_loop()
        self.stopping = asyncio.Event()
        self.ops = Ops(self.ctx, loop, self.executor)
        self.ops.stop_requested = self.stopping.set
        self.spool_lock = asyncio.Lock()
        self._spool_seen: int | None = -1
        self.ops.drain_spool = self._drain_if_pending
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self.stopping.set)
        self.ctx.start()
        ingested = await self._ingest_spool()
        if ingested:
            self.log("ingested %d spooled frames at start" % ingested)
        swept = sweep_captures(self.paths.captures, time.time())
        if swept:
            self.log("removed %d capture file(s) left by runs that ended without finishing" % swept)
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
        from reflex.shim import launcher
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
    async def _listen_unix(self) -> asyncio.Server:
        # Every step goes through one verified descriptor of the run dir, so the
        # directory cannot be swapped for someone else's between the check and
        # the bind; a long path binds through that descriptor too (paths.py).
        dir_fd = paths_mod.open_private_subdir(self.paths.run_dir)
        try:
            name = os.path.basename(self.paths.socket)
            tmp = "%s.%d.tmp" % (name, os.getpid())
            for p in (tmp, name):
                # We hold the instance lock: whatever socket is here is stale.
                try:
                    os.unlink(p, dir_fd=dir_fd)
                except OSError:
                    pass
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address, addr_fd = paths_mod.socket_address(os.path.join(self.paths.run_dir, tmp), dir_fd)
            old = os.umask(0o177)
            try:
                sock.bind(address)
            finally:
                os.umask(old)
                if addr_fd is not None:
                    os.close(addr_fd)
            os.chmod(tmp, 0o600, dir_fd=dir_fd)
            sock.listen(512)
            server = await asyncio.start_unix_server(self._on_unix, sock=sock, limit=protocol.MAX_HEADER)
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            self.socket_inode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino
        finally:
            os.close(dir_fd)
        return server

    async def _listen_http(self) -> asyncio.Server | None:
        from reflex.daemon.http import HttpFront
        front = HttpFront(self, token=_read_token(self.paths.http_token))
        try:
            return await asyncio.start_server(front.handle, "127.0.0.1", self.http_port, limit=protocol.MAX_HEADER)
        except OSError as e:
            from reflex.daemon.http import listening_uid
            owner = listening_uid(self.http_port)
            held = "; it is held by uid %d: another user would receive your hook payloads and token, " \
                   "choose another port" % owner if owner is not None and owner != os.geteuid() else ""
            self.log("http transport disabled: cannot bind 127.0.0.1:%d: %s%s" % (self.http_port, e, held))
            self.http_port = 0
            return None

    async def _on_unix(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # called by asyncio.start_unix_server, inside its task
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

    async def _serve_frame(self, reader: asyncio.StreamReader) -> bytes:
        self.last_activity = time.monotonic()
        try:
            line = await asyncio.wait_for(reader.readline(), READ_TIMEOUT)
        except (asyncio.LimitOverrunError, ValueError):
            return error("too_large", "header exceeds %d bytes" % protocol.MAX_HEADER).encode()
        except asyncio.TimeoutError:
            return error("bad_request", "timed out reading the header").encode()
        try:
            hdr = json.loads(line)
            if not isinstance(hdr, dict):
                raise ValueError("header is not an object")
        except ValueError as e:
            return error("bad_request", "unparseable header: %s" % e).encode()
        if hdr.get("v") != protocol.PROTOCOL:
            return error("protocol", "protocol %r not supported; restart the client or daemon" % hdr.get("v"),
                         want=protocol.PROTOCOL, version=VERSION).encode()
        n = hdr.get("len") or 0
        if not isinstance(n, int) or n < 0:
            return error("bad_request", "bad body length").encode()
        if n > protocol.MAX_BODY:
            return error("too_large", "body of %d bytes exceeds %d" % (n, protocol.MAX_BODY)).encode()
        try:
            body = await asyncio.wait_for(reader.readexactly(n), READ_TIMEOUT) if n else b""
        except asyncio.TimeoutError:
            return error("bad_request", "timed out reading the body").encode()
        return (await self.dispatch(hdr, body)).encode()

    async def dispatch(self, hdr: dict[str, Any], body: bytes) -> Reply:
        try:
            return await self.ops.dispatch(hdr, body)
        except Exception as e:
            self.log("op %r failed: %r" % (hdr.get("op"), e))
            return error("internal", "%s: %s" % (type(e).__name__, e), transient=_transient(e))

    # -- spool -------------------------------------------------------------------
    async def _ingest_spool(self) -> int:
        """Ingest spooled frames in arrival order; -> how many were committed.

        Every frame ends up in the ledger or in quarantine (spool.quarantine,
        with its reason); none holds up the frames behind it:
        * a frame that is unreadable, rejected, or fails for a reason of its own
          (an exception that is not about the machine) is quarantined at once;
        * while the ledger cannot be written at all (disk full, locked) the scan
          stops and the next one retries, since nothing behind could be written
          either; but a frame that keeps failing "transiently" while the frames
          behind it go in was the problem after all, and is quarantined;
        * a frame the daemon died (or hung) on is quarantined after
          SPOOL_CRASHES_MAX attempts: the marker file names the frame in progress.
        """
        count = 0
        suspect: tuple[str, int, Any] | None = None
        for path in spool.pending(self.paths.spool):
            try:
                data = spool.read_frame(path, protocol.MAX_HEADER + protocol.MAX_BODY)
            except FileNotFoundError:
                continue
            except ValueError as e:
                self._quarantine(path, "unreadable: %s" % e)
                continue
            head, body = spool.split_frame(data)
            try:
                hdr = json.loads(head)
                if not isinstance(hdr, dict):
                    raise ValueError("not an object")
            except ValueError as e:
                self._quarantine(path, "unreadable header: %s" % e)
                continue
            hdr["spooled"] = True
            attempts = self._mark_in_progress(path)
            if attempts > SPOOL_CRASHES_MAX:
                self._quarantine(path, "the daemon stopped %d times while ingesting this frame" % (attempts - 1))
                self._mark_in_progress(None)
                continue
            try:
                reply = await asyncio.wait_for(self.dispatch(hdr, body), SPOOL_FRAME_TIMEOUT_S)
            except asyncio.TimeoutError:
                reply = error("internal", "not ingested within %ds" % SPOOL_FRAME_TIMEOUT_S)
            self._mark_in_progress(None)
            if reply.fields.get("ok"):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
                self._transient_failures.pop(path, None)
                count += 1
                if suspect is not None:
                    self._quarantine(suspect[0], "failed %d times (last: %s) while later frames were "
                                                 "ingested" % (suspect[1], suspect[2]))
                    suspect = None
            elif reply.fields.get("transient"):
                n = self._transient_failures[path] = self._transient_failures.get(path, 0) + 1
                self._log_once("spool ingestion paused (%s); retrying every %ds"
                               % (reply.fields.get("detail"), SPOOL_SCAN_S))
                if suspect is not None or n < SPOOL_TRANSIENT_MAX:
                    break
                suspect = (path, n, reply.fields.get("detail"))  # does the next frame go in?
            else:
                self._quarantine(path, "%s: %s" % (reply.fields.get("error"), reply.fields.get("detail")))
        return count

    def _mark_in_progress(self, path: str | None) -> int:
        """Record the frame being ingested (None: none) -> how many times it was started,
        counting starts by earlier daemons that died before finishing it."""
        marker = os.path.join(self.paths.spool, spool.IN_PROGRESS)
        if self._died_on is None:
            # Read once: what the last daemon was doing when it stopped.
            self._died_on = {}
            try:
                with open(marker) as f:
                    name, _, n = f.read().strip().partition(" ")
                self._died_on[name] = int(n)
            except (OSError, ValueError):
                pass
        if path is None:
            try:
                os.unlink(marker)
            except OSError:
                pass
            return 0
        name = os.path.basename(path)
        attempts = self._died_on.pop(name, 0) + 1
        try:
            config_mod.write_text_atomic(marker, "%s %d\n" % (name, attempts))
        except OSError:
            pass
        return attempts

    def _quarantine(self, path: str, reason: str) -> None:
        try:
            where = spool.quarantine(path, reason)
        except OSError as e:
            self._log_once("cannot quarantine %s (%s): %s" % (path, reason, e))
            return
        if where:
            self.log("spool frame quarantined as %s: %s" % (where, reason))

    def _log_once(self, line: str) -> None:
        # A condition that persists (disk full) is logged when it starts or changes,
        # not on every one-second scan.
        if line != getattr(self, "_last_logged", None):
            self._last_logged = line
            self.log(line)

    async def _drain_if_pending(self) -> None:
        # One stat per live event instead of a listdir: the spool directory's
        # mtime moves whenever a shim adds a frame (or we remove one).
        stamp: int | None
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

    def _retention(self) -> list[str]:
        cfg = self.ctx.cfg
        # Recorded (committed) before the files go: a missing blob without a record was not us.
        removed: list[str] = self.ctx.blobs.evict(max_bytes=cfg.get("blob_max_bytes"),
                                       max_age_s=(cfg.get("blob_max_age_days") or 0) * 86400 or None,
                                       record=lambda rows: self.ctx.writer.submit_evictions(rows).result(60))
        if removed:
            self.log("retention evicted %d blobs" % len(removed))
        return removed

    async def _housekeeping(self) -> None:
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
                assert self.stopping is not None  # set by _main before housekeeping starts
                self.stopping.set()
                return

    # -- status and socket ownership ---------------------------------------------
    def _write_status(self, http_server: asyncio.Server | None) -> None:
        config_mod.write_json_atomic(self.paths.status, {
            "pid": os.getpid(), "socket": self.paths.socket, "version": VERSION,
            "protocol": protocol.PROTOCOL, "started_at": time.time(), "ledger": self.paths.ledger,
            "http_port": self.http_port if http_server is not None else 0,
        })

    def _remove_status(self) -> None:
        try:
            data = paths_mod.read_private_file(self.paths.status)
            if data is None or json.loads(data).get("pid") != os.getpid():
                return
            os.unlink(self.paths.status)
        except (OSError, ValueError, AttributeError):
            pass

    def _unlink_own_socket(self) -> None:
        # Only the daemon that owns a socket unlinks it: a successor may
        # already have renamed its own socket into place.
        try:
            if os.stat(self.paths.socket).st_ino == self.socket_inode:
                os.unlink(self.paths.socket)
        except OSError:
            pass


def _peer_is_us(sock: socket.socket | None) -> bool:
    if sock is None:
        return False
    from reflex import platform
    try:
        uid = platform.peer_uid(sock)   # SO_PEERCRED / LOCAL_PEERCRED
    except OSError:
        return False
    return uid is not None and uid == os.getuid()


def _read_token(path: str) -> str | None:
    # A token file another user could have written would be theirs to know.
    data = paths_mod.read_private_file(path, 4096)
    return (data.decode("utf-8", "replace").strip() or None) if data else None


def _transient(exc: BaseException) -> bool:
    """Does this failure say something about the machine (disk full, ledger locked) rather
    than about the request?  Only those are worth retrying the same frame for."""
    import sqlite3
    return isinstance(exc, (OSError, MemoryError, sqlite3.OperationalError)) and \
        not isinstance(exc, paths_mod.UntrustedPath)


# A capture untouched this long belongs to a run that was killed before it could finish: its
# raw bytes (secret values not yet redacted) are removed.  A live run writes to its capture,
# and keeps reading it through its open descriptor even if the file is gone.
STALE_CAPTURE_S = 6 * 3600


def sweep_captures(captures_dir: str, now: float, stale_s: float = STALE_CAPTURE_S) -> int:
    """Remove regular files under `captures_dir` not modified for `stale_s`; -> how many."""
    removed = 0
    try:
        entries = list(os.scandir(captures_dir))
    except OSError:
        return 0
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
            if not entry.is_file(follow_symlinks=False) or now - st.st_mtime < stale_s:
                continue
            os.unlink(entry.path)
            removed += 1
        except OSError:
            continue
    return removed
