"""The daemon's wire protocol: one JSON header line, then an optional raw body.

    frame  := header b"\\n" body
    header := compact JSON object; always carries "v" (PROTOCOL); "len" gives
              the body's byte length (0 or absent: no body)

Requests name an operation in "op".  Replies carry "ok"; a failed reply has
"error" (a short code from ERRORS) and "detail".  A protocol mismatch is an
ordinary reply ({"ok": false, "error": "protocol", "want": N}) so an old client
learns to fall back instead of seeing a dropped connection.

Why raw bodies instead of JSON-in-JSON: the hook shim forwards Claude Code's
payload bytes untouched (no json import, no re-encoding of possibly invalid
UTF-8 on the hot path), and the daemon owns all parsing and validation.

Replies to the shim are produced by `encode_header` (compact, no spaces), and
the shim reads just the integer and boolean fields it needs with
`header_int`/`header_true` instead of importing json (~5 ms on these machines).
That reader is only valid for headers this module encodes.

This module is the protocol's one home: the ops and the fields each request may
carry (REQUESTS, the schema both sides check), the request encoder the clients
use (`request_header`), the validation the daemon runs once at dispatch
(`parse_request` -> Request), and the reply's body split (`split_reply`: the
first "out" bytes go to stdout, the rest to stderr).  A field the schema does
not know, or of the wrong type, fails loudly on either side.

stdlib-only.
"""

from __future__ import annotations

from reflex import __version__ as VERSION  # noqa: F401  (the package's one version, for ping/status)
from reflex.errors import CtxError

# Annotation-only imports: this module is on the hot path (reflex.STDLIB_ONLY), where importing
# typing costs milliseconds per hook; mypy reads the block as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

PROTOCOL = 1
# The session of ctx's own self-test hook call (`ctx install`, `ctx doctor`: a real `cat .env`
# PreToolUse through the installed command): answered like any call, never recorded, since it
# is not the agent's activity (a scorecard, a replay or a compile must not see it).
PROBE_SESSION = "ctx-doctor-probe"
MAX_HEADER = 64 * 1024
MAX_BODY = 16 * 1024 * 1024

ERRORS = ("protocol", "bad_request", "too_large", "forbidden", "unknown_op", "internal", "busy")


def encode_header(fields: Mapping[str, Any]) -> bytes:
    """Compact JSON for a flat dict of str/int/float/bool/None/list values."""
    import json
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=True).encode() + b"\n"


def header_int(header: bytes, name: str, default: int | None = None) -> int | None:
    """Read an integer field from a header this module encoded (no json import)."""
    key = b'"' + name.encode() + b'":'
    i = header.find(key)
    if i < 0:
        return default
    i += len(key)
    j = i
    n = len(header)
    while j < n and header[j:j + 1] in b"-0123456789":
        j += 1
    try:
        return int(header[i:j])
    except ValueError:
        return default


def header_true(header: bytes, name: str) -> bool:
    return (b'"' + name.encode() + b'":true') in header


def json_str(s: str) -> str:
    """A JSON string literal for `s` without importing json (see module doc).

    Lone surrogates (argv decoded with surrogateescape) are written as \\uXXXX
    escapes, which json.loads accepts, so no input can make this raise.
    """
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20 or 0xD800 <= o <= 0xDFFF or o == 0x7F:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# -- requests -------------------------------------------------------------------
# JSON types of request fields.
STR, INT, NUM, BOOL, STRS = "string", "integer", "number", "boolean", "list of strings"

# Fields any request may carry: the frame, the request's identity and whether it was spooled.
ENVELOPE: dict[str, str] = {"v": INT, "op": STR, "len": INT, "uid": STR, "ts": NUM, "spooled": BOOL}
# The hook process's view of what safety decisions depend on (reflex.shim.fallback.hook_env).
HOOK_ENV: dict[str, str] = {"pdir": STR, "home": STR, "tmpdir": STR, "pcwd": STR, "cfg": STR}
# Each op and the fields its request may carry besides the envelope.
REQUESTS: dict[str, dict[str, str]] = {
    "ping": {},
    "status": {},
    "shutdown": {},
    # A harness's hook payload (the body), forwarded untouched.  local: what a shim decided by
    # itself (spooled frames); cpid, ccfg: where the harness's permissions come from; event:
    # the hook's event name when the payload does not carry it (Copilot, reflex/harness/copilot.py).
    "hook": {"harness": STR, "pid": INT, "trunc": BOOL, "local": STR, "transport": STR,
             "cpid": STR, "ccfg": STR, "event": STR, **HOOK_ENV},
    # `ctx run` has started a command whose output goes to `capture`.
    "run.start": {"capture": STR, "stable": INT},
    # ... and it has ended; the body is what the agent's own slicer printed, if any.
    "run.finish": {"capture": STR, "command": STR, "cwd": STR, "session": STR, "exit": INT,
                   "duration_ms": NUM, "producer": STR, "slicer": STR, "slicer_exit": INT,
                   "view_bytes": INT, "output_bytes": INT, "elided_bytes": INT, "kept_head": INT,
                   "marker_len": INT, "capture_error": STR, "raw": BOOL, "redacted": INT,
                   "redacted_from": STRS},
    "get": {"address": STR, "b3": STR, "json": BOOL, "cwd": STR, "session": STR},
    "search": {"pattern": STR, "handle": STR, "json": BOOL, "cwd": STR, "session": STR},
}
REQUIRED: dict[str, tuple[str, ...]] = {"hook": ("uid", "harness"), "run.start": ("uid", "capture"), "run.finish": ("uid", "capture"),
            "get": ("address",), "search": ("pattern",)}


