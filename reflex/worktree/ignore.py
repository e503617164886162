"""Which paths of a worktree do not count: a small gitignore matcher.

The worktree hash must move when the agent changes the project and must stay
put when a command only leaves its own side effects behind (caches, build
output, logs).  The project already says which is which in its ignore files,
so we read them with git's semantics instead of inventing a second list:

- blank lines and `#` comments are skipped; `\\#`, `\\!` and `\\ ` escape;
  unescaped trailing spaces are dropped;
- `!pat` re-includes; the last matching rule wins; a deeper `.gitignore`
  beats a shallower one, which beats `.git/info/exclude`, which beats the
  global excludes file;
- `pat/` matches directories only;
- a pattern with a slash at its start or middle is anchored to the directory
  of its ignore file; one without matches a name at any depth below it;
- `*` and `?` and `[...]` never match `/`; `**/` is "any leading
  directories", `/**` "everything inside", `/**/` "zero or more directories";
  any other `**` is a plain `*`.

A path inside an ignored directory cannot be re-included (git's rule too): the
scanner never descends into an ignored directory, so it never asks.

We match in-process instead of asking `git check-ignore`: the incremental path
needs a verdict per filesystem event in microseconds, the initial scan needs
one per file, and the root need not be a git repository at all.  The cost is
that `core.excludesFile` is read once per root, and that ignore files above
the root (between it and the repository top) are read once, not watched.

Pure apart from `read_ruleset`/`find_repo`, which read files.
stdlib-only.
"""

from __future__ import annotations

import os
import re
import subprocess

# Annotation-only imports: this module is on the hot path (reflex.STDLIB_ONLY), where importing
# typing or collections.abc would cost milliseconds per hook; mypy reads the block as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

ALWAYS_IGNORED_NAMES = frozenset({".git", ".hg", ".svn"})


class Rule:
    """One compiled ignore pattern."""

    __slots__ = ("basename", "dir_only", "negate", "pattern", "regex")

    def __init__(self, pattern: str, regex: re.Pattern[str], negate: bool, dir_only: bool,
                 basename: bool) -> None:
        self.pattern = pattern
        self.regex = regex
        self.negate = negate
        self.dir_only = dir_only
        self.basename = basename

    def __repr__(self) -> str:
        return "Rule(%r)" % self.pattern


class RuleSet:
    """The rules of one ignore file, relative to `base` (a directory path in the
    match space, "" for its origin; see `is_ignored`)."""

    __slots__ = ("base", "rules", "source")

    def __init__(self, base: str, rules: Iterable[Rule], source: str = "") -> None:
        self.base = base
        self.rules = tuple(rules)
        self.source = source

    def __repr__(self) -> str:
        return "RuleSet(%r, %d rules from %r)" % (self.base, len(self.rules), self.source)


def _strip_trailing_spaces(line: str) -> str:
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        if end >= 2 and line[end - 2] == "\\":
            # "\ " keeps the space; the backslash goes with the escape pass.
            break
        end -= 1
    return line[:end]


