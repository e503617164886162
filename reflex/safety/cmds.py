"""Dispatch of simple commands for the safety plane, and the shell builtins (stdlib only).

`run_simple` is called by the walker (reflex.safety.shell) for every simple command: it
walks the command's substitutions, applies assignments, sends the command to its handler
and checks its redirects (`< .env` is a read, `> ~/.zshrc` a write). Handlers live in
reflex.safety.nested (commands that run commands), reflex.safety.files (copies, deletes,
archives, transfers), reflex.safety.readers (pattern-first readers, git, openssl); the
rest get reflex.safety.argv's conservative `generic` reading, except NON_READERS, which
never read their arguments (listings, metadata, hashes, echo). Also here: cd/pushd,
variable builtins, and the secret-env-dump rule (a secret file sourced, then the
environment or a variable printed in the same command line).
"""

from __future__ import annotations

from reflex.safety import nested as X
from reflex.safety import files as F
from reflex.safety import lex as L
from reflex.safety import readers as R
from reflex.safety.argv import MAX_HOPS, NON_READER_FILES, Stdin, dump, generic, non_reader_files
from reflex.safety.paths import basename_kind
from reflex.safety.words import FROM_OUTPUT, command_name, is_assignment

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from reflex.safety.argv import Handler, Walker
    from reflex.safety.model import Ctx, Finding, Stage, Token, Word
    from reflex.safety.words import Arg


SAFE_VARS = frozenset({"HOME", "PATH", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "TERM",
                       "LANG", "TMPDIR", "HOSTNAME", "SHLVL", "?", "$", "#", "!", "-", "0", "@",
                       "*", "1", "2", "3", "4", "5", "6", "7", "8", "9", "RANDOM", "LINENO",
                       "SECONDS", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "NODE_ENV"})


NON_READERS = frozenset("""
ls ll la l dir vdir exa eza lsd tree stat file test [ [[ true false : which type whereis hash
realpath readlink basename dirname du df wc md5sum sha1sum sha224sum sha256sum sha384sum
sha512sum b2sum b3sum shasum cksum sum lsattr getfacl namei ssh-add ssh-keygen ssh-copy-id
ssh-keyscan sshpass fuser lsof alias unalias sleep wait kill killall pkill jobs exit return
shift break continue sync date pwd whoami id uname help man tput clear mktemp dirs ulimit
umask shopt bind disown fg bg logout let getopts caller enable suspend times cal uptime
hostname nproc free ps top htop pgrep pidof seq yes tty locale echo printf
""".split())

def run_simple(scan: Walker, words: list[Word], redirs: list[Token], ctx: Ctx, prev: Stage | None) -> Finding | None:
    if not words and not redirs:
        return None
    for w in words:
        f = scan.subs(w, ctx)
        if f:
            return f
    for r in redirs:
        if r[3]:
            f = scan.subs(r[3], ctx)
            if f:
                return f
        for sub in r[7]:
            f = scan.sub_tokens(sub[2], ctx)
            if f:
                return f
    k = 0
    while k < len(words) and is_assignment(words[k]):
        k += 1
    if k == len(words):
        for w in words:
            scan.assign(w, ctx)
        return _redirects(scan, redirs, ctx)
    name_arg = scan.arg(words[k], ctx)
    args = [scan.arg(w, ctx) for w in words[k + 1:]]
    stdin = Stdin(redirs, prev)
    if k:
        # `X=.env bash -c 'cat $X'`: prefix assignments reach the command's environment
        # (its own arguments were expanded before them, as in bash).
        ctx = ctx.copy()
        for w in words[:k]:
            scan.assign(w, ctx)
    if name_arg.static == "exec" and not args and any(r[1] in (">", ">>", ">|", "&>", "&>>") for r in redirs):
        scan.stdout_moved = True    # `exec >file`: later output goes to the file
    f = _secret_as_command(scan, name_arg, ctx)
    if f:
        return f
    if name_arg.static is None:
        f = generic(scan, "command", args, ctx)
    else:
        name = command_name(name_arg.static)
        if scan.loaded and (name in ("echo", "printf", "print") or scan.xtrace) and \
                _expands_secret_var(words[k + 1:]):
            return dump(scan, name)     # (under `set -x` the shell prints every expanded command)
        f = handle(scan, name, args, ctx, stdin, 0)
    return f or _redirects(scan, redirs, ctx)


def _secret_as_command(scan: Walker, name_arg: Arg, ctx: Ctx) -> Finding | None:
    """A secret file named where a command goes. Nobody runs .env; but the walker lexes a
    glob group as a subshell, so `cat @(.env)` (bash extglob), `cat (.env|x)` (zsh) and
    `cat *(.env)` (ksh) arrive here with the file in command position."""
    s = name_arg.static
    if s is not None:
        base = s.rsplit("/", 1)[-1]
        if not base or "=" in s or not ("." in base or "_" in base or base[-1] in "~#") or \
                not basename_kind(base):
            return None
    elif name_arg.from_output() or not any(k == "glob" for v in name_arg.variants for k, _ in v):
        return None
    return scan.read(name_arg, "glob group", ctx, split=False)


def _expands_secret_var(words: Sequence[Word]) -> bool:
    for parts in words:
        for kind, text, _ in parts:
            if kind == L.SUB or (kind == L.DYN and text not in SAFE_VARS):
                return True
    return False


def _redirects(scan: Walker, redirs: list[Token], ctx: Ctx) -> Finding | None:
    for r in redirs:
        op, target = r[1], r[3]
        if target is None or op in ("<<", "<<-", "<<<"):
            continue
        a = scan.arg(target, ctx)
        if op in ("<&", ">&") and (a.static is not None and (a.static.isdigit() or a.static in ("-", ""))):
            continue
        if op in ("<", "<>", "<&"):
            f = scan.read(a, "<", ctx, split=False)
            if f:
                return f
        if op != "<" and op != "<&":
            f = scan.write(a, op, ctx)
            if f:
                return f
    return None


