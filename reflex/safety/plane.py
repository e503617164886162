"""The safety plane: deny secret reads and writes outside the project, whatever else happens.

Stdlib only. It runs inside the daemon and, when the daemon is unreachable, inside the hook
shim itself, so safety never depends on the daemon being up. Its decisions sit outside the
reflex arc: they are a function of (command or tool call, cwd, SafetyPolicy) and of what
the paths it names resolve to on disk (symlinks, glob matches, directories; see
reflex.safety.disk) — no clock, environment or session state is consulted, and the shim
and the daemon see the same disk, so the same inputs give byte-identical answers under any
reflex or policy state, with the daemon up or down, and no rule ever stands down.

Three outcomes: a Denial; None (the call runs as is); or a Redact, for a recursive read
(`grep -r`, `rg`, `git grep`, `find -exec cat`, `xargs` over a listing, a Grep tool call
on a directory): a search of the project is a normal thing to do, so instead of denying
it the call runs in a form that keeps secret values out (`ctx run [--raw] -- CMD`, which
replaces them in the output; a Grep given globs that exclude secret-named files). Which
outcome each class of read gets, and why, is docs/safety.md.

Two rule families:

* secrets — no secret file content enters the agent's context or leaves the machine:
  `secret-read` (any reader, wrapper, interpreter one-liner or redirect), `secret-copy`
  (cp/mv/ln/tar/zip of a secret, the first step of a read-through-copy), `secret-exfil`
  (scp/rsync/curl upload), `secret-env-dump` (a secret file sourced, then the environment
  printed in the same command line), `secret-write` (the Edit/Write tools on a secret).
  Which files are secret: reflex.safety.paths. Loading a secret without printing it
  (`source .env`, `--env-file .env`), listing (`ls ~/.ssh`) and using a key by path
  (`ssh -i ~/.ssh/id_ed25519`) are allowed.
* confinement — `write-outside-root`, `delete-outside-root`: writes, deletes and metadata
  changes (chmod/chown) must land under the project root or a temp dir. With an unknown
  project root only `/`, system directories, the home directory itself, its ancestors and
  its dot-entries (~/.bashrc, ~/.ssh/...) are protected.

`SafetyPolicy.allow` holds glob patterns of paths the user explicitly allows (both
families): absolute or `~/` patterns match the path or any of its ancestors (`**` crosses
directories), patterns with a `/` are relative to the project root, bare names match a
basename anywhere (`.env.test`).

Decisions (each a deliberate trade-off between a leak and a false denial):

* A target is judged by its name and by what it resolves to: `cat notes.txt` is a read of
  .env when notes.txt links there; a glob is expanded on disk the way bash would (dotglob,
  GLOBIGNORE, zsh `(D)` included) and every match judged.
* A glob or an unknown expansion is a secret read when it can name a secret and names no
  ordinary file: `cat .en*`, `cat *.pem`, `cat ~/.ssh/*`, `cat $DIR/.env` are denied;
  `cat *` (when nothing it matches is secret) and `cat $FILE` are not. A name printed by a
  program (`cat $(printf ...)`, `read f`) may be any file: a read of it is redacted like
  a recursive read.
* Recursive reads are redacted (Redact), not denied, when their output reaches the agent as
  lines (a trailing `| head` or `| grep` is fine); piped into a transform (`| base64`),
  redirected to a file, captured by `$(...)` or cut by `grep -o`, they are denied: redaction
  by value cannot see through those. Directories that hold home secrets (~/.ssh, ~/.aws,
  home itself, /, $CTX_HOME) are denied for recursive readers (grep, cp, tar, rsync,
  docker -v ...), as are file filters that select secrets (`--include=.env`). Copies of a
  tree (`tar czf x .`, `cp -r`) stay allowed.
* `grep -q` prints nothing and is allowed; `wc`, `stat`, `file`, hashes and `test` never
  read content. Writing into a secret from the shell (`cp .env.example .env`,
  `echo X= >> .env`) discloses nothing and is allowed; `sed -i`/`perl -i` on a secret and
  the Edit/Write/NotebookEdit tools on a secret are denied.
* `source .env` / `--env-file .env` are allowed; in the same command line, printing the
  environment afterwards (`env`, `printenv`, `set`, `export -p`, `declare -p`, `echo $X`
  for X not in a short list of harmless names, interpreter code reading the environment)
  is `secret-env-dump`.
* Programs that read files named inside their command text are readers like any other:
  `sqlite3 db "select readfile('.env')"`, `.read .env`, `date -f .env`, `git config -f`.
* `ls -la ~/.ssh` (names, not content) is allowed; `.npmrc`, kubeconfig files, `.pypirc`,
  `.netrc`, `.git-credentials`, `.pgpass` are secret anywhere (a project's .npmrc often holds
  an `_authToken`), and so are `.docker/config.json`, `.kube/config` in any directory; `secrets.{yaml,yml,json,toml,ini,env,txt}` and
  `*.tfstate` anywhere; `*.pem` even though some are public certificates.
* chmod/chown/chgrp/chattr outside the root are writes (`write-outside-root`), with or
  without -R. A command line too large (over MAX_COMMAND_CHARS) or too nested to analyse
  gets a conservative scan for secret names and `rm -rf /|~`.

How commands are understood: reflex.safety.lex (bash lexing), reflex.safety.shell (walking
lists, pipelines, cd, variables, substitutions), reflex.safety.cmds (dispatch, builtins)
with reflex.safety.nested / _files / _readers (per-command semantics), reflex.safety.argv
(the conservative default and option parsing), reflex.safety.paths (which paths).
"""

from __future__ import annotations

import os
import re

from reflex.safety.lex import Overflow
from reflex.safety.paths import basename_kind, is_outside, is_token_file, normalize, secret_kind
from reflex.safety.model import Ctx
from reflex.safety.shell import Scan

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any, Self

    from reflex.safety.model import Allowed, Finding

MAX_COMMAND_CHARS = 262144   # longer command lines get the conservative mention scan only

RULES = ("secret-read", "secret-copy", "secret-exfil", "secret-env-dump", "secret-write",
         "write-outside-root", "delete-outside-root", "unverifiable")


def _default_tmp_dirs() -> tuple[str, ...]:
    return tmp_dirs_for(os.environ.get("TMPDIR"))


def tmp_dirs_for(tmpdir: object) -> tuple[str, ...]:
    """The scratch dirs for a given $TMPDIR (the hook's, which the daemon does not share)."""
    dirs = ["/tmp", "/var/tmp"]
    t = tmpdir if isinstance(tmpdir, str) else ""
    if t.startswith("/"):
        t = normalize(t)
        if t not in dirs and t != "/":
            dirs.append(t)
    return tuple(dirs)


def _norm_dir(p: object) -> str | None:
    if isinstance(p, bytes):
        p = p.decode("utf-8", "surrogateescape")
    if not isinstance(p, str) or not p.startswith("/"):
        return None
    return normalize(p)


class _Frozen:
    """Immutable value object with the behaviour of ``@dataclass(frozen=True)``.

    Hand-written because importing dataclasses (and through it inspect) costs ~6 ms, a
    third of this module's import, on the hook shim's daemon-down path. Equality, hashing,
    repr, pickling and ``replace(**changes)`` work as for a frozen dataclass; assignment
    raises AttributeError (as dataclasses.FrozenInstanceError, a subclass, does).
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, f) for f in self._fields)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("cannot assign to field %r of a frozen %s" % (name, type(self).__name__))

    def __delattr__(self, name: str) -> None:
        raise AttributeError("cannot delete field %r of a frozen %s" % (name, type(self).__name__))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Frozen) or type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + self._values())

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % (f, getattr(self, f)) for f in self._fields))

    def __reduce__(self) -> tuple[type[Self], tuple[object, ...]]:
        return (type(self), self._values())

    def replace(self, **changes: Any) -> Self:
        kw = {f: getattr(self, f) for f in self._fields}
        kw.update(changes)
        return type(self)(**kw)


class SafetyPolicy(_Frozen):
    """What the safety plane protects. Paths are normalized on construction.

    project_root: the project directory, or None when unknown; home: the user's home;
    tmp_dirs: writable scratch dirs (default /tmp, /var/tmp and $TMPDIR); allow: glob
    patterns of paths the user explicitly allows (see the module docstring); ctx_home:
    ctx's own directory ($CTX_HOME), whose token and stored output are protected too;
    token_files: files that hold ctx's HTTP token besides $CTX_HOME/http-token (the settings
    files `ctx install --transport http` wrote it into).
    """

    __slots__ = ("project_root", "home", "tmp_dirs", "allow", "ctx_home", "token_files")
    _fields = __slots__
    __match_args__ = ("project_root", "home", "tmp_dirs", "allow", "ctx_home", "token_files")

    project_root: str | None
    home: str                   # "" when unknown
    tmp_dirs: tuple[str, ...]
    allow: tuple[str, ...]
    ctx_home: str | None
    token_files: tuple[str, ...]

    def __init__(self, project_root: object, home: object, tmp_dirs: Sequence[object] | None = None,
                 allow: Sequence[object] = (), ctx_home: object = None, token_files: Sequence[object] = ()) -> None:
        if tmp_dirs is None:
            tmp_dirs = _default_tmp_dirs()
        tmps = tmp_dirs if isinstance(tmp_dirs, (tuple, list)) else ()
        allow = allow if isinstance(allow, (tuple, list)) else ()
        init = object.__setattr__
        init(self, "project_root", _norm_dir(project_root))
        init(self, "home", _norm_dir(home) or "")
        init(self, "tmp_dirs", tuple(t for t in (_norm_dir(x) for x in tmps) if t and t != "/"))
        init(self, "allow", tuple(a for a in allow if isinstance(a, str) and a))
        ctx_home = _norm_dir(ctx_home)
        init(self, "ctx_home", ctx_home if ctx_home != "/" else None)
        token_files = token_files if isinstance(token_files, (tuple, list)) else ()
        init(self, "token_files", tuple(t for t in (_norm_dir(x) for x in token_files) if t and t != "/"))


class Denial(_Frozen):
    """A safety decision: which rule, on what path, and the full reason for the agent."""

    __slots__ = ("rule", "target", "reason")
    _fields = __slots__
    __match_args__ = ("rule", "target", "reason")

    rule: str
    target: str
    reason: str

    def __init__(self, rule: str, target: str, reason: str) -> None:
        init = object.__setattr__
        init(self, "rule", rule)
        init(self, "target", target)
        init(self, "reason", reason)

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "target": self.target, "reason": self.reason}

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, compact): byte-identical for equal denials."""
        import json
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def hook_output(self) -> dict[str, dict[str, str]]:
        """The PreToolUse answer that denies the call (claude-code-hooks §1.6)."""
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": self.reason}}


