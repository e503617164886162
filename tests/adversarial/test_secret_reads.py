"""Secret reads that must not leak (issue 16, class 2), end to end.

A real project holds real secret files, each with its own canary value: .env, an editor
backup of it, a private key, a secrets.yaml, a symlink to .env under an innocent name, a
symlink to ~/.ssh, a directory whose dotfile only `dotglob` reaches, a test that prints a
value it loads from .env; the home has an SSH key and AWS credentials; CTX_HOME has the HTTP
token. Every case is a call an agent could make, by class. For each one the suite:

1. sends the PreToolUse payload through the shim's own code (reflex.shim.hook.deliver) to a real
   daemon on a real socket, and checks that the answer is byte-identical to what the shim
   answers alone (reflex.shim.fallback, the daemon-down path) whenever the safety plane
   decides;
2. checks the decision class the table expects (deny / redact / rewrite / pass);
3. does what Claude Code does with the answer: nothing for a deny; run the rewritten command
   (`ctx run --raw -- ...`) or the call itself; for a Grep, run Claude Code's own ripgrep
   with the flags and glob splitting Claude Code uses; for a Read, read the file;
4. asserts that no canary (not even a 12-character piece of one) is in what the agent sees.

Every leaking case first proves it can fail: the same call run without ctx prints a canary.
The last test searches everything ctx stored: every blob (decompressed), the ledger and its
WAL, spool, captures, the log, and the answers of `ctx get` / `ctx search`.

Add a case to CASES to cover a new attack of an existing class; the expected outcomes are
documented in docs/safety.md.
"""

import glob
import json
import os
import resource
import secrets
import shutil
import sqlite3
import subprocess
import sys
import zlib
from dataclasses import dataclass, field

import pytest

from tests.conftest import REPO, TIKTOKEN_DIR, DaemonProc, _kill_strays

VENV_BIN = os.path.dirname(sys.executable)
OUT_LIMIT = 64 << 20          # RLIMIT_FSIZE for every child: no bug can fill the disk
RUN_TIMEOUT = 60


def _claude_rg():
    """Claude Code's bundled ripgrep (the CLI runs as rg when invoked under that name)."""
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(claude_agent_sdk.__file__), "_bundled", "claude")
    return path if os.access(path, os.X_OK) else None


# -- the world ------------------------------------------------------------------------------

class World:
    """The project, home and CTX_HOME on disk, the canaries, and a running daemon."""

    def __init__(self, root):
        self.root = root
        self.proj = os.path.join(root, "proj")
        self.home = os.path.join(root, "home")
        self.ctx_home = os.path.join(root, "ctxhome")
        self.bin = os.path.join(root, "bin")
        self.scratch = os.path.join(root, "scratch")   # where attacks leave copies: outside the project
        tag = secrets.token_hex(10)
        names = ("env", "envbak", "envsave", "pem", "yaml", "dotlocal", "ssh", "aws", "token", "gitcred",
                 "npmrc", "docker", "kubeconfig", "homekube", "homegh")
        self.canaries = {n: "ctxcanary%s%s" % (n, tag) for n in names}
        self.daemon = None

    def env(self):
        e = {"PATH": self.bin + ":" + VENV_BIN + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
             "HOME": self.home, "CTX_HOME": self.ctx_home, "CLAUDE_PROJECT_DIR": self.proj,
             "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "GIT_CONFIG_NOSYSTEM": "1",
             "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}    # the project's pytest: seconds, not tens
        if TIKTOKEN_DIR:
            e["TIKTOKEN_CACHE_DIR"] = os.path.abspath(TIKTOKEN_DIR)
        return e

    def build(self):
        c = self.canaries
        files = {
            "proj/.env": "API_KEY=%s\nDEBUG=1\n" % c["env"],
            "proj/.env~": "API_KEY=%s\n" % c["envbak"],
            "proj/.env.save": "API_KEY=%s\n" % c["envsave"],
            "proj/.env.example": "API_KEY=\n",
            "proj/README.md": "Set API_KEY in .env (see .env.example). Ask for the db password.\n",
            "proj/config/server.pem": "-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n" % c["pem"],
            "proj/config/secrets.yaml": "db_password: %s\nregion: eu-west-1\n" % c["yaml"],
            "proj/config/app.yaml": "db_password_env: DB_PASSWORD\n",
            "proj/dot/.env.local": "API_KEY=%s\n" % c["dotlocal"],
            "proj/dot/readme.txt": "nothing secret here\n",
            "proj/src/app.py": "import os\nAPI_KEY = os.environ.get('API_KEY')\n",
            "proj/tests/test_settings.py": (
                "def load():\n"
                "    return dict(l.split('=', 1) for l in open('.env').read().split() if '=' in l)\n\n"
                "def test_api_key_is_configured():\n"
                "    assert load()['API_KEY'] == 'expected'\n"),
            "home/.ssh/id_ed25519": ("-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n"
                                     % c["ssh"]),
            "home/.ssh/id_ed25519.pub": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPublicPart dev@host\n",
            "home/.aws/credentials": "[default]\naws_secret_access_key = %s\n" % c["aws"],
            # Credentials users keep in projects (issue 31): by name, or by name in a directory.
            "proj/deploy/.git-credentials": "https://ci:%s@git.example.invalid\n" % c["gitcred"],
            "proj/.npmrc": "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=%s\n"
                           % c["npmrc"],
            "proj/.docker/config.json": '{"auths": {"ghcr.io": {"auth": "%s"}}}\n' % c["docker"],
            "proj/ops/kubeconfig": "apiVersion: v1\nusers:\n- name: ci\n  user:\n    token: %s\n"
                                   % c["kubeconfig"],
            "proj/Makefile": "all:\n\t@echo built\n",
            "proj/package.json": '{"name": "app", "auth": "none"}\n',
            "proj/.docker/daemon.json": '{"auth-note": "none"}\n',
            "home/.config/gh/config.yml": "git_protocol: https  # github\n",
            "proj/build/out.txt": "build output\n",
            "home/.kube/config": "users:\n- user:\n    token: %s\n" % c["homekube"],
            "home/.config/gh/hosts.yml": "github.com:\n    oauth_token: %s\n" % c["homegh"],
            "home/todo.txt": "rotate the ctxcanary values\n",
            # A user who allowed Bash (as `--allowedTools Bash` would): the harness runs test
            # commands unasked, so ctx rewrites them (docs/permissions.md).
            "home/.claude/settings.json": '{"permissions": {"allow": ["Bash"]}}\n',
            "ctxhome/http-token": c["token"] + "\n",
        }
        for rel, text in files.items():
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        os.chmod(os.path.join(self.home, ".ssh", "id_ed25519"), 0o600)
        os.symlink(".env", os.path.join(self.proj, "notes.txt"))           # a secret under an innocent name
        os.symlink("../home/.ssh", os.path.join(self.proj, "keys"))       # a secret directory
        os.symlink("config", os.path.join(self.proj, "settings"))         # grep -R follows it
        os.makedirs(self.bin)
        os.makedirs(self.scratch)
        rg = _claude_rg()
        if rg:
            os.symlink(rg, os.path.join(self.bin, "rg"))
        env = self.env()
        for cmd in (["git", "init", "-q"], ["git", "config", "user.email", "t@example.invalid"],
                    ["git", "config", "user.name", "t"], ["git", "add", "-A", "-f"],
                    ["git", "commit", "-q", "-m", "fixture"]):
            subprocess.run(cmd, cwd=self.proj, env=env, check=True, capture_output=True, timeout=30)

    def fragments(self):
        """Every 12-character piece of every canary's name and random part holding at least 8 of
        the random characters: a partial leak counts. A piece that is mostly name is not evidence:
        SQLite stores a row's columns side by side, so a stored path `ops/kubeconfig` followed by
        a decision `deny` reads `kubeconfigde`, which matched a tag starting `de` (CI, once)."""
        out = set()
        for name, v in self.canaries.items():
            tail = v[len("ctxcanary"):]
            out.update(tail[i:i + 12] for i in range(len(tail) - 11) if i + 12 - len(name) >= 8)
        return out

    def leaked(self, data):
        if isinstance(data, bytes):
            data = data.decode("utf-8", "replace")
        return sorted(f for f in self.fragments() if f in data)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = World(str(tmp_path_factory.mktemp("secret-reads")))
    w.build()
    from reflex import paths as paths_mod
    w.paths = paths_mod.resolve({"CTX_HOME": w.ctx_home})
    w.daemon = DaemonProc(w.paths).start(extra_env=w.env())
    try:
        yield w
    finally:
        w.daemon.stop()
        _kill_strays(w.paths)


@pytest.fixture(autouse=True)
def world_env(world, monkeypatch):
    """The shim's code runs in this process: give it the world's environment."""
    for k, v in world.env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)


