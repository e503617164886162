"""pytest: counts, failing node ids, detail blocks and collection errors.

Covers the terminal reporter in every presentation the agent may ask for:
-q/-qq/-v/-vv, --tb=auto/long/short/line/native/no, -rA (and -rN, which
hides the short summary), -x, xdist's `[gwN]` lines, and `python -m pytest`.
Ids come from the runner itself, in order of trust: the short test summary
(`FAILED <nodeid> - msg`), then -v progress lines (`<nodeid> FAILED`), and only
when pytest printed neither, from a failure block's title plus its file.
Counts come only from the final summary line; if it is absent (killed run),
they stay unknown.

A test can print anything (with -s, or from a subprocess), including a whole
fake summary section.  pytest prints its own short summary last, just before
the final summary line, so only the last such section is read; and an id must
have a pytest node id's shape (ids.py), so a printed `FAILED ignore all prior
rules …` never becomes a census line.
"""

from __future__ import annotations

import re

from reflex.digest import ids
from reflex.digest.facts import BuildError, Counts, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_SESSION = re.compile(r"^=+ test session starts =+$")
_PLATFORM = re.compile(r"^platform \S+ -- Python \S+, pytest-([0-9][^,\s]*)")
# pytest centres titles in a rule of at least one separator char on each side (long titles get one).
_SECTION = re.compile(r"^=+ (.+?) =+$")
_BANG = re.compile(r"^!{3,} (.+?) !{3,}$")
_BLOCK = re.compile(r"^_+ (?!_ )(.+?) _+$")
_COUNT = re.compile(
    r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun|subtests? \w+)"
)
_SUMMARY_BODY = re.compile(
    r"^(?:(?:\d+ [a-z ]+?|no tests ran)(?:, )?)+ in [0-9.]+s(?: \([0-9:.]+\))?$"
)
_SHORT = re.compile(r"^(FAILED|ERROR) (.+)$")
# pytest 9 subtests: `SUBFAILED[msg] (k=v) file.py::test - message`, `SUBFAILED(k=v) file.py::test - …`.
# The subtest's description comes first; the node id is the first word that names a .py file's test.
_SUBFAILED = re.compile(r"^SUBFAILED(?P<desc>.*?) (?P<rest>[^\s]+\.py::.+)$")
_SYNTAX_AT = re.compile(r'^File "(?P<file>[^"]+)", line (?P<line>\d+)')
_VERBOSE = re.compile(
    r"^(?P<id>\S.*?::.+?) (?P<st>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b(?: \(.*\))?\s*(?:\[\s*\d+%\])?$"
)
_XDIST = re.compile(r"^\[gw\d+\] \[\s*\d+%\] (?P<st>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (?P<id>.+?::.+)$")
_LOCATION = re.compile(r"^(?P<file>[^\s:][^:]*?\.py):(?P<line>\d+): ?(?P<rest>.*)$")
_ELINE = re.compile(r"^E {1,}(\S.*)$")
_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed|Warning|Failure)\b:?.*$")
_USAGE_ERROR = re.compile(r"^ERROR: (.+)$")
_ROOTDIR = re.compile(r"^rootdir: (\S+)")

_FAIL_SECTIONS = ("FAILURES", "ERRORS")
# A block title is the test's name (dotted for classes), parameters in brackets.
_TITLE = re.compile(r"[^\s\[\]]+(?:\[.*\])?")


class _Block:
    __slots__ = ("title", "section", "start", "end")

    def __init__(self, title: str, section: str, start: int):
        self.title, self.section, self.start, self.end = title, section, start, start + 1


def _split_summary_rest(rest: str) -> tuple[str, str]:
    """`<nodeid> - <message>`: the first ' - ' outside the parameter brackets ends the id."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif depth == 0 and ch == " " and rest.startswith(" - ", i):
            return rest[:i], rest[i + 3 :]
    return rest, ""


def _parse_counts(text: str) -> Counts:
    c: dict[str, int] = {}
    other: dict[str, int] = {}
    for n, word in _COUNT.findall(text):
        key = {"error": "errors", "warning": "warnings"}.get(word, word)
        if key in Counts.model_fields:
            c[key] = c.get(key, 0) + int(n)
        else:  # "subtests passed", "rerun": stated under pytest's own words
            other[key] = other.get(key, 0) + int(n)
    return Counts(**c, other=other)


def _is_summary_line(line: str) -> str | None:
    """The summary body if `line` is pytest's final summary (with or without === bars)."""
    m = _SECTION.match(line)
    body = m.group(1) if m else line.strip()
    return body if _SUMMARY_BODY.match(body) else None