class Redact(_Frozen):
    """Not a denial: the call may run, but only in a form that keeps secret values out.

    For a Bash command that reads files recursively: run it through `ctx run` (`--raw`, the whole
    output, unless it is one plain search, which is digested: shim.fallback.is_plain_search), which
    replaces the values of the secret files under `roots` (and the home and ctx secrets)
    in its output; `read_only`: every command in it only reads. For a Grep tool call on a
    directory: `tool_input` is the call with secret files excluded by glob.
    """

    __slots__ = ("rule", "roots", "reason", "tool_input", "read_only")
    _fields = __slots__
    __match_args__ = ("rule", "roots", "reason", "tool_input", "read_only")

    rule: str
    roots: tuple[str | None, ...]   # None: a tree whose root is unknown
    reason: str
    tool_input: dict[str, Any] | None
    read_only: bool

    def __init__(self, rule: str, roots: Iterable[str | None], reason: str, tool_input: dict[str, Any] | None = None,
                 read_only: bool = False) -> None:
        init = object.__setattr__
        init(self, "rule", rule)
        init(self, "roots", tuple(roots))
        init(self, "reason", reason)
        init(self, "tool_input", tool_input)
        init(self, "read_only", bool(read_only))

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "target": " ".join(r or "?" for r in self.roots), "reason": self.reason}


# -- public entry points --------------------------------------------------------------

def check_command(command: object, cwd: object, policy: SafetyPolicy) -> Denial | None:
    """Denial for a shell command line run in `cwd`, or None. Never raises."""
    v = assess_command(command, cwd, policy)
    return v if isinstance(v, Denial) else None


def check_tool(tool_name: object, tool_input: object, cwd: object, policy: SafetyPolicy) -> Denial | None:
    """Denial for a Claude Code tool call, or None (unknown tools: None). Never raises."""
    v = assess_tool(tool_name, tool_input, cwd, policy)
    return v if isinstance(v, Denial) else None


def assess_command(command: object, cwd: object, policy: SafetyPolicy) -> Denial | Redact | None:
    """Denial, Redact or None for a shell command line run in `cwd`. Never raises."""
    try:
        return _check_command(command, cwd, policy)
    except Exception:  # noqa: BLE001 - the contract is "never raises"
        try:
            return _mention_scan(_text(command), policy)
        except Exception:  # noqa: BLE001 - the contract is "never raises"
            return None


def assess_tool(tool_name: object, tool_input: object, cwd: object, policy: SafetyPolicy) -> Denial | Redact | None:
    """Denial, Redact or None for a Claude Code tool call (unknown tools: None). Never raises."""
    try:
        return _check_tool(tool_name, tool_input, cwd, policy)
    except Exception:  # noqa: BLE001 - the contract is "never raises"
        return None


def tree_roots(command: object, cwd: object, policy: SafetyPolicy) -> tuple[str | None, ...]:
    """The directories `command` reads recursively (None: unknown), for `ctx run` to find the
    secret files whose values it must redact. Never raises."""
    try:
        text = _text(command)
        if not text or len(text) > MAX_COMMAND_CHARS:
            return ()
        scan = _scan(policy)
        scan.command(text, Ctx(_norm_dir(cwd), {}))
        return tuple(scan.trees)
    except Exception:  # noqa: BLE001 - the contract is "never raises"
        return ()


# -- commands -------------------------------------------------------------------------

def _text(command: object) -> str:
    if isinstance(command, bytes):
        return command.decode("utf-8", "surrogateescape")
    return command if isinstance(command, str) else ""


def _scan(policy: SafetyPolicy) -> Scan:
    return Scan(policy.home, policy.project_root, policy.tmp_dirs, _allow_fn(policy), policy.ctx_home,
                policy.token_files)


# Commands that only read (and print): a recursive read made only of these may be sent through
# ctx run without asking again, since nothing about what the command does changes.
READ_ONLY = frozenset("""grep egrep fgrep zgrep rgrep rg ag ack pt sift find xargs cat head tail sort
uniq wc nl less more tac cut tr column fold ls echo printf cd pwd true false test [ stat file du df
basename dirname realpath readlink which type tree diff cmp""".split()) | frozenset(
    "git " + sub for sub in ("grep", "show", "diff", "log", "status", "ls-files", "blame"))


def _check_command(command: object, cwd: object, policy: SafetyPolicy) -> Denial | Redact | None:
    text = _text(command)
    if not text or text.isspace():
        return None
    if len(text) > MAX_COMMAND_CHARS:
        return _mention_scan(text, policy)
    scan = _scan(policy)
    ctx = Ctx(_norm_dir(cwd), {})
    try:
        f = scan.command(text, ctx)
        if f is not None and f.kind == "tree" and "|" in text:
            # `grep -rn KEY . | cut -d: -f1`: ctx run applies a trailing slicer to the output
            # after redacting it, so what matters is the command before the slicer.
            f, scan = _split_producer(text, cwd, policy, f, scan)
    except Overflow:
        return _mention_scan(text, policy)
    if f:
        return _render(f, policy)
    if scan.trees:
        read_only = not scan.wrote and scan.names <= READ_ONLY
        return Redact("secret-redact", scan.trees, _redact_reason(text, scan.trees), None, read_only)
    return None


def _split_producer(text: str, cwd: object, policy: SafetyPolicy, finding: Finding,
                    scan: Scan) -> tuple[Finding | None, Scan]:
    from reflex.safety.pipesplit import split
    parts = split(text)
    if not parts:
        return finding, scan
    producer, slicer = parts
    first = _scan(policy)
    f = first.command(producer, Ctx(_norm_dir(cwd), {}))
    if f is None:
        f = _scan(policy).command(slicer, Ctx(_norm_dir(cwd), {}))
    if f is not None:
        return f, scan
    first.names |= scan.names
    return None, first


def _redact_reason(text: str, roots: Iterable[str | None]) -> str:
    where = ", ".join(_show(r, 80) for r in roots if r) or "the current directory"
    return ("ctx safety: `%s` reads files recursively (under %s), so it runs through `ctx run`, "
            "which replaces the values of any secret files there (.env, keys, credentials) with "
            "[REDACTED:<file>] before the output is shown or stored." % (_show(text, 120), where))


_MENTION_SRC = (
    r"(?:^|(?<=[\s/'\"=@:<>(`]))("
    r"\.env(?:\.[\w\-]+)*|\.envrc|[\w.\-]*id_(?:rsa|dsa|ecdsa|ed25519)[\w.\-]*"
    r"|[\w.\-]+\.(?:pem|key|p12|pfx|jks|keystore|ppk|kdbx)|\.netrc|_netrc|\.git-credentials|\.pgpass"
    r"|\.pypirc|[\w.\-]*credentials[\w.\-]*\.json|secrets?\.(?:ya?ml|json|toml)"
    r"|\.ssh/[\w.\-]+|\.aws/credentials|\.docker/config\.json|\.kube/config"
    r")(?=$|[\s'\"/;|&)>`])")
_DESTROY_SRC = r"\brm\s+(?:-\w+\s+)*(/|~/?|\$HOME/?|\"\$HOME\"/?)\*?(?=\s|$|;|&|\|)"


def _mention_scan(text: str, policy: SafetyPolicy) -> Denial | None:
    """Conservative answer for a command too large or too nested to analyse."""
    for m in re.compile(_MENTION_SRC).finditer(text):   # compiled on first use: rare path
        token = m.group(1)
        kind = basename_kind(token.rsplit("/", 1)[-1]) or ("key" if token.startswith(".ssh/") else
                                                           "cred" if "/" in token else None)
        if token.startswith(".ssh/") and token.endswith((".pub", "known_hosts", "config")):
            kind = None
        if kind:
            return _render_parts("secret-read", token, token, "(command not analysable)", kind, policy)
    d = re.compile(_DESTROY_SRC).search(text)
    if d:
        target = policy.home if d.group(1) != "/" else "/"
        return _render_parts("delete-outside-root", target, d.group(0), "rm", "outside", policy)
    return None


# -- tools ----------------------------------------------------------------------------

_READ_TOOLS = frozenset({"Read", "Grep", "Glob"})
_WRITE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
CHECKED_TOOLS = _READ_TOOLS | _WRITE_TOOLS | {"Bash", "ReadMany"}
# The tool_input fields a check reads: a payload cut before one of them cannot be checked.
DECISIVE_FIELDS = {"Bash": ("command",), "Read": ("file_path",), "Edit": ("file_path",),
                   "MultiEdit": ("file_path",), "Write": ("file_path",), "NotebookEdit": ("notebook_path",),
                   "Glob": ("path",), "Grep": ("path", "glob"), "ReadMany": ("paths",)}


def unverifiable(tool_name: str | None, problem: str) -> Denial:
    """The denial for a call whose payload could not be read far enough to check it."""
    what = "this %s call" % _show(tool_name, 40) if tool_name else "this tool call"
    return Denial("unverifiable", tool_name or "",
                  "ctx safety: blocked %s: its hook payload could not be read far enough to check "
                  "what it reads or writes (%s). Make the call smaller (for a large file, write it "
                  "in parts) and try again. %s" % (what, problem, _TAIL))


