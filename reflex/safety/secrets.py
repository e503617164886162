"""The values held by the secret files around a command, and their removal from its output.

`ctx run` stores a command's output and shows it (whole, sliced or digested). A command the
safety plane lets through can still print a secret: a recursive search that passes over
.env, a test that prints a setting loaded from it, a symlink nobody spelled. So before the
output is stored, sliced, shown or spooled, `ctx run` replaces every value of the secret
files it can find with `[REDACTED:<file>]`, and says so in one census line. What is known
here is exact (the bytes of the files), so nothing else is touched: a key name stays
(`API_KEY=[REDACTED:.env]`), and so does any value that is not in a secret file.

Which files (a census, bounded in files, bytes and time):

* every file named like a secret (reflex.safety.paths: .env*, keys, credentials, their
  editor backups) under the project root and under every directory the command reads
  recursively (reflex.safety.plane.tree_roots), symlinks resolved; dependency and cache
  directories (.git, node_modules, virtualenvs, caches) are skipped;
* the home secrets (~/.ssh private keys, ~/.aws/credentials, ~/.netrc ...) and ctx's own
  HTTP token, wherever the command runs.

Which values: for env, credential and secrets files, the value of every `KEY=VALUE`,
`key: value` and `"key": "value"` line (quotes removed; a password inside a URL separately;
`\\n`-escaped and multi-line values line by line); for key material, every line. Values
shorter than MIN_VALUE bytes, numbers and a few words that are never secret (true, false,
localhost, production ...) are kept: replacing them would rewrite ordinary output. A
value is also matched in its JSON-escaped form (`rg --json`), and through colour codes:
when a value only appears once ANSI escapes are removed, the output is stored without them.

Programs also print *pieces* of values: pytest shows `'sk_live_4eC3...Zp9Q2'`, a log cuts
a line, `head -c` stops mid-value. So any run of PARTIAL or more bytes of a random-looking
value (long, no spaces, no `://`, mixed letters and digits) is replaced as well: found by
looking up the value's 6-byte pieces at every 7th position of the long tokens of the output
(any common run of 12 bytes covers one such position), then extending the match.

stdlib-only: `ctx run` imports it on every run.
"""

from __future__ import annotations

import os
import re
import time

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

MIN_VALUE = 6
PARTIAL = 12            # this many contiguous bytes of a random-looking value count as a leak
_GRAM = 6
_STRIDE = PARTIAL - _GRAM + 1   # any run of PARTIAL bytes covers a probe at this stride
MAX_FILES = 256
MAX_FILE_BYTES = 1 << 20
MAX_VALUES = 4096
MAX_ENTRIES = 200000
WALK_SECONDS = 1.0
CHUNK = 8 << 20

# Directories a census does not descend into: dependencies, caches, VCS internals.
PRUNE = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox",
                   ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", "site-packages", ".gradle",
                   ".terraform", "target", ".next", ".yarn", "bower_components"})

_NEVER_SECRET = frozenset(b"""true false null none yes no on off localhost development production
staging testing debug info warning error enabled disabled 127.0.0.1 0.0.0.0 utf-8 default""".split())

_ASSIGN = re.compile(rb"^(?:export\s+)?[\"']?[A-Za-z_][\w.\-]*[\"']?\s*[=:]\s*(.*)$")
# .npmrc scopes a setting to a registry: `//registry.npmjs.org/:_authToken=VALUE` (not a comment).
# `"key": "value"` anywhere in a line: a compact JSON file (`{"auths": {"x": {"auth": "..."}}}`).
_JSON_PAIR = re.compile(rb'"[^"\\\n]{1,256}"\s*:\s*"((?:[^"\\\n]|\\.){1,4096})"')
_NPMRC_SCOPED = re.compile(rb"^//\S*?:[\w.\-]+\s*=\s*(.*)$")
_URL_PASSWORD = re.compile(rb"://[^/\s:@]+:([^/\s@]+)@")
_KEYWORD_TOKEN = re.compile(rb"(?i)\b(?:password|passwd|secret|token|login)\s+(\S+)")
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_TOKEN = re.compile(rb"[A-Za-z0-9+/=_.~:@%\-]{" + str(PARTIAL).encode() + rb",}")


class Census:
    """Secret files found (path, label) and their values (value bytes -> label)."""

    __slots__ = ("files", "values", "truncated", "_grams")

    def __init__(self) -> None:
        self.files: list[tuple[str, str]] = []     # (path, label)
        self.values: dict[bytes, str] = {}         # value -> label of the file it came from
        self.truncated = False
        self._grams: dict[bytes, list[tuple[bytes, int]]] | None = None

    def grams(self) -> dict[bytes, list[tuple[bytes, int]]]:
        """8-byte piece -> [(value, offset)] for the random-looking values (see PARTIAL)."""
        if self._grams is None:
            self._grams = {}
            for v in self.values:
                if _random_looking(v):
                    for i in range(len(v) - _GRAM + 1):
                        self._grams.setdefault(v[i:i + _GRAM], []).append((v, i))
        return self._grams

    def add_file(self, path: str, kind: str, label: str) -> None:
        if len(self.files) >= MAX_FILES or any(p == path for p, _ in self.files):
            return
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except (OSError, ValueError):
            return
        self.files.append((path, label))
        if len(data) > MAX_FILE_BYTES:
            self.truncated = True
            data = data[:MAX_FILE_BYTES]
        for v in values_of(data, kind):
            if len(self.values) >= MAX_VALUES:
                self.truncated = True
                return
            self.values.setdefault(v, label)


def values_of(data: bytes, kind: str) -> list[bytes]:
    """The secret values in a file's bytes (see the module docstring)."""
    out = []
    for raw in data.splitlines():
        line = raw.strip()
        scoped = _NPMRC_SCOPED.match(line) if line.startswith(b"//") else None
        if scoped:
            v = _unquote(scoped.group(1))
            if _worth_hiding(v):
                out.append(v)
            continue
        if not line or line.startswith((b"#", b"//", b";")) or line.startswith(b"-----"):
            continue
        if line in (b"{", b"}", b"[", b"]", b"},", b"],"):
            continue
        found: list[bytes] = []
        m = _ASSIGN.match(line) if kind != "key" else None
        if m:
            found.append(_unquote(m.group(1)))
        else:
            found.append(_unquote(line))
        found += _URL_PASSWORD.findall(line) + [_unquote(t) for t in _KEYWORD_TOKEN.findall(line)]
        if line.count(b'"') > 4:
            found += _JSON_PAIR.findall(line)
        for v in found:
            for part in v.split(b"\\n"):
                part = part.strip()
                if _worth_hiding(part):
                    out.append(part)
                    esc = part.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
                    if esc != part:
                        out.append(esc)
    return out


def _unquote(v: bytes) -> bytes:
    v = v.strip().rstrip(b",").strip()
    if len(v) >= 2 and v[0] == v[-1] and v[:1] in (b'"', b"'", b"`"):
        return v[1:-1]
    if v[:1] not in (b'"', b"'") and b" #" in v:
        v = v.split(b" #", 1)[0].rstrip()      # dotenv: an inline comment after a bare value
    return v


def _random_looking(v: bytes) -> bool:
    if len(v) < 16 or b"://" in v or b" " in v or len(set(v)) < 8:
        return False
    classes = (any(48 <= c <= 57 for c in v), any(97 <= c <= 122 for c in v), any(65 <= c <= 90 for c in v))
    return sum(classes) >= 2


def _worth_hiding(v: bytes) -> bool:
    if len(v) < MIN_VALUE or v.lower() in _NEVER_SECRET:
        return False
    return not v.replace(b".", b"").replace(b"-", b"").replace(b"_", b"").isdigit()


# -- finding the files ----------------------------------------------------------------------

