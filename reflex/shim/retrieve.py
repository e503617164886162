"""`ctx get ADDRESS` and `ctx search PATTERN`: agent-facing retrieval clients.

They ask the daemon, which verifies every byte against its BLAKE3 before
answering.  If the daemon is down they start it and wait briefly (unlike a
hook, a retrieval was explicitly asked for, and an answer is worth a second).

stdlib-only.
"""

import os
import sys

from reflex import paths as paths_mod
from reflex import protocol
from reflex.shim import client

START_WAIT_S = 5.0


def _ask(paths, op, fields):
    return client.with_daemon(
        paths, lambda: client.request_json(paths, op, fields, connect_timeout=0.2, reply_timeout=30), START_WAIT_S)


def get_main(argv):
    as_json = "--json" in argv
    args = [a for a in argv if a != "--json"]
    b3 = None
    if len(args) == 2 and args[1].startswith("b3="):
        # Hints print `ctx get ADDRESS b3=<prefix>`: the bytes must still hash to it.
        b3 = args.pop()[3:]
    if len(args) != 1:
        sys.stderr.write("usage: ctx get r:<handle>[:L<a>-<b>|#<test id>] [b3=<hex>] [--json]\n")
        return 2
    paths = paths_mod.resolve()
    fields = {"address": args[0], "json": as_json, "uid": os.urandom(10).hex(), "cwd": os.getcwd(),
              "session": os.environ.get("CLAUDE_CODE_SESSION_ID", "")}
    if b3:
        fields["b3"] = b3
    try:
        hdr, body = _ask(paths, "get", fields)
    except client.Unavailable as e:
        sys.stderr.write("ctx get: daemon unavailable (%s); try `ctx doctor`\n" % e)
        return 1
    out, err = protocol.split_reply(hdr, body)
    if not hdr.get("ok"):
        sys.stderr.write("ctx get: %s\n" % (hdr.get("detail") or hdr.get("error")))
        return 1
    _out(out)
    if err:
        sys.stderr.write(err.decode(errors="replace"))
    if as_json:
        return 0 if hdr.get("know") else 1
    return 0


def search_main(argv):
    as_json = "--json" in argv
    args = []
    opts = {}
    it = iter(a for a in argv if a != "--json")
    for a in it:
        if a in ("--handle", "--session"):
            opts[a[2:]] = next(it, None)
        else:
            args.append(a)
    if len(args) != 1:
        sys.stderr.write("usage: ctx search PATTERN [--handle H] [--session ID] [--json]\n")
        return 2
    paths = paths_mod.resolve()
    fields = {"pattern": args[0], "json": as_json, "uid": os.urandom(10).hex(), "cwd": os.getcwd()}
    fields.update({k: v for k, v in opts.items() if v})
    if "session" not in fields and os.environ.get("CLAUDE_CODE_SESSION_ID"):
        fields["session"] = os.environ["CLAUDE_CODE_SESSION_ID"]
    try:
        hdr, body = _ask(paths, "search", fields)
    except client.Unavailable as e:
        sys.stderr.write("ctx search: daemon unavailable (%s)\n" % e)
        return 1
    _out(protocol.split_reply(hdr, body)[0])
    if not hdr.get("ok"):
        sys.stderr.write("ctx search: %s\n" % (hdr.get("detail") or hdr.get("error")))
        return 1
    if as_json:
        return 0 if hdr.get("know") else 1
    return 0


def _out(data):
    sys.stdout.flush()
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