def handle(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    if hops > MAX_HOPS:
        return None
    if len(scan.names) < 64:
        scan.names.add(name if name != "git" or not args else "git " + (args[0].static or "?"))
    h = HANDLERS.get(name)
    if h is not None:
        return h(scan, name, args, ctx, stdin, hops)
    if name in X.WRAPPERS:
        return X.wrapper(scan, name, args, ctx, stdin, hops)
    if name in NON_READERS:
        return non_reader_files(scan, name, args, ctx) if name in NON_READER_FILES else None
    return generic(scan, name, args, ctx)


def h_cd(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    if name == "popd":
        ctx.cwd = None
        return None
    ops = [a for a in args if a.static is None or not a.static.startswith("-") or a.static == "-"]
    if not ops:
        ctx.cwd = scan.home or ctx.cwd
        return None
    s = ops[0].static
    if s is None or s == "-":
        ctx.cwd = None
    else:
        p = scan.resolve(s, ctx)
        ctx.cwd = p if p.startswith("/") else None
    return None


def h_declare(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    lists = True        # no assignment, or a listing flag: prints variables (their values)
    prints = False      # `declare -p NAME`, `export -p`: prints the named variables' values too
    for a in args:
        s = a.static
        if s is None:
            lists = False
            continue
        if s.startswith(("-", "+")):
            if name in ("declare", "typeset", "local", "readonly") and "p" not in s and "x" not in s:
                lists = False
            if s.startswith("-") and "p" in s:
                prints = True
            continue
        lists = False
        if name == "typeset" and "=" not in s:
            prints = True   # zsh's `typeset NAME` prints NAME=value
        var, eq, val = s.partition("=")
        if eq and var.isidentifier():
            ctx.vars[var] = [(("lit", val),)]
            scan.env_option(var, val)
    if (lists or prints) and scan.loaded and name != "local":
        return dump(scan, name)
    return None


def h_dumpers(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    statics = [a.static or "" for a in args]
    if name == "set":
        if "-o" in statics:
            h_shopt(scan, "setopt", args, ctx, stdin, hops)
        _set_flags(scan, statics)
        _set_positionals(args, ctx)
    if not scan.loaded:
        return None
    if name == "printenv" or (name == "set" and not statics):
        return dump(scan, name)
    if name == "compgen" and any(s in ("-v", "-e", "-A") for s in statics):
        return dump(scan, name)
    return None


def _set_flags(scan: Walker, statics: Sequence[str]) -> None:
    """`set -x` / `set -v` (and -o xtrace / verbose): bash then prints what it runs, so a
    secret file sourced afterwards is printed line by line (secret-env-dump)."""
    for s in statics:
        if s == "--" or not s.startswith("-") or s.startswith("--"):
            break
        if "x" in s or "v" in s:
            scan.shell_option("xtrace")


def _set_positionals(args: list[Arg], ctx: Ctx) -> None:
    """`set -- .env x` (or `set .env`): $1, $2 ..., "$@" and "$*" now hold these words, so
    `cat "$1"` reads .env."""
    i, n = 0, len(args)
    while i < n:
        s = args[i].static
        if s == "--":
            i += 1
            break
        if s is None or not s.startswith(("-", "+")) or s in ("-", "+"):
            break
        i += 2 if s in ("-o", "+o") else 1
    else:
        return              # `set -e`: options only, the positional parameters stay
    words = args[i:]
    for k in range(1, 10):
        ctx.vars[str(k)] = words[k - 1].variants if k <= len(words) else [(("lit", ""),)]
    every = [v for a in words for v in a.variants][:64] or [(("lit", ""),)]
    ctx.vars["@"] = every
    ctx.vars["*"] = every


def h_shopt(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    """`shopt -s dotglob`, zsh `setopt globdots` / `set -o globdots`: remembered for globs."""
    statics = [a.static or "" for a in args]
    if name == "shopt" and "-s" not in statics:
        return None
    for s in statics:
        if s and s[0] not in "-+":
            scan.shell_option(s)
    return None


def h_read(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    for a in args:
        if a.static and a.static.isidentifier():
            ctx.vars[a.static] = [(FROM_OUTPUT,)]     # `find . | while read f; do cat "$f"`
    return None


def h_unset(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    for a in args:
        if a.static:
            ctx.vars.pop(a.static, None)
    return None


HANDLERS: dict[str, Handler] = {
    "env": X.h_env,
    "eval": X.h_eval, "source": X.h_source, ".": X.h_source, "trap": X.h_trap, "alias": X.h_alias,
    "virtualenv": X.h_virtualenv,
    "deno": X.h_deno,
    "ctx": X.h_ctx,
    "grep": R.h_grep, "egrep": R.h_grep, "fgrep": R.h_grep, "zgrep": R.h_grep, "zegrep": R.h_grep,
    "zfgrep": R.h_grep, "rgrep": R.h_grep, "bzgrep": R.h_grep, "xzgrep": R.h_grep, "rg": R.h_grep,
    "ag": R.h_grep, "ack": R.h_grep, "pt": R.h_grep, "sift": R.h_grep,
    "sed": R.h_sed, "gsed": R.h_sed,
    "awk": R.h_awk, "gawk": R.h_awk, "mawk": R.h_awk, "nawk": R.h_awk,
    "jq": R.h_jq, "yq": R.h_jq, "gojq": R.h_jq, "jaq": R.h_jq,
    "cp": F.h_cp, "mv": F.h_cp, "ln": F.h_cp, "gcp": F.h_cp, "gmv": F.h_cp, "install": F.h_install,
    "rsync": F.h_transfer, "scp": F.h_transfer,
    "tee": F.h_tee,
    "rm": F.h_rm, "unlink": F.h_rm, "rmdir": F.h_rm, "shred": F.h_rm, "srm": F.h_rm, "trash": F.h_rm,
    "trash-put": F.h_rm,
    "touch": F.h_writes, "mkdir": F.h_writes, "truncate": F.h_writes, "mkfifo": F.h_writes,
    "mknod": F.h_writes, "setfacl": F.h_writes,
    "chmod": F.h_chmod, "chown": F.h_chmod, "chgrp": F.h_chmod, "chattr": F.h_chmod,
    "dd": F.h_dd, "find": X.h_find, "xargs": X.h_xargs,
    "curl": F.h_curl, "wget": F.h_wget, "ssh": X.h_ssh,
    "tar": F.h_tar, "gtar": F.h_tar, "bsdtar": F.h_tar, "zip": F.h_zip, "unzip": F.h_unzip,
    "7z": F.h_7z, "7za": F.h_7z, "7zr": F.h_7z, "cpio": F.h_cpio,
    "make": X.h_make, "gmake": X.h_make,
    "git": R.h_git, "openssl": R.h_openssl,
    "cd": h_cd, "pushd": h_cd, "popd": h_cd,
    "export": h_declare, "declare": h_declare, "typeset": h_declare, "local": h_declare,
    "readonly": h_declare,
    "printenv": h_dumpers, "set": h_dumpers, "compgen": h_dumpers,
    "shopt": h_shopt, "setopt": h_shopt,
    "read": h_read, "mapfile": h_read, "readarray": h_read, "unset": h_unset,
}
for _name in ("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "tcsh", "csh"):
    HANDLERS[_name] = X.h_shell
for _name in X.INTERPRETERS:
    HANDLERS[_name] = X.h_interp