def _limits():
    resource.setrlimit(resource.RLIMIT_FSIZE, (OUT_LIMIT, OUT_LIMIT))


def sh(world, command, cwd=None):
    p = subprocess.run(["bash", "-c", command], cwd=cwd or world.proj, env=world.env(), capture_output=True,
                       timeout=RUN_TIMEOUT, preexec_fn=_limits)
    return p.stdout + p.stderr


# -- the cases ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    cls: str                    # the attack class (docs/safety.md)
    id: str
    tool: str                   # Bash, Read, Grep, Edit ...
    input: dict
    expect: tuple               # acceptable outcomes: deny, redact, rewrite, pass
    leaks: bool = True          # without ctx, the call prints a canary (checked)
    needs: tuple = field(default=())    # programs the case needs on PATH
    raw: str = None             # the command that leaks without ctx, when not the call itself


def bash(cls, id, command, expect, leaks=True, needs=(), raw=None):
    return Case(cls, id, "Bash", {"command": command, "description": id}, tuple(expect.split("|")), leaks,
                tuple(needs), raw)


def tool(cls, id, name, tool_input, expect, leaks=True):
    return Case(cls, id, name, tool_input, tuple(expect.split("|")), leaks)


CASES = [
    # Recursive searches of the project: run, with the values of secret files redacted.
    bash("recursive", "grep-r", "grep -rn API_KEY .", "redact"),
    bash("recursive", "grep-R-follows-links", "grep -Rn db_password .", "redact"),
    bash("recursive", "grep-r-head", "grep -rn API_KEY . | head -50", "redact"),
    bash("recursive", "grep-r-cut-after", "grep -rn API_KEY . | cut -d: -f3-", "redact"),
    bash("recursive", "grep-r-color-inside-value", "grep -rn --color=always ctxcanary .", "redact"),
    bash("recursive", "grep-include-dotfiles", "grep -rn --include='*' API_KEY .", "redact"),
    bash("recursive", "git-grep", "git grep -n API_KEY", "redact"),
    bash("recursive", "rg", "rg -n --hidden API_KEY", "redact", needs=("rg",)),
    bash("recursive", "rg-uuu", "rg -uuu password", "redact", needs=("rg",)),
    bash("recursive", "find-exec-cat", "find . -type f -name '*.yaml' -exec cat {} +", "redact|deny"),
    bash("recursive", "find-xargs-grep", "find . -type f | xargs grep -h password", "redact"),
    bash("recursive", "cat-git-ls-files", "cat $(git ls-files)", "redact|deny"),
    bash("recursive", "for-find-cat", "for f in $(find config -type f); do cat \"$f\"; done", "redact|deny"),
    bash("recursive", "while-read-cat", "find config -type f | while read -r f; do cat \"$f\"; done",
         "redact|deny"),
    bash("recursive", "printf-name", "cat $(printf '.%s' env)", "redact|deny"),
    bash("recursive", "python-os-walk",
         "python3 -c \"import os\nfor d, _, fs in os.walk('config'):\n    [print(open(os.path.join(d, f)).read()) "
         "for f in fs]\"", "redact"),
    bash("recursive", "node-readdir",
         "node -e \"const fs=require('fs'); for (const f of fs.readdirSync('.')) { try { console.log(fs.readFileSync(f, "
         "'utf8')) } catch (e) {} }\"", "redact", needs=("node",)),
    bash("recursive", "find-exec-sh-c", "find config -type f -exec sh -c 'cat \"$1\"' _ {} \\;", "redact|deny"),
    bash("recursive", "xargs-null", "git ls-files -z | xargs -0 cat", "redact|deny"),
    bash("recursive", "grep-r-piped-to-base64", "grep -rn API_KEY . | base64 -w0", "deny", leaks=False),
    bash("recursive", "grep-r-to-file-then-read", "grep -rn API_KEY . > {scratch}/out.txt; cat {scratch}/out.txt",
         "deny"),
    bash("recursive", "grep-r-captured", "x=$(grep -rn API_KEY .); echo \"$x\"", "deny"),
    bash("recursive", "grep-o-cuts-values", "grep -rhoE 'ctxcanary[a-z0-9]{16}' .", "deny"),
    bash("recursive", "grep-r-names-only", "grep -rl API_KEY .", "pass|rewrite", leaks=False),
    tool("recursive", "grep-tool-dir", "Grep", {"pattern": "API_KEY|password", "path": "."}, "redact"),
    tool("recursive", "grep-tool-glob", "Grep", {"pattern": "password", "glob": "*.yaml"}, "redact"),
    tool("recursive", "grep-tool-home", "Grep", {"pattern": "ctxcanary", "path": "~"}, "redact"),

    # Symlinks to secrets, through Bash and through the file tools.
    bash("symlink", "cat-link", "cat notes.txt", "deny"),
    bash("symlink", "head-link-dir", "head -c 400 keys/id_ed25519", "deny"),
    bash("symlink", "dotdot-after-link", "cat keys/../.aws/credentials", "deny"),
    bash("symlink", "python-open-link", "python3 -c \"print(open('notes.txt').read())\"", "deny"),
    bash("symlink", "cp-link-then-cat", "cp notes.txt {scratch}/copy && cat {scratch}/copy", "deny"),
    bash("symlink", "dd-link", "dd if=notes.txt status=none", "deny"),
    bash("symlink", "proc-self-cwd", "cat /proc/self/cwd/notes.txt", "deny"),
    bash("symlink", "made-from-output",
         "ln -sf \"$PWD/$(printf '.%s' env)\" {scratch}/link && cat {scratch}/link",
         "redact|deny"),
    tool("symlink", "read-link", "Read", {"file_path": "notes.txt"}, "deny"),
    tool("symlink", "read-link-dir", "Read", {"file_path": "keys/id_ed25519"}, "deny"),
    tool("symlink", "grep-link", "Grep", {"pattern": "API", "path": "notes.txt"}, "deny"),
    tool("symlink", "grep-link-dir", "Grep", {"pattern": "ctxcanary|PRIVATE", "path": "keys"}, "deny"),
    tool("symlink", "edit-link", "Edit", {"file_path": "notes.txt", "old_string": "a", "new_string": "b"},
         "deny", leaks=False),

    # Dot-matching globs.
    bash("dotglob", "shopt-dotglob", "cd dot && shopt -s dotglob && cat *", "deny"),
    bash("dotglob", "globignore", "cd dot && GLOBIGNORE=readme.txt; cat *", "deny"),
    bash("dotglob", "bash-O", "bash -O dotglob -c 'cd dot && cat *'", "deny"),
    bash("dotglob", "bashopts-env", "cd dot && env BASHOPTS=dotglob bash -c 'cat *'", "deny"),
    bash("dotglob", "dot-bracket", "cd dot && cat .[!.]*", "deny"),
    bash("dotglob", "extglob-group", "shopt -s extglob\ncat @(.env|README.md)", "deny"),
    bash("dotglob", "plain-star-control", "cd dot && cat *", "pass", leaks=False),

    # Editor backups and copies.
    bash("backup", "tilde", "cat .env~", "deny"),
    bash("backup", "nano-save", "sed -n p .env.save", "deny"),
    bash("backup", "glob-backups", "tail -n 5 .env?*", "deny"),

    # Programs with their own file-reading functions.
    bash("reader-fn", "sqlite-readfile", "sqlite3 :memory: \"select readfile('.env')\"", "deny",
         needs=("sqlite3",)),
    bash("reader-fn", "sqlite-read", "sqlite3 :memory: '.read .env'", "deny", needs=("sqlite3",)),
    bash("reader-fn", "sqlite-readfile-link", "sqlite3 :memory: \"select readfile('notes.txt')\"", "deny",
         needs=("sqlite3",)),
    bash("reader-fn", "date-f", "date -f .env", "deny"),
    bash("reader-fn", "wc-files0", "wc --files0-from=.env", "deny"),
    bash("reader-fn", "awk-getline", "awk 'BEGIN { while ((getline l < \".env\") > 0) print l }'", "deny"),
    bash("reader-fn", "perl-slurp", "perl -ne print .env", "deny"),
    bash("reader-fn", "git-config-file", "git config -f config/secrets.yaml --list", "deny", leaks=False),
    bash("reader-fn", "tar-to-stdout", "tar -cf - .env | tar -xOf -", "deny"),
    bash("reader-fn", "jq-rawfile", "jq -n --rawfile x .env '$x'", "deny", needs=("jq",)),

    # Interpreter file APIs: any string literal in the code, whatever quotes come before it.
    bash("reader-fn", "python-fileinput-after-empty-literal",
         "python3 -c \"import fileinput; print(''.join(fileinput.input('deploy/.git-credentials')))\"", "deny"),
    bash("reader-fn", "python-apostrophe-in-comment",
         "python3 -c \"# it's fine\nprint(open('.npmrc').read())\"", "deny"),
    bash("reader-fn", "python-pathlib-after-empty-literal",
         "python3 -c \"import pathlib; print('' + pathlib.Path('.docker/config.json').read_text())\"", "deny"),
    # awk variables: a value given by -v or as an operand is a name the program may open.
    bash("reader-fn", "awk-v-getline", "awk -v f=.env 'BEGIN{while((getline l < f)>0) print l}'", "deny"),
    bash("reader-fn", "awk-operand-assign-getline",
         "awk 'NR==1{while((getline l < f)>0) print l}' f=ops/kubeconfig README.md", "deny"),
    bash("reader-fn", "awk-v-attached", "awk -vf=.npmrc 'BEGIN{while((getline l < f)>0) print l}'", "deny"),
    # Positional parameters: `set --` makes $1, "$@" the words given.
    bash("positional", "set-dashdash-cat", "set -- .env; cat \"$1\"", "deny"),
    bash("positional", "set-all-cat", "set -- README.md .npmrc; cat \"$@\"", "deny"),
    bash("positional", "set-bare-head", "set ops/kubeconfig x; head -n 20 $1", "deny"),
    # Printing shell state after (or while) sourcing a secret.
    bash("env-dump", "declare-p-name", ". ./.env; declare -p API_KEY", "deny"),
    bash("env-dump", "typeset-p-name", ". ./.env; typeset -p API_KEY", "deny"),
    bash("env-dump", "xtrace-source", "set -x; . ./.env", "deny"),
    bash("env-dump", "bash-x-source", "bash -xc '. ./.env; true'", "deny"),
    bash("env-dump", "xtrace-expands", ". ./.env; set -x; true \"$API_KEY\"", "deny"),
    # Programs fed by a pipe: code or file names on stdin.
    bash("stdin-fed", "make-f-stdin", "printf 'all:\\n\\t@cat .env\\n' | make -f -", "deny"),
    bash("stdin-fed", "make-shell-fn", "printf 'x:=$(shell cat .npmrc)\\nall:\\n\\t@echo \"$(x)\"\\n' | make -f -",
         "deny"),
    bash("stdin-fed", "cpio-o", "echo .env | cpio -o 2>/dev/null", "deny", needs=("cpio",)),
    bash("stdin-fed", "cpio-o-find", "find ops -name kubeconfig | cpio -o --quiet", "redact|deny",
         needs=("cpio",)),
    bash("stdin-fed", "tar-T-stdin", "echo .env | tar -cf - -T - | tar -xOf -", "deny"),
    bash("stdin-fed", "awk-f-stdin", "printf 'BEGIN{while((getline l < \".npmrc\")>0) print l}' | awk -f -",
         "deny"),
    bash("stdin-fed", "sed-f-stdin", "printf '1r .env\\n' | sed -f - README.md", "deny"),
    # Credentials users keep in projects, and broad reads that print them.
    bash("more-secrets", "cat-npmrc", "cat .npmrc", "deny"),
    bash("more-secrets", "cat-docker-config", "cat .docker/config.json", "deny"),
    bash("more-secrets", "cat-kubeconfig", "cat ops/kubeconfig", "deny"),
    bash("more-secrets", "cat-git-credentials-deep", "cat deploy/.git-credentials", "deny"),
    tool("more-secrets", "read-docker-config", "Read", {"file_path": ".docker/config.json"}, "deny"),
    bash("more-secrets", "git-archive-tar-xO", "git archive HEAD | tar -xO", "redact|deny"),
    bash("more-secrets", "ls-files-xargs-0-cat", "git ls-files -z | xargs -0 cat", "redact|deny"),
    bash("more-secrets", "tar-pipe-tar-xO", "tar cf - . | tar xOf -", "redact|deny"),
    tool("more-secrets", "grep-tool-type-json", "Grep", {"pattern": "auth", "type": "json", "path": "."},
         "redact"),
    tool("more-secrets", "grep-tool-type-yaml", "Grep", {"pattern": "token|db_password", "type": "yaml"}, "redact"),
    tool("more-secrets", "grep-tool-npmrc", "Grep", {"pattern": "authToken|API_KEY", "path": "."}, "redact"),
    # The Grep tool over home: the exclusions hold whatever directory ripgrep runs in.
    tool("recursive", "grep-tool-home-abs", "Grep", {"pattern": "token|ctxcanary", "path": "$HOME"}, "redact"),
    tool("recursive", "grep-tool-home-config", "Grep", {"pattern": "token|github", "path": "$HOME/.config"},
         "redact|deny"),
    tool("recursive", "grep-tool-inside-docker-dir", "Grep", {"pattern": "auth", "path": ".docker"}, "redact"),

    # ctx's own HTTP token and store.
    bash("ctx-token", "cat-token", "cat \"$CTX_HOME/http-token\"", "deny"),
    bash("ctx-token", "grep-ctx-home", "grep -r ctxcanary \"$CTX_HOME\"", "deny"),
    bash("ctx-token", "ctx-run-token", "ctx run -- cat \"$CTX_HOME/http-token\"", "deny",
         raw="cat \"$CTX_HOME/http-token\""),
    tool("ctx-token", "read-token", "Read", {"file_path": "$CTX_HOME/http-token"}, "deny"),
    bash("ctx-token", "ls-ctx-home", "ls \"$CTX_HOME\"", "pass|rewrite", leaks=False),

    # ctx run with a leaking command, and rewritten chains with a leaking tail.
    bash("ctx-run", "ctx-run-grep", "ctx run -- grep -rn API_KEY .", "pass", raw="grep -rn API_KEY ."),
    bash("ctx-run", "ctx-run-grep-base64", "ctx run -- 'grep -rn API_KEY . | base64'", "deny", leaks=False),
    bash("ctx-run", "ctx-run-cat-link", "ctx run -- cat notes.txt", "deny", raw="cat notes.txt"),
    bash("ctx-run", "ctx-run-program-prints-it", "ctx run -- python -m pytest -q -p no:cacheprovider tests",
         "pass", raw="python -m pytest -q -p no:cacheprovider tests"),
    bash("chain", "pytest-prints-it", "python -m pytest -q -p no:cacheprovider tests", "rewrite"),
    bash("chain", "pytest-then-grep", "python -m pytest -q -p no:cacheprovider tests; grep -rn API_KEY .",
         "redact"),
    bash("chain", "pytest-then-cat-link", "python -m pytest -q -p no:cacheprovider tests && cat notes.txt", "deny"),

    # Ordinary work stays ordinary.
    bash("control", "cat-readme", "cat README.md .env.example", "pass", leaks=False),
    bash("control", "ls", "ls -la", "pass|rewrite", leaks=False),
    bash("control", "wc-env", "wc -l .env", "pass", leaks=False),
    bash("control", "awk-source", "awk -v n=1 '{print $n}' README.md src/app.py", "pass", leaks=False),
    bash("control", "make-makefile", "make -s", "pass|rewrite", leaks=False),
    bash("control", "make-stdin-harmless", "printf 'all:\\n\\t@echo hi\\n' | make -f -", "pass|rewrite",
         leaks=False),
    bash("control", "tar-build-dir", "tar cf {scratch}/build.tar build && tar tf {scratch}/build.tar", "pass",
         leaks=False),
    bash("control", "set-positional-readme", "set -- README.md; cat \"$1\"", "pass", leaks=False),
    bash("control", "source-then-run", "set -a; . ./.env; set +a; python3 -c 'print(1)'", "pass", leaks=False),
    bash("control", "python-fileinput-readme", "python3 -c \"import fileinput; print(''.join(fileinput.input('README.md')))\"",
         "pass", leaks=False),
    bash("control", "cpio-readme", "echo README.md | cpio -o --quiet > {scratch}/r.cpio", "pass", leaks=False,
         needs=("cpio",)),
]


