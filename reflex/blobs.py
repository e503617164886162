"""Content-addressed blob store for raw command output.

A blob's identity is the BLAKE3 of its exact bytes ("b3:<64 hex>"); its handle,
what agents type, is "r:" + the first 12 hex digits.  Files are zlib-compressed,
0600, written to a temporary name and renamed into place, so a reader sees
either nothing or a complete blob.  Reads re-hash the bytes: a blob that does
not match its name is reported as damaged, never returned.

Retention is least-recently-used by a size and an age limit.  It records
what it removes (the ledger's `evictions` table) before removing it, so a run
whose blob is gone answers miss(evicted) only when retention removed it, and
miss(denatured) when something else deleted it.
"""

import os
import time
import zlib

from blake3 import blake3
from reflex.errors import FatalError, UserError

HANDLE_HEX = 12
_LEVEL = 3  # zlib level 3: ~4x on test logs at a fraction of level 6's cost on 5 MB outputs


class BlobMissing(UserError):
    pass


class BlobDamaged(FatalError):
    pass


class BlobTooLarge(UserError):
    """The blob holds more than the caller will hold in memory (see BlobStore.chunks)."""


def blob_id(data):
    return "b3:" + blake3(data).hexdigest()


def handle_of(blob):
    return "r:" + blob.split(":", 1)[1][:HANDLE_HEX]


class BlobStore:
    def __init__(self, root):
        self.root = root

    def _path(self, hexdigest):
        return os.path.join(self.root, hexdigest[:2], hexdigest[2:] + ".z")

    def put(self, data):
        """Store bytes; returns the blob id.  Idempotent."""
        bid = blob_id(data)
        path = self._path(bid[3:])
        if os.path.exists(path):
            try:
                os.utime(path)  # recency for LRU
            except OSError:
                pass
            return bid
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = "%s.%d.tmp" % (path, os.getpid())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(zlib.compress(data, _LEVEL))
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return bid

    def get(self, bid, max_bytes=None):
        """The exact bytes of blob `bid`, verified.  Raises BlobMissing / BlobDamaged.

        With `max_bytes`, a larger blob raises BlobTooLarge after reading at most that much
        (blobs stored before captures were bounded can hold a gigabyte)."""
        if max_bytes is not None:
            parts = []
            n = 0
            for chunk in self.chunks(bid):
                n += len(chunk)
                if n > max_bytes:
                    raise BlobTooLarge("%s holds more than %d bytes" % (bid, max_bytes))
                parts.append(chunk)
            return b"".join(parts)
        hexd = bid.split(":", 1)[-1]
        path = self._path(hexd)
        try:
            with open(path, "rb") as f:
                comp = f.read()
        except FileNotFoundError:
            raise BlobMissing(bid) from None
        try:
            data = zlib.decompress(comp)
        except zlib.error as e:
            raise BlobDamaged("%s: %s" % (bid, e)) from None
        if blake3(data).hexdigest() != hexd:
            raise BlobDamaged("%s: content does not match its hash" % bid)
        try:
            os.utime(path)
        except OSError:
            pass
        return data

    def stream(self, bid, piece=1 << 20):
        """The bytes of blob `bid` in pieces of at most `piece` bytes, hashed as they go.

        Raises BlobMissing before the first piece; BlobDamaged after the last one when
        the bytes do not hash to the blob's name: a caller must not trust what it read
        until the generator is exhausted.  Memory stays at one piece however large the blob;
        reading does not count as a use for retention."""
        hexd = bid.split(":", 1)[-1]
        try:
            f = open(self._path(hexd), "rb")
        except FileNotFoundError:
            raise BlobMissing(bid) from None
        h = blake3()
        d = zlib.decompressobj()
        with f:
            pending = b""
            while True:
                if not pending:
                    pending = f.read(1 << 18)
                    if not pending:
                        break
                try:
                    out = d.decompress(pending, piece)
                except zlib.error as e:
                    raise BlobDamaged("%s: %s" % (bid, e)) from None
                pending = d.unconsumed_tail
                if out:
                    h.update(out)
                    yield out
                if d.eof:
                    break
            try:
                rest = d.flush()
            except zlib.error as e:
                raise BlobDamaged("%s: %s" % (bid, e)) from None
            if rest:
                h.update(rest)
                yield rest
        if not d.eof:
            raise BlobDamaged("%s: compressed stream is truncated" % bid)
        if h.hexdigest() != hexd:
            raise BlobDamaged("%s: content does not match its hash" % bid)

    def chunks(self, bid, size=1 << 20):
        """stream(), for a reader of the output (`ctx get`): reading to the end counts as a use,
        so retention keeps what agents still read."""
        yield from self.stream(bid, size)
        try:
            os.utime(self._path(bid.split(":", 1)[-1]))
        except OSError:
            pass

    def sidecar(self, bid, suffix):
        """Where derived data about blob `bid` lives (next to it; retention removes it with the blob)."""
        return self._path(bid.split(":", 1)[-1])[:-2] + "." + suffix

    def exists(self, bid):
        return os.path.exists(self._path(bid.split(":", 1)[-1]))

    def evict(self, *, max_bytes=None, max_age_s=None, now=None, record=None):
        """Remove least-recently-used blobs beyond the limits; returns removed ids.

        `record`, when given, is called once with every blob about to go, as dicts
        (blob, bytes, reason, evicted_at), before any file is removed; if it raises,
        nothing is removed."""
        now = time.time() if now is None else now
        entries = []
        for sub in _listdir(self.root):
            d = os.path.join(self.root, sub)
            for name in _listdir(d):
                if not name.endswith(".z"):
                    continue
                p = os.path.join(d, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                entries.append((st.st_mtime, st.st_size, p, "b3:" + sub + name[:-2]))
        entries.sort()  # oldest use first
        doomed = []
        total = sum(e[1] for e in entries)
        for mtime, size, p, bid in entries:
            too_old = max_age_s is not None and now - mtime > max_age_s
            too_big = max_bytes is not None and total > max_bytes
            if not (too_old or too_big):
                continue
            total -= size
            doomed.append((p, bid, size, "age" if too_old else "size"))
        if doomed and record is not None:
            record([{"blob": bid, "bytes": size, "reason": why, "evicted_at": now} for _p, bid, size, why in doomed])
        removed = []
        for p, bid, _size, _why in doomed:
            try:
                os.unlink(p)
            except OSError:
                continue
            removed.append(bid)
            for side in _listdir(os.path.dirname(p)):
                if side.startswith(os.path.basename(p)[:-2] + ".") and not side.endswith(".z"):
                    try:
                        os.unlink(os.path.join(os.path.dirname(p), side))
                    except OSError:
                        pass
        return removed


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []
