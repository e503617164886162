"""What counts as a secret file, and what counts as outside the project (stdlib only).

Everything here is a pure function of path strings. What a path *resolves to* (a symlink
named notes.txt that points at .env, what a glob expands to) is asked of the disk by
reflex.safety.disk, and the answer is classified here like any other path.

Secret kinds, used to pick the remediation text:
    env     dotenv files: .env, .env.local, .env.production, prod.env, .envrc
            (not .env.example / .sample / .template / .dist / .schema / .defaults / .tmpl / .tpl)
    key     private key material: id_rsa / id_ed25519 ... anywhere (not *.pub), *.pem, *.key,
            *.p12, *.pfx, *.jks, *.keystore, *.ppk, *.kdbx, ssh host keys, anything in
            ~/.ssh except *.pub / known_hosts / config / authorized_keys, ~/.gnupg,
            ~/.password-store, ~/.local/share/keyrings
    cred    tool credentials: .netrc, _netrc, .git-credentials, .pgpass, .pypirc, .htpasswd,
            .vault-token, .npmrc, *credentials*.json, service-account*.json, kubeconfig files
            (kubeconfig, kubeconfig.yaml, prod.kubeconfig, kubeconfig-dev) and, in any
            directory, .docker/config.json, .kube/config, .aws/credentials, .config/gh/hosts.yml
            (LOCATED_SECRETS: a project can carry its own, pointed to by DOCKER_CONFIG etc.),
            ~/.aws/credentials (+ sso/cli caches), ~/.docker/config.json, ~/.kube/config,
            ~/.config/gh/hosts.yml, ~/.config/gcloud, ~/.azure, ~/.cargo/credentials[.toml],
            ~/.gem/credentials, /etc/shadow, /etc/gshadow, /proc/*/environ
    secrets secrets.{yaml,yml,json,toml,ini,env,txt} (also secrets.<x>.<ext>, secret.*),
            *.tfstate (Terraform state holds plaintext secrets)
    store   ctx's own store: $CTX_HOME/blobs, captures and spool hold raw command output
            (read it through `ctx get` / `ctx search`, which redact); $CTX_HOME/http-token is
            a credential (cred)
    dir     a directory that holds any of the home secrets above (~/.ssh, ~/.aws, home
            itself, /home, /, $CTX_HOME): reading it recursively reads them

A name keeps its kind under the decorations editors and tools add to copies: `.env~`,
`.env.swp`, `#.env#`, `.#.env`, `.id_rsa.swp`, `server.pem.bak`, `secrets.yaml.orig`,
`credentials.json (1)` are what they copy.
"""

from __future__ import annotations

import functools
import posixpath
import re

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from reflex.safety.model import Piece

_ENV_SAFE = frozenset({"example", "sample", "template", "dist", "schema", "defaults", "tmpl", "tpl"})
_KEY_EXT = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx")
_SSH_KEY = re.compile(r"id_(rsa|dsa|ecdsa|ed25519)(_sk)?([._\-].*)?\Z")
_HOST_KEY = re.compile(r"ssh_host_[a-z0-9]+_key\Z")
# .npmrc is secret anywhere: a project's own often holds an `_authToken` (`npm config list`
# shows the settings with the tokens hidden, which is what an agent needs).
_CRED_NAMES = frozenset({".netrc", "_netrc", ".git-credentials", ".pgpass", ".pypirc", ".htpasswd",
                         ".vault-token", ".npmrc"})
# kubeconfig files under any name kubectl users give them (`--kubeconfig prod.kubeconfig`,
# KUBECONFIG=kubeconfig-dev.yaml); not source files about them (kubeconfig.go, kubeconfig_test.py).
_KUBECONFIG = re.compile(r"(?:[\w.\-]*[._\-])?kubeconfig(?:[._\-][\w\-]+)*?(?:\.(?:ya?ml|json|conf|cfg|txt))?\Z")
_KUBECONFIG_SAFE = frozenset({"go", "py", "js", "ts", "rs", "java", "rb", "md", "sh", "c", "h", "cc", "cpp",
                              "kt", "scala", "cs", "php", "swift", "tf", "rst", "html", "example", "sample",
                              "template", "tmpl", "tpl", "dist"})
