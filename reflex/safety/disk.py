"""What a path names on disk, for the safety plane (stdlib only).

A name can hide its target: `notes.txt -> .env`, `keys -> ~/.ssh`, a `*` that bash expands
to `.env` once `dotglob` is set, a directory argument that makes `rg KEY src` a recursive
read. So the walker judges a target by what it resolves to, not only by how it is spelled:
it asks this module for the real path (symlinks resolved, relative to the *command's* cwd,
never the checking process's), whether a path is a directory, and what a glob expands to;
reflex.safety.paths then classifies the answer like any other path.

The daemon and the shim run on the same machine as the command, so they see the same disk
and reach the same decision. Paths under /proc and /dev are not resolved here: resolving
`/proc/self/cwd` would answer for the checking process, not for the command (the walker
maps `/proc/self/cwd/X` and `/proc/self/root/X` itself). Every lookup is bounded: a glob
expands to at most MAX_MATCHES names after at most MAX_LISTED directory entries; past that
the walker falls back to judging the pattern by name.
"""

from __future__ import annotations

import os
import stat

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

MAX_MATCHES = 512
MAX_LISTED = 20000

# Directory -> (its real path, (st_dev, st_ino) or None when it did not exist). A hit is used
# only while one stat() of the directory still gives the same identity, so a directory that
# changed (a component replaced by a symlink) is resolved again; the daemon saves the
# lstat() per path component of realpath on every check, the shim (one check) gains nothing
# and loses nothing.
_DIRS: dict[str, tuple[str, tuple[int, int] | None]] = {}
_DIRS_MAX = 512


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def real_dir(head: str) -> tuple[str, bool]:
    """-> (real path of the directory, whether it exists)."""
    hit = _DIRS.get(head)
    ident = _identity(head)
    if hit is not None and hit[1] == ident:
        return hit[0], ident is not None
    real = os.path.realpath(head)
    if len(_DIRS) >= _DIRS_MAX:
        _DIRS.clear()
    _DIRS[head] = (real, ident)
    return real, ident is not None


class Disk:
    """Lookups for one analysis; directory resolutions are cached for its duration."""

    __slots__ = ("_dirs",)

    def __init__(self) -> None:
        self._dirs: dict[str, tuple[str, bool]] = {}

    def real(self, path: str) -> str:
        """The path with every symlink resolved (`path` absolute; may not exist)."""
        if not path.startswith("/") or path.startswith(("/proc/", "/dev/")):
            return path
        if "/./" in path or "/../" in path or path.endswith(("/.", "/..")):
            # `..` (or `.`) must be resolved by the kernel's rules, after the symlinks before it.
            try:
                return os.path.realpath(path)
            except (OSError, ValueError):
                return path
        head, _, name = path.rpartition("/")
        try:
            hit = self._dirs.get(head)
            if hit is None:
                hit = self._dirs[head] = real_dir(head or "/")
            base, exists = hit
            full = base + name if base.endswith("/") else base + "/" + name
            if name in ("", ".", ".."):
                return os.path.realpath(full)
            if not exists:
                return full         # nothing below a missing directory, symlink or not
            if stat.S_ISLNK(os.lstat(full).st_mode):
                return os.path.realpath(full)
            return full
        except (OSError, ValueError):
            return path

    def isdir(self, path: str) -> bool | None:
        """True / False, or None when the path does not exist (or cannot be checked)."""
        try:
            return stat.S_ISDIR(os.stat(path).st_mode)
        except (OSError, ValueError):
            return None

    def expand(self, components: list[str | re.Pattern[str]], dotglob: bool) -> list[str] | None:
        """Paths a glob expands to, as bash would: `components` is the absolute pattern split
        on "/", each either a literal name or a compiled regex. None when over budget."""
        found = [""]
        listed = 0
        for comp in components:
            nxt: list[str] = []
            if isinstance(comp, str):
                for base in found:
                    p = base + "/" + comp
                    if os.path.lexists(p):
                        nxt.append(p)
            else:
                hidden_ok = dotglob or comp.pattern.startswith(r"\.")
                for base in found:
                    try:
                        with os.scandir(base or "/") as it:
                            for e in it:
                                listed += 1
                                if listed > MAX_LISTED:
                                    return None
                                if e.name[0] == "." and not hidden_ok:
                                    continue
                                if comp.match(e.name):
                                    nxt.append(base + "/" + e.name)
                                    if len(nxt) > MAX_MATCHES:
                                        return None
                    except (OSError, ValueError):
                        continue
            found = nxt
            if not found:
                return []
        return found