class BadRequest(CtxError, ValueError):
    """A request the schema rejects; `code` is one of ERRORS."""

    def __init__(self, code: str, detail: str) -> None:
        ValueError.__init__(self, detail)
        self.code = code
        self.detail = detail


def _type_ok(kind: str, value: object) -> bool:
    if kind == STR:
        return isinstance(value, str)
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


class Request:
    """A request header the schema accepted: `op` and its fields, each of its declared type.

    `req.get(name)` is the field or `default` when absent; a name the op does not declare
    raises KeyError, so a handler cannot read a field no client may send."""

    __slots__ = ("op", "fields")

    def __init__(self, op: str, fields: dict[str, Any]) -> None:
        self.op = op
        self.fields = fields

    def get(self, name: str, default: Any = None) -> Any:
        if name not in ENVELOPE and name not in REQUESTS[self.op]:
            raise KeyError("op %r has no field %r" % (self.op, name))
        value = self.fields.get(name)
        return default if value is None else value

    def text(self, name: str) -> str | None:
        """A string field, or None when absent or empty."""
        return self.get(name) or None


def parse_request(header: object) -> Request:
    """Validate a decoded request header once: -> Request, or raise BadRequest."""
    if not isinstance(header, dict):
        raise BadRequest("bad_request", "the header is not a JSON object")
    if header.get("v") != PROTOCOL:
        raise BadRequest("protocol", "protocol %r, want %d" % (header.get("v"), PROTOCOL))
    op = header.get("op")
    schema = REQUESTS.get(op) if isinstance(op, str) else None
    if schema is None or not isinstance(op, str):  # (the second test only tells mypy what the first implies)
        raise BadRequest("unknown_op", "unknown op %r" % (op,))
    for name, value in header.items():
        kind = ENVELOPE.get(name) or schema.get(name)
        if kind is None:
            raise BadRequest("bad_request", "op %r has no field %r" % (op, name))
        if value is not None and not _type_ok(kind, value):
            raise BadRequest("bad_request", "field %r of op %r must be a %s" % (name, op, kind))
    for name in REQUIRED.get(op, ()):
        if header.get(name) in (None, ""):
            raise BadRequest("bad_request", "op %r needs field %r" % (op, name))
    return Request(op, header)


def request_header(op: str, fields: Mapping[str, Any], body_len: int = 0) -> bytes:
    """One request header line (bytes), checked against the schema, without importing json.

    The clients' one encoder: `fields` is a flat dict of str, int, float, bool, None (left
    out) and lists of str.  Raises ValueError for a field the op does not declare, so a
    misspelling fails where it is written."""
    schema = REQUESTS[op]
    parts = ['{"v":%d,"op":%s' % (PROTOCOL, json_str(op))]
    for name, value in fields.items():
        kind = ENVELOPE.get(name) or schema.get(name)
        if kind is None or name in ("v", "op", "len"):
            raise ValueError("op %r has no field %r" % (op, name))
        if value is None:
            continue
        if not _type_ok(kind, value):
            raise ValueError("field %r of op %r must be a %s" % (name, op, kind))
        parts.append(",%s:%s" % (json_str(name), _json_value(value)))
    if body_len:
        parts.append(',"len":%d' % body_len)
    return ("".join(parts) + "}\n").encode("utf-8", "surrogatepass")


def _json_value(value: str | int | float | list[str]) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return "%d" % value
    if isinstance(value, float):
        return "%.6f" % value
    if isinstance(value, str):
        return json_str(value)
    return "[" + ",".join(json_str(x) for x in value) + "]"


def with_fields(header: bytes, extra: Mapping[str, Any]) -> bytes:
    """`header` (bytes this module encoded) with `extra` fields appended, e.g. a spooled mark."""
    body = "".join(",%s:%s" % (json_str(k), _json_value(v)) for k, v in extra.items())
    return header[:-2] + body.encode() + b"}\n"


# -- replies --------------------------------------------------------------------
def split_reply(header: bytes | dict[str, Any], body: bytes) -> tuple[bytes, bytes]:
    """A reply's body as (stdout bytes, stderr bytes): the first `out` bytes are for stdout.

    `header` is the reply's header, as bytes this module encoded or as a decoded dict."""
    n = header.get("out") if isinstance(header, dict) else header_int(header, "out", None)
    n = len(body) if not isinstance(n, int) or n < 0 else min(n, len(body))
    return body[:n], body[n:]
