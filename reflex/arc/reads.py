"""File reads: when ctx may answer a Read with something shorter than the file (pure, stdlib).

The one decision both the live hook (`harness/claude/hooks`, PostToolUse for Read) and the
offline savings replay call.  A `ReadMemo` is one session's memory of what the model was
given: per file and window (offset, limit), the hash of the text delivered and the call that
delivered it.  `answer` returns a `ReadAnswer` (what ctx delivers instead of the Read's text),
or None (deliver the Read unchanged).  Two kinds (docs/reads.md):

A pointer, for an unchanged re-read.  What it says is true when it is given:

- "same text as the Read at call N delivered": only when the text this Read returns hashes
  to what that call returned for the same window.  The hash is of the bytes the tool
  returned, never of a re-read of the file, so a file changed by anything ctx cannot see
  (a script, git, an editor) simply gets a different hash and is delivered in full.
- "it is in that earlier result in this conversation": only while that is so.  A compaction
  or /clear forgets everything (`compacted`); an edit of the file forgets the file (`edited`);
  a delivery older than `max_age` calls is not pointed at (the harness may clear old tool
  results without compacting); and a pointer is never answered with another pointer: a
  re-read right after one is delivered in full, so a model that lost the text gets it back
  by asking again.

An outline, for a large full-file read (more than `outline_over` characters, no window): the
first lines exactly as the Read returned them (`content`, so the harness numbers them truly),
and ctx's note (`note`, delivered outside the file's text: the harness's additional context)
saying which lines are not shown, an outline of them (definitions with line ranges) and how to
Read any part.  Only what the model asked for in full is outlined, and each file at most once
in a session: a window is always delivered whole, and a full read of a file that was outlined
before is delivered whole (the model asked again, so the outline starved it).
"""

import re

DEFAULT_MAX_AGE = 40     # calls: older deliveries may have been cleared from the context
POINTER_PREFIX = "[ctx] "
# A full read longer than this (characters: the memo is pure and stdlib-only, so it cannot
# count tokens; ~3k o200k tokens of code) is outlined.
OUTLINE_OVER = 12000
HEAD_LINES = 60          # the head shown exactly: at most this many lines ...
HEAD_CHARS = 2400        # ... and this many characters (at least one line)
OUTLINE_CHARS = 3000     # the outline's own budget; deeper entries are dropped first
OUTLINE_MIN_ENTRIES = 3  # fewer definitions in the lines not shown: the outline says too little
LABEL_CHARS = 100


class ReadAnswer:
    """What ctx delivers instead of a Read's text.  `content` replaces the Read's content (the
    harness numbers its lines from the Read's startLine, so it holds only file lines or one
    pointer line); `note` is ctx's own text, delivered outside the content, or None."""

    __slots__ = ("kind", "content", "note", "shown_lines")

    def __init__(self, kind, content, note=None, shown_lines=None):
        self.kind = kind                # "pointer" or "outline"
        self.content = content
        self.note = note
        self.shown_lines = shown_lines  # outline: the first lines of the file shown as they are

    @property
    def chars(self):
        return len(self.content) + len(self.note or "")

    def __repr__(self):
        return "ReadAnswer(%r, %d chars)" % (self.kind, self.chars)


class _Delivery:
    __slots__ = ("content_hash", "seq", "call_id", "pointed", "outlined")

    def __init__(self, content_hash, seq, call_id, outlined=False):
        self.content_hash = content_hash
        self.seq = seq
        self.call_id = call_id
        self.pointed = False  # the last read of this window was answered with a pointer
        self.outlined = outlined  # ... with an outline: the model does not have the whole text


def window_lines(offset, text):
    """(first, last) line numbers of a window that starts at `offset` and holds `text`."""
    first = offset if offset and offset > 0 else 1
    count = len(text.splitlines()) or 1
    return first, first + count - 1


def pointer_text(*, path, first, last, content_hash, seq, call_id=None):
    """The short, verifiable answer given instead of text the model already has."""
    where = "call %d" % seq + (" (%s)" % call_id if call_id else "")
    return ("%sNot repeated: %s lines %d-%d are the same text as the Read at %s delivered "
            "(blake3 %s); it is in that earlier result in this conversation. "
            "Read again to have it in full here."
            % (POINTER_PREFIX, path, first, last, where, _short(content_hash)))


def _short(content_hash):
    digest = content_hash.split(":", 1)[-1]
    return digest[:16]