def _check_tool(tool_name: object, tool_input: object, cwd: object, policy: SafetyPolicy) -> Denial | Redact | None:
    if not isinstance(tool_input, dict) or not isinstance(tool_name, str):
        return None
    if tool_name == "Bash":
        cmd = tool_input.get("command")
        return assess_command(cmd, cwd, policy) if isinstance(cmd, (str, bytes)) else None
    if tool_name == "ReadMany":
        return _read_many(tool_input, cwd, policy)
    if tool_name not in _READ_TOOLS and tool_name not in _WRITE_TOOLS:
        return None
    raw = tool_input.get("notebook_path") if tool_name == "NotebookEdit" else None
    raw = raw or tool_input.get("file_path") or tool_input.get("path")
    cwd_n = _norm_dir(cwd)
    allowed = _allow_fn(policy)
    path = None
    if isinstance(raw, str) and raw:
        if raw == "~" or raw.startswith("~/"):
            raw = policy.home + raw[1:]
        if raw.startswith("/"):
            path = normalize(raw)
        elif cwd_n:
            path = normalize(cwd_n + "/" + raw)
    verb = tool_name + " tool"
    scan: Scan | None = None
    if path:
        # The name as given, then what it resolves to (`notes.txt -> .env`, `keys -> ~/.ssh`).
        scan = _scan(policy)
        real = scan.real(path, Ctx(cwd_n, {}))
        for target in ((path, real) if real != path else (path,)):
            denial = _tool_target(tool_name, target, raw, verb, policy, allowed)  # type: ignore[arg-type]  # raw: the str path was made from
            if denial:
                return denial
    if tool_name == "Grep":
        glob = tool_input.get("glob")
        if isinstance(glob, str) and glob and not glob.startswith("!"):
            from reflex.safety.argv import glob_filter
            from reflex.safety.words import Arg
            scan = scan or _scan(policy)
            f = glob_filter(scan, Arg.of(glob), verb, Ctx(path or cwd_n, {}))
            if f:
                return _render(f, policy)
        root = ((scan or _scan(policy)).real(path, Ctx(cwd_n, {})) if path else cwd_n)  # (scan is set when path is)
        if root and (scan or _scan(policy)).disk.isdir(root) is not False:
            return _grep_without_secrets(tool_input, root, policy)
    return None


_GLOB_CHARS = frozenset("*?[{")
MAX_READ_MANY_ENTRIES = 20000     # entries a directory given to read_many_files is searched for secrets


def _read_many(tool_input: dict[str, Any], cwd: object, policy: SafetyPolicy) -> Denial | None:
    """Gemini's read_many_files: every file its `paths` and `include` name, match (globs with
    dotfiles and `**`) or hold (a directory, read whole) is read into the context. The tool
    cannot be redirected through redaction, so a call that would read a secret is denied:
    a path or match named like one, or a directory (or `**` glob) with one inside."""
    cwd_n = _norm_dir(cwd)
    entries = [p for key in ("paths", "include") for p in (tool_input.get(key) or ())
               if isinstance(p, str) and p][:256]
    scan = _scan(policy)
    verb = "read_many_files"
    for raw in entries:
        text = policy.home + raw[1:] if raw == "~" or raw.startswith("~/") else raw
        if _GLOB_CHARS.intersection(text):
            # Judged as the shell would expand it with dotfiles and `**` on.
            word = "".join(c if c in _GLOB_CHARS or c in "]}," else "\\" + c for c in text)
            v = assess_command("shopt -s dotglob globstar; cat -- " + word, cwd, policy)
            if isinstance(v, Denial):
                return v.replace(reason=v.reason.replace("`cat`", "`%s`" % verb).replace("`glob group`", "`%s`" % verb))
            if "**" not in text:
                continue
            # `src/**/*.json`: every matching file below src, searched on disk.
            base, _, tail = text.partition("**")
            text, name_glob = base.rstrip("/") or ".", tail.rsplit("/", 1)[-1] or "*"
        else:
            name_glob = "*"
        path = normalize(text if text.startswith("/") else (cwd_n or "") + "/" + text) if (
            text.startswith("/") or cwd_n) else None
        if not path:
            continue
        real = scan.real(path, Ctx(cwd_n, {}))
        for target in ((path, real) if real != path else (path,)):
            denial = _tool_target("Read", target, raw, verb, policy, _allow_fn(policy))
            if denial:
                return denial
        if scan.disk.isdir(real):
            found = _secret_inside(real, policy, name_glob)
            if found:
                kind = secret_kind(found, policy.home, policy.ctx_home) or (
                    "token" if is_token_file(found, policy.token_files) else "secrets")
                d = _render_parts("secret-read", found, raw, verb, kind, policy)
                return d.replace(reason=d.reason.replace(_TAIL, (
                    "read_many_files reads every file under %s: list it (`ls`, glob) and pass the files "
                    "you need by name. " % _show(raw, 80)) + _TAIL))
    return None


