"""Content-addressed blob store for raw command output.

A blob's identity is the BLAKE3 of its exact bytes ("b3:<64 hex>"); its handle,
what agents type, is "r:" + the first 12 hex digits.  Files are zlib-compressed,
0600, written to a temporary name and renamed into place, so a reader sees
either nothing or a complete blob.  Reads re-hash the bytes: a blob that does
not match its name is reported as damaged, never returned.

Retention is least-recently-used by a size and an age limit; the ledger is
never touched by eviction (a run whose blob is gone answers miss(evicted)).
"""

import os
import time
import zlib

from blake3 import blake3

HANDLE_HEX = 12
_LEVEL = 3  # zlib level 3: ~4x on test logs at a fraction of level 6's cost on 5 MB outputs


class BlobMissing(Exception):
    pass


class BlobDamaged(Exception):
    pass


class BlobTooLarge(Exception):
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

    def chunks(self, bid, size=1 << 20):
        """The blob's bytes as a stream of chunks of at most `size`, in bounded memory.

        The bytes are verified as they pass: BlobDamaged is raised at the end (or as soon
        as the data is unreadable), so a consumer must not trust what it saw until the
        iteration has finished.  Raises BlobMissing before the first chunk."""
        hexd = bid.split(":", 1)[-1]
        path = self._path(hexd)
        try:
            f = open(path, "rb")
        except FileNotFoundError:
            raise BlobMissing(bid) from None
        h = blake3()
        d = zlib.decompressobj()
        with f:
            while True:
                comp = f.read(size)
                try:
                    # max_length: a megabyte of zeros inflates to a gigabyte; never hold more than `size`.
                    data = d.decompress(comp, size) if comp else d.flush()
                    while data:
                        h.update(data)
                        yield data
                        data = d.decompress(d.unconsumed_tail, size) if d.unconsumed_tail else b""
                except zlib.error as e:
                    raise BlobDamaged("%s: %s" % (bid, e)) from None
                if not comp:
                    break
        if not d.eof or h.hexdigest() != hexd:
            raise BlobDamaged("%s: content does not match its hash" % bid)
        try:
            os.utime(path)
        except OSError:
            pass

    def exists(self, bid):
        return os.path.exists(self._path(bid.split(":", 1)[-1]))

    def evict(self, *, max_bytes=None, max_age_s=None, now=None):
        """Remove least-recently-used blobs beyond the limits; returns removed ids."""
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
        removed = []
        total = sum(e[1] for e in entries)
        for mtime, size, p, bid in entries:
            too_old = max_age_s is not None and now - mtime > max_age_s
            too_big = max_bytes is not None and total > max_bytes
            if not (too_old or too_big):
                continue
            try:
                os.unlink(p)
            except OSError:
                continue
            total -= size
            removed.append(bid)
        return removed


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []
