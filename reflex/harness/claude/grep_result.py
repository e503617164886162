"""Claude Code's Grep tool result -> the search digest, in Grep's own output shape.

    from reflex.harness.claude import grep_result
    g = grep_result.digest(tool_input, tool_response, cwd=cwd)
    if g is not None:  # store g.raw (its handle is g.handle), answer g.output as updatedToolOutput

One function for the live hook (`ClaudeHandler._on_grep_post`) and the offline accounting
(`ctx replay --savings`), so what the savings count is what the hook delivers.

What the real CLI (2.1.332) returns in PostToolUse's `tool_response`, by `output_mode`
(tests/e2e/test_grep_digest.py; docs/harnesses.md "Claude Code's Grep tool"):

- `content`: `{mode, numFiles: 0, filenames: [], content, numLines, totalLines}`; `content` is
  rg's lines (`path:N:text`, `path-N-text` context, `--`; no path when one file is searched;
  no number with `-n: false`).  `head_limit`/`offset` add `appliedLimit`/`appliedOffset`, which
  the CLI renders as `[Showing results with pagination = …]` after the content.
- `files_with_matches` (the default): `{mode, filenames: [...], numFiles, totalFiles}`.
- `count`: `{mode, numFiles, filenames: [], content: "path:N" lines, numMatches}`; the CLI adds
  `Found N total occurrences across M files.`

`updatedToolOutput` must keep that shape or the CLI silently ignores it: a content-mode object
needs `mode`, `numFiles` and `filenames` (`numLines`/`totalLines` may be left out).  A content
object also replaces a `files_with_matches` result, so a long file list is answered as text.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

# A file list is what the model asked for to act on: it is digested only when long (this many
# o200k tokens of names), since a census in its place costs a `ctx get` to see every name.
# Content is digested whenever the digest is smaller than what the model would receive (short
# content passes through the digest whole, and is then left alone).
FILE_LIST_MIN_TOKENS = 600
# Grep's maxResultSizeChars on 2.1.332: a longer result reaches the model as a persisted-output
# preview of its first PREVIEW_CHARS (the whole result saved to a file under the session).
RESULT_CHARS = 20000
PREVIEW_CHARS = 2000
# Stands for the saved file's path in the modelled preview (about as long as the real one).
_PERSISTED_PATH = ("/home/user/.claude/projects/-home-user-project/00000000-0000-0000-0000-000000000000/"
                   "tool-results/toolu_000000000000000000000000.txt")
_MODES = ("content", "files_with_matches", "count")
# Grep input field -> rg flag taking the field's value.
_VALUED = (("-A", "-A"), ("-B", "-B"), ("-C", "-C"), ("context", "-C"), ("glob", "--glob"), ("type", "--type"))


@dataclass(frozen=True)
class GrepDigest:
    raw: bytes                 # what is stored: the addresses in the digest are lines of these bytes
    handle: str                # the stored blob's handle (reflex.blobs.handle_of(blob_id(raw)))
    command: str               # the rg command line the Grep input is equivalent to
    mode: str                  # the Grep's output_mode
    digest: Any                # reflex.digest.render.Digest
    output: dict[str, Any]     # updatedToolOutput: the digest in Grep's content shape
    received_tokens: int       # what the model would have received instead (o200k)


def mode_of(tool_input: dict[str, Any], tool_response: Any) -> str | None:
    """The result's output mode ("content", "files_with_matches", "count"), or None when the
    response is not a Grep result this module reads."""
    if not isinstance(tool_response, dict):
        return None
    mode = tool_response.get("mode", tool_input.get("output_mode") or "files_with_matches")
    return mode if mode in _MODES else None


def raw_of(tool_response: dict[str, Any], mode: str) -> str | None:
    """The text the search printed: the content, or the file list one name a line."""
    if mode == "files_with_matches":
        names = tool_response.get("filenames")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return None
        return "\n".join(names)
    content = tool_response.get("content")
    return content if isinstance(content, str) else None


def rg_command(tool_input: dict[str, Any], mode: str) -> str:
    """An rg command line printing what this Grep printed, so the search profile reads the lines
    with the right hints (numbers or not, a file list, counts, context)."""
    words = ["rg"]
    if mode == "files_with_matches":
        words.append("--files-with-matches")
    elif mode == "count":
        words.append("--count")
    elif tool_input.get("-n") is not False:  # the tool numbers lines unless told not to
        words.append("-n")
    if tool_input.get("-i") is True:
        words.append("-i")
    if tool_input.get("multiline") is True:
        words += ["-U", "--multiline-dotall"]
    for field, flag in _VALUED:
        value = tool_input.get(field)
        applies = mode == "content" or flag in ("--glob", "--type")  # context lines: content mode only
        if applies and isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            words += [flag, str(value)]
    pattern = tool_input.get("pattern")
    words += ["-e", pattern if isinstance(pattern, str) else ""]
    path = tool_input.get("path")
    if isinstance(path, str) and path:
        words.append(path)
    return shlex.join(words)


def received_text(tool_response: dict[str, Any], mode: str) -> str:
    """What the CLI (2.1.332) sends the model for this result, modelled: the result rendered
    (a file list under `Found N files`, the counts under their total, the pagination note),
    and past RESULT_CHARS, the persisted-output preview that replaces it (its first
    PREVIEW_CHARS; the full text goes to a file the model would have to Read)."""
    limit, offset = tool_response.get("appliedLimit"), tool_response.get("appliedOffset")
    paging = ", ".join(part for part in ("limit: %s" % limit if limit is not None else "",
                                         "offset: %s" % offset if offset is not None else "") if part)
    if mode == "files_with_matches":
        names = tool_response.get("filenames") or []
        n = tool_response.get("numFiles", len(names))
        text = ("Found %s file%s%s\n" % (n, "" if n == 1 else "s", " " + paging if paging else "")
                + "\n".join(names)) if names else "No files found"
    elif mode == "count":
        text = "%s\n\nFound %s total occurrences across %s files.%s" % (
            tool_response.get("content") or "", tool_response.get("numMatches"), tool_response.get("numFiles"),
            " with pagination = " + paging if paging else "")
    else:
        text = (tool_response.get("content") or "No matches found") + (
            "\n\n[Showing results with pagination = %s]" % paging if paging else "")
    if len(text) <= RESULT_CHARS:
        return text
    preview = text[:PREVIEW_CHARS]
    if "\n" in preview[PREVIEW_CHARS // 2:]:
        preview = preview[:preview.rindex("\n")]  # the CLI ends the preview at a line's end
    size = ("%.1f" % (len(text.encode()) / 1024)).removesuffix(".0")
    return ("<persisted-output>\nOutput too large (%sKB). Full output saved to: %s\n\nPreview (first 2KB):\n%s"
            "\n...\n</persisted-output>" % (size, _PERSISTED_PATH, preview))


def digest(tool_input: dict[str, Any] | None, tool_response: Any, *, cwd: str | None = None,
           density: str = "normal", reason: str | None = None,
           received_tokens: int | None = None) -> GrepDigest | None:
    """The digest of a Grep result, or None when the result is better delivered as it is: not
    a Grep result read here, empty, passed through whole by the digest, not smaller than what
    the model would receive, or a file list under FILE_LIST_MIN_TOKENS.

    `received_tokens`: the o200k tokens the model received for this result, when known (a
    recorded session); otherwise they are counted on received_text.  The digest's budget is
    capped below them, so a result the CLI already cut to a preview gets a census no larger
    than that preview."""
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    mode = mode_of(tool_input, tool_response)
    if mode is None:
        return None
    text = raw_of(tool_response, mode)
    if not text or not text.strip():
        return None
    from reflex import blobs, tokens
    from reflex.digest import build_digest
    from reflex.digest.budget import MIN_BUDGET, default_budget
    raw_tokens = tokens.count(text)
    if mode == "files_with_matches" and raw_tokens < FILE_LIST_MIN_TOKENS:
        return None
    if received_tokens is None:
        received_tokens = tokens.count(received_text(tool_response, mode))
    budget = min(default_budget(density), received_tokens - 1)
    if budget < MIN_BUDGET:
        return None
    raw = text.encode("utf-8", "surrogatepass")
    handle = blobs.handle_of(blobs.blob_id(raw))
    command = rg_command(tool_input, mode)
    d = build_digest(raw, family="search", exit_code=0, command=command, handle=handle, density=density,
                     budget=budget, reason=reason, cwd=cwd, raw_tokens=raw_tokens)
    if d.passthrough or d.tokens >= received_tokens:
        return None
    body = d.text.rstrip("\n")
    output: dict[str, Any] = {"mode": "content" if mode == "files_with_matches" else mode,
                              "numFiles": tool_response.get("numFiles", 0) if mode == "count" else 0,
                              "filenames": [], "content": body, "numLines": body.count("\n") + 1}
    if mode == "count" and "numMatches" in tool_response:
        output["numMatches"] = tool_response["numMatches"]  # the CLI's "Found N total occurrences" line
    if mode == "content" and "totalLines" in tool_response:
        output["totalLines"] = tool_response["totalLines"]
    for key in ("appliedLimit", "appliedOffset"):  # the CLI's pagination note: still true of the result
        if key in tool_response:
            output[key] = tool_response[key]
    return GrepDigest(raw=raw, handle=handle, command=command, mode=mode, digest=d, output=output,
                      received_tokens=received_tokens)