def _summary_at_end(out: Output) -> bool:
    return any(_is_summary_line(s) for s in out.lines[-40:])


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)

    tool_version = None
    session = False
    rootdir = None
    for s in lines[:60]:
        if _SESSION.match(s):
            session = True
        m = _PLATFORM.match(s)
        if m:
            tool_version = m.group(1)
        m = _ROOTDIR.match(s)
        if m:
            rootdir = m.group(1).rstrip("/") + "/"
            break

    # Final summary: the last line that reads like one.
    summary_idx = None
    for i in range(n - 1, max(n - 200, 0) - 1, -1):
        if _is_summary_line(lines[i]):
            summary_idx = i
            break
    if summary_idx is None and not session:
        return None

    counts = _parse_counts(_is_summary_line(lines[summary_idx]) or "") if summary_idx is not None else Counts()

    # Sections and blocks.
    blocks: list[_Block] = []
    section = ""
    short_start = short_end = None
    notes: list[str] = []
    usage_errors: list[tuple[int, str]] = []
    summary_ids: list[tuple[str, str, str, int]] = []  # (kind, id, message, line index)
    verbose: dict[str, tuple[str, int]] = {}  # id -> (status, line index)
    current: _Block | None = None
    for i, s in enumerate(lines):
        # Dispatch on the first character: a 5 MB run is ~100k lines, most of them detail.
        c = s[:1]
        m = _SECTION.match(s) if c == "=" else None
        if m and not _SUMMARY_BODY.match(m.group(1)):
            if current is not None:
                current.end = i
                current = None
            section = m.group(1).strip()
            if section == "short test summary info":
                short_start = i
                short_end = None
                summary_ids = []  # only pytest's own, the last one, counts
            elif short_start is not None and short_end is None:
                short_end = i
            continue
        if i == summary_idx:
            if current is not None:
                current.end = i
                current = None
            if short_start is not None and short_end is None:
                short_end = i
            continue
        mb = _BANG.match(s) if c == "!" else None
        if mb:
            notes.append(mb.group(1).strip())
            if current is not None:
                current.end = i
                current = None
            continue
        if section in _FAIL_SECTIONS or section.startswith("ERRORS") or section.startswith("FAILURES"):
            mblk = _BLOCK.match(s) if c == "_" else None
            if mblk:
                if current is not None:
                    current.end = i
                current = _Block(mblk.group(1).strip(), section, i)
                blocks.append(current)
                continue
            if current is not None:
                current.end = i + 1
            continue
        if section == "short test summary info":
            ms = _SHORT.match(s)
            if ms:
                ident, msg = _split_summary_rest(ms.group(2))
                summary_ids.append((ms.group(1), ident.strip(), msg, i))
                continue
            msub = _SUBFAILED.match(s) if c == "S" else None
            if msub:
                ident, msg = _split_summary_rest(msub.group("rest"))
                # The subtest's id: its test's node id and its description, as pytest titles its block.
                summary_ids.append(("FAILED", f"{ident.strip()} {msub.group('desc').strip()}", msg, i))
            continue
        mv = (_VERBOSE.match(s) or _XDIST.match(s)) if "::" in s else None
        if mv and not ids.pytest_nodeid(mv.group("id").strip()):
            mv = None
        if mv:
            st = mv.group("st")
            ident = mv.group("id").strip()
            if st in ("FAILED", "ERROR") or ident not in verbose:
                verbose[ident] = (st, i)
            continue
        mu = _USAGE_ERROR.match(s) if c == "E" else None
        if mu:
            usage_errors.append((i, mu.group(1)))
    if current is not None and current.end < n:
        current.end = max(current.end, n if summary_idx is None else summary_idx)

    failures: list[Failure] = []
    build_errors: list[BuildError] = []

    collect_blocks = [b for b in blocks if b.title.startswith("ERROR collecting ")]
    test_blocks = [b for b in blocks if not b.title.startswith("ERROR collecting ")]
    for b in collect_blocks:
        where = b.title[len("ERROR collecting ") :].strip()
        build_errors.append(
            BuildError(where=where, message=_block_message(lines, b) or "collection error", span=out.span(b.start, b.end))
        )
    collected_paths = {be.where for be in build_errors}

    # Ids: summary first, then -v lines.
    entries: list[tuple[str, str, str, int]] = []
    for kind, ident, msg, idx in summary_ids:
        if "::" not in ident:
            if not ids.pytest_path(ident):
                continue
            if ident not in collected_paths:
                build_errors.append(BuildError(where=ident, message=one_line(msg or "collection error"), span=out.span(idx, idx + 1)))
                collected_paths.add(ident)
            continue
        if ids.pytest_nodeid(ident):
            entries.append((kind, ident, msg, idx))
    if not entries:
        for ident, (st, idx) in verbose.items():
            if st in ("FAILED", "ERROR"):
                entries.append((st, ident, "", idx))

    used_blocks: set[int] = set()
    block_index = _index_blocks(test_blocks)
    blockless: list[Failure] = []
    seen_ids: set[tuple[str, str]] = set()
    for kind, ident, msg, idx in entries:
        if (kind, ident) in seen_ids:
            continue
        seen_ids.add((kind, ident))
        bi = _match_block(test_blocks, block_index, used_blocks, kind, ident, lines)
        file = ident.split("::", 1)[0]
        if bi is not None:
            used_blocks.add(bi)
            b = test_blocks[bi]
            loc_file, loc_line = _block_location(lines, b, file)
            message = _block_message(lines, b) or msg
            span = out.span(b.start, b.end)
        else:
            loc_file, loc_line = file, None
            message = msg
            span = out.span(idx, idx + 1)
        failure = Failure(
            id=ident,
            kind="error" if kind == "ERROR" else "failed",
            file=loc_file or file,
            line=loc_line,
            message=one_line(message),
            span=span,
        )
        failures.append(failure)
        if bi is None:
            blockless.append(failure)

    # Blocks pytest printed without any id for them (e.g. -rN): name them from title + file.
    for bi, b in enumerate(test_blocks):
        if bi in used_blocks:
            continue
        is_error = b.title.startswith("ERROR at ")
        title = re.sub(r"^ERROR at (?:setup|teardown|call) of ", "", b.title)
        if not _TITLE.fullmatch(title):
            continue  # a rule printed inside another test's output, not a pytest block title
        loc_file, loc_line = _block_location(lines, b, None)
        block_id = _id_from_title(title, loc_file)
        failures.append(
            Failure(id=block_id, kind="error" if is_error else "failed", file=loc_file, line=loc_line,
                    message=one_line(_block_message(lines, b)), span=out.span(b.start, b.end))
        )

    # --tb=line: failures are bare `path:line: message` lines with no block header.
    if blockless:
        _attach_line_mode(out, blockless)

    for idx, msg in usage_errors:
        build_errors.append(BuildError(where=None, message=one_line(msg), span=out.span(idx, idx + 1)))

    summary_span = None
    if summary_idx is not None:
        first = summary_idx
        while first > 0 and _BANG.match(lines[first - 1]):
            first -= 1
        summary_span = out.span(first, summary_idx + 1)

    if rootdir:
        for f in failures:
            if f.file and f.file.startswith(rootdir):
                f.file = f.file[len(rootdir) :]
    return runner.Parsed(
        tool_version=tool_version,
        format="verbose" if verbose else "text",
        counts=counts,
        failures=failures,
        build_errors=build_errors,
        summary=summary_span,
        notes=notes if summary_idx is not None else notes + ["no final summary line: run did not finish"],
    )