# Credentials known by their directory as well as their name, wherever that directory is:
# DOCKER_CONFIG=./.docker, KUBECONFIG=./.kube/config, AWS_SHARED_CREDENTIALS_FILE and a
# checked-in (or generated) copy of a home directory all put them inside projects.
LOCATED_SECRETS = (".docker/config.json", ".kube/config", ".aws/credentials", ".config/gh/hosts.yml")
_CRED_JSON = re.compile(r".*(credentials|service[-_]?account|serviceaccountkey).*\.json\Z")
_SECRETS_FILE = re.compile(r"secrets?(\.[\w\-]+)?\.(ya?ml|json|toml|ini|env|txt)\Z")
_SSH_PUBLIC = frozenset({"known_hosts", "known_hosts.old", "config", "authorized_keys",
                         "authorized_keys2", "environment", "rc"})

# Home-relative secret locations: (relative path, kind, everything-below-is-secret).
HOME_SECRETS = (
    (".ssh", "key", True),
    (".gnupg", "key", True),
    (".password-store", "key", True),
    (".local/share/keyrings", "key", True),
    (".aws/credentials", "cred", False),
    (".aws/sso/cache", "cred", True),
    (".aws/cli/cache", "cred", True),
    (".docker/config.json", "cred", False),
    (".kube/config", "cred", False),
    (".config/gh/hosts.yml", "cred", False),
    (".config/gcloud", "cred", True),
    (".azure", "cred", True),
    (".cargo/credentials", "cred", False),
    (".cargo/credentials.toml", "cred", False),
    (".gem/credentials", "cred", False),
    (".npmrc", "cred", False),
    (".netrc", "cred", False),
)

SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")

# Top-level directories that belong to the system; with an unknown project root these are
# still protected from writes and deletes.
SYSTEM_TOP = frozenset({"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt",
                        "proc", "root", "sbin", "snap", "sys", "usr", "var", "System",
                        "Library", "Applications", "private", "Users", "home"})

# Writes to these are harmless (and ubiquitous: `2>/dev/null`).
_DEVICE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero",
                           "/dev/full", "/dev/random", "/dev/urandom", "/dev/stdin"})

# Representative names for deciding whether a glob (or an unknown expansion) can name a
# secret: a pattern is secret-targeting when it matches one of these and none of the
# neutral names (so `cat *.pem` and `cat .en*` are reads of secrets, `cat *` is not).
SECRET_BASENAMES = (".env", ".env.local", ".env.production", ".envrc", "prod.env", "id_rsa",
                    "id_ed25519", "id_ecdsa", "id_dsa", "server.pem", "server.key", "cert.p12",
                    "cert.pfx", "release.jks", "app.keystore", ".netrc", ".pypirc",
                    ".git-credentials", ".pgpass", "credentials.json", "secrets.yaml",
                    "secrets.yml", "secrets.json", "secrets.toml", "terraform.tfstate", ".npmrc",
                    "kubeconfig", "kubeconfig.yaml")
NEUTRAL_BASENAMES = ("README.md", "main.py", "index.js", "Makefile", "notes.txt", "setup.cfg",
                     "a", "x.c", "Cargo.toml", "package.json", "config.yaml", "app.log")


# Decorations editors, merge tools and file managers add to a copy of a file. Each entry is
# removed once per round (a name can carry several: `.env.swp~`).
_DECORATION = re.compile(
    r"(?:~|\.~\d+~|\.(?:bak|backup|bk|old|orig|save|sav|saved|tmp|temp|copy|prev|rej|swp|swo|swn|swx"
    r"|un~|kate-swp|dpkg-old|dpkg-dist|dpkg-bak|rpmsave|rpmnew|ucf-old|ucf-dist|merge|local|base|remote)"
    r"|[ _-]copy(?: \d+)?| \(\d+\)| - copy(?: \(\d+\))?| \(conflicted copy[^)]*\)|\.\d{1,3}"
    r"|_(?:backup|base|local|remote)_\d+(?:\.[\w-]+)?|___jb_(?:tmp|old|bak)___)\Z")