def collect(cwd: str, environ: Mapping[str, str] | None = None, command: str | None = None,
            deadline: float | None = None) -> Census:
    """The census for a command run in `cwd` (see the module docstring). Never raises."""
    from reflex import paths, project
    from reflex.safety.paths import HOME_SECRETS
    env = os.environ if environ is None else environ
    census = Census()
    home = env.get("HOME") or os.path.expanduser("~")
    home = home.rstrip("/") or "/"
    ctx_paths = paths.resolve(env)
    ctx_home = ctx_paths.home
    deadline = deadline or (time.monotonic() + WALK_SECONDS)
    try:
        census.add_file(os.path.join(ctx_home, "http-token"), "cred", "ctx http-token")
        for loc, kind, below in HOME_SECRETS:
            p = os.path.join(home, loc)
            if below:
                _walk(census, p, home, ctx_home, deadline, limit=500, label_base=home)
            elif os.path.isfile(p):
                census.add_file(p, kind, "~/" + loc)
        try:
            root = project.project_root(cwd, env)
        except Exception:  # noqa: BLE001 - a census without the project is still a census
            root = cwd
        # (directory, deep): the project is walked whole; a directory that is not a project
        # (home, /, /tmp: a cwd outside any project) only for its own files, since walking it
        # whole would cost every run up to the time limit. What the command reads recursively
        # is walked whole, wherever it is.
        roots = [(root, not _broad(root, home)), (cwd, not _broad(cwd, home))]
        if command and any(s in command for s in _MAY_LEAVE_CWD):
            roots += [(r, True) for r in _tree_roots(command, cwd, root, home, env, ctx_home) if r]
        cache = DirCache(ctx_paths.census, "\0".join((os.path.realpath(root or cwd), home, ctx_home)))
        seen: list[str] = []
        for r, deep in sorted(((os.path.realpath(r), d) for r, d in roots if r), key=lambda x: not x[1]):
            if r == "/" or any(r == s or r.startswith(s.rstrip("/") + "/") for s in seen):
                continue
            if deep:
                seen.append(r)
            _walk(census, r, home, ctx_home, deadline, label_base=root, depth=None if deep else 0, cache=cache)
        cache.save()
    except Exception:  # noqa: BLE001 - a census that fails part-way keeps what it found
        census.truncated = True
    return census


# Without one of these, every path a command names lies under its cwd (symlinked directories
# are followed by the walk): the safety plane need not be asked where it reads.
_MAY_LEAVE_CWD = ("/", "..", "~", "$", "`", "cd", "pushd", "-C")


def _tree_roots(command: str, cwd: str, root: str | None, home: str, env: Mapping[str, str],
                ctx_home: str) -> tuple[str | None, ...]:
    from reflex.safety import plane as safety
    policy = safety.SafetyPolicy(root, home, allow=safety.allow_list(), ctx_home=ctx_home)
    return safety.tree_roots(command, cwd, policy)


def _broad(d: str | None, home: str) -> bool:
    """A directory that is not a project: home or above it, /, a temp dir itself."""
    if not d:
        return True
    d = d.rstrip("/") or "/"
    return d == "/" or d == home or home.startswith(d + "/") or d in ("/tmp", "/var/tmp", "/private/tmp")