def _secret_inside(top: str, policy: SafetyPolicy, name_glob: str = "*") -> str | None:
    """The first file named like a secret (and matching `name_glob`) under directory `top`
    (symlinks not followed), or None; a directory too large to search counts as holding one
    (it cannot be shown not to)."""
    from fnmatch import fnmatchcase

    from reflex.safety.paths import located_kind
    seen = 0
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > MAX_READ_MANY_ENTRIES:
                return top
            path = d.rstrip("/") + "/" + e.name
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if e.name not in (".git", "node_modules"):
                    stack.append(path)
            elif (basename_kind(e.name) or located_kind(path) or is_token_file(path, policy.token_files)) and (
                    name_glob == "*" or fnmatchcase(e.name, name_glob)):
                return path
    return None


def _tool_target(tool_name: str, path: str, raw: str, verb: str, policy: SafetyPolicy,
                 allowed: Allowed) -> Denial | None:
    kind = secret_kind(path, policy.home, policy.ctx_home) or (
        "token" if is_token_file(path, policy.token_files) else None)
    if kind == "dir" and (tool_name != "Grep" or path == policy.home or
                          (policy.home and policy.home.startswith(path.rstrip("/") + "/")) or path == "/"):
        kind = None   # listing, or a Grep over home or above (it excludes the secret dirs by glob)
    if kind and not allowed(path):
        rule = "secret-write" if tool_name in _WRITE_TOOLS else "secret-read"
        if tool_name == "Glob" and kind == "dir":
            kind = None
        if kind:
            return _render_parts(rule, path, raw, verb, kind, policy)
    if tool_name in _WRITE_TOOLS and is_outside(path, policy.project_root, policy.home,
                                                policy.tmp_dirs) and not allowed(path):
        return _render_parts("write-outside-root", path, raw, verb, "outside", policy)
    return None


# Globs (ripgrep syntax, as Claude Code's Grep tool passes its `glob` field: split on
# whitespace, then on commas outside braces) that exclude every file named like a secret,
# with the decorations editors add to copies, and the home directories that hold keys and
# credentials. Claude Code runs ripgrep with --hidden and --no-follow, so without these a
# Grep over a directory prints .env lines; symlinks are not followed, so names suffice.
# Templates (.env.example) are excluded with the rest: a glob cannot say "except"; Read them
# by path.
#
# No glob here is anchored (`/x`): ripgrep anchors a glob to its own working directory, and
# where Claude Code starts it varies (2.1.332, its `spawnCwd`): on Linux inside the opened
# search directory (searching `.`, recorded in tests/adversarial/test_grep_home_real_cli.py);
# where that spawn is unavailable (Windows, other runtimes) in the session's directory when
# the path lies under it, else in the search directory. A glob anchored to the Grep's `path`
# then misses `~/.kube/config` for a session whose directory holds HOME. `**/.kube/config`
# matches wherever ripgrep runs and whatever the path (`.kube/config` is secret anywhere).
_SECRET_NAME_GLOBS = (
    ".env", ".env.*", "*.env", ".envrc", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.kdbx", "ssh_host_*_key",
    ".netrc", "_netrc", ".git-credentials", ".pgpass", ".pypirc", ".htpasswd", ".vault-token", ".npmrc",
    "kubeconfig", "*.kubeconfig", "kubeconfig.{yaml,yml,json}", "*kubeconfig*.{yaml,yml}",
    "*credentials*.json", "*service?account*.json", "*serviceaccount*.json",
    "secret.{yaml,yml,json,toml,ini,env,txt}", "secrets.{yaml,yml,json,toml,ini,env,txt}",
    "secret.*.{yaml,yml,json,toml,ini,env,txt}", "secrets.*.{yaml,yml,json,toml,ini,env,txt}",
    "*.tfstate", "*.tfstate.*",
)
_SECRET_DIRS = (".ssh", ".gnupg", ".password-store", ".aws", ".azure")
# Secret by their directory as well as their name (reflex.safety.paths.LOCATED_SECRETS and the
# home secret directories): excluded in any directory.
_LOCATED_GLOBS = ("**/.docker/config.json", "**/.kube/config", "**/.config/gh", "**/.config/gcloud",
                  "**/.local/share/keyrings", "**/.cargo/credentials*", "**/.gem/credentials")
_BACKUPS = "{bak,backup,bk,old,orig,save,sav,tmp,temp,copy,prev,rej,swp,swo,1,2,3}"


def _ci(glob: str) -> str:
    """A glob matching `glob` in any letter case (ripgrep's --glob is case-sensitive)."""
    out, depth = [], 0
    for c in glob:
        out.append("[%s%s]" % (c.lower(), c.upper()) if c.isalpha() else c)
    return "".join(out)


def _secret_globs() -> tuple[str, ...]:
    out = []
    for g in _SECRET_NAME_GLOBS:
        # Decorated copies: `.env~`, `.env.bak`, `#.env#`, `.#.env`, `.id_rsa.swp`, `key.pem.orig`.
        for form in (g, g + "~", g + "." + _BACKUPS, "#" + g + "#", ".#" + g, "." + g + ".sw?"):
            if not form.startswith(".."):
                out.append("!" + _ci(form) if "{" not in form else "!" + form)
    out += ["!" + d for d in _SECRET_DIRS]
    out += ["!" + g for g in _LOCATED_GLOBS]
    return tuple(dict.fromkeys(out))


