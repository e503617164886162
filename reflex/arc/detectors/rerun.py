"""What the starvation detector calls "the same core", and which re-issues it never judges.

reflex.signature gives every command a canonical core (wrappers, known display flags and
trailing slicers removed).  Starvation asks a narrower question than the signature does: did
the agent ask *the same producer* for output again, with nothing changed that the producer
reads?  `rerun_view(sig)` answers with a key (equal keys: the same producer) and a view (how
the agent looked at it this time).  The rules, each in docs/starvation.md with a real
example:

* a finished file is one producer, whoever reads it: `cat build.log | tail -20`,
  `tail -20 build.log` and `grep Error build.log` all read `build.log` (key `read PATH`);
  the window or the pattern is the view;
* flags that change how a runner runs, not what it runs, are dropped from the key: the
  vitest/jest watch switches (`npm test -- --run`, `--watch=false`, `--watchAll=false`),
  colour and reporter flags, `vitest` == `vitest run` (an agent's shell is no TTY: vitest
  runs once either way);
* git's display flags are part of the view, not the key: `git diff A..B --stat` and
  `git diff A..B --name-only` show the same diff; `git log -5` is `git log | head -5`;
* a pipe into a formatter or a stdin-only filter the signature does not know
  (`| python3 -m json.tool`, `| python3 -c '...sys.stdin...'` that only prints) is view;
  a consumer that could act on what it reads (`| sh`, `| xargs`, a script that writes or
  spawns) never is, and keeps the command its own key.

`live_reason(sig)` says why a command's output reflects state that changes by itself (CI and
PR status, processes, containers, the network, a remote shell, a local server): re-issuing
it is polling.  `mutation(sig)` says what a command changes (git operations that rewrite the
worktree, installs, file operations, services, requests that modify): re-issuing it is a
retry, and running it is a change for whatever is re-run after it.  `git add`, `commit`,
`push`, `fetch` and `tag` leave the worktree's content as it was and are neither.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

from reflex.arc.events import abs_path

# -- same core -----------------------------------------------------------------------------

# Flags after an npm/pnpm/yarn script, or on vitest/jest themselves, that only change how the
# runner runs (watch or not, colours, reporters), never which tests run.
_NOOP_RUNNER_FLAGS = frozenset({"--run", "--watch=false", "--watchAll=false", "--no-watch", "--no-watchman",
                                "--color", "--colors", "--no-color", "--no-colors", "--passWithNoTests",
                                "--passwithnotests"})
_VIEW_RUNNER_FLAGS = ("--reporter", "--reporters", "--verbose", "--silent", "--json")
_RUNNER_FAMILIES = frozenset({"npm-script", "vitest", "jest"})

# git subcommands whose display flags change the view of one fixed answer.
_GIT_VIEWED = frozenset({"diff", "log", "show", "status", "shortlog", "reflog", "whatchanged"})
_GIT_DISPLAY = re.compile(r"^(--stat(=.*)?|--shortstat|--numstat|--dirstat(=.*)?|--name-only|--name-status|"
                          r"--summary|--compact-summary|--oneline|--pretty(=.*)?|--format=.*|--abbrev-commit|"
                          r"--no-abbrev-commit|--graph|--decorate(=.*)?|--no-decorate|-p|--patch|--no-patch|"
                          r"-U\d+|--unified=\d+|--word-diff(=.*)?|--color-words(=.*)?|--date=.*|--relative-date)$")
# `git status` answers one question however it is printed (`-b` means --branch here; for diff
# it changes the comparison, so it is not in the list above).
_GIT_STATUS_DISPLAY = re.compile(r"^(-s|--short|-b|--branch|-sb|-bs|--porcelain(=.*)?|--long|--show-stash|"
                                 r"--ahead-behind|--no-ahead-behind)$")
_GIT_COUNT = re.compile(r"^(-(\d+)|--max-count=(\d+)|-n(\d+))$")

# Programs that, at the end of a pipe, only format or filter what they read on stdin.
_PY = re.compile(r"^python(3(\.\d+)?)?$")
_PY_FORMATTER = re.compile(r"^-m\s+json\.tool\b")
# A python -c consumer counts as a view only if it reads stdin and can do nothing but print.
_PY_ACTS = re.compile(r"\bopen\s*\(|\.write\w*\s*\(|\bos\.|\bsubprocess\b|\bshutil\b|\bpathlib\b|\bsocket\b|"
                      r"\burllib\b|\brequests\b|\bexec\s*\(|\beval\s*\(|__import__|\bimport\s+(os|subprocess|shutil|"
                      r"socket|requests|urllib|pathlib)\b")
_PY_READS_STDIN = re.compile(r"sys\.stdin|\binput\s*\(|fileinput")


@dataclass(frozen=True, slots=True)
class RerunView:
    key: str                      # equal keys: the same producer (cwd is part of it)
    view: tuple                   # how the agent looked at it; equal views: the same view
    lossy: str | None = None      # a view the key leaves out that shows less than the producer made
    read_path: str | None = None  # the file, when the producer is a file
    window: tuple | None = None   # (first, last) line window of a file view; ("last", n) for a tail


def _window_of(lines: str, decorations) -> tuple | None:
    """The line window a file view shows, or None when it filters by content."""
    win = None
    if lines:
        m = re.fullmatch(r"(\d+)-(\d*)", lines)
        if m:
            win = (int(m.group(1)), int(m.group(2)) if m.group(2) else None)
        m = re.fullmatch(r"last:(\d+)", lines)
        if m:
            win = ("last", int(m.group(1)))
    for d in decorations:
        if d.kind in ("redirect", "color", "pager", "line-numbers"):
            continue
        if d.kind in ("head", "tail") and d.value.isdigit() and win is None:
            win = (1, int(d.value)) if d.kind == "head" else ("last", int(d.value))
            continue
        if d.kind == "sed" and re.fullmatch(r"\d+,\d+p?", d.value or ""):
            a, b = d.value.rstrip("p").split(",")
            win = (int(a), int(b))
            continue
        return None          # grep, awk, jq, wc...: a filter, not a window
    return win if win is not None else (1, None)


_TRIVIAL = re.compile(r"^(cd|pushd|popd|echo|printf|true|set|export)(\s|$)")


def _file_producer(sig) -> str | None:
    """The one file a command only reads (cat/head/tail/sed -n/less, or grep of one file)."""
    if sig.family not in ("file-read", "search") or sig.writes or len(sig.reads) != 1:
        return None
    path = sig.reads[0].path
    if not path or any(c in path for c in "*?[") or path == "-":
        return None
    if sig.family == "search" and re.search(r"(^|\s)-(r|R|-recursive)\b", sig.raw):
        return None
    work = [s for s in (sig.segments or (sig,)) if s.op != "|" and not _TRIVIAL.match(s.core)]
    if len(work) != 1:
        return None          # reads the file and does something else too
    return path


def _strip_runner_flags(words: list[str], family: str) -> tuple[list[str], list]:
    """-> (key words, view items): no-op runner flags dropped, view flags moved to the view."""
    view = []
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        base = w.split("=", 1)[0]
        if w in _NOOP_RUNNER_FLAGS:
            i += 1
            continue
        if base in _VIEW_RUNNER_FLAGS:
            if "=" not in w and base in ("--reporter", "--reporters") and i + 1 < len(words) \
                    and not words[i + 1].startswith("-"):
                view.append(("runner-flag", w + "=" + words[i + 1]))
                i += 2
                continue
            view.append(("runner-flag", w))
            i += 1
            continue
        out.append(w)
        i += 1
    if out and out[-1] == "--":
        out.pop()
    if family == "vitest" and len(out) > 1 and out[1] == "run":
        del out[1]
    return out, view


def _strip_git_display(words: list[str]) -> tuple[list[str], list, str | None]:
    if len(words) < 2 or words[0] != "git":
        return words, [], None
    sub_i = next((i for i, w in enumerate(words[1:], 1) if not w.startswith("-")), None)
    if sub_i is None or words[sub_i] not in _GIT_VIEWED:
        return words, [], None
    out, view, lossy = words[:sub_i + 1], [], None
    display = _GIT_STATUS_DISPLAY if words[sub_i] == "status" else _GIT_DISPLAY
    after_dd = False
    i = sub_i + 1
    while i < len(words):
        w = words[i]
        if w == "--":
            after_dd = True
        if not after_dd and display.match(w):
            view.append(("git-display", w))
            i += 1
            continue
        m = None if after_dd else _GIT_COUNT.match(w)
        if m or (not after_dd and w == "-n" and i + 1 < len(words) and words[i + 1].isdigit()):
            n = (next(g for g in m.groups()[1:] if g) if m else words[i + 1])
            view.append(("head", n))
            lossy = lossy or "head %s" % n
            i += 1 if m else 2
            continue
        out.append(w)
        i += 1
    return out, view, lossy


def _py_view(code_words: list[str]) -> tuple | None:
    """('formatter'|'filter', text) when `python ...` at the end of a pipe is only a view."""
    if len(code_words) < 2 or not _PY.match(os.path.basename(code_words[0])):
        return None
    rest = " ".join(code_words[1:])
    if _PY_FORMATTER.match(rest):
        return ("formatter", "json.tool")
    if code_words[1] == "-c" and len(code_words) >= 3:
        code = code_words[2]
        if _PY_READS_STDIN.search(code) and not _PY_ACTS.search(code):
            return ("filter", " ".join(code.split()))
    return None


# Words of a canonical core, quotes removed.  Not a shell parser (the signature was one): the
# rules here read programs, subcommands, flags, URLs and one quoted script, and shlex costs a
# millisecond on a long quoted command, on the hook's path.
_TOKEN = re.compile(r"(?:'[^']*'|\"(?:\\.|[^\"\\])*\"|[^\s'\"]+)+")
_QUOTED = re.compile(r"'([^']*)'|\"((?:\\.|[^\"\\])*)\"")


def _unquote(tok: str) -> str:
    if "'" not in tok and '"' not in tok:
        return tok
    return _QUOTED.sub(lambda m: m.group(1) if m.group(1) is not None else re.sub(r"\\(.)", r"\1", m.group(2)),
                       tok)


@functools.lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    if not any(c in text for c in "'\""):
        return tuple(text.split())
    return tuple(_unquote(t) for t in _TOKEN.findall(text))


def _split_words(text: str) -> list[str]:
    return list(_words(text))


def rerun_view(sig, cwd: str | None = None) -> RerunView:
    """The starvation detector's reading of a command: key, view and what the view leaves out."""
    from reflex.arc.detectors.track import view_key
    cwd = cwd if cwd is not None else sig.cwd
    base_view = view_key(sig)
    path = _file_producer(sig)
    if path is not None:
        lines = sig.reads[0].lines
        pattern = sig.core if sig.family == "search" else ""
        window = None if pattern else _window_of(lines, sig.decorations)
        view = base_view + ((("lines", lines),) if lines else ()) + ((("pattern", pattern),) if pattern else ())
        lossy = None
        if pattern:
            lossy = "grep"
        elif window is not None and window != (1, None):
            lossy = ("tail %d" % window[1]) if window[0] == "last" else "lines %s-%s" % window
        p = abs_path(path, cwd)
        return RerunView("read %s" % p, view, lossy, p, window)
    core = sig.core
    extra_view: list = []
    lossy = None
    # A trailing pipe into a formatter or a print-only filter: the producer is what came before.
    for seg in reversed(sig.segments[1:] if sig.segments else ()):
        if seg.op != "|":
            break
        tail = " | " + seg.core
        if not core.endswith(tail):
            continue             # a slicer the signature already took out of the core
        pv = _py_view(_split_words(seg.core)) if seg.core.startswith("python") else None
        if pv is None:
            break
        core = core[: -len(tail)]
        extra_view.append(("pipe", pv[1]))
        if pv[0] == "filter":
            lossy = lossy or "a python filter"
    key = core
    if sig.family in _RUNNER_FAMILIES:
        words, v = _strip_runner_flags(_split_words(core), sig.family)
        extra_view.extend(v)
        key = " ".join(words)
    elif sig.family == "git" and " ; " not in core and " && " not in core and " | " not in core:
        words, v, count_lossy = _strip_git_display(_split_words(core))
        extra_view.extend(v)
        lossy = lossy or count_lossy
        key = " ".join(words)
    return RerunView("%s\0%s" % (cwd or "", key), base_view + tuple(sorted(extra_view)), lossy)