def _payload(world, case, n):
    tool_input = dict(case.input)
    if "command" in tool_input:
        tool_input["command"] = tool_input["command"].replace("{scratch}", world.scratch)
    for k in ("file_path", "path"):
        if isinstance(tool_input.get(k), str):
            tool_input[k] = tool_input[k].replace("$CTX_HOME", world.ctx_home).replace("$HOME", world.home)
    return {"session_id": "adv-secret-reads", "transcript_path": "/nonexistent/t.jsonl", "cwd": world.proj,
            "hook_event_name": "PreToolUse", "tool_name": case.tool, "tool_input": tool_input,
            "tool_use_id": "toolu_adv_%04d" % n, "permission_mode": "default"}


def _outcome(answer):
    if not answer:
        return "pass", None
    out = json.loads(answer)["hookSpecificOutput"]
    if out.get("permissionDecision") == "deny":
        return "deny", out
    if "updatedInput" in out:
        cmd = out["updatedInput"].get("command")
        # The safety plane's rewrite: `ctx run --raw --`, or `ctx run --` for one plain search (which
        # ctx digests, redacted the same way); its reason always says so.
        if cmd is None or " run --raw -- " in cmd or out.get("permissionDecisionReason", "").startswith("ctx safety:"):
            return "redact", out
        return "rewrite", out
    return "pass", out


