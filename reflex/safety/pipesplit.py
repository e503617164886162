"""Finding `producer | slicer` so ctx run can keep what the slicer would cut.

An agent's `pytest -q 2>&1 | tail -20` asks for the last 20 lines; run as is, the
census and the handle would be cut away with everything else.  ctx run keeps the
agent's command whole and inserts one stage at the split point found here (the
top-level pipe after which every stage is a pure slicer): a tee that copies the
producer's stream to the slicer and keeps a bounded copy (reflex.shim.pipetee).  bash
still runs the whole command, so lists before the pipeline, pipefail and SIGPIPE
behave exactly as without ctx; the digest header with the census goes above what the
slicer printed.

Deliberately conservative: anything it does not fully understand (heredocs,
command lists after the pipe, redirections or substitutions in a slicer, an
unbalanced quote, a trailing line continuation) means "no split", and the command
runs as written.

stdlib-only.
"""

from __future__ import annotations

import os

SLICERS = frozenset({"head", "tail", "grep", "egrep", "fgrep", "rg", "sed", "awk", "gawk", "cut", "wc",
                     "sort", "uniq", "less", "more", "cat", "tr", "nl", "column", "fold"})


def _scan(command: str) -> list[tuple[str, int]] | None:
    """Top-level pipe positions, or None when the command is not a simple pipeline tail."""
    pipes = []
    i, n = 0, len(command)
    depth = 0  # $( ... ), ( ... ), ` ... ` nesting
    quote: str | None = None
    while i < n:
        c = command[i]
        if quote == "'":
            if c == "'":
                quote = None
        elif quote == '"':
            if c == "\\":
                i += 1
            elif c == '"':
                quote = None
            elif c == "$" and command[i + 1:i + 2] == "(":
                depth += 1
                i += 1
        else:
            if c == "\\":
                i += 1
            elif c in "'\"":
                quote = c
            elif c == "`":
                depth = depth + 1 if depth % 2 == 0 else depth - 1  # crude, but only balances
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth < 0:
                    return None
            elif c == "<" and command[i + 1:i + 2] == "<":
                return None  # heredoc / herestring: not worth the risk
            elif depth == 0 and c == "|":
                if command[i + 1:i + 2] == "|":
                    pipes.append(("||", i))
                    i += 2
                    continue
                pipes.append(("|&" if command[i + 1:i + 2] == "&" else "|", i))
                if command[i + 1:i + 2] == "&":
                    i += 1
            elif depth == 0 and c in ";&\n":
                pipes.append(("list", i))
        i += 1
    if quote is not None or depth != 0:
        return None
    return pipes


def _is_slicer(stage: str) -> bool:
    import shlex
    if "`" in stage or "$(" in stage:
        return False
    try:
        lex = shlex.shlex(stage, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        words = list(lex)
    except ValueError:
        return False
    # Unquoted operators come out as tokens of punctuation only: a redirect
    # or a subshell in the slicer means it does more than slice.
    if any(w and all(ch in "();<>|&" for ch in w) for w in words):
        return False
    if not words:
        return False
    name = os.path.basename(words[0])
    if name not in SLICERS:
        return False
    if name == "sed" and any(w == "-i" or w.startswith("-i") or w.startswith("--in-place") for w in words[1:]):
        return False
    if name == "sort" and any(w == "-o" or w.startswith("--output") for w in words[1:]):
        return False
    return True


def split(command: str) -> tuple[str, str] | None:
    """-> (producer, slicer) or None.  `slicer` is every trailing slicer stage, as written."""
    point = split_point(command)
    return (point[0], point[2]) if point else None


def split_point(command: str) -> tuple[str, str, str, int] | None:
    """-> (producer, pipe, slicer, slicer stages) or None.

    `pipe` is "|" or "|&" as written; `producer + " " + pipe + " " + slicer` runs as the command did."""
    marks = _scan(command)
    if not marks:
        return None
    tail = command.rstrip()
    if (len(tail) - len(tail.rstrip("\\"))) % 2 == 1:
        return None  # a line continuation: text appended after the command would join the slicer's words
    # Everything after the split must be pipes between slicers: walk back
    # from the end while stages are slicers.
    split_at = None
    stages = 0
    end = len(command)
    for kind, pos in reversed(marks):
        if kind not in ("|", "|&"):
            break
        stage = command[pos + (2 if kind == "|&" else 1):end]
        if not _is_slicer(stage.strip()):
            break
        split_at = (kind, pos)
        stages += 1
        end = pos
    if split_at is None:
        return None
    kind, pos = split_at
    producer = command[:pos].rstrip()
    slicer = command[pos + (2 if kind == "|&" else 1):].strip()
    if not producer:
        return None
    return producer, kind, slicer, stages
