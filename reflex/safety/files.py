"""Commands that copy, move, archive, transfer, change or delete files (safety plane).

A secret as a *source* is flagged (`secret-copy`, or `secret-exfil` when the destination is
remote): copying a secret to another name is the first step of reading it under that
name. Destinations, deleted sources and changed files are checked against the project
root: cp/mv/ln/install, rsync/scp, tee, rm/shred, touch/mkdir/truncate, chmod/chown,
dd of=, tar -c -f / tar -x -C, zip/unzip/7z, curl -o / wget -O and their uploads.
Stdlib only.
"""

from __future__ import annotations

import re

from reflex.safety.argv import chdir, opts, stdin_names
from reflex.safety.words import Arg

# Annotation-only imports (see reflex.safety.model: this module is on the hot path).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from reflex.safety.argv import Stdin, Walker
    from reflex.safety.model import Ctx, Finding



def _copy_like(scan: Walker, name: str, args: list[Arg], ctx: Ctx, short_val: str, long_val: frozenset[str],
               delete_sources: bool = False) -> Finding | None:
    target_dir = None
    dirs_only = False
    operands = []
    sources: list[Arg]
    dest: Arg | None
    for flag, val, a in opts(args, short_val, long_val):
        if flag is None:
            operands.append(a)
        elif flag in ("-t", "--target-directory"):
            target_dir = val
        elif name == "install" and flag in ("-d", "--directory"):
            dirs_only = True
    if dirs_only:
        sources, dest = [], None
        for a in operands:
            f = scan.write(a, name, ctx)
            if f:
                return f
    elif target_dir is not None:
        sources, dest = operands, target_dir
    elif len(operands) >= 2:
        sources, dest = operands[:-1], operands[-1]
    else:
        sources, dest = operands, None
    for a in sources:
        f = scan.read(a, name, ctx, "secret-copy", split=False, dirs=True)
        if not f and delete_sources:
            f = scan.write(a, name, ctx, delete=True)
        if f:
            return f
    if dest is not None and any(a.from_output() for a in sources) and dest.static:
        # `ln -s "$(printf '.%s' env)" x; cat x`: x is whatever the program printed.
        scan.taint(dest.static, ctx, many=len(sources) > 1 or target_dir is not None)
    return scan.write(dest, name, ctx) if dest is not None else None


