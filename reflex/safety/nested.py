"""Commands that run other commands, for the safety plane (stdlib only).

Wrappers unwrap to the command they run (`env`, `sudo`, `timeout`, `nice`, `command`,
`uv run`, `npx` ...), shells parse their script (`bash -c`, `sh <<EOF`, `echo ... | sh`,
`eval`, `watch`, `trap`, `alias`, `ssh host CMD`), interpreters have their code scanned
for string literals naming secrets (`python -c "open('.env')"`, `node -e`, `perl -e`,
scripts on stdin), `xargs` and `find -exec` substitute what they would pass (`echo .env |
xargs cat`, `find . -name .env -exec cat {} ;`), and `find -delete` is a delete.
"""

from __future__ import annotations

import re

from reflex.safety.argv import (
    LONG_ROLES,
    Stdin,
    apply_role,
    chdir,
    code_scan,
    dump,
    generic,
    glob_pieces,
    merge_pieces,
    opts,
    replace_braces,
    run_rest,
    writes_only,
)
from reflex.safety.model import Ctx
from reflex.safety.words import Arg, listing_dir

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from reflex.safety.argv import Walker
    from reflex.safety.model import Finding, Variant


# name: (short options with a value, long options with a value, positionals to skip,
#        required subcommands or None, {flag: role})
WRAPPERS = {
    "command": ("", (), 0, None, {"-v": "lookup", "-V": "lookup"}),
    "builtin": ("", (), 0, None, {}),
    "exec": ("a", (), 0, None, {}),
    "nohup": ("", (), 0, None, {}),
    "setsid": ("", (), 0, None, {}),
    "time": ("fo", ("--format", "--output"), 0, None, {"-o": "write", "--output": "write"}),
    "nice": ("n", ("--adjustment",), 0, None, {}),
    "ionice": ("cnpPu", ("--class", "--classdata"), 0, None, {}),
    "chrt": ("", (), 1, None, {}),
    "taskset": ("", ("--cpu-list",), 1, None, {}),
    "timeout": ("sk", ("--signal", "--kill-after"), 1, None, {}),
    "gtimeout": ("sk", ("--signal", "--kill-after"), 1, None, {}),
    "sudo": ("ugpChDrtUTR", ("--user", "--group", "--prompt", "--close-from", "--host", "--chdir",
                             "--role", "--type", "--other-user", "--command-timeout"), 0, None,
             {"-D": "chdir", "--chdir": "chdir"}),
    "doas": ("uC", (), 0, None, {}),
    "stdbuf": ("ioe", ("--input", "--output", "--error"), 0, None, {}),
    "unbuffer": ("", (), 0, None, {}),
    "chronic": ("", (), 0, None, {}),
    "catchsegv": ("", (), 0, None, {}),
    "proxychains": ("f", (), 0, None, {}),
    "proxychains4": ("f", (), 0, None, {}),
    "torsocks": ("", (), 0, None, {}),
    "caffeinate": ("tw", (), 0, None, {}),
    "strace": ("oepsuEIaPbXS", (), 0, None, {"-o": "write"}),
    "ltrace": ("oepsuaSnAD", (), 0, None, {"-o": "write"}),
    "valgrind": ("", (), 0, None, {}),
    "busybox": ("", (), 0, None, {}),
    "toybox": ("", (), 0, None, {}),
    "xvfb-run": ("nsfe", ("--server-num", "--server-args", "--auth-file", "--error-file"), 0, None, {}),
    "dbus-run-session": ("", (), 0, None, {}),
    "flock": ("wEc", ("--timeout", "--conflict-exit-code", "--command"), 1, None,
              {"-c": "shell", "--command": "shell"}),
    "su": ("cgGsw", ("--command", "--group", "--supp-group", "--shell", "--whitelist-environment"),
           99, None, {"-c": "shell", "--command": "shell"}),
    "script": ("cETIOBm", ("--command", "--echo", "--log-timing", "--log-in", "--log-out", "--log-io"),
               99, None, {"-c": "shell", "--command": "shell"}),
    "watch": ("nd", ("--interval", "--differences"), 0, None, {}),
    "nix-shell": ("pAI", ("--run", "--command", "--packages", "--attr"), 99, None,
                  {"--run": "shell", "--command": "shell"}),
    "uv": ("p", ("--with", "--python", "--env-file", "--project", "--directory", "--group",
                 "--extra", "--package", "--from", "--with-requirements", "--index"), 0,
           ("run", "tool"), {"--env-file": "load", "--directory": "chdir"}),
    "uvx": ("p", ("--with", "--python", "--from", "--index"), 0, None, {}),
    "poetry": ("C", ("--directory",), 0, ("run",), {"-C": "chdir", "--directory": "chdir"}),
    "pipenv": ("", (), 0, ("run",), {}),
    "pdm": ("p", ("--project",), 0, ("run",), {}),
    "hatch": ("e", ("--env",), 0, ("run",), {}),
    "rye": ("", (), 0, ("run",), {}),
    "conda": ("np", ("--name", "--prefix", "--cwd"), 0, ("run",), {"--cwd": "chdir"}),
    "mamba": ("np", ("--name", "--prefix", "--cwd"), 0, ("run",), {"--cwd": "chdir"}),
    "micromamba": ("np", ("--name", "--prefix", "--cwd"), 0, ("run",), {"--cwd": "chdir"}),
    "bundle": ("", (), 0, ("exec",), {}),
    "mise": ("C", ("--cd",), 0, ("exec", "x"), {"-C": "chdir", "--cd": "chdir"}),
    "asdf": ("", (), 0, ("exec",), {}),
    "pyenv": ("", (), 0, ("exec",), {}),
    "rbenv": ("", (), 0, ("exec",), {}),
    "nodenv": ("", (), 0, ("exec",), {}),
    "direnv": ("", (), 1, ("exec",), {}),
    "dotenv": ("fec", ("--file", "--env"), 0, None, {"-f": "load", "-e": "load", "--file": "load"}),
    "op": ("", ("--env-file",), 0, ("run",), {"--env-file": "load"}),
    "npx": ("pc", ("--package", "--call"), 0, None, {"-c": "shell", "--call": "shell"}),
    "pnpx": ("", (), 0, None, {}),
    "bunx": ("p", ("--package",), 0, None, {}),
    "pnpm": ("", (), 0, ("exec", "dlx"), {}),
}


