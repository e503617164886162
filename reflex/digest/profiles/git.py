"""git: the human output of status, diff/show, log, commit (with its hooks' output), push, pull,
fetch, checkout/switch, merge, add, and of chains of them (`git add -A && git commit -m … && git push`).

A chain prints several blocks in one output, so the output is read block by block, each found by
its shape, wherever it starts:

- status: `On branch X` / `HEAD detached at X` / `Changes to be committed:` …: the branch line
  (with ahead/behind) as a note, every path as an item: group "staged" (`path (new file)`),
  "modified" / "deleted" / "typechange" (not staged), "untracked", "ignored", "conflicted"; the
  short form (`git status -s[b]`: `## branch...upstream [ahead 1]`, `XY path`) likewise;
- diff / show / log -p: one item per file (`path +12 -3 (2 hunks: -10,7 +10,9 def f; …)`), its
  diff as the item's body; hunks are read by their header's line counts, so a content line that
  looks like anything (a `diff --git` inside a patch, a `commit` line) stays in its hunk.
  Insertions, deletions and files are counted from the hunks;
- log: one item per commit (group "commits": `abc1234567 subject`), default, `--oneline` and
  `--graph` forms; `--stat` lines as file items;
- commit: `[branch abc1234] subject` (group "commits"), its ` N files changed, …` counts and
  ` create mode …` / ` delete mode …` / ` rename …` lines as items;
- pre-commit (the framework): `name.....Passed|Failed|Skipped` lines: passed and skipped hooks as
  one item each ("hooks": `passed (3): a, b, c`), a failed one as a BuildError naming its hook id
  (label HOOK FAILED), its output parsed by the profile of the tool it ran (ruff's diagnostics,
  pytest's failures) when one recognises it;
- push / fetch / pull: `To <remote>` / `From <remote>` and their ref lines (group "pushed" /
  "fetched"; a rejected ref is an error item), `Updating a..b`, `Fast-forward`, merge results,
  `CONFLICT (…): …` lines (error items, group "conflicts");
- checkout / switch / reset: result lines (`Switched to branch 'x'`, `HEAD is now at …`) as notes,
  carried changes (`M\\tpath`) as items;
- `fatal:` / `error:` lines as BuildErrors, verbatim, with the tab-indented paths an error lists
  (files a checkout would overwrite) as error items; `warning:` lines as warning items; `hint:`
  runs as one item with its lines as body.

Lines in none of these shapes (a plain `.git/hooks/pre-commit` script's output) are read by the
runner profiles: pytest's or eslint's output before `[main abc1234] …` is a test run or a lint
(its failures, diagnostics and counts are the digest's).  What no profile recognises is kept as
an item per run of lines ("output") with the run as its body: nothing is dropped unseen.
Output with no git shape and no runner's is handed to the generic profile.

Not for machine formats (the lead's rewrite decision must pass them through untouched):
`--porcelain`, `-z`, `--numstat`, `--name-only`, `--format`/`--pretty=format:`, `rev-parse`,
`ls-files`, `cat-file`, `for-each-ref`, `show-ref`, and any output a pipe stage parses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from reflex.digest.facts import BuildError, Counts, Diagnostic, Facts, Failure, Item, Span
from reflex.digest.profiles import (cargotest, eslint, exunit, flake8, gotest, jest, mypy, pylint, pyright, pytest, rspec,
                                    ruff, runner, shellcheck, tsc, vitest)
from reflex.digest.profiles.base import Profile, one_line
from reflex.digest.profiles.generic import handover
from reflex.digest.text import Output

NAME = "git"
VERSION = 1

# A line longer than this never matches a shape (a 13k-token minified line is content, not git's
# own words), so no pattern runs over it.
SHAPE_CHARS = 2000
HUNKS_NAMED = 3  # hunk headers named on a file's census line; the rest are counted

# The runners a hook commonly runs, most specific first (the registry's sniff order, restricted to
# them; importing the registry from here would close an import cycle).
HOOK_PROFILES: tuple[Profile, ...] = (vitest.PROFILE, jest.PROFILE, tsc.PROFILE, eslint.PROFILE, pytest.PROFILE,
                                      gotest.PROFILE, cargotest.PROFILE, ruff.PROFILE, mypy.PROFILE, exunit.PROFILE,
                                      rspec.PROFILE, pylint.PROFILE, flake8.PROFILE, shellcheck.PROFILE,
                                      pyright.PROFILE)



def runner_facts(raw: bytes, exit_code: int | None, out: Output | None = None) -> tuple[Profile, Facts] | None:
    """The runner profile that parses output embedded in another tool's (a pre-commit hook's, a CI
    step's), with its Facts, or None.  Detection is loose (tsc claims ruff's full format by its
    `Found 2 errors.`): of the profiles that recognise the text, the one that found the most
    (failures, findings; then counts) wins, the earlier one on a tie."""
    sub = out if out is not None else Output.of(raw)
    best: tuple[int, int] = (-1, -1)
    chosen: tuple[Profile, Facts] | None = None
    for profile in HOOK_PROFILES:
        if not profile.detect(sub):
            continue
        facts = profile.extract(raw, exit_code, "")
        if not facts.recognized:
            continue
        score = (len(facts.failures) + len(facts.diagnostics) + len(facts.build_errors), len(facts.counts.reported()))
        if score > best:
            best, chosen = score, (profile, facts)
    return chosen


# -- shapes -------------------------------------------------------------------------------------------

_BRANCH = re.compile(r"^(?:On branch (?P<branch>\S+)|HEAD detached (?P<how>at|from) (?P<at>\S+)|"
                     r"(?P<rebase>(?:interactive )?rebase in progress; onto \S+)|No commits yet|Initial commit)$")
_TRACKING = re.compile(r"^Your branch (?:is (?P<rel>ahead of|behind) '(?P<up>[^']+)' by (?P<n>\d+) commits?"
                       r"|is up to date with '(?P<up2>[^']+)'|and '(?P<up3>[^']+)' have diverged,"
                       r"|is based on '(?P<up4>[^']+)', but the upstream is gone)")
_DIVERGED = re.compile(r"^and have (?P<a>\d+) and (?P<b>\d+) different commits each")
_SECTION = {"Changes to be committed:": "staged", "Changes not staged for commit:": "unstaged",
            "Untracked files:": "untracked", "Ignored files:": "ignored", "Unmerged paths:": "conflicted"}
_ENTRY = re.compile(r"^\t(?:(?P<state>new file|modified|deleted|renamed|copied|typechange|both modified|both added"
                    r"|both deleted|added by us|added by them|deleted by us|deleted by them):\s+)?(?P<path>\S.*)$")
_STATUS_VERDICT = re.compile(r"^(?:nothing to commit|nothing added to commit|no changes added to commit"
                             r"|You have unmerged paths\.|All conflicts fixed|You are currently \w+"
                             r"|Your stash currently has \d+ entr)")
_ADVICE = re.compile(r"^\s+\((?:use|fix conflicts|all conflicts fixed|commit or discard|create/copy files)\b.*\)$")

_SHORT_HEAD = re.compile(r"^## (?P<branch>.+?)(?:\.\.\.(?P<up>\S+))?(?: \[(?P<ab>[^\]]+)\])?$")
_SHORT_ENTRY = re.compile(r"^(?P<x>[ MADRCTU?!])(?P<y>[ MADRCTU?!]) (?P<path>\S.*)$")
_SHORT_STATE = {"M": "modified", "A": "new file", "D": "deleted", "R": "renamed", "C": "copied", "T": "typechange"}
_UNMERGED = {"DD": "both deleted", "AU": "added by us", "UD": "deleted by them", "UA": "added by them",
             "DU": "deleted by us", "AA": "both added", "UU": "both modified"}

_DIFF = re.compile(r"^diff --(?:git (?P<a>.+)|cc (?P<cc>.+)|combined (?P<comb>.+))$")
_HUNK = re.compile(r"^@@@? -(?P<a>\d+)(?:,(?P<b>\d+))? (?:-\d+(?:,\d+)? )?\+(?P<c>\d+)(?:,(?P<d>\d+))? @@@?(?P<ctx>.*)$")
_FILE_HEAD = re.compile(r"^(?:index |old mode |new mode |deleted file mode |new file mode |similarity index "
                        r"|dissimilarity index |rename from |rename to |copy from |copy to |--- |\+\+\+ "
                        r"|Binary files |GIT binary patch|mode )")
_BINARY = re.compile(r"^(?:Binary files .* differ|GIT binary patch)$")

_COMMIT_HEAD = re.compile(r"^(?P<graph>[*|\\/ ]*)commit (?P<hash>[0-9a-f]{40})(?: \((?P<refs>[^)]*)\))?$")
_COMMIT_FIELD = re.compile(r"^(?:Merge|Author|AuthorDate|Commit|CommitDate|Date|Reflog|Reflog message):\s")
_ONELINE = re.compile(r"^(?P<graph>[*|\\/ _.-]*?)(?P<hash>[0-9a-f]{7,40})(?: \((?P<refs>[^)]*)\))? (?P<subject>.*)$")
_GRAPH_ONLY = re.compile(r"^[*|\\/ _.-]+$")

_COMMIT_RESULT = re.compile(r"^\[(?P<where>[^\]]+?) (?P<hash>[0-9a-f]{7,40})\] (?P<subject>.*)$")
_SHORTSTAT = re.compile(r"^ ?(?P<files>\d+) files? changed(?:, (?P<ins>\d+) insertions?\(\+\))?"
                        r"(?:, (?P<del>\d+) deletions?\(-\))?$")
_MODE = re.compile(r"^ (?P<what>create mode|delete mode|mode change|rename|copy) (?P<rest>\S.*)$")
_STAT = re.compile(r"^ (?P<path>\S.*?) +\| +(?P<n>\d+|Bin\b.*?)(?: (?P<bar>[+-]+))?$")
_COMMIT_ABOUT = re.compile(r"^ (?:Author|Date|Committer): ")

_HOOK = re.compile(r"^(?P<name>\S.*?)\.{2,}(?:\((?P<why>[^)]*)\))?(?P<result>Passed|Failed|Skipped)$")
_HOOK_FIELD = re.compile(r"^- (?:hook id: (?P<id>\S+)|exit code: (?P<code>-?\d+)|files were modified by this hook"
                         r"|duration: .*)$")

_REMOTE = re.compile(r"^(?P<dir>To|From) (?P<url>\S.*)$")
_REF = re.compile(r"^ (?P<flag>[ +\-*!=t]) (?P<summary>\[[^\]]+\]|\S+)\s+(?P<src>\S+)\s+->\s+(?P<dst>\S+)"
                  r"(?: \((?P<reason>[^)]*)\))?$")
_REF_DELETED = re.compile(r"^ - \[deleted\]\s+(?P<dst>\S+)$")
_UPDATING = re.compile(r"^(?:Updating [0-9a-f]{7,40}\.\.[0-9a-f]{7,40}|Fast-forward|Already up to date\.?"
                       r"|Merge made by the '[\w-]+' strategy\.|Automatic merge failed; .*|Successfully rebased .*"
                       r"|Everything up-to-date|Current branch \S+ is up to date\.|Auto-merging .*"
                       r"|Removing .*|branch '[^']+' set up to track .*)$")
_CONFLICT = re.compile(r"^CONFLICT \((?P<kind>[^)]+)\): (?P<msg>.*)$")
_CONFLICT_PATH = re.compile(r"(?:Merge conflict in |deleted in \S+ and modified in \S+\.\s+Version \S+ of )(?P<path>\S.*?)"
                            r"(?: left in tree\.)?$")

_RESULT = re.compile(r"^(?:Switched to (?:a new )?branch '[^']+'|Switched to and reset branch '[^']+'|Already on '[^']+'"
                     r"|HEAD is now at .*|Previous HEAD position was .*|Reset branch '[^']+'"
                     r"|Updated \d+ paths? from .*|Deleted branch .*|Unstaged changes after reset:"
                     r"|Note: switching to '[^']+'\.|Saved working directory and index state .*"
                     r"|Dropped refs/stash.*|Initialized empty Git repository in .*|Reinitialized existing Git .*"
                     r"|Cloning into '[^']+'\.\.\.|done\.)$")
_CARRIED = re.compile(r"^(?P<state>[MADRCTU])\d*\t(?P<path>\S.*)$")
_FATAL = re.compile(r"^(?P<kind>fatal|error): (?P<msg>.*)$")
_ERROR_FOLLOW = re.compile(r"^(?:\t\S.*|Please (?:commit|move or remove) .*|Aborting|\s+\S.*)$")
_WARNING = re.compile(r"^warning: (?P<msg>.*)$")
_HINT = re.compile(r"^hint:(?: .*)?$")
_REMOTE_SAYS = re.compile(r"^remote:(?: .*)?$")

_GROUP_OF_UNSTAGED = {"modified": "modified", "deleted": "deleted", "typechange": "typechange"}

# Git's porcelain (`git status` and friends) quotes unusual paths C-style (core.quotePath): shown as printed.


Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class _Context:
    """What the command line says about the output: which subcommands printed it."""

    subcommands: frozenset[str]
    graph: bool


@dataclass
class _Acc:
    """What the blocks found so far."""

    out: Output
    items: list[Item] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    build_errors: list[BuildError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    runs: list[Counts] = field(default_factory=list)  # counts of runner outputs (a hook's pytest)
    summaries: list[Span] = field(default_factory=list)
    git_blocks: int = 0
    hooks: dict[str, list[str]] = field(default_factory=dict)  # result -> hook names, in order
    hook_spans: dict[str, list[Span]] = field(default_factory=dict)
    multi_commit: bool = False  # several commits' files: a file's line names its commit

    def span(self, i: int, j: int) -> Span:
        return self.out.span(i, j)

    def add(self, group: str, noun: str, text: str, i: int, j: int, *, severity: Severity = "info",
            body: bool = False) -> None:
        self.items.append(Item(group=group, noun=noun, text=text, severity=severity, span=self.span(i, j),
                               body=body and j - i > 1))

    def count(self, key: str, n: int) -> None:
        self.counts[key] = self.counts.get(key, 0) + n


Block = Callable[[_Acc, int, _Context], "int | None"]


def _line(acc: _Acc, i: int) -> str | None:
    lines = acc.out.lines
    if i >= len(lines) or len(lines[i]) > SHAPE_CHARS:
        return None
    return lines[i]


# -- status -------------------------------------------------------------------------------------------


def _status(acc: _Acc, i: int, ctx: _Context) -> int | None:
    s = acc.out.lines[i]
    head = _BRANCH.match(s)
    if head is None and s not in _SECTION:
        return None
    lines = acc.out.lines
    n = len(lines)
    note = ""
    j = i
    if head is not None:
        if head["branch"]:
            note = f"On branch {head['branch']}"
        elif head["at"]:
            note = f"HEAD detached {head['how']} {head['at']}"
        else:
            note = s
        j = i + 1
    section: str | None = None
    tracking = ""
    while j < n:
        t = _line(acc, j)
        if t is None:
            break
        if not t.strip() or _ADVICE.match(t):
            j += 1
            continue
        m = _TRACKING.match(t)
        if m and section is None:
            if m["rel"]:
                tracking = f"{'ahead' if m['rel'] == 'ahead of' else 'behind'} {m['n']} of {m['up']}"
            elif m["up2"]:
                tracking = f"up to date with {m['up2']}"
            elif m["up3"]:
                d = _DIVERGED.match(lines[j + 1]) if j + 1 < n else None
                tracking = f"diverged from {m['up3']}" + (f": ahead {d['a']}, behind {d['b']}" if d else "")
                if d:
                    j += 1
            else:
                tracking = f"upstream {m['up4']} is gone"
            j += 1
            continue
        if t in _SECTION:
            section = _SECTION[t]
            j += 1
            continue
        e = _ENTRY.match(t)
        if e and section is not None:
            _status_entry(acc, section, e["state"], e["path"], j)
            j += 1
            continue
        if _STATUS_VERDICT.match(t):
            acc.notes.append(t)
            j += 1
            continue
        if section is None and head is not None and (t.startswith("Your branch") or t.startswith("  (")):
            j += 1  # git's other tracking advice (`(use "git pull" to merge …)`)
            continue
        break
    while j > i + 1 and not lines[j - 1].strip():
        j -= 1
    if note:
        acc.notes.append(note + (f" ({tracking})" if tracking else ""))
    acc.git_blocks += 1
    return max(j, i + 1)


def _status_entry(acc: _Acc, section: str, state: str | None, path: str, j: int) -> None:
    if section == "staged":
        group, text = "staged", f"{path} ({state or 'modified'})"
    elif section == "unstaged":
        group, text = _GROUP_OF_UNSTAGED.get(state or "modified", "modified"), path
    elif section == "conflicted":
        group, text = "conflicted", f"{path} ({state or 'unmerged'})"
    else:
        group, text = section, path
    acc.add(group, "paths", text, j, j + 1, severity="error" if group == "conflicted" else "info")
    acc.count(group, 1)


def _short_status(acc: _Acc, i: int, ctx: _Context) -> int | None:
    """`git status -s` / `-sb`: only where the command was a status (`XY path` is too plain a shape)."""
    if "status" not in ctx.subcommands:
        return None
    lines = acc.out.lines
    j = i
    m = _SHORT_HEAD.match(lines[i])
    if m:
        note = f"On branch {m['branch']}"
        extra = [x for x in (f"upstream {m['up']}" if m["up"] else "", m["ab"] or "") if x]
        acc.notes.append(note + (f" ({', '.join(extra)})" if extra else ""))
        j += 1
    start = j
    while j < len(lines):
        t = _line(acc, j)
        e = _SHORT_ENTRY.match(t) if t is not None else None
        if e is None:
            break
        x, y, path = e["x"], e["y"], e["path"]
        if x + y == "??":
            _status_entry(acc, "untracked", None, path, j)
        elif x + y == "!!":
            _status_entry(acc, "ignored", None, path, j)
        elif x + y in _UNMERGED or "U" in x + y:
            _status_entry(acc, "conflicted", _UNMERGED.get(x + y, "unmerged"), path, j)
        else:
            if x in _SHORT_STATE:
                _status_entry(acc, "staged", _SHORT_STATE[x], path, j)
            if y in _SHORT_STATE:
                _status_entry(acc, "unstaged", _SHORT_STATE[y], path, j)
        j += 1
    if j == i or (j == start and not m):
        return None
    acc.git_blocks += 1
    return j


# -- diff, show, log -p ---------------------------------------------------------------------------------


def _diff_path(header: str) -> str:
    """The path of `diff --git a/X b/X` when both sides agree (a path with spaces is ambiguous there;
    `+++ b/…`, `rename to` and `Binary files` lines, read after, override it)."""
    if header.startswith('"'):
        return header
    half = (len(header) - 1) // 2
    a, b = header[:half], header[half + 1:]
    if a[2:] == b[2:] and a[:2] in ("a/", "i/", "c/", "o/", "w/") and b[:2] in ("b/", "i/", "w/", "o/"):
        return b[2:]
    parts = header.split(" b/", 1)
    return parts[1] if len(parts) == 2 else header


def _diff(acc: _Acc, i: int, ctx: _Context) -> int | None:
    m = _DIFF.match(acc.out.lines[i])
    if m is None:
        return None
    lines = acc.out.lines
    n = len(lines)
    path = _diff_path(m["a"]) if m["a"] else (m["cc"] or m["comb"] or "")
    old_path: str | None = None
    kind = ""
    similarity = ""
    binary = False
    j = i + 1
    while j < n and _FILE_HEAD.match(lines[j]) and not _DIFF.match(lines[j]):
        t = lines[j]
        if t.startswith("+++ ") and t[4:] != "/dev/null":
            path = t[6:] if t[4:6] == "b/" else t[4:]
        elif t.startswith("--- ") and t[4:] != "/dev/null" and not path:
            path = t[6:] if t[4:6] == "a/" else t[4:]
        elif t.startswith("rename from ") or t.startswith("copy from "):
            old_path = t.split(" from ", 1)[1]
        elif t.startswith("rename to ") or t.startswith("copy to "):
            path = t.split(" to ", 1)[1]
            kind = ("renamed" if t.startswith("rename") else "copied") + (f" {similarity}" if similarity else "")
        elif t.startswith("new file mode"):
            kind = "new file"
        elif t.startswith("deleted file mode"):
            kind = "deleted"
        elif t.startswith("similarity index "):
            similarity = t.split(" ", 2)[2]
        elif _BINARY.match(t):
            binary = True
            if t == "GIT binary patch":
                j += 1
                while j < n and lines[j].strip():  # base85 literal/delta blocks, blank-separated
                    j += 1
                    if j < n and not lines[j].strip() and j + 1 < n and re.match(r"^(?:literal|delta) \d+$", lines[j + 1]):
                        j += 1
                continue
        j += 1
    added = deleted = 0
    hunks: list[str] = []
    while j < n:
        h = _HUNK.match(lines[j]) if len(lines[j]) <= SHAPE_CHARS else None
        if h is None:
            break
        old_left = int(h["b"]) if h["b"] is not None else 1
        new_left = int(h["d"]) if h["d"] is not None else 1
        hunks.append(_hunk_name(h))
        j += 1
        while j < n and (old_left > 0 or new_left > 0):
            t = lines[j]
            c = t[:1]
            if c == "+":
                added += 1
                new_left -= 1
            elif c == "-":
                deleted += 1
                old_left -= 1
            elif c == "\\":
                pass  # "\ No newline at end of file"
            else:
                old_left -= 1
                new_left -= 1
            j += 1
        while j < n and lines[j].startswith("\\ "):
            j += 1
    shown = f"{old_path} -> {path}" if old_path and old_path != path else path
    parts = []
    if binary:
        parts.append("binary")
    if kind:
        parts.append(kind)
    if hunks:
        named = "; ".join(hunks[:HUNKS_NAMED]) + ("; …" if len(hunks) > HUNKS_NAMED else "")
        parts.append(f"{len(hunks)} hunk{'s' if len(hunks) != 1 else ''}: {named}")
    stats = "" if binary else f" +{added} -{deleted}"
    text = shown + stats + (f" ({', '.join(parts)})" if parts else "")
    if acc.multi_commit and acc.items and any(it.group == "commits" for it in acc.items):
        last = next(it for it in reversed(acc.items) if it.group == "commits")
        text = f"{last.text.split(' ', 1)[0]} {text}"
    acc.add("files", "files", text, i, j, body=True)
    acc.count("files changed", 1)
    acc.count("insertions", added)
    acc.count("deletions", deleted)
    acc.git_blocks += 1
    return j


def _hunk_name(h: re.Match[str]) -> str:
    where = f"-{h['a']}" + (f",{h['b']}" if h["b"] is not None else "") + f" +{h['c']}" + (
        f",{h['d']}" if h["d"] is not None else "")
    context = one_line(h["ctx"], 40)
    return f"{where} {context}" if context else where


# -- log -------------------------------------------------------------------------------------------------


def _log(acc: _Acc, i: int, ctx: _Context) -> int | None:
    m = _COMMIT_HEAD.match(acc.out.lines[i])
    if m is None:
        return None
    lines = acc.out.lines
    n = len(lines)
    prefix = len(m["graph"])
    j = i + 1

    def body(t: str) -> str:  # the line without its --graph columns
        return t[prefix:] if prefix and not t[:prefix].strip("*|\\/ ") else t

    while j < n and _COMMIT_FIELD.match(body(lines[j])):
        j += 1
    subject = ""
    while j < n:
        t = _line(acc, j)
        if t is None:
            j += 1
            continue
        b = body(t)
        if b.startswith("    "):
            subject = subject or b.strip()
            j += 1
        elif not b.strip() or _GRAPH_ONLY.match(t):
            if j + 1 < n and body(lines[j + 1]).startswith("    ") and not _COMMIT_HEAD.match(lines[j + 1]):
                j += 1
                continue
            break
        else:
            break
    end = j
    while end > i + 1 and not lines[end - 1].strip():
        end -= 1
    acc.add("commits", "commits", f"{m['hash'][:10]} {subject}".rstrip(), i, end)
    acc.count("commits", 1)
    acc.multi_commit = acc.multi_commit or acc.counts.get("commits", 0) > 1
    acc.git_blocks += 1
    return end


def _oneline(acc: _Acc, i: int, ctx: _Context) -> int | None:
    """`git log --oneline [--graph]` (and `git reflog`, `git cherry -v`, `git stash list` forms close
    to it): only where the command was a log, a hash-led line being too plain a shape elsewhere."""
    if not ctx.subcommands & {"log", "reflog", "shortlog", "whatchanged"}:
        return None
    lines = acc.out.lines
    j = i
    found = False
    while j < len(lines):
        t = _line(acc, j)
        if t is None:
            break
        m = _ONELINE.match(t)
        if m:
            acc.add("commits", "commits", f"{m['hash']} {m['subject']}".rstrip(), j, j + 1)
            acc.count("commits", 1)
            found = True
        elif not (_GRAPH_ONLY.match(t) and ctx.graph):
            break
        j += 1
    if not found:
        return None
    acc.git_blocks += 1
    return j


# -- commit, stat lines ------------------------------------------------------------------------------------


def _commit(acc: _Acc, i: int, ctx: _Context) -> int | None:
    m = _COMMIT_RESULT.match(acc.out.lines[i])
    if m is None:
        return None
    acc.add("commits", "commits", acc.out.lines[i], i, i + 1)
    acc.count("commits", 1)
    j = i + 1
    while j < len(acc.out.lines) and _COMMIT_ABOUT.match(acc.out.lines[j]):
        j += 1
    acc.git_blocks += 1
    return j


def _stats(acc: _Acc, i: int, ctx: _Context) -> int | None:
    """The lines after a commit, a merge, a pull or `--stat`: ` path | 12 ++--`, ` N files changed…`,
    ` create mode 100644 path`."""
    lines = acc.out.lines
    j = i
    while j < len(lines):
        t = _line(acc, j)
        if t is None:
            break
        st = _STAT.match(t)
        if st:
            bar = f" {st['bar']}" if st["bar"] else ""
            acc.add("files", "files", f"{st['path']} | {st['n']}{bar}", j, j + 1)
        elif sm := _SHORTSTAT.match(t):
            acc.count("files changed", int(sm["files"]))
            acc.count("insertions", int(sm["ins"] or 0))
            acc.count("deletions", int(sm["del"] or 0))
        elif mm := _MODE.match(t):
            group = {"create mode": "created", "delete mode": "deleted", "mode change": "mode changed",
                     "rename": "renamed", "copy": "copied"}[mm["what"]]
            rest = mm["rest"]
            if group in ("created", "deleted"):
                rest = rest.split(" ", 1)[1] if " " in rest else rest
            acc.add(group, "paths", rest, j, j + 1)
        else:
            break
        j += 1
    if j == i:
        return None
    acc.git_blocks += 1
    return j


# -- pre-commit (the framework) -----------------------------------------------------------------------------


def _hooks(acc: _Acc, i: int, ctx: _Context) -> int | None:
    m = _HOOK.match(acc.out.lines[i])
    if m is None:
        return None
    lines = acc.out.lines
    n = len(lines)
    name, result = m["name"].strip(), m["result"]
    j = i + 1
    hook_id, code, modified = None, None, False
    while j < n and (f := _HOOK_FIELD.match(lines[j])):
        if f["id"]:
            hook_id = f["id"]
        elif f["code"]:
            code = int(f["code"])
        elif "modified" in lines[j]:
            modified = True
        j += 1
    end = j
    while end < n and not (_line(acc, end) is not None and _HOOK.match(lines[end])) and not _ends_hook_output(acc, end):
        end += 1
    while end > j and not lines[end - 1].strip():
        end -= 1
    if result == "Failed":
        why = [f"exit code {code}"] if code is not None else []
        if modified:
            why.append("files were modified by this hook")
        acc.build_errors.append(BuildError(where=hook_id or name, label="HOOK FAILED",
                                           message=f"{name}: " + ("; ".join(why) or "failed"), span=acc.span(i, end)))
        acc.count("hooks failed", 1)
        if end > j:
            _foreign(acc, j, end)
    else:
        label = f"{result.lower()}" + (f" ({m['why']})" if m["why"] else "")
        acc.hooks.setdefault(label, []).append(name)
        acc.hook_spans.setdefault(label, []).append(acc.span(i, end))
        acc.count(f"hooks {result.lower()}", 1)
        if end > j:  # a passing hook that printed something (verbose): its output is read too
            _foreign(acc, j, end)
    acc.git_blocks += 1
    return end


def _ends_hook_output(acc: _Acc, i: int) -> bool:
    """A hook's output runs until the next hook line or git's own result (the commit line)."""
    t = _line(acc, i)
    return t is not None and bool(_COMMIT_RESULT.match(t) or _REMOTE.match(t))


# -- push, fetch, pull, merge -----------------------------------------------------------------------------


def _remote(acc: _Acc, i: int, ctx: _Context) -> int | None:
    m = _REMOTE.match(acc.out.lines[i])
    if m is None:
        return None
    lines = acc.out.lines
    group = "pushed" if m["dir"] == "To" else "fetched"
    j = i + 1
    while j < len(lines):
        t = _line(acc, j)
        r = _REF.match(t) if t is not None else None
        d = _REF_DELETED.match(t) if t is not None and r is None else None
        if r is None and d is None:
            break
        if r is not None:
            reason = f" ({r['reason']})" if r["reason"] else ""
            rejected = r["flag"] == "!"
            acc.add(group, "refs", f"{r['src']} -> {r['dst']} {r['summary']}{reason}", j, j + 1,
                    severity="error" if rejected else "info")
            acc.count("refs rejected" if rejected else f"refs {group}", 1)
        elif d is not None:
            acc.add(group, "refs", f"{d['dst']} [deleted]", j, j + 1)
            acc.count(f"refs {group}", 1)
        j += 1
    acc.notes.append(f"{m['dir'].lower()} {m['url']}")
    acc.git_blocks += 1
    return j


def _results(acc: _Acc, i: int, ctx: _Context) -> int | None:
    """One-line results of checkout, switch, reset, merge, pull, stash: notes, verbatim."""
    s = acc.out.lines[i]
    c = _CONFLICT.match(s)
    if c:
        p = _CONFLICT_PATH.search(c["msg"])
        acc.add("conflicts", "paths", f"{p['path'] if p else c['msg']} ({c['kind']})", i, i + 1, severity="error")
        acc.count("conflicts", 1)
        acc.git_blocks += 1
        return i + 1
    if _UPDATING.match(s) or _RESULT.match(s):
        if not s.startswith("Auto-merging "):  # each merged path: the conflicts and stats name what matters
            acc.notes.append(s)
        acc.git_blocks += 1
        return i + 1
    m = _TRACKING.match(s)
    if m:  # checkout/switch: `Your branch is up to date with 'origin/main'.`
        acc.notes.append(s)
        acc.git_blocks += 1
        return i + 1
    lines = acc.out.lines
    j = i
    group = "files" if ctx.subcommands & {"diff", "show", "log"} else "carried changes"  # --name-status
    while j < len(lines) and (t := _line(acc, j)) is not None and (cm := _CARRIED.match(t)):
        acc.add(group, "paths", f"{cm['path']} ({_SHORT_STATE.get(cm['state'], cm['state'])})", j, j + 1)
        j += 1
    if j > i:
        acc.git_blocks += 1
        return j
    return None


# -- errors, warnings, hints ---------------------------------------------------------------------------------


def _errors(acc: _Acc, i: int, ctx: _Context) -> int | None:
    s = acc.out.lines[i]
    lines = acc.out.lines
    n = len(lines)
    m = _FATAL.match(s)
    if m:
        j = i + 1
        while j < n and (t := _line(acc, j)) is not None and _ERROR_FOLLOW.match(t) and not _FATAL.match(t):
            if t.startswith("\t"):
                acc.add("error paths", "paths", t.strip(), j, j + 1, severity="error")
            j += 1
        acc.build_errors.append(BuildError(where=None, label=f"GIT {m['kind'].upper()}", message=s, span=acc.span(i, j)))
        acc.git_blocks += 1
        return j
    w = _WARNING.match(s)
    if w:
        acc.add("warnings", "warnings", s, i, i + 1, severity="warning")
        acc.count("warnings", 1)
        acc.git_blocks += 1
        return i + 1
    for pattern, group in ((_HINT, "hints"), (_REMOTE_SAYS, "remote")):
        if pattern.match(s):
            j = i + 1
            while j < n and (t := _line(acc, j)) is not None and pattern.match(t):
                j += 1
            first = next((lines[k] for k in range(i, j) if lines[k].split(":", 1)[1].strip()), s)
            acc.add(group, "lines", first, i, j, body=True)
            acc.git_blocks += 1
            return j
    return None


# -- output in no git shape: a hook script's runner, or anything ------------------------------------------------


def _foreign(acc: _Acc, a: int, b: int) -> None:
    """Lines a..b in no git shape: the first runner profile that recognises them parses them (spans
    shifted into the whole output); otherwise one item ("output") with the lines as its body."""
    lines = acc.out.lines
    while a < b and not lines[a].strip():
        a += 1
    while b > a and not lines[b - 1].strip():
        b -= 1
    if a >= b:
        return
    start, end = acc.span(a, b)
    part = acc.out.raw[start:end]
    sub = Output.of(part)
    picked = runner_facts(part, None, sub)
    if picked is not None:
        _merge(acc, picked[1], start)
        return
    first = next(s for s in lines[a:b] if s.strip())
    acc.add("output", "lines", first, a, b, body=True)


def _shift(span: Span | None, by: int) -> Span | None:
    return None if span is None else (span[0] + by, span[1] + by)


def _merge(acc: _Acc, facts: Facts, by: int) -> None:
    for f in facts.failures:
        acc.failures.append(f.model_copy(update={"span": _shift(f.span, by)}))
    for d in facts.diagnostics:
        acc.diagnostics.append(d.model_copy(update={"span": _shift(d.span, by)}))
    for e in facts.build_errors:
        acc.build_errors.append(e.model_copy(update={"span": _shift(e.span, by)}))
    for it in facts.items:
        acc.items.append(it.model_copy(update={"span": _shift(it.span, by)}))
    acc.notes.extend(f"{facts.profile}: {n}" for n in facts.notes)
    acc.runs.append(facts.counts)
    if facts.summary:
        acc.summaries.append((facts.summary[0] + by, facts.summary[1] + by))


def _sum_counts(runs: list[Counts], other: dict[str, int]) -> Counts:
    fixed: dict[str, int] = {}
    extra: dict[str, int] = {}
    for c in runs:
        for k, v in c.model_dump(exclude={"other"}).items():
            if v is not None:
                fixed[k] = fixed.get(k, 0) + v
        for k, v in c.other.items():
            extra[k] = extra.get(k, 0) + v
    for k, v in other.items():
        extra[k] = extra.get(k, 0) + v
    return Counts(**fixed, other=extra)


# -- the whole output ------------------------------------------------------------------------------------------

_BLOCKS: tuple[Block, ...] = (_hooks, _commit, _status, _short_status, _diff, _log, _oneline, _remote, _stats,
                              _errors, _results)

_GLOBAL_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"})


def subcommands(command: str) -> frozenset[str]:
    """The git subcommands a (possibly chained) command line runs: `git -C d commit …` -> commit."""
    words = command.replace(";", " ; ").replace("&&", " && ").replace("||", " || ").replace("|", " | ").split()
    subs: set[str] = set()
    k = 0
    while k < len(words):
        if words[k].rsplit("/", 1)[-1] == "git":
            k += 1
            while k < len(words) and words[k].startswith("-"):
                k += 2 if words[k] in _GLOBAL_VALUED else 1
            if k < len(words):
                subs.add(words[k])
        k += 1
    return frozenset(subs)


def parse(out: Output, command: str = "") -> runner.Parsed | None:
    words = command.split()
    ctx = _Context(subcommands=subcommands(command), graph="--graph" in words)
    acc = _Acc(out)
    lines = out.lines
    n = len(lines)
    i = 0
    loose: int | None = None  # first line of the current run in no shape
    while i < n:
        end: int | None = None
        if len(lines[i]) <= SHAPE_CHARS and lines[i].strip():
            for block in _BLOCKS:
                end = block(acc, i, ctx)
                if end is not None:
                    break
        if end is None:
            if loose is None:
                loose = i
            i += 1
            continue
        if loose is not None:
            _foreign(acc, loose, i)
            loose = None
        i = end
    if loose is not None:
        _foreign(acc, loose, n)
    if not acc.git_blocks and not acc.runs:
        return None
    hook_items = [Item(group="hooks", noun="hook results", text=f"{label} ({len(names)}): {', '.join(names)}",
                       span=(min(s[0] for s in acc.hook_spans[label]), max(s[1] for s in acc.hook_spans[label])))
                  for label, names in acc.hooks.items()]
    summary = acc.summaries[0] if len(acc.summaries) == 1 and not acc.git_blocks else None
    return runner.Parsed(counts=_sum_counts(acc.runs, acc.counts), failures=acc.failures, diagnostics=acc.diagnostics,
                         build_errors=acc.build_errors, notes=acc.notes, items=hook_items + acc.items, summary=summary)


@dataclass(frozen=True)
class GitProfile:
    """runner.bind's frame, with the command passed to the parser: a few shapes (`XY path`, a
    hash-led line) are git's only where the command says which subcommand printed them."""

    name: str = NAME
    version: int = VERSION

    def detect(self, out: Output) -> bool:
        return _DETECT(out)

    def extract(self, raw: bytes, exit_code: int | None, command: str) -> Facts:
        out = Output.of(raw)
        parsed = parse(out, command)
        if parsed is None:
            return handover(raw, exit_code, command, self.name)
        return Facts(profile=self.name, profile_version=self.version, format=parsed.format, recognized=True,
                     exit_code=exit_code, counts=parsed.counts, failures=parsed.failures,
                     diagnostics=parsed.diagnostics, build_errors=parsed.build_errors, summary=parsed.summary,
                     notes=parsed.notes, items=parsed.items, total_lines=len(out.lines))


_DETECT = runner.ends(runner.DETECT_LINES, _COMMIT_RESULT, _DIFF, _COMMIT_HEAD, re.compile(r"^On branch \S+$"),
                      re.compile(r"^To \S+$"))
PROFILE = GitProfile()