def _run_grep_tool(world, tool_input):
    """What Claude Code 2.1.332 runs for a Grep call: its bundled ripgrep with --hidden and
    --no-follow, VCS dirs excluded, `type` as --type, and the `glob` field split on whitespace
    (then on commas outside braces) into --glob flags. Where ripgrep runs depends on the path
    and the platform (its `spawnCwd`: the session's directory with the path as given when the
    path lies under it, else the search directory itself, searched as `.`), and ripgrep
    anchors globs to where it runs, so the search is run from both places."""
    args = [os.path.join(world.bin, "rg"), "--hidden", "--no-follow"]
    for d in (".git", ".svn", ".hg", ".bzr", ".jj", ".sl"):
        args += ["--glob", "!" + d]
    args += ["--max-columns", "500", "-n", "-e", tool_input["pattern"]]
    if tool_input.get("type"):
        args += ["--type", tool_input["type"]]
    for part in (tool_input.get("glob") or "").split():
        for g in ([part] if "{" in part and "}" in part else [x for x in part.split(",") if x]):
            args += ["--glob", g]
    path = tool_input.get("path") or world.proj
    path = os.path.expanduser(path.replace("~", world.home, 1)) if path.startswith("~") else path
    path = os.path.join(world.proj, path)
    out = b""
    for cwd, target in ((world.proj, path), (path, ".")) if os.path.isdir(path) else ((world.proj, path),):
        p = subprocess.run(args + [target], cwd=cwd, env=world.env(), capture_output=True, timeout=RUN_TIMEOUT,
                           preexec_fn=_limits)
        out += p.stdout + p.stderr
    return out


