"""Secret redaction for everything ctx shows an agent.  STDLIB-ONLY.

Used by digests and by `ctx get` / `ctx search` on the fast path, so it
imports nothing beyond the standard library (importing this module does not
import the rest of reflex.digest's dependencies: reflex/digest/__init__.py
imports lazily).

What is redacted, and why each pattern is narrow: a test log legitimately
contains hashes, ids and base64; redacting them would hide evidence.  Only
shapes that are unambiguous credentials are replaced, each by
``[REDACTED:<kind>]``:

- PEM private key blocks (BEGIN … PRIVATE KEY … END), the whole block;
- AWS access key ids (AKIA/ASIA…) and `aws_secret_access_key = <40 chars>`;
- GitHub tokens (ghp_/gho_/ghu_/ghs_/ghr_, github_pat_), GitLab (glpat-…);
- Slack tokens (xoxb-/xoxp-/…) and Slack webhook URLs;
- Google API keys (AIza…), Stripe live keys, OpenAI/Anthropic style `sk-…` keys;
- JSON Web Tokens (three base64url parts starting eyJ);
- credentials in URLs (`scheme://user:password@host`: the password) and
  `password=`/`token=`/`secret=` query parameters.

Redaction never changes the number of lines of a text.
"""

from __future__ import annotations

import re

# Annotation-only imports: this module is on the hot path (reflex.STDLIB_ONLY); mypy reads the
# block as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_PEM_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END ([A-Z0-9 ]*)PRIVATE KEY(?: BLOCK)?-----")

_PATTERNS: tuple[tuple[str, re.Pattern[str], int, tuple[str, ...]], ...] = (
    # (kind, pattern, group to replace: 0 = whole match, the literals one of which every match holds)
    ("aws-key-id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[0-9A-Z]{16}\b"), 0,
     ("AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA")),
    # (?i): its literal is looked for in the casefolded line (_LOWER).
    ("aws-secret", re.compile(r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})\b"), 1, ("secret",)),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"), 0, ("gh",)),
    ("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"), 0, ("github_pat_",)),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), 0, ("glpat-",)),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0, ("xox",)),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"), 0, ("hooks.slack",)),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), 0, ("AIza",)),
    ("stripe-key", re.compile(r"\b[rs]k_live_[0-9A-Za-z]{20,}\b"), 0, ("k_live_",)),
    ("api-key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{32,}"), 0, ("sk-",)),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0, ("eyJ",)),
    ("url-password", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@"), 1, ("://",)),
    ("url-secret", re.compile(r"(?i)[?&](?:password|passwd|pwd|token|secret|api_?key|access_token)=([^&\s#]+)"), 1, ("=",)),
)
# The patterns whose literal is matched case-insensitively (casefold, not lower: re's IGNORECASE
# takes U+017F for an s, and only casefold maps it to one).
_LOWER = frozenset({"aws-secret"})


def _sub_group(kind: str, group: int) -> Callable[[re.Match[str]], str]:
    def repl(m: re.Match[str]) -> str:
        if group == 0:
            return f"[REDACTED:{kind}]"
        s, e = m.span(group)
        base = m.start(0)
        whole = m.group(0)
        return whole[: s - base] + f"[REDACTED:{kind}]" + whole[e - base :]

    return repl


# Every pattern above contains one of these literals or shapes: one search rules a clean line out.
_PREFILTER_LITERALS = ("AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA", "AIza",
                       "github_pat_", "glpat-", "hooks.slack", "k_live_", "sk-", "eyJ", "://")
# (the shape, the literals one of which every match contains)
_PREFILTER_SHAPES = ((re.compile(r"gh[pousr]_"), ("gh",)), (re.compile(r"xox[abposr]-"), ("xox",)),
                     # (the letters re's IGNORECASE also reads as i, k and s, for url-secret's (?i))
                     (re.compile("[?&][A-Za-z_\u0130\u0131\u212a\u017f]+="), ("?", "&")))
# "secret" in any case, as the case-insensitive aws-secret pattern reads it: re's IGNORECASE also
# takes U+017F (long s) for an s.  Every other letter of it has only its two ASCII cases.  A line
# spelling it aws_sEcReT_access_key would otherwise pass the prefilter unredacted.
_ANY_CASE_SECRET = re.compile("[sS\u017f][eE][cC][rR][eE][tT]")
_SECRET_SPELLINGS = ("secret", "SECRET", "Secret")     # the usual ones: found by str's search
_PREFILTER = re.compile("|".join([lit.replace(".", r"\.") for lit in _PREFILTER_LITERALS]
                                 + [shape.pattern for shape, _lits in _PREFILTER_SHAPES]
                                 + [_ANY_CASE_SECRET.pattern]))


def may_hold_secret(text: str) -> bool:
    """_PREFILTER.search(text) is not None, about 3x faster on long texts (a JSON document, not a
    line): str's substring search per literal, a shape's regex only where its literal is."""
    for lit in _PREFILTER_LITERALS + _SECRET_SPELLINGS:
        if lit in text:
            return True
    for shape, lits in _PREFILTER_SHAPES:
        if any(lit in text for lit in lits) and shape.search(text) is not None:
            return True
    # casefold maps every spelling _ANY_CASE_SECRET matches to "secret" (and a few it does not,
    # e.g. "\u00dfecret" to "ssecret": hence the regex after it).
    return "secret" in text.casefold() and _ANY_CASE_SECRET.search(text) is not None


def redact_line(line: str) -> str:
    """Single-line patterns only (no PEM blocks); cheap when there is nothing to find."""
    if not _PREFILTER.search(line):
        return line
    # A pattern runs only on a line holding one of its literals: most of them start with \b,
    # which keeps re from skipping ahead to a literal, so each search would read the whole line.
    for kind, pattern, group, literals in _PATTERNS:
        where = line.casefold() if kind in _LOWER else line
        if any(lit in where for lit in literals) and pattern.search(line):
            line = pattern.sub(_sub_group(kind, group), line)
    return line


def private_key_lines(lines: list[str]) -> set[int]:
    """Indexes of lines that belong to a PEM private key block (BEGIN through END).

    An unterminated block runs to the end: half a key is still a secret.
    """
    inside: set[int] = set()
    i, n = 0, len(lines)
    while i < n:
        if "PRIVATE KEY" in lines[i] and _PEM_BEGIN.search(lines[i]):
            j = i
            while j < n:
                inside.add(j)
                if _PEM_END.search(lines[j]) and (j > i or _PEM_END.search(lines[i][_PEM_BEGIN.search(lines[i]).end():])):  # type: ignore[union-attr]  # searched on the same line above
                    break
                j += 1
            i = j + 1
        else:
            i += 1
    return inside


def redact_lines(lines: list[str]) -> list[str]:
    """Redact a list of lines: PEM blocks become one marker per line, the rest per line."""
    keys = private_key_lines(lines) if any("PRIVATE KEY" in s for s in lines) else set()
    return ["[REDACTED:private-key]" if i in keys else redact_line(s) for i, s in enumerate(lines)]


def redact(text: str) -> str:
    """Redact every known secret shape in `text` (same number of lines out as in)."""
    return "\n".join(redact_lines(text.split("\n")))