# -- polling and mutations -----------------------------------------------------------------

_LIVE_PROGRAMS = {
    "ps": "process state", "pgrep": "process state", "jobs": "process state", "top": "process state",
    "htop": "process state", "lsof": "open files and ports", "netstat": "network state", "ss": "network state",
    "uptime": "system state", "free": "system state", "vm_stat": "system state", "df": "disk state",
    "ping": "the network", "arp": "the network", "dig": "the network", "nslookup": "the network",
    "host": "the network", "traceroute": "the network", "nc": "the network", "ifconfig": "the network",
    "airport": "the radio", "networksetup": "the network", "journalctl": "service logs",
    "ssh": "a remote shell", "watch": "a repeated command",
}
_LIVE_SUB = {
    "gh": {"run": "CI status", "pr": "PR status", "workflow": "CI status", "api": "the GitHub API",
           "checks": "CI status", "status": "GitHub status"},
    "glab": {"ci": "CI status", "pipeline": "CI status", "mr": "MR status"},
    "kubectl": {"get": "cluster state", "describe": "cluster state", "logs": "cluster logs", "top": "cluster state",
                "rollout": "cluster state", "events": "cluster state"},
    "docker": {"ps": "container state", "logs": "container logs", "inspect": "container state",
               "stats": "container state", "top": "container state", "events": "container state",
               "compose": "container state", "container": "container state"},
    "podman": {"ps": "container state", "logs": "container logs", "inspect": "container state"},
    "systemctl": {"status": "service state", "is-active": "service state", "list-units": "service state"},
    "launchctl": {"list": "service state", "print": "service state"},
    "brew": {"services": "service state", "outdated": "the package index", "info": "the package index",
             "search": "the package index"},
    "npm": {"view": "the package registry", "outdated": "the package registry", "info": "the package registry"},
}
_NET = frozenset({"curl", "wget", "http", "https", "xh", "httpie"})
_LOCAL_HOST = re.compile(r"^(?:[a-z]+://)?(?:[^@/\s]*@)?(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\]|::1|"
                         r"[\w.-]+\.local|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|172\.(1[6-9]|2\d|3[01])\.\d+\.\d+)"
                         r"(?::\d+)?(?:[/?#]|$)", re.I)