_DECORATION_EXT = frozenset("""bak backup bk old orig save sav saved tmp temp copy prev rej swp swo swn swx
un~ kate-swp dpkg-old dpkg-dist dpkg-bak rpmsave rpmnew ucf-old ucf-dist merge local base remote""".split())


def _maybe_decorated(low: str) -> bool:
    """Cheap pre-check for _DECORATION (a regex anchored at the end scans the whole name)."""
    last = low[-1]
    if last in "~#)_0123456789" or low[0] == "#" or low.startswith((".#", "copy of ")):
        return True
    if "." in low and low.rsplit(".", 1)[1] in _DECORATION_EXT:
        return True
    return " copy" in low or "-copy" in low or "_copy" in low


def _undecorated(low: str) -> list[str]:
    """The names a decorated copy stands for: `#.env#` -> `.env`, `.id_rsa.swp` -> `id_rsa`."""
    out = []
    for _ in range(4):
        base = low
        if len(base) > 2 and base[0] == "#" and base[-1] == "#":
            base = base[1:-1]
        if base.startswith(".#"):
            base = base[2:]
        if base.startswith("copy of "):
            base = base[8:]
        base = _DECORATION.sub("", base)
        if base == low or not base:
            break
        out.append(base)
        if base.startswith(".") and len(base) > 1:
            out.append(base[1:])       # vim swap of a non-dot file: `.id_rsa.swp`
        low = base
    return out


# Every secret name (decorated or not) contains one of these: one C-speed search rules out
# the ordinary names (main.py, README.md) that are nearly all of what is asked.
_MAYBE_SECRET = re.compile(r"env|id_|key|pem|p12|pfx|jks|store|ppk|kdbx|netrc|cred|pgpass|pypirc|htpasswd"
                           r"|vault|secret|tfstate|account|npmrc|kubeconfig")


def located_kind(path: str) -> str | None:
    """Kind of a path that is secret by where it is as well as its name (LOCATED_SECRETS),
    in any directory (`proj/.docker/config.json`), editor copies included."""
    tail = path.rsplit("/", 2)
    if len(tail) < 2:
        return None
    parent, base = tail[-2], tail[-1].lower()
    if parent not in (".docker", ".kube", ".aws", "gh") or not base.startswith(("config", "credentials", "hosts")):
        return None
    names = [base] + (_undecorated(base) if _maybe_decorated(base) else [])
    for loc in LOCATED_SECRETS:
        d, name = loc.rsplit("/", 1)
        if name in names and (path.endswith("/" + d + "/" + tail[-1]) or path == d + "/" + tail[-1]):
            return "cred"
    return None


def basename_kind(name: str) -> str | None:
    """Secret kind of a file name wherever it lives (editor backups included), else None."""
    low = name.lower()
    if not low or not _MAYBE_SECRET.search(low):
        return None
    if _maybe_decorated(low):
        bases = _undecorated(low)
        if bases:
            # A decorated copy is what it copies: `.env~` is secret, `.env.example~` is not.
            for base in bases:
                kind = _plain_kind(base)
                if kind:
                    return kind
            return None
    return _plain_kind(low)


def _plain_kind(low: str) -> str | None:
    if low == ".env" or low == ".envrc":
        return "env"
    if low.startswith(".env."):
        segs = low.split(".")[2:]
        return None if _ENV_SAFE.intersection(segs) else "env"
    if low.endswith(".env") and len(low) > 4:
        return None if any(w in low for w in ("example", "sample", "template")) else "env"
    if _SSH_KEY.match(low):
        return None if low.endswith(".pub") else "key"
    if low.endswith(_KEY_EXT) or _HOST_KEY.match(low):
        return "key"
    if low in _CRED_NAMES or _CRED_JSON.match(low):
        return "cred"
    if "kubeconfig" in low and _KUBECONFIG.match(low) and not _KUBECONFIG_SAFE.intersection(
            low.replace("-", ".").replace("_", ".").split(".")):
        return "cred"
    if _SECRETS_FILE.match(low) and not _ENV_SAFE.intersection(low.split(".")):
        return "secrets"
    if low.endswith(".tfstate") or low.endswith(".tfstate.backup"):
        return "secrets"
    return None