def _walk(census: Census, top: str, home: str, ctx_home: str | None, deadline: float, limit: int = MAX_ENTRIES,
          label_base: str | None = None, depth: int | None = None, cache: DirCache | None = None) -> None:
    from reflex.safety.paths import basename_kind, located_kind, secret_kind

    def kind_of(path: str, name: str) -> str | None:
        # Outside home's dot-entries and CTX_HOME only a name (or a name in its directory:
        # .docker/config.json) makes a file secret.
        if path.startswith(home + "/.") or (ctx_home and path.startswith(ctx_home + "/")):
            return secret_kind(path, home, ctx_home)
        return basename_kind(name) or located_kind(path)
    stack = [top]
    linked: list[tuple[str, str]] = []  # (path, real path) of directories reached through a symlink: walked
    try:                # last, so a file reachable directly is labelled by its own path
        visited = {os.path.realpath(top)}
    except (OSError, ValueError):
        return
    seen = 0
    while stack or linked:
        if not stack:
            path, real = linked.pop()
            if real in visited:
                continue                # a cycle, or a tree already walked
            visited.add(real)
            stack.append(path)
        d = stack.pop()
        listing = cache.listing(d, kind_of) if cache is not None else _listing(d, kind_of)
        if listing is None:
            continue
        venv, count, entries = listing
        if d != top and venv:
            continue                                    # a virtualenv, whatever its name (.env)
        base = d.rstrip("/") + "/"
        for index, name, kind in entries:
            if seen + index + 1 > limit or time.monotonic() > deadline:
                census.truncated = True
                return
            path = base + name
            try:
                if kind == _LINK:
                    target = os.path.realpath(path)
                    if os.path.isdir(target):
                        if secret_kind(target, home, ctx_home) is None and name not in PRUNE and depth is None:
                            linked.append((path, target))
                        continue
                    found = kind_of(path, name) or secret_kind(target, home, ctx_home)
                    if found and found not in ("dir", "store") and os.path.isfile(target):
                        census.add_file(target, found, _label(path, label_base))
                elif kind == _DIR:
                    # A directory tree without symlinks has no cycles: only linked ones are checked.
                    if depth is None:
                        stack.append(path)
                else:
                    census.add_file(path, kind, _label(path, label_base))
            except (OSError, ValueError):
                continue
        seen += count
        if seen > limit or (count and time.monotonic() > deadline):
            census.truncated = True
            return


# What a directory's listing keeps of an entry, besides a secret file's kind.
_DIR, _LINK = "/dir", "/link"


Listing = tuple[bool, int, list[tuple[int, str, str]]]


def _listing(d: str, kind_of: Callable[[str, str], str | None]) -> Listing | None:
    """What the walk needs of directory d: (holds pyvenv.cfg, its number of entries, [(index, name,
    what)] of its symlinks (_LINK), its subdirectories outside PRUNE (_DIR) and its secret files
    (their kind)), in the order the directory lists them; None if it cannot be listed."""
    try:
        with os.scandir(d) as it:
            entries = list(it)
    except (OSError, ValueError):
        return None
    base = d.rstrip("/") + "/"
    out = []
    for i, e in enumerate(entries):
        try:
            if e.is_symlink():
                out.append((i, e.name, _LINK))
            elif e.is_dir(follow_symlinks=False):
                if e.name not in PRUNE:
                    out.append((i, e.name, _DIR))
            else:
                kind = kind_of(base + e.name, e.name)
                if kind and kind not in ("dir", "store") and e.is_file(follow_symlinks=False):
                    out.append((i, e.name, kind))
        except (OSError, ValueError):
            continue
    return any(e.name == "pyvenv.cfg" for e in entries), len(entries), out


