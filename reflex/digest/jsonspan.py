"""Byte spans of JSON objects inside raw output, for reporters that print one JSON document.

A JSON reporter (jest --json, vitest --reporter=json, eslint -f json, ruff
--output-format json) often prints everything on one line, so a line range
cannot point at one test.  `object_spans` finds the half-open byte span of
every object at a given nesting depth, in document order, scanning bytes
with one regex (strings are skipped whole; UTF-8 continuation bytes are never
quotes, brackets or backslashes, so byte offsets are exact and on character
boundaries).  Callers pair spans with json.loads() records by order and must
check the counts agree.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.DOTALL)


def object_spans(raw: bytes, start: int, end: int, depth: int) -> list[tuple[int, int]]:
    """Spans of the objects whose opening brace sits at nesting `depth` (top level = 1).

    Depth counts both objects and arrays: in `{"a": [{...}]}` the inner object is at depth 3.
    """
    spans: list[tuple[int, int]] = []
    level = 0
    open_at = -1
    for m in _TOKEN.finditer(raw, start, end):
        c = raw[m.start()]
        if c == 0x22:  # a string
            continue
        if c in (0x7B, 0x5B):  # { [
            level += 1
            if c == 0x7B and level == depth:
                open_at = m.start()
        else:
            if c == 0x7D and level == depth and open_at >= 0:
                spans.append((open_at, m.end()))
                open_at = -1
            level -= 1
    return spans


def document_end(raw: bytes, start: int) -> int | None:
    """Offset just past the object/array that opens at `start`, or None if it never closes."""
    level = 0
    for m in _TOKEN.finditer(raw, start):
        c = raw[m.start()]
        if c == 0x22:
            continue
        level += 1 if c in (0x7B, 0x5B) else -1
        if level == 0:
            return m.end()
    return None


def find_document(raw: bytes, prefixes: tuple[bytes, ...]) -> tuple[int, int] | None:
    """The byte span of the first JSON document that starts a line with one of `prefixes`."""
    for p in prefixes:
        if raw.startswith(p):
            at = 0
        else:
            at = raw.find(b"\n" + p)
            if at == -1:
                continue
            at += 1
        end = document_end(raw, at)
        if end is not None:
            return (at, end)
    return None


def load_document(raw: bytes, prefixes: tuple[bytes, ...]) -> tuple[tuple[int, int], Any] | None:
    """The span and the decoded value of the document `find_document` finds; None if there is none
    or it is not valid JSON (a reporter killed mid-document, or text that only starts like one)."""
    where = find_document(raw, prefixes)
    if where is None:
        return None
    try:
        return where, json.loads(raw[where[0] : where[1]].decode("utf-8", errors="replace"))
    except ValueError:
        return None


def report_items(raw: bytes, prefixes: tuple[bytes, ...], key: str,
                 depth: int = 3) -> tuple[dict, list[dict], list[tuple[int, int]]] | None:
    """A reporter's JSON document that holds its findings as a list of objects under `key`
    (`{"diagnostics": [...]}`): (the document, those objects, a byte span for each).  Each object
    gets its own span when the objects at `depth` pair with them one for one, else the document's
    span.  None when there is no such document."""
    found = load_document(raw, prefixes)
    if found is None:
        return None
    where, doc = found
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        return None
    items = [d for d in doc[key] if isinstance(d, dict)]
    spans = object_spans(raw, where[0], where[1], depth)
    return doc, items, spans if len(spans) == len(items) else [where] * len(items)