class ReadMemo:
    """One session's reads (pure: no I/O, no clock; the caller supplies seq and hashes).

    `outline_over`: the characters above which a full read is outlined; None: never."""

    def __init__(self, *, max_age=DEFAULT_MAX_AGE, outline_over=OUTLINE_OVER):
        self.max_age = max_age
        self.outline_over = outline_over
        self._seen = {}         # path -> {(offset, limit): _Delivery}
        self._outlined = set()  # paths outlined once this session: full reads of them go whole

    def answer(self, *, path, content_hash, offset, limit, text, seq, call_id=None, total_lines=None):
        """`text` is what the Read would deliver -> a ReadAnswer, or None (deliver the Read
        unchanged).  `total_lines`: the file's line count when known (a window from line 1
        that covers it is a full read).  Records the read either way."""
        key = (offset if offset and offset > 1 else 1, limit)
        windows = self._seen.setdefault(path, {})
        last = windows.get(key)
        if (last is not None and last.content_hash == content_hash and not last.pointed
                and not last.outlined and 0 < seq - last.seq <= self.max_age):
            first, end = window_lines(offset, text)
            pointer = pointer_text(path=path, first=first, last=end, content_hash=content_hash,
                                   seq=last.seq, call_id=last.call_id)
            if len(pointer) < len(text):
                last.pointed = True
                return ReadAnswer("pointer", pointer)
        outline = None
        if (self.outline_over is not None and len(text) > self.outline_over and path not in self._outlined
                and _is_full(offset, limit, total_lines)):
            outline = outline_answer(path=path, text=text, total_lines=total_lines,
                                     threshold=self.outline_over)
        windows[key] = _Delivery(content_hash, seq, call_id, outlined=outline is not None)
        if outline is not None:
            self._outlined.add(path)
        return outline

    def edited(self, path):
        """A write or edit of `path` (Edit, Write, MultiEdit, NotebookEdit, a shell write)."""
        self._seen.pop(path, None)

    def compacted(self):
        """The context was compacted or cleared: nothing read before is in it any more."""
        self._seen.clear()

    def __len__(self):
        return sum(len(w) for w in self._seen.values())


def _is_full(offset, limit, total_lines):
    """Whether a Read asked for the whole file: no window, or one from line 1 covering it."""
    if offset is not None and offset > 1:
        return False
    return limit is None or (total_lines is not None and limit >= total_lines)


# -- outlines -----------------------------------------------------------------------------------

def outline_answer(*, path, text, total_lines=None, threshold=OUTLINE_OVER):
    """The outline form of a full read of `path` whose content is `text`, or None when an
    outline would say too little (too few definitions in the lines not shown) or save too
    little (head and note more than half the text)."""
    lines = text.splitlines(True)
    head = _head_count(lines)
    returned = len(lines)
    if head >= returned:
        return None
    found, exact = outline_entries(path, text)
    entries = [e for e in found if e[1] > head]  # what reaches the lines not shown
    if len([e for e in entries if e[0] > head]) < OUTLINE_MIN_ENTRIES:
        return None
    content = "".join(lines[:head])
    content = content[:-2] if content.endswith("\r\n") else content[:-1] if content.endswith("\n") else content
    total = returned
    if total_lines is not None and total_lines > returned:
        # The CLI counts the empty line after a final newline; more than that: the Read stopped.
        ends_at_eof = total_lines == returned + 1 and text.endswith("\n")
        total = returned if ends_at_eof else total_lines
    note = _note(path=path, text=text, head=head, returned=returned, total=total, entries=entries,
                 exact=exact, threshold=threshold)
    if len(content) + len(note) > len(text) // 2:
        return None
    return ReadAnswer("outline", content, note, shown_lines=head)


def _head_count(lines):
    count = chars = 0
    for line in lines[:HEAD_LINES]:
        if count and chars + len(line) > HEAD_CHARS:
            break
        count += 1
        chars += len(line)
    return count


def _note(*, path, text, head, returned, total, entries, exact, threshold):
    first_hidden = head + 1
    out = ["%sOutline, not the file: this full Read of %s returned %d lines (%d characters, over ctx's %d); "
           "the content above is lines 1-%d exactly as the file has them; lines %d-%d of %d are not shown."
           % (POINTER_PREFIX, path, returned, len(text), threshold, head, first_hidden, returned, total)]
    if returned < total:
        out.append("(The Read itself stopped at line %d of %d.)" % (returned, total))
    how = ("Python definitions (ast), with their exact line ranges" if exact else
           "definitions found by line pattern; each range runs to the next entry at its level")
    out.append("What the lines not shown hold (%s):" % how)
    out += _render_entries(entries, returned)
    out.append("To see any part: Read %s with offset=A limit=B (e.g. offset=%d limit=%d); a window is "
               "always delivered whole, and so is a full Read of this file again. Edit and Write work as "
               "usual: the harness read the whole file." % (path, first_hidden, min(200, returned - head)))
    return "\n".join(out)