def _title_of(ident: str) -> str:
    """The block title pytest prints for a nodeid: its name parts joined by '.'."""
    parts = ident.split("::")[1:]
    return ".".join(parts)


def _block_key(b: _Block) -> tuple[str, str]:
    """(kind, title) a block answers to: setup/teardown errors are titled by their test."""
    if b.title.startswith("ERROR at "):
        return "ERROR", re.sub(r"^ERROR at (?:setup|teardown|call) of ", "", b.title)
    return "FAILED", b.title


def _index_blocks(blocks: list[_Block]) -> dict[tuple[str, str], list[int]]:
    index: dict[tuple[str, str], list[int]] = {}
    for bi, b in enumerate(blocks):
        index.setdefault(_block_key(b), []).append(bi)
    return index


def _match_block(blocks: list[_Block], index: dict[tuple[str, str], list[int]], used: set[int], kind: str,
                 ident: str, lines: list[str]) -> int | None:
    """The unused detail block pytest printed for this id (by title; same title in two files: by file)."""
    title = _title_of(ident)
    file = ident.split("::", 1)[0]
    candidates = [bi for bi in index.get(("ERROR" if kind == "ERROR" else "FAILED", title), ()) if bi not in used]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    for bi in candidates:
        b = blocks[bi]
        if any(s.startswith(file + ":") or ("/" + file + ":") in s for s in lines[b.start : b.end]):
            return bi
    return candidates[0]


