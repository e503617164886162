"""`ctx search`'s engine: linear-time line matching over stored outputs, on the redacted text,
in a child process.

Matching.  Patterns are RE2 syntax (Python's `re` without backreferences and
look-around), compiled by google-re2: RE2 runs in time linear in the text for
every pattern, so `^(a+)+$` costs what `^a+$` costs (a backtracking engine
takes exponential time on it, and a timeout around one would only hide that).
Options: `never_nl`, so a match never spans a line (lines are what a search
answers with; `^`/`$` match at line ends); `never_capture` (named groups are
rewritten as plain ones), so RE2 answers from its DFAs alone; a bounded
program memory; and `\\C` (one byte, even a newline or half a character) is
refused.  Only the daemon imports google-re2: `ctx search` stays stdlib-only.

What is matched.  Each stored output is read as a stream (decompressed in
pieces, hashed as it goes) and cut into blocks on line boundaries.  Every
block is redacted exactly as `ctx get` redacts (reflex.digest.redact, private
key blocks included, their state carried from block to block) BEFORE any
pattern sees it: matches, counts, line numbers and context lines all come from
the redacted text, so `ghp_abc` finds a token exactly when `ghp_abd` does
(redaction keeps the number of lines, so line numbers say nothing either).
Lines over MAX_LINE bytes are skipped (counted, never cut: a cut could split
a secret so that neither half is redacted).

Isolation.  The search runs in a child process (`python -m
reflex.daemon.linesearch`), niced, under CPU and memory limits: it shares no
interpreter lock with the daemon's event loop or its ledger writer, so hooks
are answered at their usual latency while it runs, and the daemon can kill it.
It writes one JSON record per line as it goes (windows of matching lines with
their context, then a record per output, then `done`), so whatever it found
before a kill still answers.

Time.  The search stops at its deadline (the daemon's `search_time_limit_s`,
measured from when the daemon received the request) and says how far it got;
matches counted by then are a lower bound.  Output bytes of a run it read to
the end are verified against their BLAKE3; a damaged output's matches are
dropped.
"""

from __future__ import annotations

import json
import os
import sys
import time

from reflex.errors import UserError

# Annotation-only imports and names: the worker process starts with -S and as few imports as
# it can (typing alone costs it tens of milliseconds); mypy reads the block as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    from reflex.blobs import BlobStore

    # An RE2 program (google-re2's `_re2.RE2`, which has no type stubs).
    Program = Any
    # One JSON record the worker writes (a window, a run, `done`, an error), as decoded.
    Record = dict[str, Any]
    Emit = Callable[[Record], None]
    # A replaced line: (start, end, new bytes) within a block; a map entry is (raw offset, old length, new bytes).
    Edit = tuple[int, int, bytes]
    # A window of context being collected: [first line no, [lines], last line no it should reach,
    # [matching line nos]].
    _Window = list[Any]

MAX_PATTERN = 1000          # characters
RE2_MAX_MEM = 64 << 20      # program + DFA cache per regex (RE2 falls back to its NFA, still linear, beyond it)
BLOCK = 1 << 20             # bytes decompressed, redacted and matched at a time
MAX_LINE = 16 << 20         # longer lines are skipped, never cut
CONTEXT = 2                 # lines before and after each match
MAX_SHOWN_BYTES = 96 << 10  # text of windows sent to the daemon (the daemon cuts to its token budget)
CHECK_EVERY = 512           # matches between two deadline checks
SCAN_STEP = 64 << 10        # bytes one RE2 call scans before the deadline is looked at again
WORKER_MEMORY = 2 << 30     # address-space limit of the child
WARM_BUDGET_S = 60.0        # wall time a worker may spend computing redaction maps after answering
NICE = 5                    # the worker's niceness: a third of the daemon's share of a contended core


class PatternError(UserError, ValueError):
    pass


# -- patterns ---------------------------------------------------------------------


