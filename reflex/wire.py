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

stdlib-only.
"""

PROTOCOL = 1
MAX_HEADER = 64 * 1024
MAX_BODY = 16 * 1024 * 1024

ERRORS = ("protocol", "bad_request", "too_large", "forbidden", "unknown_op", "internal", "busy")


def encode_header(fields):
    """Compact JSON for a flat dict of str/int/float/bool/None/list values."""
    import json
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=True).encode() + b"\n"


def header_int(header, name, default=None):
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


def header_true(header, name):
    return (b'"' + name.encode() + b'":true') in header


def json_str(s):
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