# A URL that names a state (its last segment: /health, /status, /metrics) or a job whose state
# moves (/runs/123, /jobs/9, /deployments): asking it again is polling.  `/status/<id>` names a
# thing (a tweet), not a state.
_STATUS_URL = re.compile(r"(/(health|healthz|ready|readyz|livez|status|metrics|ping|checks|check-runs|"
                         r"check-suites|logs|events|queue)/?(?:[?#]|$))|(/(runs|jobs|builds|pipelines|"
                         r"deployments|actions|workflows)(?:/[^/?#]*)?/?(?:[?#]|$))", re.I)
_NET_MUTATING = re.compile(r"(^|\s)(-X\s*(POST|PUT|PATCH|DELETE)|--request[= ](POST|PUT|PATCH|DELETE)|-d\b|"
                           r"--data\S*|-F\b|--form\b|-T\b|--upload-file\b|--json\b|POST\b|PUT\b|PATCH\b|DELETE\b)",
                           re.I)


_HEAD_CHARS = 400


def _work_words(sig) -> list[list[str]]:
    """The words of each working segment; only its head: programs, subcommands, flags and
    URLs come first, and a heredoc or inline script can be thousands of characters."""
    out = []
    for s in (sig.segments or (sig,)):
        if s.op == "|":
            continue
        text = s.core if len(s.core) <= _HEAD_CHARS else s.core[:_HEAD_CHARS].rsplit(" ", 1)[0]
        w = _split_words(text)
        if w:
            out.append(w)
    return out


