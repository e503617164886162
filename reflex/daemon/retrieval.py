"""`get` and `search` in the daemon: verified bytes under a token budget, or a typed miss.

Every answer is built as a retrieval_models.Answer (exactly one of know/miss)
and every call is recorded as a retrieval event, so the detectors can see
which hints the agent followed.
"""

import json
import re

from blake3 import blake3

from .. import address as addr
from .. import blobs
from ..digest.neutralize import neutralize_verbatim
from ..digest.redact import redact_lines
from ..retrieval_models import Answer, Know, Miss

GET_BUDGET = 8000       # tokens: about what the harness itself shows of one Bash output
SEARCH_BUDGET = 3000
SEARCH_CONTEXT = 2
SEARCH_MAX_RUNS = 50


class Retrieval:
    def __init__(self, ctx):
        self.ctx = ctx

    # -- helpers ---------------------------------------------------------------
    def _run_row(self, handle):
        row = self.ctx.reader().execute(
            "SELECT id, handle, blob, session_id, command, cwd, core_hash, worktree_hash, meta, event_uid "
            "FROM runs WHERE handle = ? ORDER BY id DESC LIMIT 1", (handle,)).fetchone()
        if row is None:
            return None
        keys = ("id", "handle", "blob", "session_id", "command", "cwd", "core_hash", "worktree_hash", "meta",
                "event_uid")
        return dict(zip(keys, row))

    def _newer_run(self, run):
        if not run["core_hash"] or run["session_id"] == "-":
            return None
        row = self.ctx.reader().execute(
            "SELECT handle FROM runs WHERE session_id = ? AND core_hash = ? AND id > ? ORDER BY id DESC LIMIT 1",
            (run["session_id"], run["core_hash"], run["id"])).fetchone()
        return row[0] if row and row[0] != run["handle"] else None

    def _load(self, run):
        """-> (bytes, None) or (None, Miss)."""
        try:
            return self.ctx.blobs.get(run["blob"]), None
        except blobs.BlobMissing:
            from ..ledger.evictions import eviction_records_since, missing_blob
            conn = self.ctx.reader()
            if missing_blob(conn, run["blob"], run["event_uid"], eviction_records_since(conn)) != "deleted":
                return None, Miss(reason="evicted", handle=run["handle"],
                                  detail="retention removed the output of %s" % run["handle"],
                                  escalate_to=["rerun: %s" % run["command"]])
            # Retention records what it removes: this blob went some other way.
            return None, Miss(reason="denatured", handle=run["handle"],
                              detail="the stored output of %s is missing and retention never removed it "
                                     "(deleted outside ctx)" % run["handle"],
                              escalate_to=["rerun: %s" % run["command"], "ask_human"])
        except blobs.BlobDamaged as e:
            return None, Miss(reason="denatured", handle=run["handle"], detail=str(e),
                              escalate_to=["rerun: %s" % run["command"], "ask_human"])

    def _freshness_miss(self, run):
        newer = self._newer_run(run)
        if newer:
            return Miss(reason="superseded", handle=run["handle"],
                        detail="a newer run of the same command exists: %s" % newer,
                        refresh="ctx get %s" % newer)
        now = self.ctx.worktree_hash(run["cwd"]) if run["cwd"] else None
        if run["worktree_hash"] and now and now != run["worktree_hash"]:
            return Miss(reason="stale", handle=run["handle"],
                        detail="files changed since %s was produced" % run["handle"],
                        refresh=run["command"])
        return None

    def _bounded(self, raw, span, budget):
        """Largest whole-line prefix of raw[span] within the token budget."""
        from .. import tokens
        a, b = span
        text = raw[a:b].decode("utf-8", "replace")
        if tokens.count(text) <= budget:
            return b, False
        starts = addr.line_starts(raw)
        # binary search over line ends inside the span
        ends = [s for s in starts if a < s <= b] + [b]
        left, right = 0, len(ends) - 1
        best = None
        while left <= right:
            mid = (left + right) // 2
            if tokens.count(raw[a:ends[mid]].decode("utf-8", "replace")) <= budget:
                best = ends[mid]
                left = mid + 1
            else:
                right = mid - 1
        if best is None:  # a single huge line: cut inside it, on a UTF-8 boundary
            best = addr.floor_utf8_boundary(raw, a + budget * 2)
        return best, True

    # -- get ---------------------------------------------------------------------
    def get(self, query, *, budget=GET_BUDGET, check_b3=None):
        """-> (Answer, raw bytes delivered or None)."""
        a = addr.parse_address(query)
        if a is None:
            return Answer(query=query, miss=Miss(reason="abstain", detail="not an address: %r" % query,
                                                 escalate_to=["ctx search PATTERN"])), None
        run = self._run_row(a.handle)
        if run is None:
            return Answer(query=query, miss=Miss(reason="abstain", handle=a.handle,
                                                 detail="no run with handle %s" % a.handle,
                                                 escalate_to=["ctx search PATTERN"])), None
        raw, miss = self._load(run)
        if miss is not None:
            return Answer(query=query, miss=miss), None
        if a.kind == "lines":
            span = addr.line_span(raw, a.first_line, a.last_line)
        elif a.kind == "test":
            span = self._test_span(run, a.test_id)
            if span is None:
                return Answer(query=query, miss=Miss(
                    reason="abstain", handle=a.handle,
                    detail="%s has no failure named %r" % (a.handle, a.test_id),
                    escalate_to=["ctx search %s --handle %s" % (_quote(a.test_id), a.handle)])), None
        else:
            span = (0, len(raw))
        if check_b3:
            got = blake3(raw[span[0]:span[1]]).hexdigest()
            if not got.startswith(check_b3):
                return Answer(query=query, miss=Miss(
                    reason="denatured", handle=a.handle,
                    detail="the bytes at %s hash to %s, not b3=%s" % (query, got[:8], check_b3),
                    escalate_to=["ctx get %s" % a.handle, "rerun: %s" % run["command"]])), None
        fresh = self._freshness_miss(run)
        if fresh is not None:
            return Answer(query=query, miss=fresh), None
        end, truncated = self._bounded(raw, span, budget)
        piece = raw[span[0]:end]
        text, redacted = _redact(piece)
        text, neutralized = neutralize_verbatim(text)
        nxt = None
        if truncated:
            starts = addr.line_starts(raw)
            first, _ = addr.lines_of_span(starts, (end, span[1]), len(starts))
            _, last = addr.lines_of_span(starts, span, len(starts))
            nxt = addr.format_lines(a.handle, first, last)
        know = Know(handle=a.handle, address=query, span=(span[0], end), b3=blake3(piece).hexdigest(),
                    bytes=len(piece), text=text, truncated=truncated, next=nxt, redacted=redacted,
                    neutralized=neutralized)
        out = piece if not (redacted or neutralized) else text.encode("utf-8", "surrogateescape")
        return Answer(query=query, know=know), out

    def _test_span(self, run, test_id):
        try:
            meta = json.loads(run["meta"] or "{}")
        except ValueError:
            return None
        for f in meta.get("failures", ()):
            if f.get("id") == test_id and f.get("span"):
                return tuple(f["span"])
        return None

    # -- search ------------------------------------------------------------------
    def search(self, pattern, *, handle=None, session=None, budget=SEARCH_BUDGET):
        try:
            rx = re.compile(pattern)
        except re.error as e:
            return Answer(query=pattern, miss=Miss(reason="abstain", detail="bad pattern: %s" % e,
                                                   escalate_to=["ctx search <valid regex>"])), b""
        if handle:
            rows = self.ctx.reader().execute(
                "SELECT handle, blob, command FROM runs WHERE handle = ? ORDER BY id DESC LIMIT 1",
                (handle,)).fetchall()
        elif session:
            rows = self.ctx.reader().execute(
                "SELECT handle, blob, command FROM runs WHERE session_id = ? ORDER BY id DESC LIMIT ?",
                (session, SEARCH_MAX_RUNS)).fetchall()
        else:
            rows = self.ctx.reader().execute(
                "SELECT handle, blob, command FROM runs ORDER BY id DESC LIMIT ?", (SEARCH_MAX_RUNS,)).fetchall()
        from .. import tokens
        seen = set()
        blocks = []
        used = 0
        matches = 0
        truncated = False
        h = blake3()
        for handle_, blob_id, command in rows:
            if blob_id in seen:
                continue
            seen.add(blob_id)
            try:
                raw = self.ctx.blobs.get(blob_id)
            except (blobs.BlobMissing, blobs.BlobDamaged):
                continue
            lines = raw.decode("utf-8", "replace").split("\n")
            hits = [i for i, line in enumerate(lines) if rx.search(line)]
            if not hits:
                continue
            matches += len(hits)
            for lo, hi in _windows(hits, len(lines)):
                shown, _ = _redact_text("\n".join("%d:%s" % (i + 1, lines[i]) for i in range(lo, hi)))
                block = "%s:L%d-%d (%s)\n%s\n" % (handle_, lo + 1, hi, command[:80], shown)
                cost = tokens.count(block)
                if used + cost > budget:
                    truncated = True
                    break
                used += cost
                blocks.append(block)
                h.update(block.encode())
            if truncated:
                break
        if not blocks:
            return Answer(query=pattern, miss=Miss(
                reason="abstain", detail="no stored output matches %r" % pattern,
                escalate_to=["grep -rn %s ." % _quote(pattern), "rerun the command"])), b""
        text = "".join(blocks)
        know = Know(handle=handle or "*", address=pattern, b3=h.hexdigest(), bytes=len(text.encode()),
                    text=text, truncated=truncated, matches=matches)
        return Answer(query=pattern, know=know), text.encode()


def _windows(hits, n):
    out = []
    for i in hits:
        lo, hi = max(0, i - SEARCH_CONTEXT), min(n, i + SEARCH_CONTEXT + 1)
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _redact(piece):
    text = piece.decode("utf-8", "surrogateescape")
    return _redact_text(text)


def _redact_text(text):
    lines = text.split("\n")
    red = redact_lines(lines)
    n = sum(1 for a, b in zip(lines, red) if a != b)
    return "\n".join(red), n


def _quote(s):
    import shlex
    return shlex.quote(s)