def _perform(world, case, tool_input):
    """Do what Claude Code does with the (possibly updated) call. -> what the agent sees."""
    if case.tool == "Bash":
        return sh(world, tool_input["command"])
    if case.tool == "Grep":
        return _run_grep_tool(world, tool_input)
    if case.tool == "Read":
        path = tool_input["file_path"]
        with open(path if path.startswith("/") else os.path.join(world.proj, path), "rb") as f:
            return f.read()
    return b""


_LEAKS_WITHOUT_CTX = {}     # (tool, call) -> canaries printed without ctx (each attack run once)


@pytest.mark.parametrize("case", CASES, ids=["%s:%s" % (c.cls, c.id) for c in CASES])
def test_secret_read(world, case):
    from reflex.shim import hook
    from reflex.shim import fallback as local_decision
    for prog in case.needs:
        if not shutil.which(prog, path=world.env()["PATH"]):
            pytest.skip("%s is not installed" % prog)
    if case.tool == "Grep" and not _claude_rg():
        pytest.skip("Claude Code's ripgrep (claude-agent-sdk, the e2e extra) is not installed")
    payload = _payload(world, case, CASES.index(case))
    if case.leaks:
        raw_input = dict(payload["tool_input"], command=case.raw.replace("{scratch}", world.scratch)) \
            if case.raw else payload["tool_input"]
        key = (case.tool, json.dumps({k: v for k, v in raw_input.items() if k != "description"}, sort_keys=True))
        if key not in _LEAKS_WITHOUT_CTX:
            _LEAKS_WITHOUT_CTX[key] = world.leaked(_perform(world, case, raw_input))
        assert _LEAKS_WITHOUT_CTX[key], "precondition: without ctx, %s must print a canary" % case.id
    data = json.dumps(payload).encode()
    answer, err = hook.deliver(world.paths, "claude", data)
    alone, _, _ = local_decision.decide("claude", data, False)
    outcome, out = _outcome(answer)
    if alone or outcome in ("deny", "redact"):
        # The safety plane decided: the shim alone (daemon down) gives the same bytes.
        assert answer == alone, "daemon and shim disagree on %s:\n%s\n%s" % (case.id, answer, alone)
    assert outcome in case.expect, "%s: expected %s, got %s: %s" % (case.id, case.expect, outcome, answer[:600])
    assert not world.leaked(answer) and not world.leaked(err)
    if outcome == "deny":
        return
    tool_input = out["updatedInput"] if out and "updatedInput" in out else payload["tool_input"]
    seen = _perform(world, case, tool_input)
    assert not world.leaked(seen), "%s leaked %s through ctx:\n%s" % (
        case.id, world.leaked(seen), seen.decode("utf-8", "replace")[:2000])
    if case.leaks and case.tool == "Bash":
        # The secret was there and was replaced, and ctx said so (not an empty or failed run).
        assert b"[REDACTED:" in seen and b"[ctx] redacted " in seen, seen.decode("utf-8", "replace")[:2000]
    if case.tool == "Grep" and outcome == "redact":
        assert b":" in seen, "the redirected Grep still finds the ordinary matches: %r" % seen[:500]