def live_reason(sig) -> str | None:
    """Why this command's output follows state that changes by itself, or None."""
    for w in _work_words(sig):
        prog = os.path.basename(w[0])
        if prog in _LIVE_PROGRAMS:
            return "reads %s" % _LIVE_PROGRAMS[prog]
        subs = _LIVE_SUB.get(prog)
        if subs:
            for a in w[1:]:
                if a.startswith("-"):
                    continue
                if a in subs:
                    return "reads %s" % subs[a]
                break
        if prog in _NET:
            text = " ".join(w[1:])
            if _NET_MUTATING.search(" " + text):
                return None      # a mutation, not a look (see mutation())
            urls = [a for a in w[1:] if not a.startswith("-")]
            for u in urls:
                if _LOCAL_HOST.match(u):
                    return "asks a local server"
                if _STATUS_URL.search(u):
                    return "asks a status endpoint"
    return None


_GIT_CHANGES = frozenset({"checkout", "switch", "restore", "reset", "stash", "pull", "merge", "rebase",
                          "cherry-pick", "revert", "am", "apply", "clean", "mv", "rm", "submodule", "worktree"})
_GIT_REMOTE_ONLY = frozenset({"push"})
_INSTALLERS = {
    "npm": {"install", "i", "ci", "add", "remove", "rm", "uninstall", "update", "upgrade", "link", "prune"},
    "pnpm": {"install", "i", "add", "remove", "rm", "uninstall", "update", "up", "upgrade", "link", "prune"},
    "yarn": {"install", "add", "remove", "upgrade", "up", "link"},
    "bun": {"install", "i", "add", "remove", "rm", "update", "link"},
    "pip": {"install", "uninstall"}, "pip3": {"install", "uninstall"},
    "uv": {"add", "remove", "sync", "lock", "pip"}, "poetry": {"add", "remove", "install", "update", "lock"},
    "cargo": {"add", "remove", "install", "update"}, "go": {"get", "mod", "install"},
    "brew": {"install", "uninstall", "reinstall", "upgrade", "update", "link", "unlink"},
    "apt": {"install", "remove", "upgrade", "update"}, "apt-get": {"install", "remove", "upgrade", "update"},
    "gem": {"install", "uninstall"}, "composer": {"install", "require", "update", "remove"},
    "docker": {"run", "start", "stop", "restart", "rm", "build", "pull", "kill", "exec", "compose", "create",
               "cp", "network", "volume"},
    "podman": {"run", "start", "stop", "restart", "rm", "build"},
    "kubectl": {"apply", "delete", "create", "scale", "patch", "edit", "replace", "set", "cordon", "drain"},
    "systemctl": {"start", "stop", "restart", "reload", "enable", "disable"},
    "launchctl": {"load", "unload", "start", "stop", "bootstrap", "bootout", "kickstart"},
    "gh": {"pr", "issue", "release", "repo", "workflow", "secret", "variable"},
}
_GH_MUTATING = frozenset({"create", "merge", "close", "reopen", "comment", "edit", "review", "delete", "run",
                          "rerun", "cancel", "set", "ready", "checkout"})