_GREP_EXCLUDES: str | None = None


def _inside_located(root: str) -> str:
    """Globs for a search that starts inside a located secret's directory (`path: .docker`):
    ripgrep then sees `./config.json`, which `**/.docker/config.json` does not match."""
    out = []
    for g in _LOCATED_GLOBS:
        parts = g[3:].split("/")
        for k in range(1, len(parts)):
            if root.endswith("/" + "/".join(parts[:k])):
                rest = "/".join(parts[k:])
                out.append("!" + rest if "/" not in rest else "!**/" + rest)
    return "".join(" " + g for g in out)


def _glob_literal(text: str) -> str:
    """`text` as a glob matching itself: Claude Code splits the glob field on whitespace and
    commas, so those become `?`; glob syntax is bracketed."""
    return "".join("?" if c.isspace() or c == "," else "[%s]" % c if c in "*?[]{}\\" else c for c in text)


def _grep_without_secrets(tool_input: dict[str, Any], root: str, policy: SafetyPolicy) -> Redact:
    global _GREP_EXCLUDES
    if _GREP_EXCLUDES is None:
        _GREP_EXCLUDES = " ".join(_secret_globs())
    extra = _GREP_EXCLUDES + _inside_located(root)
    base = policy.ctx_home
    if base and base.startswith(root.rstrip("/") + "/"):
        # ctx's store, by its path below the search root and unanchored (see _SECRET_NAME_GLOBS):
        # a project's own blobs/ stays searchable unless it sits under the same relative path.
        rel = _glob_literal(base[len(root.rstrip("/")) + 1:])
        extra += " " + " ".join("!**/%s/%s" % (rel, x) for x in ("http-token*", "blobs", "captures", "spool"))
    for t in policy.token_files:
        if t.startswith(root.rstrip("/") + "/"):
            # The settings files holding ctx's token, and the installer's backups of them.
            rel = _glob_literal(t[len(root.rstrip("/")) + 1:])
            extra += " !**/%s !**/%s.ctx-*" % (rel, rel)
    glob = tool_input.get("glob")
    updated = dict(tool_input)
    updated["glob"] = (glob.strip() + " " + extra) if isinstance(glob, str) and glob.strip() else extra
    reason = ("ctx safety: Grep over %s skips files named like secrets (.env*, keys, credentials; "
              "templates such as .env.example too: Read those by path)." % _show(root, 120))
    return Redact("secret-redact", (root,), reason, updated, True)


# -- the allow list -------------------------------------------------------------------

_ALLOW_CACHE: dict[tuple[tuple[str, ...], str, str | None], Allowed] = {}


def _allow_fn(policy: SafetyPolicy) -> Allowed:
    """A predicate over paths (or path patterns) the user explicitly allowed."""
    if not policy.allow:
        return _never
    key = (policy.allow, policy.home, policy.project_root)
    fn = _ALLOW_CACHE.get(key)
    if fn is None:
        if len(_ALLOW_CACHE) > 64:
            _ALLOW_CACHE.clear()
        fn = _ALLOW_CACHE[key] = _compile_allow(*key)
    return fn


def _never(path: str) -> bool:
    return False


def _compile_allow(allow: tuple[str, ...], home: str, root: str | None) -> Allowed:
    full: list[str] = []
    base: list[str] = []
    for pat in allow:
        p = pat
        if p == "~" or p.startswith("~/"):
            p = home + p[1:]
        if p.startswith("/"):
            full.append(_allow_regex(normalize(p)) + r"(?:/.*)?")
        elif "/" in p.strip("/"):
            if root:
                full.append(_allow_regex(normalize(root + "/" + p)) + r"(?:/.*)?")
        else:
            base.append(_allow_regex(p.strip("/")))
    full_rx = re.compile("(?:" + "|".join(full) + r")\Z", re.DOTALL) if full else None
    base_rx = re.compile("(?:" + "|".join(base) + r")\Z", re.DOTALL) if base else None

    def allowed(path: str) -> bool:
        if full_rx is not None and full_rx.match(path):
            return True
        return base_rx is not None and bool(base_rx.match(path.rsplit("/", 1)[-1]))

    return allowed


def _allow_regex(pat: str) -> str:
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


# -- reasons --------------------------------------------------------------------------

_WHAT = {"env": "a secret env file", "key": "private key material", "cred": "a credentials file",
         "secrets": "a secrets file", "dir": "a directory that holds keys or credentials",
         "store": "ctx's stored command output", "token": "a settings file holding ctx's HTTP hook token",
         "tree": "files recursively, through a pipe or redirect that would hide secret values from "
                 "redaction:"}

