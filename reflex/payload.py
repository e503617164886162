"""Decoding a hook payload from raw stdin bytes, with one clear error per failure.

Shared by the daemon and by the shim's fallback path, so "malformed" means the
same thing on both sides.  stdlib-only.
"""

MAX_PAYLOAD = 8 * 1024 * 1024  # Bash PostToolUse carries up to 150k chars of output; 8 MiB is ample

_BOM = b"\xef\xbb\xbf"


class Malformed(ValueError):
    """The payload cannot be used; `code` is a stable machine-readable reason."""

    def __init__(self, code, detail):
        super().__init__("%s: %s" % (code, detail))
        self.code = code
        self.detail = detail


def decode(data, truncated=False):
    """bytes -> dict, or raise Malformed(code, detail)."""
    if truncated:
        raise Malformed("too_large", "hook payload exceeds %d bytes" % MAX_PAYLOAD)
    if data.startswith(_BOM):
        # Cursor on Windows prepends a BOM; it is not part of the JSON.
        data = data[len(_BOM):]
    if not data.strip():
        raise Malformed("empty", "no hook payload on stdin")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Malformed("not_utf8", "payload is not valid UTF-8 (byte %d)" % e.start) from None
    import json  # lazily: the shim imports this module for MAX_PAYLOAD on every call
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise Malformed("not_json", "payload is not JSON (%s)" % e) from None
    if not isinstance(obj, dict):
        raise Malformed("not_object", "payload is JSON but not an object")
    return obj

