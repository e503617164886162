"""Control-tag neutralization: program output can never forge a ctx header or hint.

The agent trusts two kinds of lines in a digest: our header/notes (lines that
start with ``[ctx]``) and our hints (``ctx get r:<handle>…``).  Every line of
program output we quote passes through `clean_line` first, which

1. drops what a terminal would not show as text (ANSI escapes, C0/C1 control
   characters, zero-width and other format characters, Unicode line and
   paragraph separators) — so an invisible character cannot split a pattern
   and a "line separator" cannot start a forged line;
2. folds compatibility look-alikes (NFKC: fullwidth ［ｃｔｘ］) when the folded
   form would read as a control tag;
3. escapes, with a visible backslash, every ``[ctx]`` and every ``ctx get r:``
   in any case and spacing: ``[ctx\\]`` and ``ctx get r\\:``.

`looks_like_control` is deliberately looser than our own parsers (the
renderer's header check and address.parse_hint): anything it does not match,
they cannot match either.  The property tests check that no output of
`clean_line` matches it.
"""

from __future__ import annotations

import re
import unicodedata

from reflex.digest.text import strip_ansi

# Looser than anything we emit: any case, any spacing, quotes before the address.
_CONTROL = re.compile(r"\[\s*ctx\s*\]|ctx\s*get\s*['\"]?\s*r\s*:", re.IGNORECASE)
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb]"
)


def looks_like_control(line: str) -> bool:
    """True if `line` contains anything our header/hint grammar could read as ours."""
    return _CONTROL.search(line) is not None


def _escape(m: re.Match[str]) -> str:
    s = m.group(0)
    if s.startswith("["):
        return s[:-1] + "\\]"
    return s[:-1] + "\\:"


def neutralize(line: str) -> str:
    """Escape every control-tag look-alike in one line of program output."""
    if not _CONTROL.search(line):
        return line
    return _CONTROL.sub(_escape, line)


def clean_line(line: str) -> str:
    """One line of program output made safe to quote in a digest (see module docstring)."""
    # Tabs are kept: they forge nothing, and expanding them made a passed-through output cost
    # more tokens than the raw one (go and ruff --statistics separate columns with tabs).
    line = strip_ansi(line)
    line = _INVISIBLE.sub("", line)
    if not line.isascii():
        folded = unicodedata.normalize("NFKC", line)
        if folded != line and _CONTROL.search(folded):
            line = _INVISIBLE.sub("", folded)
    return neutralize(line)