_FIX = {
    "env": ("Use the variable names in .env.example (or in the code that reads them) instead of "
            "the values. To run a program with the variables, load the file without printing it "
            "(`set -a; . ./.env; set +a; <command>` or `--env-file .env`). If you need a specific "
            "value, ask the user."),
    "key": ("Use the key by path without reading it (`ssh -i PATH`, `ssh-add PATH`, `--key PATH`); "
            "to identify it, run `ssh-keygen -lf PATH` or read the matching .pub file. Otherwise "
            "ask the user."),
    "cred": ("Use the tool that owns these credentials instead of reading the file (for example "
             "`aws sts get-caller-identity`, `gh auth status`, `docker login`, `kubectl config "
             "view` or `current-context` (they hide the keys), `npm config list` (it hides tokens); "
             "pass the file by path, as in `kubectl --kubeconfig FILE`), or ask the user."),
    "secrets": ("Use the key names from a template or from the code that reads the file instead "
                "of the values, or ask the user for the value you need."),
    "dir": ("List it with `ls` if you need file names, read specific non-secret files by path "
            "(such as *.pub), or ask the user."),
    "store": ("Read stored output with `ctx get <address>` or `ctx search <pattern>`, which redact "
              "secrets, or ask the user."),
    "token": ("To see ctx's hooks run `ctx doctor`; to see other settings, ask the user to show "
              "the parts you need."),
    "tree": ("A recursive read is allowed when its output comes straight to you (a trailing "
             "`| head`, `| grep`, `| sort` or `| cut` is fine): ctx then removes the values of "
             "secret files from it. Drop the transform, redirect or `$(...)` (or `grep -o`), or "
             "read specific files by name, or ask the user."),
}
_FIX_WRITE = ("Ask the user to make this edit; add new variable names (without values) to the "
              "template, such as .env.example, instead.")
_TAIL = ("This is a safety rule: it does not adapt, and the same action through another command, "
         "a wrapper, a copy or an interpreter is blocked the same way.")


def _show(s: str, limit: int = 160) -> str:
    s = "".join(c if (" " <= c < "\x7f" or c > "\xa0") and not ("\ud800" <= c <= "\udfff")
                else "\\x%02x" % (ord(c) & 0xFF) for c in s[:limit + 1])
    return s if len(s) <= limit else s[:limit] + "..."


def _render(f: Finding, policy: SafetyPolicy) -> Denial:
    return _render_parts(f.rule, f.target, f.shown, f.verb, f.kind, policy)


def _render_parts(rule: str, target: str, shown: str, verb: str, kind: str, policy: SafetyPolicy) -> Denial:
    target = target[:4096]
    where = _show(shown) if shown == target else "%s (%s)" % (_show(shown), _show(target))
    v = _show(verb, 40)
    if rule == "secret-env-dump":
        reason = ("ctx safety: blocked `%s`: this command line loads the secret file %s into the "
                  "environment and then prints environment values, which would put the secrets in "
                  "your context. Run the program that needs the variables without echoing them; to "
                  "check that a variable is set, use `[ -n \"${NAME:+x}\" ] && echo set`; or ask the "
                  "user. %s" % (v, _show(target), _TAIL))
    elif rule.startswith("secret-"):
        action = {"secret-read": "reading %s %s", "secret-copy": "copying or archiving %s %s",
                  "secret-exfil": "sending %s %s off this machine",
                  "secret-write": "editing %s %s"}.get(rule, "reading %s %s")
        fix = _FIX_WRITE if rule == "secret-write" else _FIX.get(kind, _FIX["secrets"])
        reason = ("ctx safety: blocked %s via `%s`. Secret values must not enter your context or "
                  "leave this machine. %s %s" % (action % (_WHAT.get(kind, "a secret file"), where), v,
                                                  fix, _TAIL))
    else:
        action = "deleting" if rule == "delete-outside-root" else "writing to"
        tmps = ", ".join(policy.tmp_dirs) or "none"
        if policy.project_root:
            scope = "it is outside the project root %s and the temp dirs (%s)" % (_show(policy.project_root), tmps)
            fix = ("Write under the project root or a temp dir instead (for example %s/...)."
                   % (policy.tmp_dirs[0] if policy.tmp_dirs else policy.project_root))
        else:
            scope = ("the project root is unknown, so /, system directories, the home directory "
                     "and its dotfiles are protected")
            fix = "Write inside the project or a temp dir instead."
        reason = ("ctx safety: blocked %s %s via `%s`: %s. %s If the change outside is really "
                  "needed, ask the user to make it or to add the path to ctx's safety allow list. "
                  "This is a safety rule: it does not adapt." % (action, where, v, scope, fix))
    return Denial(rule, target, reason)


# (stamp, patterns) per config path: the config is read once per change, not per call.
_allow_cache: dict[str, tuple[int, tuple[str, ...]]] = {}


def allow_list(path: str | None = None) -> tuple[str, ...]:
    """The user's `safety_allow` patterns from ctx's config at `path` (the hook's, which the
    daemon is told), read here for both the shim and the daemon so their decisions stay
    identical (cached by the file's mtime)."""
    from reflex import config, paths
    path = path or paths.resolve().config
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return ()
    hit = _allow_cache.get(path)
    if hit is None or hit[0] != stamp:
        patterns = config.load(path).get("safety_allow") or ()
        hit = _allow_cache[path] = (stamp, tuple(p for p in patterns if isinstance(p, str) and p))
    return hit[1]
