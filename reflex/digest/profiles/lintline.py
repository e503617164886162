"""Pieces shared by the linters that print one `file:line[:col]: …` line per finding.

flake8, pylint (text and parseable), shellcheck's gcc format and pyright all
name a finding by a path, a line and (mostly) a column ahead of the message;
what follows differs per tool and stays in its own profile.  A file the tool
could not parse is named apart, as a build error labelled NOT LINTED (its
one "syntax error" finding must not read as one small problem among many).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reflex.digest.facts import BuildError, Diagnostic

# `path:line:col: rest` or `path:line: rest` (pylint's parseable format has no column).
LOCATION = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)? ?(?P<rest>.*)$")
NOT_LINTED = "NOT LINTED"


def not_linted(diags: list[Diagnostic], is_parse_error: Callable[[Diagnostic], bool]) -> list[BuildError]:
    """One NOT LINTED build error per file that has a diagnostic `is_parse_error` accepts."""
    out: list[BuildError] = []
    seen: set[str | None] = set()
    for d in diags:
        if d.file in seen or not is_parse_error(d):
            continue
        seen.add(d.file)
        out.append(BuildError(where=d.file, label=NOT_LINTED, span=d.span,
                              message=f"{d.code}: {d.message} (line {d.line}); no other check ran on this file"))
    return out


def strip_dot(path: str) -> str:
    return path.removeprefix("./")