def _translate(pat: str) -> str:
    """Translate a wildmatch pattern (slashes meaningful) to a regex body."""
    out = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            stars = j - i
            at_start = i == 0 or pat[i - 1] == "/"
            at_end = j == n or pat[j] == "/"
            if stars >= 2 and at_start and at_end:
                if j == n:
                    # "x/**" (or a lone "**"): everything below.
                    out.append(".*")
                    i = j
                else:
                    # "**/" : zero or more whole directories.
                    out.append("(?:[^/]*/)*")
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pat[j] in "!^":
                j += 1
            if j < n and pat[j] == "]":
                j += 1
            while j < n and pat[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
                continue
            body = pat[i + 1:j]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            body = body.replace("\\", "\\\\")
            if body.startswith("]"):
                body = "\\]" + body[1:]
            out.append("(?!/)[%s%s]" % ("^" if negate else "", body.replace("[", "\\[")))
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pat[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def compile_rule(line: str) -> Rule | None:
    """One line of an ignore file -> Rule, or None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    if not line or line.startswith("#"):
        return None
    line = _strip_trailing_spaces(line)
    negate = False
    if line.startswith("!"):
        negate = True
        line = line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    if not line:
        return None
    dir_only = False
    if line.endswith("/") and not line.endswith("\\/"):
        dir_only = True
        line = line.rstrip("/")
        if not line:
            return None
    anchored = "/" in line
    line = line.removeprefix("/")
    try:
        regex = re.compile("(?s:%s)\\Z" % _translate(line))
    except re.error:
        return None  # git ignores a pattern it cannot parse; so do we
    return Rule(line, regex, negate, dir_only, not anchored)


def parse_rules(text: str, base: str = "", source: str = "") -> RuleSet:
    rules = []
    for line in text.splitlines():
        rule = compile_rule(line)
        if rule is not None:
            rules.append(rule)
    return RuleSet(base, rules, source)


def read_ruleset(path: str, base: str = "") -> RuleSet | None:
    """The rules in the ignore file at `path`, or None when it is absent/unreadable/empty."""
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return None
    rs = parse_rules(data.decode("utf-8", "surrogateescape"), base, path)
    return rs if rs.rules else None


def is_ignored(stack: Sequence[RuleSet], path: str, name: str, is_dir: bool) -> bool:
    """Does the rule `stack` (lowest precedence first) ignore `path`?

    `path` is in the match space (relative to the origin every `RuleSet.base`
    is relative to) and lies below each base; `name` is its last component.
    Only the path itself is judged: the caller has already judged its parents.
    """
    for rs in reversed(stack):
        base = rs.base
        sub = path[len(base) + 1:] if base else path
        for rule in reversed(rs.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(name if rule.basename else sub):
                return not rule.negate
    return False


class Repo:
    """Where the root sits in its repository: the base rule stack and the prefix
    that turns a root-relative path into a match-space (repo-relative) path."""

    __slots__ = ("base_stack", "is_repo", "prefix", "top")

    def __init__(self, top: str, prefix: str, base_stack: Iterable[RuleSet], is_repo: bool) -> None:
        self.top = top
        self.prefix = prefix
        self.base_stack = tuple(base_stack)
        self.is_repo = is_repo


def _git_dir(top: str) -> str | None:
    dotgit = os.path.join(top, ".git")
    if os.path.isdir(dotgit):
        return dotgit
    try:
        with open(dotgit) as f:
            first = f.readline().strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    gitdir = os.path.join(top, first[len("gitdir:"):].strip())
    try:
        with open(os.path.join(gitdir, "commondir")) as f:
            return os.path.normpath(os.path.join(gitdir, f.read().strip()))
    except OSError:
        return gitdir


def _global_excludes(top: str, environ: Mapping[str, str]) -> str:
    try:
        out = subprocess.run(["git", "config", "--path", "--get", "core.excludesFile"], cwd=top,
                             capture_output=True, text=True, timeout=3, env=environ, check=False)
        value = out.stdout.strip()
        if value:
            return os.path.expanduser(value)
    except (OSError, subprocess.SubprocessError):
        pass
    xdg = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(xdg, "git", "ignore")


def find_repo(root: str, environ: Mapping[str, str] | None = None) -> Repo:
    """Locate the repository that contains `root` and load the rules that apply
    from outside the root: global excludes, info/exclude, and the .gitignore
    files of the directories between the repository top and the root.

    Outside a repository the match space is the root itself and only the
    root's own (and nested) .gitignore files apply.
    """
    env = dict(os.environ if environ is None else environ)
    top = root
    while True:
        if os.path.lexists(os.path.join(top, ".git")):
            break
        parent = os.path.dirname(top)
        if parent == top:
            return Repo(root, "", (), False)
        top = parent
    stack: list[RuleSet] = []
    gitdir = _git_dir(top)
    excludes = _global_excludes(top, env)
    rs = read_ruleset(excludes, "") if excludes else None
    if rs:
        stack.append(rs)
    if gitdir:
        rs = read_ruleset(os.path.join(gitdir, "info", "exclude"), "")
        if rs:
            stack.append(rs)
    prefix = os.path.relpath(root, top) if root != top else ""
    if prefix:
        parts = prefix.split(os.sep)
        # Ancestors' files: top's own first (lowest precedence), the root's own
        # .gitignore is read by the scanner like any nested one.
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            rs = read_ruleset(os.path.join(top, *parts[:depth], ".gitignore"), base)
            if rs:
                stack.append(rs)
        prefix = "/".join(parts)
    return Repo(top, prefix, stack, True)