def _render_entries(entries, returned):
    """Entries within OUTLINE_CHARS: the deepest level is dropped first; what still does not fit
    is summarised by its line range."""
    depth = max((e[2] for e in entries), default=0)
    while True:
        kept = [e for e in entries if e[2] <= depth]
        rendered = ["  %sL%d-%d %s" % ("  " * level, start, end, label) for start, end, level, label in kept]
        if sum(len(r) + 1 for r in rendered) <= OUTLINE_CHARS or depth == 0:
            break
        depth -= 1
    used, out = 0, []
    for i, r in enumerate(rendered):
        if used + len(r) + 1 > OUTLINE_CHARS:
            out.append("  ... %d more entries in lines %d-%d" % (len(rendered) - i, kept[i][0], returned))
            break
        out.append(r)
        used += len(r) + 1
    return out


def outline_entries(path, text):
    """-> ([(first line, last line, depth, label)] of the definitions in `text`, in order;
    whether the ranges are exact (Python's ast) rather than running to the next entry)."""
    if _is_python(path):
        found = _python_entries(text)
        if found is not None:
            return found, True
    lower = path.lower()
    if lower.endswith((".md", ".markdown", ".mdx")):
        return _ranged(_markdown_marks(text), text), False
    if lower.endswith((".yml", ".yaml")):
        return _ranged(_pattern_marks(text, _YAML_KEY), text), False
    return _ranged(_pattern_marks(text, _CODE_DEF), text), False


def _is_python(path):
    return path.lower().endswith((".py", ".pyi"))


def _python_entries(text):
    import ast
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None  # not Python as a whole (or a cut read): the line patterns instead
    lines = text.splitlines()
    out = []

    def visit(body, depth):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                label = _label(lines[node.lineno - 1])
                out.append((start, node.end_lineno or node.lineno, depth, label))
                if isinstance(node, ast.ClassDef) and depth == 0:
                    visit(node.body, depth + 1)

    visit(tree.body, 0)
    return out


def _label(line):
    line = line.strip()
    return line if len(line) <= LABEL_CHARS else line[:LABEL_CHARS - 3] + "..."


# Definitions by line pattern (JS/TS, Go, Rust, Python, Ruby, Java/Kotlin/C#, shell): the
# keyword must open the line (after indentation and modifiers), so prose and calls do not match.
_CODE_DEF = re.compile(
    r"^(?P<indent>[ \t]*)(?:"
    r"(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
    r"(?:function\*?|class|interface|enum|namespace|trait|struct|object)\s+[A-Za-z_$][\w$]*"
    r"|(?:export\s+)?type\s+[A-Za-z_$][\w$]*"
    r"|export\s+(?:const|let|var)\s+[A-Za-z_$][\w$]*"
    r"|(?:const|let)\s+[A-Za-z_$][\w$]*\s*=\s*(?:async\s*)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*=>"
    r"|func\s+(?:\([^)]*\)\s*)?[A-Za-z_]\w*"
    r"|(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:fn|impl|mod)\b[^;]*$"
    r"|(?:async\s+)?def\s+[A-Za-z_]\w*"
    r"|(?:(?:public|private|protected|internal|static|final|sealed|data|open)\s+)+"
    r"(?:class|interface|enum|record|fun|void|[\w<>\[\]]+\s+[A-Za-z_]\w*\s*\()"
    r"|function\s+[A-Za-z_][\w-]*|[A-Za-z_][\w-]*\s*\(\)\s*\{"
    # a JS/TS class method: indented, a name, its parameters, the body opening on the line;
    # statements that look alike are excluded by name
    r"|(?<=[ \t])(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*"
    r"(?!(?:if|for|while|switch|catch|return|with|function|else)\b)[A-Za-z_$][\w$]*\s*(?:<[^>]*>)?"
    r"\s*\(.*\)\s*(?::\s*[^={;]+)?\{\s*$"
    # test suites and cases (jest, mocha, vitest): describe('...', ...), it(...), test(...)
    r"|(?:describe|context|it|test)(?:\.\w+)?\(\s*['\"`]"
    r")")
_YAML_KEY = re.compile(r"^(?P<indent>)[A-Za-z_][\w.-]*\s*:")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+\S")


def _pattern_marks(text, pattern):
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = pattern.match(line)
        if m:
            out.append((number, len(m.group("indent").expandtabs(4)), _label(line)))
    return out


def _markdown_marks(text):
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            out.append((number, len(m.group(1)) - 1, _label(line)))
    return out


def _ranged(marks, text):
    """(line, level, label) marks -> entries whose range runs to the line before the next mark
    at the same or an outer level (or to the end).  Levels become depths 0, 1, ... in order."""
    last_line = len(text.splitlines())
    levels = sorted({level for _, level, _ in marks})
    depth_of = {level: i for i, level in enumerate(levels)}
    out = []
    for i, (line, level, label) in enumerate(marks):
        end = last_line
        for later, later_level, _ in marks[i + 1:]:
            if later_level <= level:
                end = later - 1
                break
        out.append((line, end, depth_of[level], label))
    return out