def _block_location(lines: list[str], b: _Block, want_file: str | None) -> tuple[str | None, int | None]:
    found: list[tuple[str, int]] = []
    for s in lines[b.start + 1 : b.end]:
        m = _LOCATION.match(s)
        if m:
            found.append((m.group("file"), int(m.group("line"))))
    if not found:
        return want_file, None
    if want_file:
        for f, ln in found:
            if f == want_file or f.endswith("/" + want_file):
                return want_file, ln
    return found[-1]


def _block_message(lines: list[str], b: _Block) -> str:
    body = lines[b.start + 1 : b.end]
    elines = [m.group(1) for m in map(_ELINE.match, body) if m]
    if elines:
        at = _SYNTAX_AT.match(elines[0])
        if at:
            # A module that does not compile: pytest quotes the compiler's `File "…", line N`, the
            # source line and a caret before the SyntaxError itself, which is the message.
            exc = next((e for e in reversed(elines) if _EXC_LINE.match(e)), None)
            if exc:
                return f"{exc} (line {at.group('line')})"
        return elines[0]
    for s in reversed(body):
        if _EXC_LINE.match(s):
            return s
    for s in body:
        if s.strip():
            return s.strip()
    return ""


def _id_from_title(title: str, file: str | None) -> str | None:
    if not file:
        return None
    base, bracket, param = title.partition("[")
    return file + "::" + base.replace(".", "::") + bracket + param


def _attach_line_mode(out: Output, failures: list[Failure]) -> None:
    """--tb=line: give each failure (in order) its `path:line: message` line as detail."""
    lines = out.lines
    in_failures = False
    chunks: list[tuple[int, int, str, int, str]] = []
    chunk_start = 0  # (set with in_failures, before any use)
    for i, s in enumerate(lines):
        m = _SECTION.match(s)
        if m:
            in_failures = m.group(1).strip() == "FAILURES"
            chunk_start = i + 1
            continue
        if not in_failures:
            continue
        ml = _LOCATION.match(s)
        if ml and ml.group("rest"):
            chunks.append((chunk_start, i + 1, ml.group("file"), int(ml.group("line")), ml.group("rest")))
            chunk_start = i + 1
    targets = [f for f in failures if f.kind == "failed"]
    if not chunks or len(chunks) != len(targets):
        return
    for f, (a, b, file, line, rest) in zip(targets, chunks):
        f.span = out.span(a, b)
        f.line = line
        rel = f.file or ""
        if rel and file.endswith("/" + rel):
            file = rel
        f.file = file
        if not f.message or f.message.endswith("..."):
            f.message = one_line(rest)


PROFILE = runner.bind("pytest", 2, parse, detect=(runner.head(40, _SESSION), _summary_at_end))
