"""Decoding a hook payload from raw stdin bytes, with one clear error per failure.

Shared by the daemon and by the shim's fallback path, so "malformed" means the
same thing on both sides.  stdlib-only.

Two readings of the same bytes:

* `decode` is strict: a dict, or Malformed(code) saying why the payload is
  unusable.  Its result never depends on the caller's stack: json's recursion
  limit counts the frames already on the stack (the daemon's event loop and
  thread pool add dozens the shim does not have), so a document nested deeper
  than MAX_DEPTH is not handed to json at all; it is read by an iterative
  parser that keeps everything down to MAX_DEPTH and replaces deeper
  containers with None.
* `read` is what the safety plane looks at: the strict result when there is
  one, otherwise as much of the payload as can be read (`Reading.complete`
  says whether the object was read to its end, `open_keys` which containers a
  cut left open).  A payload too large, not UTF-8 or not JSON in some other
  field still names its tool and command, and an unrelated field must never
  be what decides whether `cat .env` runs.  The parser's work is bounded by a
  token budget, so a pathological payload costs the same bounded time in the
  shim and in the daemon and is cut at the same place in both.
"""
from reflex.errors import CtxError

MAX_PAYLOAD = 8 * 1024 * 1024  # Bash PostToolUse carries up to 150k chars of output; 8 MiB is ample
MAX_DEPTH = 64                 # Claude Code payloads nest a handful of levels; tool inputs a few more
TOKEN_BUDGET = 50_000          # tokens the iterative parser reads before it stops (a cut, like truncation)

_BOM = b"\xef\xbb\xbf"


class Malformed(CtxError, ValueError):
    """The payload cannot be used; `code` is a stable machine-readable reason."""

    def __init__(self, code, detail):
        super().__init__("%s: %s" % (code, detail))
        self.code = code
        self.detail = detail


class Reading:
    """The best view of a payload: `obj` (a dict or None), `problem` (Malformed or None),
    `complete` (the top-level object was read to its end), `open_keys` (for a cut payload,
    the keys from the top down to the innermost container left open)."""

    __slots__ = ("obj", "problem", "complete", "open_keys")

    def __init__(self, obj, problem, complete, open_keys=()):
        self.obj = obj
        self.problem = problem
        self.complete = complete
        self.open_keys = tuple(open_keys)


def decode(data, truncated=False):
    """bytes -> dict, or raise Malformed(code, detail)."""
    reading = read(data, truncated)
    if reading.problem is not None:
        raise reading.problem
    return reading.obj


def read(data, truncated=False):
    """-> Reading: the strict decoding when there is one, else as much as can be read."""
    if data.startswith(_BOM):
        # Cursor on Windows prepends a BOM; it is not part of the JSON.
        data = data[len(_BOM):]
    if truncated:
        return _tolerant(data, Malformed("too_large", "hook payload exceeds %d bytes" % MAX_PAYLOAD))
    if not data.strip():
        return Reading(None, Malformed("empty", "no hook payload on stdin"), False)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return _tolerant(data, Malformed("not_utf8", "payload is not valid UTF-8 (byte %d)" % e.start))
    if _structural_depth(text) > MAX_DEPTH:
        obj, complete, open_keys, error = _parse(text)
        if error or not complete:
            problem = Malformed("not_json", "payload is not JSON (%s)" % (error or "ends early"))
            return Reading(obj if isinstance(obj, dict) else None, problem, complete, open_keys)
    else:
        import json  # lazily: the shim imports this module for MAX_PAYLOAD on every call
        try:
            obj = json.loads(text)
        except ValueError as e:
            return _tolerant(data, Malformed("not_json", "payload is not JSON (%s)" % e))
    if not isinstance(obj, dict):
        return Reading(None, Malformed("not_object", "payload is JSON but not an object"), False)
    return Reading(obj, None, True)


def _tolerant(data, problem):
    # surrogateescape keeps undecodable bytes as themselves (lone surrogates)
    # instead of silently turning a path into another one.
    obj, complete, open_keys, _error = _parse(data.decode("utf-8", "surrogateescape"))
    if problem.code == "too_large":
        complete = False
    return Reading(obj if isinstance(obj, dict) else None, problem, complete, open_keys)


# -- depth, without recursion ---------------------------------------------------------

_re = None


def _regexes():
    global _re
    if _re is None:
        import re
        _re = {
            # possessive quantifiers: an 8 MiB payload of short strings is scanned in
            # C, not backtracked through
            "string": re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL),
            "innermost": re.compile(rb'[\[{][\]}]'),
            "ws": re.compile(r'[ \t\n\r]*'),
            "number": re.compile(r'-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?'),
            # one token: a run of openers, a run of closers, or a run of anything else
            # with strings included whole (empty only at an unterminated string)
            "skip": re.compile(r'([\[{]+)|([\]}]+)|[^"\[\]{}]*+(?:"[^"\\]*+(?:\\.[^"\\]*+)*+"[^"\[\]{}]*+)*+',
                               re.DOTALL),
        }
    return _re