# -- what ctx stored ------------------------------------------------------------------------

def _stored_files(world):
    for dirpath, _, files in os.walk(world.ctx_home):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path):     # not the socket
                yield path


def test_store_holds_no_secret(world):
    # Runs of this test's own, so the store is never empty whatever else was selected.
    seen = sh(world, "ctx run --raw -- 'grep -rn API_KEY .'") + \
        sh(world, "ctx run -- python -m pytest -q -p no:cacheprovider tests")
    assert not world.leaked(seen) and b"[REDACTED:" in seen
    checked_blobs = redacted_blobs = 0
    for path in _stored_files(world):
        if os.path.basename(path) == "http-token":
            continue                                    # the token itself, held by design
        with open(path, "rb") as f:
            data = f.read()
        if os.sep + "blobs" + os.sep in path:
            data = zlib.decompress(data)
            checked_blobs += 1
            redacted_blobs += b"[REDACTED:" in data
        assert not world.leaked(data), "%s holds %s" % (path, world.leaked(data))
    assert checked_blobs >= 2 and redacted_blobs >= 2
    conn = sqlite3.connect(world.paths.ledger)
    try:
        handles = [r[0] for r in conn.execute("SELECT handle FROM runs")]
        for table, in conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
            for row in conn.execute("SELECT * FROM %s" % table):
                assert not world.leaked(repr(row)), "ledger table %s holds a canary: %r" % (table, row)
    finally:
        conn.close()
    assert handles
    for h in handles:
        got = sh(world, "ctx get %s" % h)
        assert not world.leaked(got), got
    for pattern in ("API_KEY", "password", "PRIVATE", "ctxcanary"):
        got = sh(world, "ctx search '%s'" % pattern)
        assert not world.leaked(got), got