def secret_kind(path: str | None, home: str | None, ctx_home: str | None = None) -> str | None:
    """Secret kind of a normalized path (absolute, or relative when the cwd is unknown)."""
    if not path:
        return None
    base = path.rsplit("/", 1)[-1]
    kind = (basename_kind(base) or located_kind(path)) if base else None
    if kind:
        return kind
    if not path.startswith("/"):
        return None
    if ctx_home and path.startswith(ctx_home):
        kind = _ctx_kind(path, ctx_home)
        if kind:
            return kind
    if path in SYSTEM_SECRETS:
        return "cred"
    if path.startswith("/proc/") and base == "environ":
        return "cred"
    if home and home != "/":
        if path.startswith(home + "/"):
            rel = path[len(home) + 1:]
            if rel[:1] != ".":
                return None             # every home secret lives under a dot-entry of home
            for loc, k, below in HOME_SECRETS:
                if rel == loc:
                    if loc == ".ssh":
                        return "dir"
                    return "dir" if below else k
                if below and rel.startswith(loc + "/"):
                    if loc == ".ssh":
                        tail = rel.rsplit("/", 1)[-1]
                        if tail in _SSH_PUBLIC or tail.endswith(".pub") or tail.startswith("known_hosts"):
                            return None
                    return k
                if loc.startswith(rel + "/"):
                    return "dir"  # an ancestor inside home, e.g. ~/.aws or ~/.config
            return None
        if path == home or home.startswith(path.rstrip("/") + "/") or path == "/":
            return "dir"
    elif path == "/":
        return "dir"
    return None


# ctx's own files that hold what the agent must not read directly.
_CTX_STORE = ("blobs", "captures", "spool")


def _ctx_kind(path: str, ctx_home: str) -> str | None:
    if path == ctx_home:
        return "dir"
    if not path.startswith(ctx_home + "/"):
        return None
    rel = path[len(ctx_home) + 1:]
    if rel == "http-token" or rel.startswith("http-token."):
        return "cred"
    top = rel.split("/", 1)[0]
    return "store" if top in _CTX_STORE else None


def is_token_file(path: str, token_files: Sequence[str]) -> bool:
    """A settings file `ctx install --transport http` wrote the token into, or a copy the
    installer made of one (`settings.json.ctx-backup-<time>`, its `.ctx-tmp-<pid>`)."""
    for t in token_files:
        if path == t or (path.startswith(t + ".ctx-") and path[len(t) + 5:].startswith(("backup-", "tmp-"))):
            return True
    return False


def is_under(path: str, directory: str) -> bool:
    """True when `path` is `directory` or lies below it (both normalized)."""
    if directory == "/":
        return path.startswith("/")
    return path == directory or path.startswith(directory + "/")


def is_device_sink(path: str) -> bool:
    return path in _DEVICE_SINKS or path.startswith("/dev/fd/") or path.startswith("/proc/self/fd/")


def is_outside(path: str, root: str | None, home: str | None, tmp_dirs: Iterable[str]) -> bool:
    """True when writing (or deleting) `path` leaves the project root and the temp dirs.

    The root and the temp dirs themselves count as inside (`cp x /tmp`); the caller decides
    that deleting a temp dir itself is not. With an unknown root only `/`, system
    directories, the home directory itself, its ancestors and its dot-entries (~/.bashrc,
    ~/.ssh/...) are protected.
    """
    for t in tmp_dirs:
        if is_under(path, t):
            return False
    if root is not None:
        return not is_under(path, root)
    if path == "/" or (home and (path == home or is_under(home, path))):
        return True
    if home and home != "/" and is_under(path, home):
        rel = path[len(home) + 1:]
        return rel.startswith(".")
    top = path[1:].split("/", 1)[0]
    return top in SYSTEM_TOP


def glob_regex(pieces: Iterable[Piece] | Iterable[list[str]]) -> str:
    """Regex source for a path pattern given as (kind, text) pieces.

    kind "lit" is literal text, "glob" an unquoted glob token (`*`, `?`, `[...]`), "any" an
    unknown expansion (matches anything, slashes and leading dots included). A glob token
    at the start of a path component does not match a leading dot, as in bash.
    """
    out = []
    at_component_start = True
    for kind, text in pieces:
        if kind == "lit":
            if text:
                out.append(re.escape(text))
                at_component_start = text.endswith("/")
            continue
        if kind == "any":
            out.append(".*")
            at_component_start = False
            continue
        guard = "(?!\\.)" if at_component_start else ""
        if text == "*":
            out.append(guard + "[^/]*")
        elif text == "?":
            out.append(guard + "[^/]")
        else:
            out.append(guard + _bracket(text[1:-1]))
        at_component_start = False
    return "".join(out)