def h_cp(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    return _copy_like(scan, name, args, ctx, "tS",
                      frozenset({"--target-directory", "--suffix"}), delete_sources=(name == "mv"))


def h_install(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    return _copy_like(scan, name, args, ctx, "tSmog",
                      frozenset({"--target-directory", "--suffix", "--mode", "--owner", "--group"}))


def _remote(a: Arg) -> bool:
    s = a.static
    if s is None:
        return False
    head = s.split("/", 1)[0]
    return ":" in head and not s.startswith(("./", "/", "~")) or s.startswith("rsync://")


_RSYNC_LONG = frozenset("""--rsh --exclude --include --exclude-from --include-from --files-from
--filter --chmod --chown --log-file --partial-dir --temp-dir --backup-dir --suffix --port
--password-file --rsync-path --timeout --bwlimit --block-size --max-size --min-size --compare-dest
--link-dest --copy-dest --remote-option --out-format --info --debug --iconv --modify-window --outbuf
--contimeout --sockopts --checksum-choice --compress-choice --compress-level --skip-compress
--usermap --groupmap --address --protocol --stop-after --stop-at --max-delete""".split())


def h_transfer(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    if name == "rsync":
        parsed = opts(args, "eTfBM", _RSYNC_LONG)
    else:
        parsed = opts(args, "PiFoclSJDX", frozenset())
    operands = []
    for flag, val, a in parsed:
        if flag is None:
            operands.append(a)
        elif flag in ("--files-from", "--include-from", "--exclude-from"):
            f = scan.read(val, name, ctx) if val else None
            if not f and flag == "--files-from" and val is not None and val.static in ("-", "/dev/stdin"):
                f = stdin_names(scan, name, stdin, ctx, "secret-copy")
            if f:
                return f
    if len(operands) < 2:
        for a in operands:
            f = scan.read(a, name, ctx, "secret-copy", split=False, dirs=True)
            if f:
                return f
        return None
    dest = operands[-1]
    rule = "secret-exfil" if _remote(dest) else "secret-copy"
    for a in operands[:-1]:
        if _remote(a):
            continue
        f = scan.read(a, name, ctx, rule, split=False, dirs=True)
        if f:
            return f
    return None if _remote(dest) else scan.write(dest, name, ctx)


def h_tee(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    for flag, val, a in opts(args):
        if flag is None:
            f = scan.write(a, name, ctx)
            if f:
                return f
    return None


def h_rm(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    for flag, val, a in opts(args, "ns" if name == "shred" else "",
                             frozenset({"--iterations", "--size", "--random-source"})):
        if flag is None:
            f = scan.write(a, name, ctx, delete=True)
            if f:
                return f
    return None


_WRITE_SPECS = {
    "touch": ("rtd", frozenset({"--reference", "--date", "--time"})),
    "mkdir": ("mZ", frozenset({"--mode", "--context"})),
    "truncate": ("sr", frozenset({"--size", "--reference"})),
    "mkfifo": ("mZ", frozenset({"--mode", "--context"})),
    "mknod": ("mZ", frozenset({"--mode", "--context"})),
    "setfacl": ("mxMX", frozenset({"--modify", "--remove", "--set", "--modify-file", "--remove-file",
                                    "--set-file"})),
}


def h_writes(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    short_val, long_val = _WRITE_SPECS[name]
    for flag, val, a in opts(args, short_val, long_val):
        if flag is None:
            f = scan.write(a, name, ctx)
            if f:
                return f
    return None


_CHMOD_FLAGS = re.compile(r"-[cfvRHLPh]+\Z")


_CHATTR_MODE = re.compile(r"[+\-=][aAcCdDeFijmPsStTux]+\Z")


def h_chmod(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    operands = []
    reference = False
    i = 0
    while i < len(args):
        s = args[i].static
        if s is not None and s.startswith("--"):
            reference = reference or s.startswith("--reference")
            if name in ("chown", "chgrp") and s == "--from":
                i += 1
        elif s is not None and _CHMOD_FLAGS.match(s) and not (name == "chattr" and _CHATTR_MODE.match(s)):
            pass
        elif name == "chattr" and s in ("-v", "-p"):
            i += 1
        else:
            operands.append(args[i])
        i += 1
    if not reference:
        operands = operands[1:]
    for a in operands:
        f = scan.write(a, name, ctx)
        if f:
            return f
    return None


def h_dd(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    for a in args:
        s = a.static or ""
        if s.startswith("if="):
            f = scan.read(Arg.of(s[3:]), name, ctx, "secret-copy", split=False, dirs=True)
        elif s.startswith("of="):
            f = scan.write(Arg.of(s[3:]), name, ctx)
        else:
            f = None
        if f:
            return f
    return None


_CURL_VAL = "AbcCdDEeFHKmoPQrTtuUwxXyYz"


_CURL_LONG = frozenset("""--output --output-dir --upload-file --data --data-ascii --data-binary
--data-raw --data-urlencode --json --form --form-string --config --cookie --cookie-jar --dump-header
--trace --trace-ascii --stderr --cert --key --cacert --capath --netrc-file --header --user --proxy
--request --user-agent --referer --max-time --connect-timeout --retry --retry-delay --retry-max-time
--write-out --range --url --resolve --interface --limit-rate --proxy-user --cert-type --key-type
--pass --ciphers --local-port --max-filesize --speed-limit --speed-time --time-cond --quote
--continue-at --proxy-cert --proxy-key --proxy-cacert --unix-socket --abstract-unix-socket
--connect-to --dns-servers --expect100-timeout --keepalive-time --oauth2-bearer --aws-sigv4
--variable --libcurl --mail-from --mail-rcpt --ftp-port --telnet-option --create-file-mode
--parallel-max --url-query --etag-save --etag-compare --hsts --alt-svc""".split())


_CURL_WRITE = frozenset({"-o", "--output", "--output-dir", "-c", "--cookie-jar", "-D", "--dump-header",
                         "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save"})


_CURL_READ = frozenset({"-T", "--upload-file", "-K", "--config", "--etag-compare"})


_CURL_DATA = frozenset({"-d", "--data", "--data-ascii", "--data-binary", "--data-urlencode", "--json",
                        "-H", "--header", "--variable"})


def h_curl(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    for flag, val, a in opts(args, _CURL_VAL, _CURL_LONG):
        f = None
        if flag is None:
            s = a.static or ""
            if s.startswith("file://"):
                f = scan.read_path(s[7:], name, ctx, "secret-exfil")
        elif val is None:
            continue
        elif flag in _CURL_WRITE and val.static != "-":
            f = scan.write(val, name, ctx)
        elif flag in _CURL_READ:
            f = scan.read(val, name, ctx, "secret-exfil", split=False)
        elif flag in _CURL_DATA and val.static and "@" in val.static:
            f = scan.read_path(val.static.split("@", 1)[1], name, ctx, "secret-exfil")
        elif flag in ("-F", "--form") and val.static:
            m = re.search(r"=[@<]([^;]*)", val.static)
            if m:
                f = scan.read_path(m.group(1), name, ctx, "secret-exfil")
        elif flag == "--url" and (val.static or "").startswith("file://"):
            f = scan.read_path((val.static or "")[7:], name, ctx, "secret-exfil")
        if f:
            return f
    return None


def h_wget(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    for flag, val, a in opts(args, "OoaPiUeTtwQlARDIXB",
                             frozenset({"--output-document", "--output-file", "--append-output",
                                        "--directory-prefix", "--input-file", "--post-file",
                                        "--body-file", "--certificate", "--private-key",
                                        "--ca-certificate", "--ca-directory", "--save-cookies",
                                        "--load-cookies", "--header", "--user", "--password",
                                        "--user-agent", "--execute", "--timeout", "--tries"})):
        if val is None:
            continue
        f = None
        if flag in ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output",
                    "-P", "--directory-prefix", "--save-cookies") and val.static != "-":
            f = scan.write(val, name, ctx)
        elif flag in ("-i", "--input-file", "--post-file", "--body-file"):
            f = scan.read(val, name, ctx, "secret-exfil", split=False)
        if f:
            return f
    return None


_TAR_VAL = "fCbTXgNVKIHLF"


_TAR_LONG = frozenset("""--file --directory --files-from --exclude-from --listed-incremental --newer
--label --starting-file --use-compress-program --format --tape-length --info-script --owner --group
--mode --mtime --transform --xform --exclude --strip-components --blocking-factor --record-size
--to-command --suffix""".split())


def h_tar(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    if args and args[0].static and args[0].static[0] != "-" and args[0].static.isalpha():
        args = [Arg.of("-" + args[0].static)] + args[1:]
    mode = None
    archive = None
    cdir = ctx
    members = []
    to_stdout = False
    for flag, val, a in opts(args, _TAR_VAL, _TAR_LONG):
        if flag is None:
            members.append((a, cdir))
        elif flag in ("-O", "--to-stdout"):
            to_stdout = True
        elif flag in ("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate"):
            mode = "c"
        elif flag in ("-x", "--extract", "--get"):
            mode = "x"
        elif flag in ("-t", "--list", "-d", "--diff", "--compare"):
            mode = mode or "t"
        elif flag in ("-f", "--file"):
            archive = val
        elif flag in ("-C", "--directory"):
            cdir = chdir(scan, cdir, val)
        elif flag in ("-T", "--files-from"):
            f = scan.read(val, name, ctx, "secret-copy") if val else None
            if not f and val is not None and val.static in ("-", "/dev/stdin"):
                f = stdin_names(scan, name, stdin, cdir, "secret-copy")    # `echo .env | tar -cf - -T -`
            if f:
                return f
    if mode == "c":
        for a, c in members:
            f = scan.read(a, name, c, "secret-copy", split=False, dirs=True)
            if f:
                return f
        if archive is not None and archive.static != "-":
            return scan.write(archive, name, ctx)
    elif mode == "x" and to_stdout:
        return _members_to_stdout(scan, name, [a for a, _ in members], ctx)
    elif mode == "x" and cdir.cwd:
        return scan.write(Arg.of(cdir.cwd), name, ctx)
    return None


def _members_to_stdout(scan: Walker, name: str, members: Sequence[Arg], ctx: Ctx) -> Finding | None:
    """`tar -xOf x.tgz .env`, `unzip -p x.zip`: archive members printed. A member named like a
    secret is a read of it; all members at once is a read of whatever was archived (a tree)."""
    for a in members:
        f = scan.read(a, name, ctx, split=False)
        if f:
            return f
    if not members:
        return scan.tree_root(None, name, name, ctx)
    return None


def h_zip(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    operands = []
    i, n = 0, len(args)
    while i < n:
        s = args[i].static
        if s in ("-x", "-i", "--exclude", "--include"):
            i += 1
            while i < n and not (args[i].static or "").startswith("-"):
                i += 1
            continue
        if s in ("-b", "-n", "-P", "-t", "-tt", "-O", "--out", "--temp-path", "--password"):
            if s in ("-O", "--out") and i + 1 < n:
                f = scan.write(args[i + 1], name, ctx)
                if f:
                    return f
            i += 2
            continue
        if s is None or not s.startswith("-") or s == "-":
            operands.append(args[i])
        elif s == "-@" or s == "--names-stdin":
            f = stdin_names(scan, name, stdin, ctx, "secret-copy")     # `echo .env | zip x.zip -@`
            if f:
                return f
        i += 1
    if not operands:
        return None
    for a in operands[1:]:
        f = scan.read(a, name, ctx, "secret-copy", split=False, dirs=True)
        if f:
            return f
    return scan.write(operands[0], name, ctx) if operands[0].static != "-" else None


def h_cpio(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    """cpio -o (create) and -p (pass-through) read the files named on stdin: `echo .env | cpio
    -o` prints .env inside an archive; -i reads an archive (a copy of whatever it holds)."""
    mode = None
    out = None
    operands = []
    for flag, val, a in opts(args, "FOIHMRCDE", frozenset({"--file", "--format", "--owner", "--directory",
                                                           "--pattern-file", "--message", "--block-size"})):
        if flag in ("-o", "--create"):
            mode = "o"
        elif flag in ("-p", "--pass-through"):
            mode = "p"
        elif flag in ("-F", "-O", "--file") and val is not None:
            out = val
        elif flag in ("-E", "--pattern-file") and val is not None:
            f = scan.read(val, name, ctx)
            if f:
                return f
        elif flag is None:
            operands.append(a)
    if mode is None:
        return None
    f = stdin_names(scan, name, stdin, ctx, "secret-read" if mode == "o" and out is None else "secret-copy")
    if f:
        return f
    for dest in ([out] if out is not None else []) + (operands[:1] if mode == "p" else []):
        f = scan.write(dest, name, ctx)
        if f:
            return f
    return None


def h_unzip(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    operands = []
    to_stdout = False
    for flag, val, a in opts(args, "dxP", frozenset()):
        if flag == "-d" and val is not None:
            return scan.write(val, name, ctx)
        if flag in ("-p", "-c"):
            to_stdout = True
        elif flag is None:
            operands.append(a)
    if to_stdout:
        return _members_to_stdout(scan, name, operands[1:], ctx)
    return None


def h_7z(scan: Walker, name: str, args: list[Arg], ctx: Ctx, stdin: Stdin, hops: int) -> Finding | None:
    operands = [a for a in args if not (a.static or "x").startswith("-")]
    outdir = next(((a.static or "")[2:] for a in args if (a.static or "").startswith("-o")), None)
    if not operands:
        return None
    cmd = operands[0].static
    if cmd in ("a", "u") and len(operands) > 1:
        for a in operands[2:]:
            f = scan.read(a, name, ctx, "secret-copy", split=False, dirs=True)
            if f:
                return f
        return scan.write(operands[1], name, ctx)
    if cmd in ("x", "e") and outdir:
        return scan.write(Arg.of(outdir), name, ctx)
    return None