def _odd_backslashes_before(s: str, i: int) -> bool:
    n = 0
    while i - n - 1 >= 0 and s[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _plain_groups(pattern: str) -> str:
    """`(?P<name>…)` and `(?<name>…)` as `(?:…)`: RE2 keeps named groups capturing even with
    never_capture, and a capture makes it run its NFA over every match."""
    out = []
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            out.append(c)
            i += 1
            if pattern[i:i + 1] == "^":
                out.append("^")
                i += 1
            if pattern[i:i + 1] == "]":  # a leading ] is a literal
                out.append("]")
                i += 1
            continue
        elif pattern.startswith("(?P<", i) or (pattern.startswith("(?<", i) and pattern[i + 3:i + 4] not in ("=", "!")):
            close = pattern.find(">", i)
            if close > 0:
                out.append("(?:")
                i = close + 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def compile_pattern(pattern: str) -> Program:
    """An RE2 program for `pattern` (see the module docstring); raises PatternError."""
    try:
        from re2 import _re2
    except ImportError:
        raise PatternError("ctx search needs the google-re2 package in the daemon's environment "
                           "(pip install google-re2)") from None
    if not pattern:
        raise PatternError("empty pattern")
    if len(pattern) > MAX_PATTERN:
        raise PatternError("pattern longer than %d characters" % MAX_PATTERN)
    for i in range(len(pattern) - 1):
        if pattern[i] == "\\" and pattern[i + 1] == "C" and not _odd_backslashes_before(pattern, i):
            raise PatternError(r"\C (any byte) is not supported: it can match a newline or half a character")
    error = None
    for candidate in dict.fromkeys((_plain_groups(pattern), pattern)):
        try:
            source = ("(?m)" + candidate).encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raise PatternError("the pattern is not valid text") from None
        rx = _re2.RE2(source, _options())
        if rx.ok():
            return rx
        error = error or rx.error().decode("utf-8", "replace")
    raise PatternError(error)


def compile_pattern_raw(pattern: str) -> Program:
    """RE2 program for one of our own patterns (no user-pattern checks)."""
    from re2 import _re2
    rx = _re2.RE2(pattern.encode(), _options())
    if not rx.ok():
        raise PatternError(rx.error().decode("utf-8", "replace"))
    return rx


def _options() -> Any:
    from re2 import _re2
    opts = _re2.RE2.Options()
    opts.never_nl = True
    opts.never_capture = True
    opts.log_errors = False
    opts.max_mem = RE2_MAX_MEM
    return opts


class _Matcher:
    """Where an RE2 program first matches in part of a block."""

    def __init__(self, rx: Program) -> None:
        from re2 import _re2
        self.rx = rx
        self.unanchored = _re2.RE2.Anchor.UNANCHORED

    def first(self, block: bytes, pos: int, end: int | None = None) -> int:
        """Offset of the first match in block[pos:end] (end: a line end), or -1.

        An empty match at `end` just after a newline is no match: the line it would
        belong to starts after `end` (`^\\s*$` would count it twice)."""
        n = len(block) if end is None else end
        s: int = self.rx.Match(self.unanchored, block, pos, n)[0][0]
        if s == n and n and block[n - 1] == 10:
            return -1
        return s


def _scan_end(block: bytes, pos: int) -> int:
    """Where one matching step from pos stops: the end of the line SCAN_STEP bytes on (or the block's).

    RE2 stays linear on every pattern, but a pattern that defeats its DFA runs at a few
    MB/s; short steps let the deadline be checked often."""
    n = len(block)
    if n - pos <= SCAN_STEP:
        return n
    nl = block.find(b"\n", pos + SCAN_STEP)
    return n if nl < 0 else nl + 1


# -- redaction, streamed --------------------------------------------------------------


class StreamRedactor:
    """Blocks of whole lines in, the same blocks redacted as `ctx get` redacts them out.

    Equal, for any cut on line boundaries, to reflex.digest.redact.redact_lines over the
    output decoded with surrogateescape: lines with no prefilter hit are left alone
    (redact_line does nothing to them either), the rest go through redact_line, and
    private key blocks are followed line by line across blocks.  Every replaced line is
    also returned as an edit (start, end, new bytes) within the block.
    """

    MARKER = b"[REDACTED:private-key]"

    def __init__(self) -> None:
        from reflex.digest import redact
        self.redact = redact
        self.in_key = False
        self.prefilter: _Matcher | None = None
        pf = getattr(redact, "_PREFILTER", None)
        if pf is not None:
            try:
                self.prefilter = _Matcher(compile_pattern_raw(pf.pattern))
            except PatternError:
                self.prefilter = None

    def __call__(self, block: bytes) -> tuple[bytes, list[Edit]]:
        """-> (redacted block, [(start, end, new bytes)] of the lines replaced)."""
        if self.in_key or b"PRIVATE KEY" in block or self.prefilter is None:
            edits = self._line_by_line(block)
        else:
            edits = []
            pos = 0
            n = len(block)
            while pos < n:
                s = self.prefilter.first(block, pos)
                if s < 0:
                    break
                ls = block.rfind(b"\n", 0, s) + 1
                le = block.find(b"\n", s)
                if le < 0:
                    le = n
                red = self._line(block[ls:le])
                if red is not None:
                    edits.append((ls, le, red))
                pos = le + 1
        return apply_edits(block, edits), edits

    def _line(self, line: bytes) -> bytes | None:
        text = line.decode("utf-8", "surrogateescape")
        red = self.redact.redact_line(text)
        return None if red == text else red.encode("utf-8", "surrogateescape")

    def _line_by_line(self, block: bytes) -> list[Edit]:
        r = self.redact
        edits = []
        pos = 0
        n = len(block)
        while pos < n:
            le = block.find(b"\n", pos)
            if le < 0:
                le = n
            line = block[pos:le]
            new: bytes | None = None
            if self.in_key:
                new = self.MARKER
                if r._PEM_END.search(line.decode("utf-8", "surrogateescape")):
                    self.in_key = False
            elif b"PRIVATE KEY" in line and r._PEM_BEGIN.search(line.decode("utf-8", "surrogateescape")):
                text = line.decode("utf-8", "surrogateescape")
                new = self.MARKER
                begin = r._PEM_BEGIN.search(text)
                assert begin is not None  # searched just above, on the same text
                self.in_key = not r._PEM_END.search(text[begin.end():])
            else:
                new = self._line(line)
            if new is not None and new != line:
                edits.append((pos, le, new))
            pos = le + 1
        return edits


def apply_edits(block: bytes, edits: list[Edit]) -> bytes:
    if not edits:
        return block
    pieces = []
    last = 0
    for start, end, new in edits:
        pieces.append(block[last:start])
        pieces.append(new)
        last = end
    pieces.append(block[last:])
    return b"".join(pieces)


# -- redaction maps ------------------------------------------------------------------------
#
# Redaction runs Python regexes over every line that might hold a secret, which on
# some outputs is the slowest part of a search by far.  Its result depends only on
# the bytes and on the redaction rules, so it is kept: a map of the lines it
# replaced (raw offset, length, replacement), next to the blob, named after the
# rules' version (the hash of redact.py), written only once a whole output was
# redacted and verified.  A search applies a map instead of redacting again.  A
# map holds replacement text only ([REDACTED:kind] markers), never a secret.

_MAP_FORMAT = 1


_VERSION: list[str] = []


def redaction_version() -> str:
    """Names the rules a map was made with: any change to redact.py makes old maps unusable."""
    if not _VERSION:
        from blake3 import blake3
        from reflex.digest import redact
        with open(redact.__file__, "rb") as f:
            _VERSION.append(blake3(b"%d\0" % _MAP_FORMAT + f.read()).hexdigest()[:16])
    return _VERSION[0]


def _map_path(store: BlobStore, bid: str) -> str:
    path: str = store.sidecar(bid, "rmap-" + redaction_version())
    return path


def load_map(store: BlobStore, bid: str) -> list[Edit] | None:
    """[(raw offset, old length, new bytes)] for blob bid, or None when there is no usable map."""
    import zlib
    try:
        with open(_map_path(store, bid), "rb") as f:
            data = json.loads(zlib.decompress(f.read()))
        if data.get("blob") != bid:
            return None
        return [(int(o), int(n), t.encode("utf-8", "surrogateescape")) for o, n, t in data["edits"]]
    except (OSError, ValueError, KeyError, TypeError, zlib.error):
        return None


def save_map(store: BlobStore, bid: str, edits: list[Edit]) -> None:
    import zlib
    path = _map_path(store, bid)
    body = json.dumps({"blob": bid, "edits": [[o, n, t.decode("utf-8", "surrogateescape")] for o, n, t in edits]})
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(zlib.compress(body.encode(), 6))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


class _Redaction:
    """One stored output's redaction, block by block: from its map, or computed (and recorded)."""

    def __init__(self, store: BlobStore, bid: str) -> None:
        self.store = store
        self.bid = bid
        self.map = load_map(store, bid)
        self.redactor = None if self.map is not None else StreamRedactor()
        self.recorded: list[Edit] = []
        self._next = 0  # index of the first map entry not yet applied

    def __call__(self, offset: int, block: bytes) -> bytes:
        if self.map is None:
            assert self.redactor is not None  # made whenever there is no map
            red, edits = self.redactor(block)
            self.recorded.extend((offset + a, b - a, new) for a, b, new in edits)
            return red
        end = offset + len(block)
        m = self.map
        i = self._next
        while i < len(m) and m[i][0] < offset:
            i += 1
        edits = []
        while i < len(m) and m[i][0] < end:
            o, n, new = m[i]
            edits.append((o - offset, o - offset + n, new))
            i += 1
        self._next = i
        return apply_edits(block, edits)

    def finished(self) -> None:
        """The whole output was read and verified: keep what was computed."""
        if self.map is None:
            save_map(self.store, self.bid, self.recorded)


def _blocks(pieces: Iterable[bytes], stop: Callable[[], bool]) -> Iterator[tuple[int, bytes | None]]:
    """(raw offset, block of whole lines) from a stream of pieces; (offset, None) stands for a
    line longer than MAX_LINE, skipped.  Stops early (unverified) when stop() says so."""
    offset = 0
    carry = b""
    skipping = False
    for piece in pieces:
        if stop():
            return
        if skipping:
            nl = piece.find(b"\n")
            if nl < 0:
                offset += len(piece)
                continue
            offset += nl + 1
            piece = piece[nl + 1:]
            skipping = False
        data = carry + piece if carry else piece
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            if len(carry) > MAX_LINE:
                yield offset, None
                offset += len(carry)
                carry = b""
                skipping = True
            continue
        yield offset, data[:cut]
        offset += cut
        carry = data[cut:]
    if carry and not skipping:
        yield offset, carry


# -- the search --------------------------------------------------------------------------


class _Search:
    def __init__(self, rx: Program, emit: Emit, deadline: float, context: int = CONTEXT,
                 max_shown: int = MAX_SHOWN_BYTES) -> None:
        self.matcher = _Matcher(rx)
        self.emit = emit
        self.deadline = deadline
        self.context = context
        self.shown_left = max_shown
        self.stopped = False   # by the deadline
        self.searched_bytes = 0
        self.unfinished: list[str] = []   # blobs whose redaction a later warm-up could complete

    def out_of_time(self) -> bool:
        if not self.stopped and time.monotonic() >= self.deadline:
            self.stopped = True
        return self.stopped

    # -- one stored output ---------------------------------------------------------------
    def run(self, store: BlobStore, run: dict[str, str]) -> None:
        from reflex import blobs
        self.handle = run["handle"]
        self.matches = 0
        self.line_base = 0        # 0-based number of the first line of the next block
        self.window: _Window | None = None
        self.prev_tail: list[tuple[int, bytes]] = []  # last CONTEXT lines of the previous block, as (no, bytes)
        self.skipped = 0
        self.capped = False       # a match was counted but its lines not collected (MAX_SHOWN_BYTES)
        rec: Record = {"t": "run", "handle": self.handle}
        redaction = None
        try:
            redaction = _Redaction(store, run["blob"])
            rec["mapped"] = redaction.map is not None
            for offset, raw_block in _blocks(store.stream(run["blob"], BLOCK), self.out_of_time):
                if raw_block is None:
                    self.line_base += 1
                    self.skipped += 1
                    self._close_window()  # context never reaches across a skipped line
                    self.prev_tail = []
                    continue
                self.searched_bytes += len(raw_block)
                self._block(redaction(offset, raw_block))
            if not self.stopped:
                rec["verified"] = True
                redaction.finished()
        except blobs.BlobMissing:
            rec["missing"] = True
        except blobs.BlobDamaged as e:
            rec["damaged"] = str(e)
        if self.stopped and redaction is not None and redaction.map is None:
            self.unfinished.append(run["blob"])
        self._close_window()
        rec.update(matches=self.matches, complete=not self.stopped and "missing" not in rec,
                   skipped_long_lines=self.skipped, capped=self.capped)
        self.emit(rec)

    def _block(self, block: bytes) -> None:
        self._fill_after(block)
        if self.shown_left <= 0:
            self._count_only(block)
            return
        m = self.matcher
        n = len(block)
        pos = 0
        line_at = self.line_base
        found = 0
        while pos < n:
            end = _scan_end(block, pos)
            s = m.first(block, pos, end)
            if s < 0:
                line_at += block.count(b"\n", pos, end)
                pos = end
                if self.out_of_time():
                    break
                continue
            line_no = line_at + block.count(b"\n", pos, s)
            le = block.find(b"\n", s)
            if le < 0:
                le = n
            self.matches += 1
            found += 1
            if self.shown_left > 0:
                self._hit(block, s, le, line_no)
            else:
                self.capped = True
            pos = le + 1
            line_at = line_no + 1
            if found % CHECK_EVERY == 0 and self.out_of_time():
                break
        self.line_base += block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
        self._keep_tail(block)

    def _count_only(self, block: bytes) -> None:
        """Matching lines once no more are shown: no line numbers, no context (and no window
        is opened again, so the line count need not be kept)."""
        m = self.matcher
        n = len(block)
        pos = 0
        found = 0
        while pos < n:
            end = _scan_end(block, pos)
            s = m.first(block, pos, end)
            if s < 0:
                pos = end
                if self.out_of_time():
                    break
                continue
            le = block.find(b"\n", s)
            pos = n + 1 if le < 0 else le + 1
            found += 1
            if found % CHECK_EVERY == 0 and self.out_of_time():
                break
        self.matches += found
        if found:
            self.capped = True

    # -- windows of context -----------------------------------------------------------------
    def _hit(self, block: bytes, s: int, le: int, line_no: int) -> None:
        ls = block.rfind(b"\n", 0, s) + 1
        before: list[bytes] = []
        a = ls
        while len(before) < self.context and a > 0:
            b = block.rfind(b"\n", 0, a - 1) + 1
            before.append(block[b:a - 1])
            a = b
        before.reverse()
        if len(before) < self.context:
            want = self.context - len(before)
            tail = [t for no, t in self.prev_tail if no >= line_no - len(before) - want]
            before = tail + before
        first = line_no - len(before)
        lines = before + [block[ls:le]]
        after_start = le + 1
        while len(lines) - len(before) - 1 < self.context and after_start < len(block):
            e = block.find(b"\n", after_start)
            e = len(block) if e < 0 else e
            lines.append(block[after_start:e])
            after_start = e + 1
        self._merge(first, lines, line_no + self.context, line_no)

    def _merge(self, first: int, lines: list[bytes], reach: int, hit: int) -> None:
        w = self.window
        if w is not None and first <= w[0] + len(w[1]):
            have_last = w[0] + len(w[1]) - 1
            w[1].extend(lines[have_last + 1 - first:])
            w[2] = max(w[2], reach)
            w[3].append(hit)
        else:
            self._close_window()
            self.window = [first, list(lines), reach, [hit]]
        self.shown_left -= sum(len(x) + 8 for x in lines)

    def _fill_after(self, block: bytes) -> None:
        """Lines a window still wants from the start of this block."""
        w = self.window
        if w is None:
            return
        missing = w[2] - (w[0] + len(w[1]) - 1)
        pos = 0
        while missing > 0 and pos < len(block):
            e = block.find(b"\n", pos)
            e = len(block) if e < 0 else e
            w[1].append(block[pos:e])
            pos = e + 1
            missing -= 1

    def _keep_tail(self, block: bytes) -> None:
        tail: list[tuple[int, bytes]] = []
        end = len(block) - 1 if block.endswith(b"\n") else len(block)
        no = self.line_base - 1
        while len(tail) < self.context and end >= 0:
            b = block.rfind(b"\n", 0, end) + 1
            tail.append((no, block[b:end]))
            no -= 1
            if b == 0:
                break
            end = b - 1
        tail.reverse()
        self.prev_tail = tail

    def _close_window(self) -> None:
        w = self.window
        if w is None:
            return
        self.window = None
        self.emit({"t": "window", "handle": self.handle, "first": w[0] + 1, "hits": [h + 1 for h in w[3]],
                   "lines": [x.decode("utf-8", "replace") for x in w[1]]})


def search(request: dict[str, Any], emit: Emit) -> tuple[Record | None, list[str]]:
    """Run one search request; every result goes through emit(record).  -> blobs whose
    redaction is still to be computed (the deadline stopped it)."""
    t0 = time.monotonic()
    try:
        rx = compile_pattern(request["pattern"])
    except PatternError as e:
        emit({"t": "error", "detail": str(e)})
        return None, []
    from reflex.blobs import BlobStore
    store = BlobStore(request["blob_root"])
    time_s = max(0.0, float(request.get("time_s", 1.0)))
    deadline = time.monotonic() + time_s
    if isinstance(request.get("deadline"), (int, float)):
        # The daemon's deadline (CLOCK_MONOTONIC is one clock for every process here): the
        # time this process took to start counts too.
        deadline = min(deadline, float(request["deadline"]))
    s = _Search(rx, emit, deadline, context=int(request.get("context", CONTEXT)),
                max_shown=int(request.get("max_shown_bytes", MAX_SHOWN_BYTES)))
    searched = 0
    for run in request["runs"]:
        if s.out_of_time():
            break
        s.run(store, run)
        searched += 1
    s.unfinished += [r["blob"] for r in request["runs"][searched:]]
    done: Record = {"t": "done", "complete": not s.stopped and searched == len(request["runs"]),
            "runs_searched": searched, "bytes": s.searched_bytes, "seconds": round(time.monotonic() - t0, 4)}
    return done, s.unfinished


def warm(blob_root: str, bids: Iterable[str], budget_s: float | None = None) -> None:
    """Compute and keep the redaction maps of these blobs (those that have none)."""
    from reflex import blobs
    store = blobs.BlobStore(blob_root)
    stop_at = time.monotonic() + (WARM_BUDGET_S if budget_s is None else budget_s)

    def stop() -> bool:
        return time.monotonic() >= stop_at

    for bid in bids:
        if stop():
            return
        if load_map(store, bid) is not None:
            continue
        redaction = _Redaction(store, bid)
        try:
            for offset, block in _blocks(store.stream(bid, BLOCK), stop):
                if block is not None:
                    redaction(offset, block)
        except (blobs.BlobMissing, blobs.BlobDamaged):
            continue
        if not stop():
            redaction.finished()


def serve(request: dict[str, Any], emit: Emit) -> None:
    """One request: a search (`pattern`), then, when allowed, the warm-up of what it could not
    redact in time; or only a warm-up (`warm`: blob ids)."""
    unfinished: list[str] = []
    if request.get("pattern") is not None:
        done, unfinished = search(request, emit)
        if done is None:
            return
        to_warm = unfinished if request.get("may_warm") else []
        done["warming"] = bool(to_warm)
        emit(done)
    else:
        to_warm = list(request.get("warm") or [])
    if to_warm:
        warm(request["blob_root"], list(dict.fromkeys(to_warm)))


# -- the child process ----------------------------------------------------------------------


def worker_main() -> None:
    """Read one request (JSON) on stdin, write records (JSON lines) on stdout.

    The process may be started long before its request (a spare, so a search does not
    wait for an interpreter to start); end of input without a request ends it."""
    import resource
    try:
        # Hooks and the daemon's loop come first when cores are scarce; not so low that every
        # other process on a busy machine starves a search past its time limit.
        os.nice(NICE)
    except OSError:
        pass
    try:  # a spare does its imports while it waits, not once a search is asked for
        import re2  # noqa: F401
        from reflex import blobs  # noqa: F401
        from reflex.digest import redact  # noqa: F401
    except ImportError:
        pass  # said in the answer (compile_pattern)
    data = sys.stdin.buffer.read()
    if not data.strip():
        return
    request = json.loads(data)
    cpu = int(float(request.get("time_s", 1.0))) + 5
    if request.get("may_warm") or request.get("warm"):
        cpu += int(WARM_BUDGET_S)
    for limit, value in ((resource.RLIMIT_CPU, cpu), (resource.RLIMIT_AS, WORKER_MEMORY)):
        try:
            soft, hard = resource.getrlimit(limit)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(limit, (value, hard))
        except (ValueError, OSError):
            pass
    out = sys.stdout

    def emit(rec: Record) -> None:
        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        out.flush()

    serve(request, emit)


# -- the daemon's side ------------------------------------------------------------------------


class Outcome:
    """What a worker sent before it finished, died or was killed."""

    def __init__(self) -> None:
        self.error: str | None = None
        self.windows: list[Record] = []      # records, in order
        self.runs: dict[str, Record] = {}    # handle -> run record
        self.done: Record | None = None      # the `done` record, if it got there
        self.killed = False
        self.failure: str | None = None      # why the worker ended without `done`

    @property
    def complete(self) -> bool:
        return self.done is not None and bool(self.done.get("complete", False))


class Workers:
    """Starts worker processes; keeps one spare started ahead, and at most one warming up.

    A spare waits on its stdin for a request, so a search does not pay for an
    interpreter's start (tens of ms, much more on a loaded machine); if the daemon
    goes away, the spare reads end of input and exits."""

    def __init__(self) -> None:
        import threading
        self._lock = threading.Lock()
        self._spare: subprocess.Popen[bytes] | None = None
        self._warming: set[subprocess.Popen[bytes]] = set()
        self._pending: dict[str, str] = {}  # blob id -> blob root, waiting for the running warm-up to end

    def _command(self) -> tuple[list[str], dict[str, str]]:
        # -S: no site (its imports cost more than the worker's); the path to our package and
        # to the packages the worker imports is given explicitly instead.
        import importlib.util
        paths = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]
        for mod in ("re2", "blake3"):
            spec = importlib.util.find_spec(mod)
            if spec is not None and spec.origin:
                paths.append(os.path.dirname(os.path.dirname(spec.origin)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(list(dict.fromkeys(paths)) + (
            [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        return [sys.executable, "-S", "-m", "reflex.daemon.linesearch"], env

    def _spawn(self) -> subprocess.Popen[bytes]:
        import subprocess
        cmd, env = self._command()
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd="/", env=env)

    def take(self) -> subprocess.Popen[bytes]:
        with self._lock:
            proc, self._spare = self._spare, None
        if proc is not None and proc.poll() is None:
            return proc
        if proc is not None:
            _reap(proc)
        return self._spawn()

    def refill(self) -> None:
        with self._lock:
            if self._spare is not None and self._spare.poll() is None:
                return
        try:
            proc = self._spawn()
        except OSError:
            return
        with self._lock:
            if self._spare is None or self._spare.poll() is not None:
                self._spare = proc
                return
        _close(proc)

    def may_warm(self) -> bool:
        with self._lock:
            self._warming = {p for p in self._warming if p.poll() is None}
            return not self._warming

    def warming(self, proc: subprocess.Popen[bytes]) -> None:
        """Let proc finish its warm-up on its own; reaped when it exits, then the next one starts."""
        with self._lock:
            self._warming.add(proc)
        _reap(proc, then=self._next_warm)

    def prewarm(self, blob_root: str, bids: Iterable[str]) -> None:
        """Compute redaction maps for new outputs in the background: now, or after the warm-up
        already running (one at a time: the cores are the agent's)."""
        with self._lock:
            for bid in bids:
                self._pending[bid] = blob_root
        self._next_warm()

    def _next_warm(self) -> None:
        if not self.may_warm():
            return
        with self._lock:
            if not self._pending:
                return
            root = next(iter(self._pending.values()))
            bids = [b for b, r in self._pending.items() if r == root]
            for b in bids:
                del self._pending[b]
        try:
            proc = self._spawn()
            assert proc.stdin is not None  # spawned with stdin=PIPE
            proc.stdin.write(json.dumps({"blob_root": root, "warm": bids}).encode())
            proc.stdin.close()
        except OSError:
            return
        self.warming(proc)

    def close(self) -> None:
        with self._lock:
            proc, self._spare = self._spare, None
        if proc is not None:
            _close(proc)


def _close(proc: subprocess.Popen[bytes]) -> None:
    try:
        assert proc.stdin is not None  # spawned with stdin=PIPE
        proc.stdin.close()  # end of input: a spare exits
    except OSError:
        pass
    _reap(proc)


def _reap(proc: subprocess.Popen[bytes], then: Callable[[], None] | None = None) -> None:
    import threading

    def wait() -> None:
        try:
            proc.wait()
        finally:
            for f in (proc.stdout, proc.stderr):
                try:
                    if f is not None:
                        f.close()
                except (OSError, AttributeError):
                    pass
        if then is not None:
            then()
    threading.Thread(target=wait, name="ctxd-search-reap", daemon=True).start()


WORKERS = Workers()


def run_worker(pattern: str, blob_root: str, runs: list[dict[str, str]], *, time_s: float, grace_s: float = 0.3,
               context: int = CONTEXT, max_shown: int = MAX_SHOWN_BYTES, workers: Workers | None = None,
               warm: bool = True) -> Outcome:
    """Search `runs` (dicts: handle, blob) in a child process; -> Outcome.

    The child stops itself after time_s; it is killed time_s + grace_s after start,
    unless it said it is done and goes on warming redaction maps (then it is reaped later)."""
    import selectors
    workers = workers or WORKERS
    started = time.monotonic()
    outcome = Outcome()
    try:
        proc = workers.take()
    except OSError as e:
        outcome.failure = "cannot start the search process: %s" % e
        return outcome
    request = {"pattern": pattern, "blob_root": blob_root, "runs": runs, "time_s": time_s,
               "deadline": started + time_s, "context": context, "max_shown_bytes": max_shown,
               "may_warm": warm and workers.may_warm()}
    assert proc.stdin is not None and proc.stdout is not None  # spawned with stdin and stdout piped
    try:
        proc.stdin.write(json.dumps(request).encode("utf-8", "surrogateescape"))
        proc.stdin.close()
    except OSError:
        pass
    hard = started + time_s + grace_s
    buf = b""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    fd = proc.stdout.fileno()
    try:
        while True:
            left = hard - time.monotonic()
            if left <= 0:
                outcome.killed = True
                break
            if not sel.select(left):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                _take(outcome, line)
            if outcome.done is not None or outcome.error is not None:
                break
    finally:
        sel.close()
        if outcome.done is not None and outcome.done.get("warming") and proc.poll() is None:
            workers.warming(proc)
        else:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            err = proc.stderr.read(4096) if proc.stderr else b""
            for f in (proc.stdout, proc.stderr):
                try:
                    if f is not None:  # stderr: read above only when piped, closed the same way
                        f.close()
                except OSError:
                    pass
            if outcome.done is None and outcome.error is None and not outcome.killed:
                outcome.failure = "the search process ended early (exit %s): %s" % (
                    proc.returncode, err.decode("utf-8", "replace").strip()[-300:])
    workers.refill()
    return outcome


def _take(outcome: Outcome, line: bytes) -> None:
    try:
        rec = json.loads(line)
    except ValueError:
        return
    t = rec.get("t")
    if t == "window":
        outcome.windows.append(rec)
    elif t == "run":
        outcome.runs[rec["handle"]] = rec
    elif t == "done":
        outcome.done = rec
    elif t == "error":
        outcome.error = rec.get("detail") or "bad pattern"


if __name__ == "__main__":
    worker_main()