def _bracket(body: str) -> str:
    """A regex class for a glob bracket body; ranges that are not ascending become literals."""
    neg = body[:1] in ("!", "^")
    if neg:
        body = body[1:]
    items = []
    i = 0
    while i < len(body):
        c = body[i]
        if i + 2 < len(body) and body[i + 1] == "-" and c <= body[i + 2]:
            items.append(_cls_char(c) + "-" + _cls_char(body[i + 2]))
            i += 3
            continue
        items.append(_cls_char(c))
        i += 1
    if not items:
        return "[^/]" if neg else "(?!)"
    return ("[^/" if neg else "[") + "".join(items) + "]"


def _cls_char(c: str) -> str:
    return "\\" + c if c in "\\]^-[" else c


@functools.lru_cache(maxsize=256)   # a pure function of its arguments: caching changes no answer
def pattern_reps(home: str | None, cwd: str | None, dirs: bool = False) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Representative secret paths and neutral paths to test a pattern against.

    dirs=True adds the secret directories themselves (~/.ssh, ~/.aws), for recursive readers.
    """
    secret = []
    neutral = ["/etc/hosts", "/usr/lib/libx.so", "/tmp/x.txt"]
    if home:
        h = home.rstrip("/")
        secret += [h + "/.ssh/id_rsa", h + "/.ssh/deploy_key", h + "/.gnupg/secring.gpg",
                   h + "/.aws/credentials", h + "/.docker/config.json",
                   h + "/.kube/config", h + "/.config/gh/hosts.yml", h + "/.config/gcloud/credentials.db",
                   h + "/.npmrc", h + "/.netrc", h + "/.git-credentials", h + "/.azure/accessTokens.json"]
        # Only non-dot neutrals under home: a pattern that reaches into dot-directories
        # (`~/.*/*`) can reach ~/.ssh, and that is what it should be judged by.
        neutral += [h + "/notes.txt", h + "/proj/README.md", h + "/proj/src/main.py"]
        if dirs:
            secret += [h + "/.ssh", h + "/.aws", h + "/.gnupg", h + "/.config/gcloud", h]
    secret += list(SYSTEM_SECRETS[:2])
    if cwd:
        c = cwd.rstrip("/")
        secret += [c + "/" + b for b in SECRET_BASENAMES + LOCATED_SECRETS]
        neutral += [c + "/" + b for b in NEUTRAL_BASENAMES] + [c + "/src/main.py"]
    # A neutral path inside a secret directory (cwd = ~/.ssh) is not neutral.
    return tuple(secret), tuple(p for p in neutral if not secret_kind(p, home))


def pattern_is_secret(regex_src: str | None, basename_src: str | None, home: str | None, cwd: str | None,
                      dirs: bool = False) -> str | None:
    """Whether a path pattern can name a secret, and names nothing neutral.

    `regex_src` matches whole absolute paths (None when the pattern is relative and the cwd
    is unknown); `basename_src` matches the last component (None when it is unknown).
    Returns the matched representative (a path) or None.
    """
    secret, neutral = pattern_reps(home, cwd, dirs)
    if regex_src is not None:
        rx = re.compile(regex_src + r"\Z", re.DOTALL)
        hit = next((p for p in secret if rx.match(p)), None)
        if hit and not any(rx.match(p) for p in neutral):
            return hit
    if basename_src is not None:
        rb = re.compile(basename_src + r"\Z", re.DOTALL)
        hit = next((b for b in SECRET_BASENAMES if rb.match(b)), None)
        if hit and not any(rb.match(b) for b in NEUTRAL_BASENAMES):
            return hit
    return None


def normalize(path: str) -> str:
    """posixpath.normpath without the POSIX `//` special case."""
    p = posixpath.normpath(path)
    if p.startswith("//"):
        p = "/" + p.lstrip("/")
    return p