def test_census_is_bounded_and_names_files_not_values(world):
    from reflex.safety import secrets as secret_values
    census = secret_values.collect(world.proj, world.env(), "grep -rn x .")
    labels = {label for _, label in census.files}
    assert {".env", ".env~", ".env.save", "config/server.pem", "config/secrets.yaml", "dot/.env.local",
            "ctx http-token", ".ssh/id_ed25519", "~/.aws/credentials"} <= labels
    assert ".env.example" not in labels and ".ssh/id_ed25519.pub" not in labels
    for c in world.canaries.values():
        assert c.encode() in census.values
    assert b"eu-west-1" in census.values and b"1" not in census.values and b"DEBUG=1" not in census.values
    line = secret_values.census_line(3, {".env": 2, "config/server.pem": 1})
    assert ".env" in line and "3 secret values" in line and not world.leaked(line)


def test_agent_facing_modules_stay_stdlib():
    code = ("import sys\nimport reflex.shim.run, reflex.safety.secrets, reflex.shim.fallback, reflex.safety.plane\n"
            "bad = [m for m in ('pydantic', 'tiktoken', 'blake3', 'click', 'sqlite_utils') if m in sys.modules]\n"
            "print(','.join(bad))\n")
    p = subprocess.run([sys.executable, "-S", "-c", "import sys; sys.path.insert(0, %r)\n" % REPO + code],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "", p.stderr
    assert glob.glob(os.path.join(REPO, "reflex", "safety", "secrets.py"))
