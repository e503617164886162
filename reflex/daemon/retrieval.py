"""`get` and `search` in the daemon: verified bytes under a token budget, or a typed miss.

Every answer is built as a retrieval_models.Answer (exactly one of know/miss)
and every call is recorded as a retrieval event, so the detectors can see
which hints the agent followed.

`get` answers are pages: at most GET_BUDGET tokens and GET_PAGE_BYTES bytes, cut
at a line end when one fits (else inside the line, on a UTF-8 boundary), with the
address of the rest in `next` (an L-range, or a B-range when the cut fell inside
a line).  Resolving an address is one pass over the blob's bytes counting
newlines, never an index of every line, so the cost of any page is bounded by the
blob's size, which the capture limit bounds (reflex.shim.capture).  Blobs stored before
that limit existed can be huge: they are streamed (bounded memory, verified as
they pass) instead of loaded.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from blake3 import blake3

from reflex import address as addr
from reflex import blobs
from reflex.digest.neutralize import clean_line, neutralize_verbatim
from reflex.digest.redact import redact_lines
from reflex.daemon.retrieval_models import Answer, Know, Miss
from reflex.daemon import linesearch

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from reflex.daemon.context import DaemonContext

# A row of the ledger's runs table, by column name.
RunRow = dict[str, Any]

GET_BUDGET = 8000       # tokens: about what the harness itself shows of one Bash output
GET_PAGE_BYTES = 64 * 1024  # and bytes: keeps the exact count of a page cheap (~ms)
LOAD_LIMIT = 16 * 1024 * 1024  # blobs up to this are read whole; larger (older) ones are streamed
SEARCH_BUDGET = 3000
SEARCH_MAX_RUNS = 50
SEARCH_TIME_LIMIT_S = 1.0   # config search_time_limit_s; the whole answer, from the request
FORMAT_MARGIN_S = 0.1       # of it, kept for the budgeted formatting after the matching
SEARCH_QUEUE = 4            # searches running or waiting; more answer "busy" at once
PREWARM_MIN_BYTES = 1 << 20  # outputs from this size get their redaction map computed ahead


class Retrieval:
    def __init__(self, ctx: DaemonContext) -> None:
        self.ctx = ctx
        self._search_pool: ThreadPoolExecutor | None = None
        self._searches = 0  # running or queued; only touched on the event loop

    async def search_async(self, loop: asyncio.AbstractEventLoop, pattern: str,
                           **kw: Any) -> tuple[Answer, bytes]:
        """search() on its own thread, one at a time, at most SEARCH_QUEUE waiting: a burst of
        searches neither occupies the pool `ctx run` and `ctx get` use nor piles up without end."""
        if self._searches >= SEARCH_QUEUE:
            return Answer(query=pattern, miss=Miss(
                reason="abstain", detail="%d searches are already running or waiting" % self._searches,
                escalate_to=["retry: ctx search %s" % _quote(pattern)])), b""
        if self._search_pool is None:
            from concurrent.futures import ThreadPoolExecutor
            self._search_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxd-search")
        self._searches += 1
        try:
            return await asyncio.wrap_future(self._search_pool.submit(self.search, pattern, **kw), loop=loop)
        finally:
            self._searches -= 1

    # -- helpers ---------------------------------------------------------------
    def _run_row(self, handle: str) -> RunRow | None:
        row = self.ctx.reader().execute(
            "SELECT id, handle, blob, session_id, command, cwd, core_hash, worktree_hash, meta, event_uid, raw_bytes "
            "FROM runs WHERE handle = ? ORDER BY id DESC LIMIT 1", (handle,)).fetchone()
        if row is None:
            return None
        keys = ("id", "handle", "blob", "session_id", "command", "cwd", "core_hash", "worktree_hash", "meta",
                "event_uid", "raw_bytes")
        return dict(zip(keys, row))

    def _newer_run(self, run: RunRow) -> str | None:
        if not run["core_hash"] or run["session_id"] == "-":
            return None
        row = self.ctx.reader().execute(
            "SELECT handle FROM runs WHERE session_id = ? AND core_hash = ? AND id > ? ORDER BY id DESC LIMIT 1",
            (run["session_id"], run["core_hash"], run["id"])).fetchone()
        return str(row[0]) if row and row[0] != run["handle"] else None

    def _chunks(self, run: RunRow) -> tuple[Iterable[bytes], None] | tuple[None, Miss]:
        """-> (iterable of the blob's bytes, None) or (None, Miss).  Damage may still surface while iterating."""
        try:
            if (run.get("raw_bytes") or 0) <= LOAD_LIMIT:
                return [self.ctx.blobs.get(run["blob"], max_bytes=LOAD_LIMIT)], None
        except blobs.BlobTooLarge:
            pass
        except (blobs.BlobMissing, blobs.BlobDamaged) as e:
            return None, self._blob_miss(run, e)
        try:
            return self.ctx.blobs.chunks(run["blob"]), None
        except blobs.BlobMissing as e:
            return None, self._blob_miss(run, e)

    def _blob_miss(self, run: RunRow, e: Exception) -> Miss:
        if isinstance(e, blobs.BlobMissing):
            if not self._deleted(run):
                return Miss(reason="evicted", handle=run["handle"],
                            detail="retention removed the output of %s" % run["handle"],
                            escalate_to=["rerun: %s" % run["command"]])
            # Retention records what it removes: this blob went some other way.
            return Miss(reason="denatured", handle=run["handle"],
                        detail="the stored output of %s is missing and retention never removed it "
                               "(deleted outside ctx)" % run["handle"],
                        escalate_to=["rerun: %s" % run["command"], "ask_human"])
        return Miss(reason="denatured", handle=run["handle"], detail=str(e),
                    escalate_to=["rerun: %s" % run["command"], "ask_human"])

    def _freshness_miss(self, run: RunRow) -> Miss | None:
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

    def get(self, query: str, *, budget: int = GET_BUDGET, check_b3: str | None = None) -> tuple[Answer, bytes | None]:
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
        test_span = None
        if a.kind == "test":
            assert a.test_id is not None  # parse_address sets it for a test address
            test_span = self._test_span(run, a.test_id)
            if test_span is None:
                return Answer(query=query, miss=Miss(
                    reason="abstain", handle=a.handle,
                    detail="%s has no failure named %r" % (a.handle, a.test_id),
                    escalate_to=["ctx search %s --handle %s" % (_quote(a.test_id), a.handle)])), None
        chunks, miss = self._chunks(run)
        if chunks is None:
            return Answer(query=query, miss=miss), None
        try:
            loc = _locate(chunks, a, test_span, want_hash=bool(check_b3))
        except (blobs.BlobMissing, blobs.BlobDamaged) as e:
            return Answer(query=query, miss=self._blob_miss(run, e)), None
        if loc.start is None or (loc.start >= loc.size and not (a.kind == "whole" and loc.size == 0)):
            return Answer(query=query, miss=Miss(
                reason="abstain", handle=a.handle,
                detail="%s holds %d lines (%d bytes): %s starts past its end" % (
                    a.handle, loc.lines, loc.size, query),
                escalate_to=["ctx get %s" % _last_page(a.handle, loc.lines)])), None
        if check_b3:
            got = loc.span_b3
            assert got is not None  # _locate hashes the span when asked to (want_hash)
            if not got.startswith(check_b3):
                return Answer(query=query, miss=Miss(
                    reason="denatured", handle=a.handle,
                    detail="the bytes at %s hash to %s, not b3=%s" % (query, got[:8], check_b3),
                    escalate_to=["ctx get %s" % a.handle, "rerun: %s" % run["command"]])), None
        fresh = self._freshness_miss(run)
        if fresh is not None:
            return Answer(query=query, miss=fresh), None
        assert loc.start is not None  # checked above
        cut = _page_end(loc.window, loc.end - loc.start, budget)
        piece = bytes(loc.window[:cut])
        end = loc.start + cut
        truncated = end < loc.end
        nxt = None
        if truncated:
            if a.kind == "bytes" or not piece.endswith(b"\n"):
                nxt = addr.format_bytes(a.handle, end, loc.end)
            else:
                nxt = addr.format_lines(a.handle, loc.first_line + piece.count(b"\n"), loc.last_line)
        text, redacted, lossy, out = _redact(piece)
        text, neutralized = neutralize_verbatim(text)
        if neutralized:
            out = text.encode("utf-8", "surrogateescape")
        know = Know(handle=a.handle, address=query, span=(loc.start, end), b3=blake3(piece).hexdigest(),
                    bytes=len(piece), text=text, truncated=truncated, next=nxt, redacted=redacted, lossy=lossy,
                    neutralized=neutralized)
        return Answer(query=query, know=know), out

    def _test_span(self, run: RunRow, test_id: str) -> tuple[int, int] | None:
        try:
            meta = json.loads(run["meta"] or "{}")
        except ValueError:
            return None
        for f in meta.get("failures", ()):
            if f.get("id") == test_id and f.get("span"):
                start, end = f["span"]
                return start, end
        return None

    def _deleted(self, run: RunRow) -> bool:
        """True if a run's missing output was not removed by retention (ledger/evictions.py)."""
        from reflex.ledger.evictions import eviction_records_since, missing_blob
        conn = self.ctx.reader()
        return bool(missing_blob(conn, run["blob"], run["event_uid"], eviction_records_since(conn)) == "deleted")

    def _gone(self, run: RunRow) -> str:
        """Why a run's stored output is missing, in a search answer's words."""
        if self._deleted(run):
            return "its stored output is missing and retention never removed it (denatured)"
        return "retention removed its stored output (evicted)"

    def prewarm(self, blob_id: str, size: int) -> None:
        """A new stored output: compute its redaction map now, in the background, so the
        first search over it does not have to (small outputs redact fast enough inline)."""
        if size >= PREWARM_MIN_BYTES and self.ctx.cfg.get("search_warm", True):
            linesearch.WORKERS.prewarm(self.ctx.paths.blobs, [blob_id])

    # -- search ------------------------------------------------------------------
    def search(self, pattern: str, *, handle: str | None = None, session: str | None = None,
               budget: int = SEARCH_BUDGET, started: float | None = None) -> tuple[Answer, bytes]:
        """Matching lines with context across stored outputs, newest first, under the token budget.

        The matching runs in a child process (linesearch.py): linear time, on the redacted
        text, stopped at the configured time limit, counted from `started` (monotonic)."""
        started = time.monotonic() if started is None else started
        time_limit = _time_limit(self.ctx.cfg)
        cols = "SELECT handle, blob, command, raw_bytes, event_uid FROM runs "
        if handle:
            rows = self.ctx.reader().execute(cols + "WHERE handle = ? ORDER BY id DESC LIMIT 1", (handle,)).fetchall()
        elif session:
            rows = self.ctx.reader().execute(cols + "WHERE session_id = ? ORDER BY id DESC LIMIT ?",
                                             (session, SEARCH_MAX_RUNS)).fetchall()
        else:
            rows = self.ctx.reader().execute(cols + "ORDER BY id DESC LIMIT ?", (SEARCH_MAX_RUNS,)).fetchall()
        by_blob: dict[str, RunRow] = {}
        for handle_, blob_id, command, size, event_uid in rows:
            by_blob.setdefault(blob_id, {"handle": handle_, "blob": blob_id, "command": command, "bytes": size or 0,
                                         "event_uid": event_uid})
        runs = list(by_blob.values())
        t_worker = time.monotonic()
        left = max(0.05, time_limit - (t_worker - started) - FORMAT_MARGIN_S)
        out = linesearch.run_worker(pattern, self.ctx.paths.blobs, [{"handle": r["handle"], "blob": r["blob"]}
                                                                     for r in runs], time_s=left,
                                    warm=bool(self.ctx.cfg.get("search_warm", True)))
        if out.error is not None:
            return Answer(query=pattern, miss=Miss(reason="abstain", detail="bad pattern: %s" % out.error,
                                                   escalate_to=["ctx search <valid RE2 regex>"])), b""
        if out.failure is not None and not out.windows:
            self.ctx.log("search failed: %s" % out.failure)
            return Answer(query=pattern, miss=Miss(reason="abstain", detail="search failed: %s" % out.failure,
                                                   escalate_to=["grep -rn %s ." % _quote(pattern)])), b""
        from reflex import tokens
        t_format = time.monotonic()
        commands = {r["handle"]: r["command"] for r in runs}
        blocks: list[str] = []
        used = 0
        truncated = False
        h = blake3()
        for w in out.windows:
            run = out.runs.get(w["handle"], {})
            if run.get("damaged"):
                continue  # never show lines of bytes that failed verification
            first, lines = w["first"], w["lines"]
            shown, _ = _redact_text("\n".join(lines))  # already redacted in the stream; kept as a second guard
            body = "\n".join("%d:%s" % (first + i, clean_line(line)) for i, line in enumerate(shown.split("\n")))
            block = "%s:L%d-%d (%s)\n%s\n" % (w["handle"], first, first + len(lines) - 1,
                                              clean_line(commands.get(w["handle"], "")[:80]), body)
            cost = tokens.count(block)
            if used + cost > budget:
                truncated = True
                break
            used += cost
            blocks.append(block)
            h.update(block.encode())
        good = [r for r in out.runs.values() if not r.get("damaged")]
        matches = sum(r.get("matches", 0) for r in good)
        # A run the worker was ended in the middle of: at least the matches it had shown.
        matches += sum(len(w.get("hits") or ()) for w in out.windows if w["handle"] not in out.runs)
        complete = out.complete and not out.killed
        # Lines the worker counted but did not send (its byte cap) are not shown either.
        truncated = truncated or any(r.get("capped") for r in good)
        notes = _search_notes(out, runs, time_limit, complete, matches, self._gone)
        if not blocks and not matches:
            detail = "no stored output matches %r" % pattern
            if notes:
                detail += "; " + "; ".join(n[len("[ctx] "):] for n in notes)
            return Answer(query=pattern, miss=Miss(
                reason="abstain", detail=detail,
                escalate_to=["grep -rn %s ." % _quote(pattern), "rerun the command"])), b""
        text = "".join(blocks) + "".join(n + "\n" for n in notes)
        t_end = time.monotonic()
        if t_end - started > time_limit + 0.25:  # for whoever wonders why an answer was late
            self.ctx.log("search %r took %.2f s (limit %.1f): %.2f s waiting and reading the ledger, %.2f s "
                         "matching, %.2f s formatting" % (pattern[:80], t_end - started, time_limit,
                                                          t_worker - started, t_format - t_worker, t_end - t_format))
        know = Know(handle=handle or "*", address=pattern, b3=h.hexdigest(), bytes=len(text.encode()),
                    text=text, truncated=truncated or not complete, matches=matches, complete=complete)
        return Answer(query=pattern, know=know), text.encode()


def _time_limit(cfg: dict[str, Any]) -> float:
    try:
        v = float(cfg.get("search_time_limit_s") or SEARCH_TIME_LIMIT_S)
    except (TypeError, ValueError):
        return SEARCH_TIME_LIMIT_S
    return min(max(v, 0.1), 600.0)


def _megabytes(done: float, total: float) -> tuple[str, str]:
    """Both sizes with as many decimals as it takes to tell them apart: a search stopped 40 KB short of
    the end must not read "after 3.1 of 3.1 MB", which says it read everything."""
    for decimals in (1, 2, 3):
        a, b = "%.*f" % (decimals, done), "%.*f" % (decimals, total)
        if a != b or done >= total:
            break
    return a, b


def _search_notes(out: linesearch.Outcome, runs: list[RunRow], time_limit: float, complete: bool, matches: int,
                  gone: Callable[[RunRow], str]) -> list[str]:
    """ctx's own lines under a search answer: what was not searched, and why."""
    notes = []
    if not complete:
        total = sum(r["bytes"] for r in runs) / 1e6
        where = ("after %s of %s MB" % _megabytes((out.done or {}).get("bytes", 0) / 1e6, total) if out.done
                 else "(its process was ended)")
        notes.append("[ctx] search stopped at its %.1f s time limit %s: %d matching line%s counted so far, "
                     "more may exist; narrow it with --handle or a more specific pattern" % (
                         time_limit, where, matches, "" if matches == 1 else "s"))
    for r in runs:
        rec = out.runs.get(r["handle"])
        if rec is None:
            continue
        if rec.get("damaged"):
            notes.append("[ctx] %s not searched: its stored bytes fail verification (denatured)" % r["handle"])
        elif rec.get("missing"):
            notes.append("[ctx] %s not searched: %s" % (r["handle"], gone(r)))
        if rec.get("skipped_long_lines"):
            notes.append("[ctx] %s: %d line%s over %d MB not searched" % (
                r["handle"], rec["skipped_long_lines"], "" if rec["skipped_long_lines"] == 1 else "s",
                linesearch.MAX_LINE >> 20))
    return notes


def _redact(piece: bytes) -> tuple[str, int, bool, bytes]:
    """-> (text for a JSON answer, secrets masked, whether that text is lossy, bytes to print).

    Printed bytes are exact except for masked secrets.  JSON text must be valid Unicode:
    bytes that are not UTF-8 (binary output) become U+FFFD there, and `lossy` says so."""
    text = piece.decode("utf-8", "surrogateescape")
    text, n = _redact_text(text)
    out = text.encode("utf-8", "surrogateescape") if n else piece
    try:
        text.encode("utf-8")
        return text, n, False, out
    except UnicodeEncodeError:
        return out.decode("utf-8", "replace"), n, True, out


class _Located:
    """Where an address falls in one blob (see _locate)."""

    __slots__ = ("start", "end", "size", "lines", "first_line", "last_line", "window", "span_b3")

    start: int | None       # None: a line address that starts past the end
    end: int
    size: int
    lines: int
    first_line: int
    last_line: int
    window: bytearray
    span_b3: str | None     # when asked for (want_hash)


def _locate(chunks: Iterable[bytes], a: addr.Address, test_span: tuple[int, int] | None,
            want_hash: bool) -> _Located:
    """One pass over a blob's bytes (`chunks`, in order): the byte span an address names,
    the blob's size and line count, the line numbers around the span, the first
    GET_PAGE_BYTES of the span and, when asked, the BLAKE3 of the whole span.

    Memory is bounded by one chunk plus one page whatever the blob's size.  For a
    line address that starts past the end, `start` is None."""
    start: int | None
    end: int | None
    if a.kind == "whole":
        start, end = 0, None
    elif a.kind == "bytes":
        start, end = a.start, a.end
    elif a.kind == "test":
        assert test_span is not None  # the caller found the test's span
        start, end = test_span
    else:
        start, end = (0 if a.first_line == 1 else None), None
    # newlines before the span's first line, and up to its last (parse_address sets both for lines)
    want_start = (a.first_line or 1) - 1 if a.kind == "lines" else 0
    want_end = (a.last_line or 0) if a.kind == "lines" else 0
    h = blake3() if want_hash else None
    window = bytearray()
    pos = nl = 0
    first_line: int | None = None
    span_nl = 0
    span_last = b""
    last = b""
    for chunk in chunks:
        chunk_end = pos + len(chunk)
        c_nl = chunk.count(b"\n")
        if start is None and nl + c_nl >= want_start:
            start = pos + _after_nth_newline(chunk, want_start - nl)
        if a.kind == "lines" and end is None and nl + c_nl >= want_end:
            end = pos + _after_nth_newline(chunk, want_end - nl)
        if first_line is None and start is not None and start <= chunk_end:
            first_line = nl + chunk.count(b"\n", 0, max(0, start - pos)) + 1
        if start is not None:
            lo = max(start, pos)
            hi = chunk_end if end is None else min(end, chunk_end)
            if lo < hi:
                piece = chunk[lo - pos:hi - pos]
                if h is not None:
                    h.update(piece)
                if len(window) < GET_PAGE_BYTES:
                    window += piece[:GET_PAGE_BYTES - len(window)]
                span_nl += piece.count(b"\n")
                span_last = piece[-1:]
        nl += c_nl
        if chunk:
            last = chunk[-1:]
        pos = chunk_end
    loc = _Located()
    loc.size = pos
    loc.lines = nl + (1 if pos and last != b"\n" else 0)
    loc.start = start
    loc.end = pos if end is None else min(end, pos)
    loc.first_line = first_line or 1
    loc.last_line = max(loc.first_line, loc.first_line + span_nl - (1 if span_last == b"\n" else 0))
    loc.window = window
    loc.span_b3 = h.hexdigest() if h is not None else None
    return loc


def _after_nth_newline(chunk: bytes, k: int) -> int:
    """The index just after the k-th newline of `chunk` (0 for k == 0); the caller knows there are k."""
    i = 0
    # Skip ahead by blocks counted at C speed, then step through the last block.
    block = 1 << 14
    while k > 0:
        c = chunk.count(b"\n", i, i + block)
        if c < k:
            k -= c
            i += block
            continue
        while k > 0:
            i = chunk.index(b"\n", i) + 1
            k -= 1
    return i


def _page_end(window: bytearray, span_len: int, budget: int) -> int:
    """How many bytes of `window` (the start of a span of `span_len` bytes) one answer holds.

    The longest prefix within `budget` tokens ending at a line end, or at the span's end
    when the whole span is in the window; else a cut inside the first line on a UTF-8
    boundary.  Always at least one character, so paging makes progress."""
    from reflex import tokens

    def fits(n: int) -> bool:
        return tokens.count(bytes(window[:n]).decode("utf-8", "replace")) <= budget

    n = len(window)
    if n == 0:
        return 0
    ends = [i + 1 for i in _newlines(window)]
    if n == span_len and (not ends or ends[-1] != n):
        ends.append(n)
    if ends and ends[-1] == n and fits(n):
        return n
    lo, hi = 0, len(ends) - 1
    best = 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(ends[mid]):
            best = ends[mid]
            lo = mid + 1
        else:
            hi = mid - 1
    if best:
        return best
    # Not even one whole line fits: cut inside it, on a UTF-8 boundary, after a space when
    # there is one near (a cut through a token could leave half a secret unrecognised by
    # redaction on both pages).
    lo, hi = 1, (ends[0] if ends else n)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(addr.floor_utf8_boundary(window, mid)):
            lo = mid
        else:
            hi = mid - 1
    cut = addr.floor_utf8_boundary(window, lo)
    space = max(window.rfind(b" ", max(0, cut - 512), cut), window.rfind(b"\t", max(0, cut - 512), cut))
    if space > 0:
        cut = space + 1
    return max(cut, addr.ceil_utf8_boundary(window, 1))


def _newlines(data: bytes | bytearray) -> Iterator[int]:
    i = data.find(b"\n")
    while i >= 0:
        yield i
        i = data.find(b"\n", i + 1)


def _last_page(handle: str, lines: int) -> str:
    return addr.format_lines(handle, max(1, lines - 99), lines) if lines else handle


def _redact_text(text: str) -> tuple[str, int]:
    lines = text.split("\n")
    # After a final newline there is no line (address.py): an unterminated private key
    # block would otherwise turn that nothing into one more marker line.
    tail = [lines.pop()] if len(lines) > 1 and lines[-1] == "" else []
    red = redact_lines(lines)
    n = sum(1 for a, b in zip(lines, red) if a != b)
    return "\n".join(red + tail), n


def _quote(s: str) -> str:
    import shlex
    return shlex.quote(s)

