"""The index behind a worktree hash: every tracked path and its digest.

The hash of a worktree is an order-independent sum (mod 2**256) of one
digest per tracked path, so a change to one path costs one subtraction and
one addition, and an index built incrementally from events equals one built
by a fresh scan exactly when they hold the same entries.

A file's digest covers (path, kind, exec bit, size, mtime_ns, ctime_ns), not
its bytes: stat-ing 20,000 files takes a fraction of a second, reading them
does not.  The tradeoffs, deliberate and tested:

- a content-identical rewrite or a `touch` counts as a change (the agent did
  something; a false "changed" only costs a missed starvation warning);
- restoring the old mtime after an edit (`touch -d`, `os.utime`) still counts
  as a change, because ctime cannot be set from user space; this is why ctime
  is in the digest at all (the brief asked for size and mtime);
- two same-size writes within one filesystem timestamp tick look alike, but a
  hash is only ever compared across commands, which are many ticks apart.

A directory's digest covers its path only: its mtime moves whenever an
ignored child (a `__pycache__`, a log) appears, which is exactly the noise the
hash must not see.  Symlinks are hashed as links and never followed.

Ignored paths are never in the index: anything matched by the project's
ignore files, VCS directories, the names in `always_ignored` (caches that
commands write as a side effect, so that re-running a command does not itself
look like an edit) and the excluded directories (ctx's own home when it lives
inside the root).  Ignored directories are remembered in `ignored_dirs` so an
event below one is dropped without a stat.

Not thread-safe: one worker thread owns an index (see reflex.worktree_root).
stdlib-only.
"""

import hashlib
import os
import stat as stat_mod

from reflex import worktree_ignore as ign

MOD = 1 << 256

# Written by test runners, type checkers and linters as a side effect of the
# very commands whose re-runs the hash is meant to tell apart.
DEFAULT_ALWAYS_IGNORED = frozenset({
    "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
    ".tox", ".nox", ".coverage",
})

class TreeTooLarge(Exception):
    """The root holds more entries than we are willing to index (a home directory, /)."""


def _digest(data):
    return int.from_bytes(hashlib.blake2b(data, digest_size=32).digest(), "big")


def file_digest(rel, st):
    mode = st.st_mode
    kind = b"l" if stat_mod.S_ISLNK(mode) else (b"f" if stat_mod.S_ISREG(mode) else b"o")
    exe = b"x" if mode & 0o111 else b"-"
    return _digest(b"%s%s\0%s\0%d\0%d\0%d" % (kind, exe, os.fsencode(rel), st.st_size,
                                              st.st_mtime_ns, st.st_ctime_ns))


def dir_digest(rel):
    return _digest(b"d\0" + os.fsencode(rel))


def format_hash(total, files, dirs):
    body = total.to_bytes(32, "big") + b"%d/%d" % (files, dirs)
    return "wt:" + hashlib.blake2b(body, digest_size=16).hexdigest()


EMPTY_HASH = format_hash(0, 0, 0)


def _parent(rel):
    i = rel.rfind("/")
    return rel[:i] if i >= 0 else ""


def _under(rel, base):
    return base == "" or rel == base or rel.startswith(base + "/")


class TreeIndex:
    """Tracked entries of one root.  Paths are root-relative, "/"-separated."""

    def __init__(self, root, repo, excluded=(), always_ignored=DEFAULT_ALWAYS_IGNORED, log=None,
                 max_entries=300_000):
        self.root = root
        self.max_entries = max_entries
        self.repo = repo
        self.excluded = frozenset(excluded)
        self.always_ignored = frozenset(always_ignored)
        self._log = log or (lambda msg: None)
        self.entries = {}        # rel -> digest (files, links and dirs; never the root)
        self.kids = {"": set()}  # tracked dir rel -> names of its tracked children
        self.rules = {}          # dir rel -> RuleSet of its .gitignore
        self.ignored_dirs = set()
        self.total = 0
        self.files = 0
        self.unreadable = 0
        self._warned = set()

    # -- the hash -----------------------------------------------------------

    @property
    def dirs(self):
        return len(self.kids) - 1

    def hash(self):
        return format_hash(self.total, self.files, self.dirs)

    # -- ignore decisions ---------------------------------------------------

    def _match_path(self, rel):
        p = self.repo.prefix
        return p + "/" + rel if p else rel

    def stack_for(self, dir_rel):
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

    def ignored(self, rel, name, is_dir, stack):
        if name in ign.ALWAYS_IGNORED_NAMES or name in self.always_ignored or rel in self.excluded:
            return True
        return ign.is_ignored(stack, self._match_path(rel), name, is_dir)

    def _load_rules(self, dir_rel):
        base = self._match_path(dir_rel) if dir_rel else self.repo.prefix
        rs = ign.read_ruleset(os.path.join(self.root, dir_rel, ".gitignore"), base)
        if rs:
            self.rules[dir_rel] = rs
        else:
            self.rules.pop(dir_rel, None)
        return rs

    # -- mutations ----------------------------------------------------------

    def _put(self, rel, digest, is_file):
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

    def remove(self, rel):
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

    def _warn_once(self, key, msg):
        if key not in self._warned:
            self._warned.add(key)
            self._log(msg)

    def scan_dir(self, dir_rel, parent_stack):
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
                    self._put(rel, file_digest(rel, st), True)

    def scan_all(self):
        self.scan_dir("", self.repo.base_stack)

    def rescan_subtree(self, dir_rel):
        """Re-judge and re-read everything below `dir_rel` (after its rules changed)."""
        if dir_rel and dir_rel not in self.kids:
            self.refresh(dir_rel, subtree=True)
            return
        for name in list(self.kids.get(dir_rel, ())):
            self.remove(dir_rel + "/" + name if dir_rel else name)
        self.ignored_dirs = {x for x in self.ignored_dirs if not _under(x, dir_rel) or x == dir_rel}
        self.scan_dir(dir_rel, self.stack_for(_parent(dir_rel)) if dir_rel else self.repo.base_stack)

    def apply(self, rel, subtree=False):
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

    def refresh(self, rel, subtree):
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
            self._put(rel, file_digest(rel, st), True)
