"""The chain head, anchored outside the database.

The hash chain makes an edited, inserted or reordered row visible, but not a
missing tail: delete the last events (after dropping the triggers, then
recreating them) and what is left is still a perfect chain.  So after its
commits the writer also writes the chain's head, ``{"id", "hash"}`` of the last
event, to a small file next to the ledger (``<ledger>.head``), atomically
(temporary file + rename): from a thread of its own, at most once per
reflex.ledger.writer.ANCHOR_INTERVAL, the newest committed head each time.  `ctx ledger verify` checks that the anchored event
is still in the database with the same hash.

Order matters: the head is written after the commit, so the database can be
ahead of its head (a crash between the two, or commits within the interval),
never behind it.  Verify accepts
events after the anchored one (they must still chain from it, which the chain
check covers) and reads the head before it opens its read transaction, so a
commit landing meanwhile cannot look like a truncation.

The head is not fsynced, like the commits it follows (synchronous=NORMAL):
after a power loss both may be behind.  If the head survived and the last
commits did not, verify reports the anchored event missing, which it is.

When the writer starts and finds a head the database contradicts, it keeps
that head as evidence (``<ledger>.head.mismatch-<unix time>``), logs, and
anchors the database as it is; verify reports every kept mismatch until a
person removes the file.

The limit: this defends against whoever can rewrite the database but not the
file next to it (SQL access, a tool that edits the database, a restored copy of
an old database).  Someone who can write both can truncate the ledger and
write a matching head; detecting that needs a witness outside their reach (a
copy of the head sent elsewhere, e.g. with `ctx ledger export` to another
machine, or a signature with a key they do not hold).
"""

import glob
import json
import os
from reflex.errors import FatalError

SUFFIX = ".head"
MISMATCH = ".mismatch-"


class HeadError(FatalError):
    """The head file exists but cannot be read as a head."""


def head_path(ledger_path):
    return os.fspath(ledger_path) + SUFFIX


def read(ledger_path):
    """The anchored head as {"id": int, "hash": str}, or None when there is no head file."""
    path = head_path(ledger_path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise HeadError("%s is not readable: %s" % (path, e)) from None
    if not (isinstance(data, dict) and isinstance(data.get("id"), int) and isinstance(data.get("hash"), str)):
        raise HeadError("%s does not hold a head (id and hash)" % path)
    return data


def write(ledger_path, event_id, event_hash):
    path = head_path(ledger_path)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps({"id": event_id, "hash": event_hash}, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def contradiction(conn, head):
    """Why the database contradicts `head`, or None if the anchored event is there unchanged."""
    if head["id"] == 0:
        return None  # anchored while the ledger was empty
    row = conn.execute("SELECT hash FROM events WHERE id = ?", (head["id"],)).fetchone()
    if row is None:
        last = conn.execute("SELECT MAX(id) FROM events").fetchone()[0]
        return ("event id %d (hash %s) was anchored as the chain's head but is not in the ledger, whose last "
                "event is %s: the ledger was truncated or replaced" % (head["id"], head["hash"], last))
    if row[0] != head["hash"]:
        return ("event id %d was anchored with hash %s but now hashes to %s: the ledger was rewritten"
                % (head["id"], head["hash"], row[0]))
    return None


def keep_as_evidence(ledger_path, now):
    """Move a contradicted head aside (never overwrite evidence); -> the new name."""
    src = head_path(ledger_path)
    dst = "%s%s%d" % (src, MISMATCH, int(now))
    n = 0
    while os.path.exists(dst):
        n += 1
        dst = "%s%s%d.%d" % (src, MISMATCH, int(now), n)
    os.rename(src, dst)
    return dst


def kept_mismatches(ledger_path):
    return sorted(glob.glob(glob.escape(head_path(ledger_path)) + MISMATCH + "*"))