def wrapper(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    short_val, long_val, skip, subcmds, roles = WRAPPERS[name]
    i, n = 0, len(args)
    if subcmds is not None:
        if not args or args[0].static not in subcmds:
            return generic(scan, name, args, ctx)
        i = 1
    shell: Arg | None = None
    while i < n:
        s = args[i].static
        if s is None:
            break
        if s == "--":
            i += 1
            break
        if s.startswith("--") or (s.startswith("-") and len(s) > 1):
            pairs: list[tuple[str, Arg | None]] = []
            if s.startswith("--"):
                flag, eq, value = s.partition("=")
                if eq:
                    pairs.append((flag, Arg.of(value)))
                elif flag in long_val:
                    pairs.append((flag, args[i + 1] if i + 1 < n else None))
                    i += 1
                else:
                    pairs.append((flag, None))
            else:
                body = s[1:]
                for j, c in enumerate(body):
                    if c in short_val:
                        rest = body[j + 1:]
                        if rest:
                            pairs.append(("-" + c, Arg.of(rest)))
                        else:
                            pairs.append(("-" + c, args[i + 1] if i + 1 < n else None))
                            i += 1
                        break
                    pairs.append(("-" + c, None))
            i += 1
            for flag, val in pairs:
                role = roles.get(flag) or LONG_ROLES.get(flag)
                if role == "lookup":
                    return None
                if role == "chdir":
                    ctx = chdir(scan, ctx, val)
                elif role == "shell":
                    shell = val
                elif role in ("load", "write", "key"):
                    f = apply_role(scan, role, val, name, ctx, "secret-read")
                    if f:
                        return f
            continue
        if name in ("sudo", "doas") and "=" in s and s.split("=", 1)[0].isidentifier():
            i += 1
            continue
        break
    if shell is not None:
        if shell.static is not None:
            return scan.command(shell.static, ctx.copy())
        return None
    if skip >= 99:
        return None        # su/script/nix-shell run a command only through -c/--run
    i += skip
    if name == "watch":
        text = " ".join(a.static for a in args[i:] if a.static is not None)
        return scan.command(text, ctx.copy()) if text else None
    return run_rest(scan, args[i:], ctx, stdin, hops)


def h_env(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    i, n = 0, len(args)
    while i < n:
        s = args[i].static
        if s is None:
            break
        if s in ("-i", "-0", "--ignore-environment", "--null", "-v", "--debug", "-"):
            i += 1
        elif s in ("-u", "--unset"):
            i += 2
        elif s.startswith("--unset=") or (s.startswith("-u") and len(s) > 2):
            i += 1
        elif s in ("-C", "--chdir") or s.startswith("--chdir=") or (s.startswith("-C") and len(s) > 2):
            if s in ("-C", "--chdir"):
                ctx = chdir(scan, ctx, args[i + 1] if i + 1 < n else None)
                i += 2
            else:
                ctx = chdir(scan, ctx, Arg.of(s.split("=", 1)[1] if "=" in s else s[2:]))
                i += 1
        elif s in ("-S", "--split-string") or s.startswith("--split-string=") or (s.startswith("-S") and len(s) > 2):
            if s in ("-S", "--split-string"):
                text = args[i + 1].static if i + 1 < n else None
                i += 2
            else:
                text = s.split("=", 1)[1] if "=" in s else s[2:]
                i += 1
            rest = " ".join(a.static for a in args[i:] if a.static is not None)
            return scan.command((text or "") + " " + rest, ctx.copy())
        elif s == "--":
            i += 1
            break
        elif s.startswith("-") and len(s) > 1 or "=" in s and s.split("=", 1)[0].isidentifier():
            if "=" in s and not s.startswith("-"):
                scan.env_option(*s.split("=", 1))
            i += 1
        else:
            break
    if i >= n:
        return dump(scan, "env") if scan.loaded else None
    return run_rest(scan, args[i:], ctx, stdin, hops)


# -- shells and code ------------------------------------------------------------------


def h_shell(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    i, n = 0, len(args)
    has_c = False
    while i < n:
        s = args[i].static
        if s is None or len(s) < 2 or s[0] not in "-+":
            break
        if s == "--":
            i += 1
            break
        if s in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            if s in ("-o", "-O") and i + 1 < n and (option := args[i + 1].static):
                scan.shell_option(option)
            i += 2
            continue
        if s[0] == "-" and not s.startswith("--") and "c" in s[1:]:
            has_c = True
        if s[0] == "-" and not s.startswith("--") and ("x" in s[1:] or "v" in s[1:]):
            scan.shell_option("xtrace")     # `bash -x -c '. ./.env'`
        i += 1
    if has_c:
        if i >= n:
            return None
        script = args[i]
        if script.static is not None:
            inner = ctx.copy()
            for pos, a in enumerate(args[i + 1:i + 11]):
                inner.vars[str(pos)] = a.variants
            f = scan.command(script.static, inner)
            if f:
                return f
        elif script.from_output():
            f = unknown_code(scan, name, ctx)     # `bash -c "$(curl ...)"`
            if f:
                return f
        for a in args[i + 1:]:
            f = scan.read(a, name, ctx)
            if f:
                return f
        return None
    if i < n:
        for a in args[i:]:
            f = scan.read(a, name, ctx)
            if f:
                return f
        return None
    text = stdin.text()
    if text:
        return scan.command(text, ctx.copy())
    return unknown_code(scan, name, ctx) if stdin.from_program() else None


def unknown_code(scan: Walker, verb: str, ctx: Ctx) -> Finding | None:
    """A script the analysis cannot see (`... | sh`, `eval "$(...)"`, `python -c "$X"` from a
    program): it may read anything, so its output goes through redaction like a tree read."""
    return scan.tree_root(None, verb, verb, ctx)


def h_eval(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    if not args:
        return None
    if any(a.static is None for a in args):
        return unknown_code(scan, name, ctx) if any(a.from_output() for a in args) else None
    return scan.command(" ".join(a.static or "" for a in args), ctx.copy())  # (all static: checked above)


def h_source(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    if args:
        scan.load(args[0], ctx)
        if scan.loaded and scan.xtrace:
            return dump(scan, name)     # `set -x; . ./.env`: xtrace prints every assignment
    return None


def h_alias(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    for a in args:
        s = a.static
        if s and "=" in s and not s.startswith("-"):
            f = scan.command(s.split("=", 1)[1], ctx.copy())
            if f:
                return f
    return None


def h_trap(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    if args and args[0].static and not args[0].static.startswith("-"):
        return scan.command(args[0].static, ctx.copy())
    return None


# per interpreter: (letters that take the code, letters that take another value,
#                   in-place letter, long options that take the code, long options with a value)
INTERPRETERS = {
    "python": ("c", "mWXQ", "", (), ("--check-hash-based-pycs",)),
    "pypy": ("c", "mWXQ", "", (), ()),
    "node": ("ep", "r", "", ("--eval", "--print"), ("--require", "--import", "--loader", "--input-type",
                                                   "--experimental-loader", "--conditions")),
    "nodejs": ("ep", "r", "", ("--eval", "--print"), ("--require", "--import", "--loader")),
    "bun": ("e", "r", "", ("--eval", "--print"), ("--preload", "--cwd")),
    "perl": ("eE", "IMmxFlC0dDV", "i", (), ()),
    "ruby": ("e", "rIFCEKx", "i", (), ()),
    "php": ("rBRFE", "fdcz", "", (), ()),
    "lua": ("e", "l", "", (), ()),
    "luajit": ("e", "lbj", "", (), ()),
    "rscript": ("e", "", "", (), ()),
    "osascript": ("e", "l", "", (), ()),
    "tclsh": ("", "", "", (), ()),
}


# Letters that take an *optional attached* value only (perl -0777, -l, -i.bak, -Mmod).
_ATTACHED_ONLY = {"perl": "MmlF0dDVxCi", "ruby": "iFKEx"}


def h_interp(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    code_l, val_l, inplace_l, code_long, val_long = INTERPRETERS[name]
    attached_only = _ATTACHED_ONLY.get(name, "")
    codes = []
    inplace = False
    stop_module = False
    module = None
    i, n = 0, len(args)
    while i < n and not stop_module:
        s = args[i].static
        if s is None or len(s) < 2 or s[0] != "-":
            break
        if s == "--":
            i += 1
            break
        i += 1
        if s.startswith("--"):
            flag, eq, val = s.partition("=")
            if flag in code_long:
                codes.append(val if eq else (args[i].static if i < n else None))
                i += 0 if eq else 1
            elif flag == "--env-file":
                scan.load(Arg.of(val) if eq else (args[i] if i < n else Arg.of("")), ctx)
                i += 0 if eq else 1
            elif not eq and flag in val_long:
                i += 1
            continue
        body = s[1:]
        for j, c in enumerate(body):
            rest = body[j + 1:]
            if c in code_l:
                if rest:
                    codes.append(rest)
                else:
                    codes.append(args[i].static if i < n else None)
                    i += 1
                break
            if c == inplace_l and inplace_l:
                inplace = True
                break
            if c in attached_only:
                break
            if c in val_l:
                if name in ("python", "pypy") and c == "m":
                    stop_module = True
                    module = rest or (args[i].static if i < n else None)
                if not rest:
                    i += 1
                break
    operands = args[i:]
    if module in ("venv", "virtualenv"):
        return writes_only(scan, name, operands, ctx)   # `python -m venv .env` creates a venv
    for code in codes:
        f = code_scan(scan, code, name, ctx)
        if f:
            return f
    if codes and None in codes and any(a.from_output() for a in args):
        f = unknown_code(scan, name, ctx)           # `python -c "$(curl ...)"`
        if f:
            return f
    if not codes and not stop_module:
        if operands and operands[0].static != "-":
            f = scan.read(operands[0], name, ctx)
            if f:
                return f
            operands = operands[1:]
        else:
            text = stdin.text()
            f = code_scan(scan, text, name, ctx) if text else \
                (unknown_code(scan, name, ctx) if stdin.from_program() else None)
            if f:
                return f
            operands = operands[1:]
    for a in operands:
        f = scan.read(a, name, ctx)
        if not f and inplace:
            f = scan.write(a, name, ctx)
        if f:
            return f
    return None


def h_ctx(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    """`ctx run [--raw] -- CMD...`: CMD runs through ctx's runner, which redacts the values of
    secret files from its output; so recursive reads inside are allowed (if their output
    reaches the capture as lines), everything else is judged as if CMD ran directly.
    `ctx get` / `ctx search` print stored output through redaction; other subcommands read
    their file arguments."""
    sub = args[0].static if args else None
    if sub in ("get", "search", "paths", "doctor", "stats", "status", "daemon", "hook", "ledger"):
        return None
    if sub != "run":
        return generic(scan, name, args, ctx)
    rest = args[1:]
    while rest and rest[0].static in ("--raw",):
        rest = rest[1:]
    if rest and rest[0].static == "--":
        rest = rest[1:]
    if not rest:
        return None
    if any(a.static is None for a in rest):
        return generic(scan, "command", rest, ctx)
    if len(rest) == 1:
        text = rest[0].static or ""     # (all static: checked above)
    else:
        import shlex
        text = shlex.join(a.static or "" for a in rest)
    scan.redacting += 1
    try:
        return scan.command(text, ctx.copy())
    finally:
        scan.redacting -= 1


def h_make(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    """make runs the recipes of its makefiles. One it reads from stdin (`printf 'all:\\n\\t@cat
    .env' | make -f -`) is judged as the shell commands it holds; one a program prints is
    unknown code (a tree read). Makefiles on disk are not read, as scripts are not."""
    cwd = ctx
    for flag, val, a in opts(args, "fCIWo", frozenset({"--file", "--makefile", "--directory", "--include-dir",
                                                      "--what-if", "--new-file", "--old-file",
                                                      "--assume-new", "--assume-old"})):
        if flag in ("-C", "--directory") and val is not None:
            cwd = chdir(scan, cwd, val)
        elif flag in ("-f", "--file", "--makefile") and val is not None:
            if val.static in ("-", "/dev/stdin"):
                text = stdin.text()
                f = _makefile(scan, text, name, cwd.copy()) if text is not None else \
                    (unknown_code(scan, name, ctx) if stdin.from_program() else None)
            else:
                f = scan.read(val, name, cwd, split=False)     # `make -f .env`
            if f:
                return f
    return None


_MAKE_SHELL = re.compile(r"\$[({]shell\s+([^)}]*)[)}]")
_MAKE_FILE = re.compile(r"\$[({]file\s*<\s*([^)}\s]+)\s*[)}]")


def _makefile(scan: Walker, text: str, verb: str, ctx: Ctx) -> Finding | None:
    for line in text.splitlines()[:512]:
        if line[:1] in ("\t", " "):
            cmds = [line.lstrip(" \t").lstrip("@+- \t")]     # a recipe line: a shell command
        else:
            cmds = _MAKE_SHELL.findall(line)
            for target in _MAKE_FILE.findall(line):
                f = scan.read_path(target, verb, ctx)
                if f:
                    return f
        for cmd in cmds:
            cmd = cmd.replace("$$", "$")
            f = scan.command(cmd, ctx.copy()) if cmd.strip() else None
            if f:
                return f
    return None


def h_virtualenv(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    return writes_only(scan, name, args, ctx)


def h_deno(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    if args and args[0].static == "eval":
        codes = [a.static for a in args[1:] if a.static and not a.static.startswith("-")]
        return code_scan(scan, codes[0] if codes else "", name, ctx)
    return generic(scan, name, args, ctx)


_FIND_VALUE = frozenset("""-path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type
-xtype -user -group -perm -size -mtime -mmin -atime -amin -ctime -cmin -maxdepth -mindepth -printf
-newer -anewer -cnewer -samefile -inum -links -uid -gid -fstype -used -context -newermt -newerct
-newerat -newermm -regextype""".split())


def h_find(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    i, n = 0, len(args)
    while i < n and args[i].static in ("-H", "-L", "-P"):
        i += 1
    if i < n and args[i].static == "-D":
        i += 2
    starts = []
    while i < n and (args[i].static or "x")[0] not in "-(!),":
        starts.append(args[i])
        i += 1
    starts = starts or [Arg.of(".")]
    names: list[str] = []
    execs: list[list[Arg]] = []
    delete = False
    j = i
    while j < n:
        s = args[j].static
        if s in ("-name", "-iname"):
            if j + 1 < n and (name_glob := args[j + 1].static) is not None:
                names.append(name_glob)
            j += 2
            continue
        if s in _FIND_VALUE:
            j += 2
            continue
        if s in ("-fprint", "-fprint0", "-fls", "-fprintf"):
            f = scan.write(args[j + 1], "find", ctx) if j + 1 < n else None
            if f:
                return f
            j += 3 if s == "-fprintf" else 2
            continue
        if s == "-delete":
            delete = True
        elif s in ("-exec", "-execdir", "-ok", "-okdir"):
            k = j + 1
            while k < n and args[k].static not in (";", "+"):
                k += 1
            execs.append(args[j + 1:k])
            j = k + 1
            continue
        j += 1
    if delete:
        for st in starts:
            f = scan.write(st, "find -delete", ctx, delete=True)
            if f:
                return f
    if not execs:
        return None
    placeholder: list[Variant] = []
    for st in starts:
        if st.static is None:
            continue
        base = scan.resolve(st.static, ctx).rstrip("/")
        for nm in names or ["*"]:
            pieces = glob_pieces(nm)
            placeholder.append(merge_pieces((("lit", base + "/"),) + pieces))
            placeholder.append(merge_pieces((("lit", base + "/"), ("any", ""), ("lit", "/")) + pieces))
    for cmd in execs:
        expanded = [replace_braces(a, placeholder) for a in cmd]
        f = run_rest(scan, expanded, ctx, Stdin([], None), hops)
        if f:
            return f
        # Whatever the name filters say, what find passes can be a symlink to a secret, or a
        # file a filter did not foresee: a command that reads what it is given reads the tree.
        for st in starts:
            start = scan.resolve(st.static, ctx) if st.static is not None else ctx.cwd
            if _reads_given_file(scan, cmd, ctx, hops, start, "{}"):
                f = scan.tree(st, "find -exec " + (cmd[0].static or "command") if cmd else "find", ctx)
                if f:
                    return f
    return None


def _reads_given_file(scan: Walker, cmd: list[Arg], ctx: Ctx, hops: int, base: str | None,
                      token: str | None = None) -> bool:
    """Whether `cmd` prints the content of the file it is handed (as `token`, else appended):
    asked by running its handler, in a throwaway analysis, on a file named like a secret."""
    if not cmd or not base:
        return False
    # A fresh walker of the walker's own class (shell.Scan), whose constructor the protocol leaves out.
    probe = type(scan)(scan.home, scan.root, scan.tmp, _never, scan.ctx_home)  # type: ignore[call-arg]
    probe.nest = scan.nest
    sample: list[Variant] = [(("lit", base.rstrip("/") + "/.env"),)]
    if token is not None:
        args = [replace_braces(a, sample, token) for a in cmd]
    else:
        args = list(cmd) + [Arg(sample)]
    try:
        f = run_rest(probe, args, ctx.copy(), Stdin([], None), hops)
    except Exception:  # noqa: BLE001 - a probe that fails proves nothing either way
        return False
    return f is not None and f.rule in ("secret-read", "secret-env-dump")


def _never(path: str) -> bool:
    return False


def h_xargs(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    replace: str | None = None
    parsed = opts(args, "adEILnPs", frozenset({"--arg-file", "--delimiter", "--eof", "--max-lines",
                                               "--max-args", "--max-procs", "--max-chars",
                                               "--process-slot-var"}), stop=True)
    cmd = []
    for flag, val, a in parsed:
        if flag is None:
            cmd.append(a)
        elif flag in ("-a", "--arg-file"):
            f = scan.read(val, name, ctx) if val else None
            if f:
                return f
        elif flag == "-I" and val is not None:
            replace = val.static
        elif flag == "-i" or flag == "--replace":
            replace = (val.static if val is not None else None) or "{}"
    cmd = cmd or [Arg.of("echo")]
    extra = [Arg.of(w) for w in stdin.words()]
    text = stdin.text()
    if stdin.prev is None and text:
        extra = [Arg.of(w) for w in text.split()[:64]]
    listed = cmd
    if replace:
        placeholder = [v for e in extra for v in e.variants]
        cmd = [cmd[0]] + [replace_braces(a, placeholder, replace) for a in cmd[1:]]
    else:
        cmd = cmd + extra
    f = run_rest(scan, cmd, ctx, Stdin([], None), hops)
    if f or text is not None or (stdin.prev is None and not any(r[1] == "<" for r in stdin.redirs)):
        return f
    # Names from a program's output (`find . -type f | xargs grep KEY`, `git ls-files | xargs
    # cat`): unknown, so any file under where the listing looked.
    root = _listing_root(scan, stdin, ctx)
    if _reads_given_file(scan, listed, ctx, hops, root or ctx.cwd or "/", replace):
        return scan.tree_root(root, "xargs " + (listed[0].static or "command"), "xargs", ctx)
    return None


def _listing_root(scan: Walker, stdin: Stdin, ctx: Ctx) -> str | None:
    """The directory the names piped in come from: `find DIR ...`'s DIR, else the cwd (the
    command that printed them is unknown); None when that directory is unknown."""
    if not stdin.prev:
        return ctx.cwd
    d = listing_dir([("w", w) for w in stdin.prev[0]])
    if d is False or d == "":
        return ctx.cwd
    if d is None:
        return None
    path = scan.resolve(d, ctx)
    return scan.real(path, ctx) if path.startswith("/") else None


def h_ssh(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    operands = [a for flag, val, a in opts(args, "iFopJlLRDbcEemOQSWwB", stop=True) if flag is None]
    if len(operands) < 2:
        return None
    words = [a.static for a in operands[1:]]
    if any(w is None for w in words):
        return None
    return scan.command(" ".join(w or "" for w in words), Ctx(None, {}))  # (all static: checked above)