_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def _structural_depth(text):
    """Nesting depth of a JSON text, or MAX_DEPTH + 1 for anything deeper; C-speed passes.

    For broken JSON it is only an estimate; json.loads then fails and the
    iterative parser reads it anyway."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    rx = _regexes()
    brackets = rx["string"].sub("", text).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    if (b"[" * (MAX_DEPTH + 1)) in brackets or (b"{" * (MAX_DEPTH + 1)) in brackets:
        return MAX_DEPTH + 1
    innermost = rx["innermost"]
    # Each pass removes the innermost level everywhere; more passes than MAX_DEPTH
    # means deeper than MAX_DEPTH.
    for depth in range(MAX_DEPTH + 1):
        if not brackets:
            return depth
        reduced = innermost.sub(b"", brackets)
        if len(reduced) == len(brackets):
            return depth  # unbalanced leftovers: broken JSON, let json.loads say so
        brackets = reduced
    return MAX_DEPTH + 1


# -- the iterative parser -----------------------------------------------------------------

_LITERALS = (("true", True), ("false", False), ("null", None), ("NaN", float("nan")),
             ("Infinity", float("inf")), ("-Infinity", float("-inf")))


class _Cut(Exception):
    pass


def _parse(text):
    """Parse a JSON text without recursion -> (value, complete, open_keys, error or None).

    Containers deeper than MAX_DEPTH become None.  On a syntax error, at the
    end of the text or when the token budget is spent, what was read so far is
    returned: members whose value was complete, containers as far as they got."""
    from json.decoder import scanstring
    rx = _regexes()
    ws, number = rx["ws"].match, rx["number"].match
    n = len(text)
    budget = [TOKEN_BUDGET]
    # A frame is [container, key for the member being read (objects), this container's key in its parent].
    stack = []
    root = None
    pos = ws(text, 0).end()
    error = None

    def spend():
        budget[0] -= 1
        if budget[0] < 0:
            raise _Cut("token budget spent")

    def put(value):
        nonlocal root
        if not stack:
            root = value
            return
        frame = stack[-1]
        if isinstance(frame[0], dict):
            frame[0][frame[1]] = value
            frame[1] = None
        else:
            frame[0].append(value)

    try:
        while True:
            # -- a value starts at pos
            spend()
            if pos >= n:
                raise _Cut("ends early")
            c = text[pos]
            if c in "[{":
                if len(stack) >= MAX_DEPTH:
                    pos = _skip(text, pos, rx, budget)
                    put(None)
                else:
                    container = {} if c == "{" else []
                    key = stack[-1][1] if stack and isinstance(stack[-1][0], dict) else None
                    put(container)
                    stack.append([container, None, key])
                    pos = ws(text, pos + 1).end()
                    if pos < n and _closes(stack[-1], text[pos]):
                        stack.pop()
                        pos += 1
                    else:
                        if c == "{":
                            pos = _member_key(text, pos, stack[-1], scanstring, ws)
                        continue
            elif c == '"':
                value, pos = scanstring(text, pos + 1, True)
                put(value)
            else:
                m = number(text, pos)
                if m:
                    put(float(m.group(0)) if m.group(1) or m.group(2) else int(m.group(0)))
                    pos = m.end()
                else:
                    for word, value in _LITERALS:
                        if text.startswith(word, pos):
                            put(value)
                            pos += len(word)
                            break
                    else:
                        raise _Cut("unexpected %r at %d" % (c, pos))
            # -- after a value: a separator, a close, or the end
            while True:
                pos = ws(text, pos).end()
                if not stack:
                    if pos < n:
                        error = "extra data at %d" % pos
                    return root, True, (), error
                frame = stack[-1]
                if pos >= n:
                    raise _Cut("ends early")
                c = text[pos]
                if _closes(frame, c):
                    stack.pop()
                    pos += 1
                    continue
                if c != ",":
                    raise _Cut("expected ',' at %d" % pos)
                pos = ws(text, pos + 1).end()
                if isinstance(frame[0], dict):
                    pos = _member_key(text, pos, frame, scanstring, ws)
                break
    except _Cut as e:
        error = str(e)
    except ValueError as e:  # scanstring: unterminated string, bad escape, control character
        error = str(e)
    open_keys = [f[2] for f in stack[1:]]
    return root, False, open_keys, error


def _closes(frame, c):
    return c == ("}" if isinstance(frame[0], dict) else "]")


def _member_key(text, pos, frame, scanstring, ws):
    """Read `"key" :` and leave pos at the value; the key waits in the frame."""
    if pos >= len(text) or text[pos] != '"':
        raise _Cut("expected a key at %d" % pos)
    key, pos = scanstring(text, pos + 1, True)
    pos = ws(text, pos).end()
    if pos >= len(text) or text[pos] != ":":
        raise _Cut("expected ':' at %d" % pos)
    frame[1] = key
    return ws(text, pos + 1).end()


def _skip(text, pos, rx, budget):
    """End of the container opening at pos, skipped without building it.  Runs of brackets
    and of flat content count as one token each, so a deep bomb or a long flat list costs a
    few tokens, not one per level or per element."""
    skip = rx["skip"].match
    depth = 0
    n = len(text)
    while True:
        budget[0] -= 1
        if budget[0] < 0:
            raise _Cut("token budget spent")
        m = skip(text, pos)
        kind = m.lastindex
        if kind == 1:
            depth += m.end() - m.start()
        elif kind == 2:
            run = m.end() - m.start()
            if run >= depth:
                return m.start() + depth
            depth -= run
        elif m.end() == pos:
            raise _Cut("ends early" if pos >= n else "unterminated string at %d" % pos)
        pos = m.end()
