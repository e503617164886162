"""What every profile is, and the small helpers they share.

A profile is a plain object with a family `name`, a parser `version` (bumped
when its Facts for the same bytes change, so content identity stays honest),
a cheap `detect(out)` used to sniff npm-script output, and `extract()`.
`extract` never guesses: output it does not recognise is handed to the
generic profile, which claims nothing but what its lines say.  Every profile
but generic is its patterns and a parse bound into that frame by name
(runner.bind); generic is what the frame hands over to.
"""

from __future__ import annotations

import re
import shlex
from typing import Protocol

from reflex.digest.facts import Facts
from reflex.digest.text import Output

MESSAGE_CHARS = 200


class Profile(Protocol):
    # Read-only: the profiles are frozen dataclasses (runner.BoundProfile) as well as a class (generic).
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> int: ...

    def detect(self, out: Output) -> bool:
        """Cheap: does this output look like ours?  Used to pick a profile for npm scripts."""
        ...

    def extract(self, raw: bytes, exit_code: int | None, command: str) -> Facts:
        """Facts parsed from `raw`; generic Facts if the output is not recognised."""
        ...


def one_line(s: str, limit: int = MESSAGE_CHARS) -> str:
    """A message as one trimmed line of at most `limit` characters."""
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def any_line(out: Output, pattern: re.Pattern[str], limit: int | None = None) -> bool:
    lines = out.lines if limit is None else out.lines[:limit] + out.lines[-limit:]
    return any(pattern.search(s) for s in lines)


_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")


def simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command of a command line, last first, environment assignments
    dropped (`cd x && LC_ALL=C grep -rn y . | head` -> [["head"], ["grep", "-rn", "y", "."], ["cd", "x"]]):
    how a profile whose output shape depends on flags finds the command that printed it."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    segments: list[list[str]] = [[]]
    for w in words:
        if w in ("|", "||", "&&", ";", "|&"):
            segments.append([])
        else:
            segments[-1].append(w)
    out = []
    for seg in reversed(segments):
        while seg and _ASSIGNMENT.match(seg[0]):
            seg = seg[1:]
        if seg:
            out.append(seg)
    return out
