"""The index behind a worktree hash: every tracked path and its digest.

The hash of a worktree is an order-independent sum (mod 2**256) of one
digest per tracked path, so a change to one path costs one subtraction and
one addition, and an index built incrementally from events equals one built
by a fresh scan exactly when they hold the same entries.

A file's digest covers its path, kind, exec bit and *content* (BLAKE2b of its
bytes): two moments are "unchanged" when the project holds the same bytes,
whatever touched it in between.  So `git add`, `git commit` (the index and
HEAD are under .git/, never hashed), `git stash && git stash pop`, a
formatter that rewrites a file byte for byte, a `touch`, all leave the hash
as it was; an edit whose mtime is put back does not.  Bytes are read only when
a file's stat data (size, mtime_ns, ctime_ns, inode) moved: a cache keyed by
path remembers the last content digest per stat, and survives full rescans
(the tracker hands it to each new index).  The initial scan reads every
tracked file once (bench_worktree: 20,000 files stay well under the 5 s
target); files over CONTENT_MAX bytes are hashed by stat data instead (a
rewrite of one counts as a change).

Harness records do not count by content: a JSON/JSONL file under a `logs/` or
`.claude/` directory whose head is Claude Code hook payloads or transcript
records (the `logs/chat.json`, `logs/pre_tool_use.json` copies that common
hook setups rewrite on every tool call, tracked by git in many projects)
counts by its path alone.  Otherwise every tool call would look like an edit.

A directory's digest covers its path only: its mtime moves whenever an
ignored child (a `__pycache__`, a log) appears, which is exactly the noise the
hash must not see.  Symlinks are hashed by their target text, never followed.

Ignored paths are never in the index: anything matched by the project's
ignore files, VCS directories, the names in `always_ignored` (caches that
commands write as a side effect, so that re-running a command does not itself
look like an edit) and the excluded directories (ctx's own home when it lives
inside the root).  Ignored directories are remembered in `ignored_dirs` so an
event below one is dropped without a stat.

Not thread-safe: one worker thread owns an index (see reflex.worktree.root).
stdlib-only.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod

from reflex.worktree import ignore as ign
from reflex.errors import CtxError

# Annotation-only imports: this module is on the hot path (reflex.STDLIB_ONLY), where importing
# typing or collections.abc would cost milliseconds per hook; mypy reads the block as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

MOD = 1 << 256

# Written by test runners, type checkers and linters as a side effect of the
# very commands whose re-runs the hash is meant to tell apart.
DEFAULT_ALWAYS_IGNORED = frozenset({
    "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
    ".tox", ".nox", ".coverage",
})

# rel -> (the stat data the digest was taken at, the digest): a rescan re-reads only what moved.
ContentCache = dict[str, tuple[tuple[int, int, int, int, int], int]]


class TreeTooLarge(CtxError):
    """The root holds more entries than we are willing to index (a home directory, /)."""


CONTENT_MAX = 64 << 20
_SNIFF = 64 << 10
_RECORD_DIRS = frozenset({"logs", ".claude"})
# Keys only Claude Code's hook payloads and transcript records carry together.
_RECORD_MARKS = ((b'"hook_event_name"', b'"session_id"'), (b'"sessionId"', b'"parentUuid"'),
                 (b'"transcript_path"', b'"session_id"'))


def _digest(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=32).digest(), "big")


def stat_digest(rel: str, st: os.stat_result) -> int:
    """The digest of a file by its stat data (files too large to read, unreadable ones)."""
    mode = st.st_mode
    kind = b"l" if stat_mod.S_ISLNK(mode) else (b"f" if stat_mod.S_ISREG(mode) else b"o")
    exe = b"x" if mode & 0o111 else b"-"
    return _digest(b"%s%s\0%s\0%d\0%d\0%d" % (kind, exe, os.fsencode(rel), st.st_size,
                                              st.st_mtime_ns, st.st_ctime_ns))


def is_harness_record(rel: str, head: bytes) -> bool:
    """Is this file one of the harness's own records of the session (see the module docstring)?"""
    if not rel.endswith((".json", ".jsonl")) or not _RECORD_DIRS.intersection(rel.split("/")[:-1]):
        return False
    return any(a in head and b in head for a, b in _RECORD_MARKS)



def content_digest(path: str, rel: str, st: os.stat_result) -> int | None:
    """The digest of a file by what it holds (None: read it by stat instead)."""
    mode = st.st_mode
    if stat_mod.S_ISLNK(mode):
        try:
            return _digest(b"l-\0%s\0%s" % (os.fsencode(rel), os.fsencode(os.readlink(path))))
        except OSError:
            return None
    if not stat_mod.S_ISREG(mode) or st.st_size > CONTENT_MAX:
        return None
    h = hashlib.blake2b(b"f%s\0%s\0" % (b"x" if mode & 0o111 else b"-", os.fsencode(rel)), digest_size=32)
    # os.open/os.read: a third cheaper than file objects on the initial scan's thousands of
    # small files; one read covers most of them.
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        data = os.read(fd, max(min(st.st_size, 1 << 20), _SNIFF) + 1)
        if is_harness_record(rel, data[:_SNIFF]):
            return _digest(b"h\0%s" % os.fsencode(rel))
        while data:
            h.update(data)
            data = os.read(fd, 1 << 20)
    except OSError:
        return None
    finally:
        os.close(fd)
    return int.from_bytes(h.digest(), "big")


