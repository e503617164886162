"""Token counting: the one place ctx counts tokens.

Every budget in ctx is expressed in o200k_base tokens and checked by encoding
the exact text, never by a bytes/4 estimate: a digest that claims to fit its
budget must fit it.  The encoding is loaded once per process (≈0.2–0.7 s), on
first use, and cached; the daemon pays that once and stays warm.

Program output is counted with `encode_ordinary`: text such as
"<|endoftext|>" inside a test log is ordinary text to us, never a special
token (and tiktoken would otherwise raise on it).

The o200k_base ranks ship with the package (reflex/data/o200k_base.tiktoken, the file
tiktoken downloads, its sha256 pinned below), so counting works on an offline machine
with no TIKTOKEN_CACHE_DIR.  Only when that file is missing or altered does ctx ask
tiktoken for the encoding (its cache, TIKTOKEN_CACHE_DIR, or the network).  If neither
works every call raises TokenizerUnavailable; nothing falls back to estimating.
"""

from __future__ import annotations

import os
import threading
from reflex.errors import UserError

ENCODING_NAME = "o200k_base"
# The file tiktoken_ext.openai_public downloads for o200k_base, and the sha256 it checks it by.
BUNDLED_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "o200k_base.tiktoken")
BUNDLED_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# The rest of the encoding, as tiktoken_ext.openai_public.o200k_base defines it (tests/test_tokens.py
# compares it with tiktoken's own).
_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
_PAT_STR = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])

_lock = threading.Lock()
_encoding = None
_load_error: str | None = None
_source: str | None = None   # where the loaded encoding came from, for tokenizer_status


class TokenizerUnavailable(UserError, RuntimeError):
    """The o200k_base encoding could not be loaded; token counts are unknown."""


def bundled_ranks(path: str = BUNDLED_FILE, sha256: str = BUNDLED_SHA256) -> dict[bytes, int]:
    """The o200k_base ranks from the file shipped with ctx, after checking its hash.

    Parsed as tiktoken.load.load_tiktoken_bpe parses it ("<base64 token> <rank>" per line); that
    function itself is not called because it copies the file into a cache directory first, and
    raises when TIKTOKEN_CACHE_DIR is a read-only directory.  Raises OSError or ValueError."""
    import base64
    import hashlib

    with open(path, "rb") as f:
        data = f.read()
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        raise ValueError(f"{path} has sha256 {got}, not the pinned {sha256}")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _bundled_encoding():
    import tiktoken

    # CTX_TOKENIZER_FILE: another copy of the same file (the hash still has to match), e.g. for a
    # package whose data files were stripped; tests point it at a missing file.
    path = os.environ.get("CTX_TOKENIZER_FILE") or BUNDLED_FILE
    return tiktoken.Encoding(name=ENCODING_NAME, pat_str=_PAT_STR, mergeable_ranks=bundled_ranks(path),
                             special_tokens=_SPECIAL_TOKENS), path


def _load():
    global _encoding, _load_error, _source
    if _encoding is not None:
        return _encoding
    with _lock:
        if _encoding is not None:
            return _encoding
        if _load_error is not None:
            raise TokenizerUnavailable(_load_error)
        try:
            _encoding, path = _bundled_encoding()
            _source = f"{path}, sha256 verified"
            return _encoding
        except Exception as exc:  # a missing or altered file: tiktoken's own sources next
            bundled_error = f"{type(exc).__name__}: {str(exc)[:200]}"
        try:
            import tiktoken

            _encoding = tiktoken.get_encoding(ENCODING_NAME)
            cache = os.environ.get("TIKTOKEN_CACHE_DIR") or "tiktoken's default cache"
            _source = f"tiktoken ({cache}); the bundled file failed: {bundled_error}"
        except Exception as exc:  # tiktoken raises requests/OS/Value errors alike
            cache = os.environ.get("TIKTOKEN_CACHE_DIR") or "(TIKTOKEN_CACHE_DIR unset)"
            _load_error = (
                f"cannot load tiktoken encoding {ENCODING_NAME}: the bundled file failed "
                f"({bundled_error}), and so did tiktoken (cache: {cache}): "
                f"{type(exc).__name__}: {str(exc)[:200]}"
            )
            raise TokenizerUnavailable(_load_error) from None
        return _encoding