class DirCache:
    """The walk's listings of a project's directories, kept between `ctx run`s (CTX_HOME/census/).

    A census walks the whole project on every run: a few ms here, its whole time limit (and then
    an incomplete census) in a repository of a few hundred thousand files.  A directory's listing
    depends only on the names and types of its entries, and adding, removing or renaming one
    changes the directory's mtime and ctime; so a listing is reused while the directory's
    (device, inode, mtime, ctime) are those it was read with, and a stat replaces the scan.  The
    ctime matters: a tool can set the mtime back (tar, rsync -a, touch -d), and nothing sets the
    ctime back.  A directory changed within RACY_NS of the listing is not kept (a second change
    in the same clock tick would leave its times as they were).  Only names and kinds are kept,
    never values: every secret file is read afresh on every run.  The cache file lives in ctx's
    own verified directory and is opened without following links; an unreadable or foreign one
    is ignored (and replaced)."""

    VERSION = 2         # 2: .npmrc, kubeconfig and .docker/config.json anywhere are secret
    RACY_NS = 2_000_000_000

    def __init__(self, directory: str | None, key: str) -> None:
        """directory: where the listings live (Paths.census; None keeps none); key: the walk's
        (project root, home, CTX_HOME), which a listing's secret kinds depend on."""
        import hashlib
        self.dir = directory
        self.name = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".json"
        self.old: dict = self._load()
        self.new: dict = {}
        self.now_ns = time.time_ns()

    def listing(self, d: str, kind_of: Callable[[str, str], str | None]) -> Listing | None:
        try:
            st = os.stat(d)
        except (OSError, ValueError):
            return None
        stamp = [st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns]
        hit = self.old.get(d)
        if isinstance(hit, list) and len(hit) == 4 and hit[0] == stamp:
            try:
                got = (bool(hit[1]), int(hit[2]), [(int(i), str(n), str(k)) for i, n, k in hit[3]])
                self.new[d] = hit
                return got
            except (TypeError, ValueError):
                pass
        fresh = _listing(d, kind_of)
        if fresh is not None and max(st.st_mtime_ns, st.st_ctime_ns) < self.now_ns - self.RACY_NS:
            self.new[d] = [stamp, fresh[0], fresh[1], [list(x) for x in fresh[2]]]
        return fresh

    def _load(self) -> dict:
        if self.dir is None:
            return {}
        import json
        from reflex import paths
        try:
            dfd = paths.open_private_subdir(self.dir)
            try:
                fd = paths.open_private_file(dfd, self.name, os.O_RDONLY)
            finally:
                os.close(dfd)
            with os.fdopen(fd, "rb") as f:
                data = json.loads(f.read())
        except (OSError, ValueError, paths.UntrustedPath):
            return {}
        dirs = data.get("dirs") if isinstance(data, dict) and data.get("v") == self.VERSION else None
        return dirs if isinstance(dirs, dict) else {}

    def save(self) -> None:
        if self.dir is None or self.new == self.old:
            return
        import json
        from reflex import paths
        tmp = "%s.%d.tmp" % (self.name, os.getpid())
        try:
            dfd = paths.open_private_subdir(self.dir)
            try:
                fd = paths.open_private_file(dfd, tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
                    json.dump({"v": self.VERSION, "dirs": self.new}, f, separators=(",", ":"))
                os.replace(tmp, self.name, src_dir_fd=dfd, dst_dir_fd=dfd)
            finally:
                os.close(dfd)
        except (OSError, ValueError, paths.UntrustedPath):
            pass      # the next run walks again: a cache that cannot be written costs only time


def _label(path: str, base: str | None) -> str:
    if base and path.startswith(base.rstrip("/") + "/"):
        return path[len(base.rstrip("/")) + 1:]
    return path


# -- redacting ------------------------------------------------------------------------------

def _pattern(values: Iterable[bytes]) -> re.Pattern[bytes]:
    alts = sorted(values, key=len, reverse=True)
    return re.compile(b"|".join(re.escape(v) for v in alts))


def _marker(label: str) -> bytes:
    return b"[REDACTED:" + label.encode("utf-8", "replace").replace(b"]", b")")[:120] + b"]"


def redact_bytes(data: bytes, census: Census) -> tuple[bytes, int, dict[str, int]]:
    """-> (redacted data, number of values replaced, {file label: count})."""
    if not census.values or not data:
        return data, 0, {}
    present = [v for v in census.values if v in data]
    if b"\x1b" in data and census.values:
        # Colour codes inside a value (`grep --color=always`) hide it from an exact match:
        # if removing them reveals more values, the output is kept without them.
        stripped = _ANSI.sub(b"", data)
        more = [v for v in census.values if v in stripped]
        if len(more) > len(present):
            data, present = stripped, more
    if not present and not census.grams():
        return data, 0, {}
    labels: dict[str, int] = {}

    def repl(m: re.Match[bytes]) -> bytes:
        label = census.values[m.group(0)]
        labels[label] = labels.get(label, 0) + 1
        return _marker(label)
    out = _pattern(present).sub(repl, data) if present else data
    if census.grams():
        out = _redact_pieces(out, census, labels)
    return out, sum(labels.values()), labels


def _redact_pieces(data: bytes, census: Census, labels: dict[str, int]) -> bytes:
    """Replace runs of PARTIAL+ bytes of a random-looking value (see the module docstring).

    Tokens are found and deduplicated at C speed (test logs repeat most of theirs); only the
    distinct long tokens are probed in Python, and each piece found is then replaced
    everywhere with bytes.replace."""
    grams = census.grams()
    get = grams.get
    pieces: dict[bytes, str] = {}
    for tok in set(_TOKEN.findall(data)):
        n = len(tok)
        for p in (*range(0, n - _GRAM, _STRIDE), n - _GRAM):
            refs = get(tok[p:p + _GRAM])
            if refs is None:
                continue
            for v, i in refs:
                base = p - i
                a, b = p, p + _GRAM
                while a > 0 and a > base and tok[a - 1] == v[a - 1 - base]:
                    a -= 1
                while b < n and b - base < len(v) and tok[b] == v[b - base]:
                    b += 1
                if b - a >= PARTIAL:
                    pieces[tok[a:b]] = census.values[v]
        if len(pieces) > 10000:
            break
    for piece in sorted(pieces, key=len, reverse=True):
        count = data.count(piece)
        if count:
            label = pieces[piece]
            data = data.replace(piece, _marker(label))
            labels[label] = labels.get(label, 0) + count
    return data


def redact_capture(fd: int, path: str, census: Census, chunk: int = CHUNK) -> tuple[int, dict[str, int]]:
    """Redact the capture file `path` (open as `fd`). -> (values replaced, {label: count}).

    When something is replaced, the redacted output is written beside the capture and renamed
    over it, and `fd` is pointed at the new file (dup2), so everything after (slicer, stdout,
    daemon, spool) sees only it. Large captures are processed in line-aligned chunks, so
    memory stays bounded for any output size."""
    if not census.values:
        return 0, {}
    size = os.fstat(fd).st_size
    if size <= 4 * chunk:
        new, total, labels = redact_bytes(os.pread(fd, size, 0), census)
        if total:
            _replace(fd, path, [new])
        return total, labels
    tmp = path + ".redacted"
    out = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    total, labels = 0, {}
    try:
        longest = max(len(v) for v in census.values)
        pos, carry, wpos = 0, b"", 0
        while True:
            piece = os.pread(fd, chunk, pos) if pos < size else b""
            pos += len(piece)
            buf = carry + piece
            final = not piece
            cut = len(buf)
            if not final:
                # A value never spans lines: cut after the last newline (else keep an overlap
                # as long as the longest value), and carry the rest to the next chunk.
                nl = buf.rfind(b"\n")
                cut = nl + 1 if nl >= 0 else max(0, len(buf) - longest)
            red, n, lab = redact_bytes(buf[:cut], census)
            carry = buf[cut:]
            total += n
            for k, c in lab.items():
                labels[k] = labels.get(k, 0) + c
            _pwrite_all(out, red, wpos)
            wpos += len(red)
            if final:
                break
        if total:
            os.replace(tmp, path)
            os.dup2(out, fd)
        else:
            os.unlink(tmp)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        os.close(out)
    return total, labels


def _replace(fd: int, path: str, pieces: Iterable[bytes]) -> None:
    tmp = path + ".redacted"
    out = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        wpos = 0
        for piece in pieces:
            _pwrite_all(out, piece, wpos)
            wpos += len(piece)
        os.replace(tmp, path)
        os.dup2(out, fd)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        os.close(out)


def _pwrite_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        offset += n
        view = view[n:]


def census_line(count: int, labels: Iterable[str]) -> str:
    """What `ctx run` prints when it redacted something (labels: file names, never values)."""
    names = sorted(labels)
    shown = ", ".join(names[:6]) + (" and %d more" % (len(names) - 6) if len(names) > 6 else "")
    return ("[ctx] redacted %d secret value%s (from %s): secret file values never reach your context. "
            "Use the variable names (e.g. from .env.example), or ask the user for a value.\n"
            % (count, "" if count == 1 else "s", shown))