def file_digest(rel: str, st: os.stat_result, path: str | None = None, cache: ContentCache | None = None) -> int:
    """A file's digest: by content when `path` is given (cached per stat in `cache`), else by stat."""
    if path is None:
        return stat_digest(rel, st)
    key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)
    if cache is not None:
        hit = cache.get(rel)
        if hit is not None and hit[0] == key:
            return hit[1]
    d = content_digest(path, rel, st)
    if d is None:
        d = stat_digest(rel, st)
    if cache is not None:
        cache[rel] = (key, d)
    return d


def dir_digest(rel: str) -> int:
    return _digest(b"d\0" + os.fsencode(rel))


def format_hash(total: int, files: int, dirs: int) -> str:
    body = total.to_bytes(32, "big") + b"%d/%d" % (files, dirs)
    return "wt:" + hashlib.blake2b(body, digest_size=16).hexdigest()


EMPTY_HASH = format_hash(0, 0, 0)


def _parent(rel: str) -> str:
    i = rel.rfind("/")
    return rel[:i] if i >= 0 else ""


def _under(rel: str, base: str) -> bool:
    return base == "" or rel == base or rel.startswith(base + "/")


class TreeIndex:
    """Tracked entries of one root.  Paths are root-relative, "/"-separated."""

    def __init__(self, root: str, repo: ign.Repo, excluded: Iterable[str] = (),
                 always_ignored: Iterable[str] = DEFAULT_ALWAYS_IGNORED, log: Callable[[str], None] | None = None,
                 max_entries: int = 300_000, content_cache: ContentCache | None = None) -> None:
        self.root = root
        self.content: ContentCache = content_cache if content_cache is not None else {}
        self.max_entries = max_entries
        self.repo = repo
        self.excluded = frozenset(excluded)
        self.always_ignored = frozenset(always_ignored)
        self._log: Callable[[str], None] = log or (lambda msg: None)
        self.entries: dict[str, int] = {}                # rel -> digest (files, links and dirs; never the root)
        self.kids: dict[str, set[str]] = {"": set()}     # tracked dir rel -> names of its tracked children
        self.rules: dict[str, ign.RuleSet] = {}          # dir rel -> RuleSet of its .gitignore
        self.ignored_dirs: set[str] = set()
        self.total = 0
        self.files = 0
        self.unreadable = 0
        self._warned: set[tuple[str, str]] = set()

    # -- the hash -----------------------------------------------------------

    @property
    def dirs(self) -> int:
        return len(self.kids) - 1

    def hash(self) -> str:
        return format_hash(self.total, self.files, self.dirs)

    # -- ignore decisions ---------------------------------------------------

    def _match_path(self, rel: str) -> str:
        p = self.repo.prefix
        return p + "/" + rel if p else rel

    def stack_for(self, dir_rel: str) -> tuple[ign.RuleSet, ...]:
        """Rule sets that judge the children of tracked directory `dir_rel`."""
        stack = list(self.repo.base_stack)
        rs = self.rules.get("")
        if rs:
            stack.append(rs)
        if dir_rel:
            parts = dir_rel.split("/")
            for i in range(1, len(parts) + 1):
                rs = self.rules.get("/".join(parts[:i]))
                if rs:
                    stack.append(rs)
        return tuple(stack)

    def ignored(self, rel: str, name: str, is_dir: bool, stack: tuple[ign.RuleSet, ...]) -> bool:
        if name in ign.ALWAYS_IGNORED_NAMES or name in self.always_ignored or rel in self.excluded:
            return True
        return ign.is_ignored(stack, self._match_path(rel), name, is_dir)

    def _load_rules(self, dir_rel: str) -> ign.RuleSet | None:
        base = self._match_path(dir_rel) if dir_rel else self.repo.prefix
        rs = ign.read_ruleset(os.path.join(self.root, dir_rel, ".gitignore"), base)
        if rs:
            self.rules[dir_rel] = rs
        else:
            self.rules.pop(dir_rel, None)
        return rs

    # -- mutations ----------------------------------------------------------

    def _put(self, rel: str, digest: int, is_file: bool) -> None:
        old = self.entries.get(rel)
        if old is None:
            if len(self.entries) >= self.max_entries:
                raise TreeTooLarge("%s has more than %d entries" % (self.root, self.max_entries))
            self.kids[_parent(rel)].add(rel.rpartition("/")[2])
            if is_file:
                self.files += 1
        else:
            self.total -= old
        self.entries[rel] = digest
        self.total = (self.total + digest) % MOD

    def remove(self, rel: str) -> None:
        """Drop `rel` and, when it is a tracked directory, everything below it."""
        was_dir = rel in self.kids
        if was_dir:
            stack = [rel]
            while stack:
                d = stack.pop()
                for name in self.kids.pop(d, ()):
                    child = d + "/" + name if d else name
                    digest = self.entries.pop(child, None)
                    if digest is not None:
                        self.total = (self.total - digest) % MOD
                    if child in self.kids:
                        stack.append(child)
                    elif digest is not None:
                        self.files -= 1
                self.rules.pop(d, None)
            self.ignored_dirs = {x for x in self.ignored_dirs if not _under(x, rel)}
        old = self.entries.pop(rel, None)
        if old is not None:
            self.total = (self.total - old) % MOD
            if not was_dir:
                self.files -= 1
            parent_kids = self.kids.get(_parent(rel))
            if parent_kids is not None:
                parent_kids.discard(rel.rpartition("/")[2])
        self.ignored_dirs.discard(rel)

    def _warn_once(self, key: tuple[str, str], msg: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self._log(msg)

    def scan_dir(self, dir_rel: str, parent_stack: tuple[ign.RuleSet, ...]) -> None:
        """Add everything below tracked directory `dir_rel` (already in `kids`)."""
        todo = [(dir_rel, parent_stack)]
        root = self.root
        while todo:
            d, stack = todo.pop()
            path = os.path.join(root, d) if d else root
            try:
                with os.scandir(path) as it:
                    listing = list(it)
            except OSError as exc:
                self.unreadable += 1
                self._warn_once(("scandir", d), "worktree: cannot list %s (%s); its contents do not count"
                                % (path, exc.strerror or exc))
                continue
            if any(e.name == ".gitignore" for e in listing):
                rs = self._load_rules(d)
                if rs:
                    stack = stack + (rs,)
            else:
                self.rules.pop(d, None)
            prefix = d + "/" if d else ""
            if len(self.entries) + len(listing) > self.max_entries:
                raise TreeTooLarge("%s has more than %d entries" % (root, self.max_entries))
            for e in listing:
                name = e.name
                rel = prefix + name
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if self.ignored(rel, name, is_dir, stack):
                    if is_dir:
                        self.ignored_dirs.add(rel)
                    continue
                if is_dir:
                    self.kids[rel] = set()
                    self._put(rel, dir_digest(rel), False)
                    todo.append((rel, stack))
                else:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue  # vanished between listing and stat; its event will follow
                    self._put(rel, file_digest(rel, st, e.path, self.content), True)

    def scan_all(self) -> None:
        self.scan_dir("", self.repo.base_stack)
        # The cache outlives this index (full rescans reuse it): forget files that are gone.
        for rel in [r for r in self.content if r not in self.entries]:
            del self.content[rel]

    def rescan_subtree(self, dir_rel: str) -> None:
        """Re-judge and re-read everything below `dir_rel` (after its rules changed)."""
        if dir_rel and dir_rel not in self.kids:
            self.refresh(dir_rel, subtree=True)
            return
        for name in list(self.kids.get(dir_rel, ())):
            self.remove(dir_rel + "/" + name if dir_rel else name)
        self.ignored_dirs = {x for x in self.ignored_dirs if not _under(x, dir_rel) or x == dir_rel}
        self.scan_dir(dir_rel, self.stack_for(_parent(dir_rel)) if dir_rel else self.repo.base_stack)

    def apply(self, rel: str, subtree: bool = False) -> None:
        """Bring `rel` (and, for a new or replaced directory, its contents) in
        line with the filesystem.  Idempotent: it re-stats, it never trusts the
        event that named the path."""
        parts = rel.split("/")
        prefix = ""
        for part in parts[:-1]:
            cand = prefix + "/" + part if prefix else part
            if cand in self.ignored_dirs or part in ign.ALWAYS_IGNORED_NAMES:
                return
            if cand not in self.kids:
                # The first unknown ancestor: judge and read it as a whole.
                self.refresh(cand, subtree=True)
                return
            prefix = cand
        self.refresh(rel, subtree)
        if parts[-1] == ".gitignore":
            parent = _parent(rel)
            if parent in self.kids:
                self.rescan_subtree(parent)

    def refresh(self, rel: str, subtree: bool) -> None:
        """`rel`'s parent is tracked; stat `rel` and update its entry."""
        parent = _parent(rel)
        name = rel.rpartition("/")[2]
        try:
            st = os.lstat(os.path.join(self.root, rel))
        except OSError:
            self.remove(rel)
            return
        is_dir = stat_mod.S_ISDIR(st.st_mode)
        if self.ignored(rel, name, is_dir, self.stack_for(parent)):
            self.remove(rel)
            if is_dir:
                self.ignored_dirs.add(rel)
            return
        if is_dir:
            if rel in self.kids and not subtree:
                return
            self.remove(rel)
            self.kids[rel] = set()
            self._put(rel, dir_digest(rel), False)
            self.scan_dir(rel, self.stack_for(parent))
        else:
            if rel in self.kids:
                self.remove(rel)
            self._put(rel, file_digest(rel, st, os.path.join(self.root, rel), self.content), True)