def encode(text: str) -> list[int]:
    """The o200k_base token ids of `text` (special-token text counted as ordinary)."""
    return _load().encode_ordinary(text)


def count(text: str) -> int:
    """Exact number of o200k_base tokens in `text`."""
    if not text:
        return 0
    return len(_load().encode_ordinary(text))


def truncate_to(text: str, budget: int) -> str:
    """The longest prefix of `text` (cut at a token boundary) with count() <= budget.

    Re-tokenizing a decoded prefix can differ from the prefix of the tokens
    (BPE merges across the cut), so the result is re-counted and shortened
    until it fits; a cut that would split a UTF-8 character drops that
    character rather than emitting a replacement char.
    """
    if budget <= 0 or not text:
        return ""
    enc = _load()
    ids = enc.encode_ordinary(text)
    if len(ids) <= budget:
        return text
    keep = budget
    while keep > 0:
        prefix = enc.decode_bytes(ids[:keep]).decode("utf-8", errors="ignore")
        if len(enc.encode_ordinary(prefix)) <= budget:
            return prefix
        keep -= 1
    return ""


def tokenizer_status() -> tuple[bool, str]:
    """(ok, detail) for `ctx doctor`: whether counting works, and how it was loaded."""
    try:
        enc = _load()
    except TokenizerUnavailable as exc:
        return False, str(exc)
    return True, f"{enc.name} loaded ({enc.n_vocab} tokens; from {_source})"


class StreamCounter:
    """Exact token count of a byte stream, fed in chunks as the command runs.

    Text is counted up to the last safe cut (see is_safe_cut), so the sum equals count()
    of the whole decoded stream (invalid UTF-8 decodes to U+FFFD,
    as bytes.decode(errors="replace") does).  Lets the daemon know a 5 MB output's
    raw token count when the command exits instead of tokenizing it afterwards.
    """

    def __init__(self) -> None:
        import codecs

        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        scanned = len(self._pending)
        self._pending += self._decoder.decode(chunk)
        cut = _last_safe_cut(self._pending, max(scanned - 1, 0))
        if cut > 0:
            self.total += count(self._pending[:cut])
            self._pending = self._pending[cut:]

    def snapshot(self) -> tuple:
        """The counter's state, for restore(): what it has counted, what it holds back, its decoder."""
        return (self.total, self._pending, self._decoder.getstate())

    def restore(self, state: tuple) -> None:
        self.total, self._pending, decoder_state = state
        self._decoder.setstate(decoder_state)

    def finish(self) -> int:
        self._pending += self._decoder.decode(b"", final=True)
        self.total += count(self._pending)
        self._pending = ""
        return self.total


def is_safe_cut(text: str, i: int) -> bool:
    r"""Whether counts of text[:i] and text[i:] add up to the count of text.

    True just after a newline followed by a non-whitespace character, unless that character
    is "/" and the newline itself follows punctuation: o200k's pre-tokenizer pieces only run
    past a newline as `\s*[\r\n]+` (more whitespace) or as the `[\r\n/]*` tail of a
    punctuation run (`.\n/` is one piece; `c\n/` is two).
    """
    if not (0 < i < len(text) and text[i - 1] == "\n") or text[i].isspace():
        return False
    return text[i] != "/" or (i >= 2 and text[i - 2].isalnum())


def safe_cut_after(text: str, near: int) -> int:
    """The first safe cut at or after `near`, or -1."""
    pos = max(near, 1) - 1
    while True:
        pos = text.find("\n", pos)
        if pos == -1:
            return -1
        if is_safe_cut(text, pos + 1):
            return pos + 1
        pos += 1


def _last_safe_cut(text: str, lo: int = 0) -> int:
    """The last safe cut at or after `lo` (text before lo was scanned already), or -1."""
    pos = len(text)
    while True:
        pos = text.rfind("\n", lo, pos)
        if pos == -1:
            return -1
        if is_safe_cut(text, pos + 1):
            return pos + 1