_FILE_OPS = frozenset({"rm", "rmdir", "mv", "cp", "mkdir", "touch", "chmod", "chown", "ln", "unlink", "truncate",
                       "dd", "patch", "unzip", "rsync", "install", "kill", "pkill", "killall"})


def mutation(sig) -> tuple[str, bool] | None:
    """(what it changes, whether that can change local files or local processes) or None."""
    for w in _work_words(sig):
        prog = os.path.basename(w[0])
        args = [a for a in w[1:] if not a.startswith("-")]
        if prog == "git":
            sub = next((a for a in w[1:] if not a.startswith("-")), "")
            if sub in _GIT_CHANGES:
                if sub == "stash" and len(args) > 1 and args[1] in ("list", "show"):
                    continue
                return "git %s rewrites the worktree" % sub, True
            if sub in _GIT_REMOTE_ONLY:
                return "git %s changes the remote" % sub, False
            continue
        if prog in _FILE_OPS:
            return "%s changes files or processes" % prog, True
        subs = _INSTALLERS.get(prog)
        if subs and args and args[0] in subs:
            if prog == "gh":
                if len(args) > 1 and args[1] in _GH_MUTATING:
                    return "gh %s %s changes GitHub" % (args[0], args[1]), args[1] == "checkout"
                continue
            if prog == "go" and args[0] == "mod" and (len(args) < 2 or args[1] not in ("tidy", "download", "vendor")):
                continue
            if prog == "docker" and args[0] == "compose" and (len(args) < 2 or args[1] in ("ps", "logs", "config")):
                continue
            return "%s %s changes installed state" % (prog, args[0]), True
        if prog in _NET and _NET_MUTATING.search(" " + " ".join(w[1:])):
            local = any(_LOCAL_HOST.match(a) for a in w[1:] if not a.startswith("-"))
            return "%s sends a modifying request" % prog, local
    return None
