"""`ctx get ADDRESS` and `ctx search PATTERN`: agent-facing retrieval clients.

They ask the daemon, which verifies every byte against its BLAKE3 before
answering.  If the daemon is down they start it and wait briefly (unlike a
hook, a retrieval was explicitly asked for, and an answer is worth a second).

stdlib-only.
"""

import os
import sys
import time

from . import client, paths as paths_mod

START_WAIT_S = 5.0


def _ask(paths, op, fields):
    deadline = time.monotonic() + START_WAIT_S
    spawned = False
    while True:
        try:
            return client.request_json(paths, op, fields, connect_timeout=0.2, reply_timeout=30)
        except client.Unavailable:
            if not spawned:
                client.spawn_daemon(paths)
                spawned = True
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def get_main(argv):
    as_json = "--json" in argv
    args = [a for a in argv if a != "--json"]
    if len(args) != 1:
        sys.stderr.write("usage: ctx get r:<handle>[:L<a>-<b>|#<test id>] [--json]\n")
        return 2
    paths = paths_mod.resolve()
    try:
        hdr, body = _ask(paths, "get", {"address": args[0], "json": as_json})
    except client.Unavailable as e:
        sys.stderr.write("ctx get: daemon unavailable (%s); try `ctx doctor`\n" % e)
        return 1
    if not hdr.get("ok"):
        if as_json and body:
            _out(body)
        sys.stderr.write("ctx get: %s\n" % (hdr.get("detail") or hdr.get("error")))
        return 1
    out_len = hdr.get("out", len(body))
    _out(body[:out_len])
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
    fields = {"pattern": args[0], "json": as_json}
    fields.update({k: v for k, v in opts.items() if v})
    if "session" not in fields and os.environ.get("CLAUDE_CODE_SESSION_ID"):
        fields["session"] = os.environ["CLAUDE_CODE_SESSION_ID"]
    try:
        hdr, body = _ask(paths, "search", fields)
    except client.Unavailable as e:
        sys.stderr.write("ctx search: daemon unavailable (%s)\n" % e)
        return 1
    _out(body[:hdr.get("out", len(body))])
    if not hdr.get("ok"):
        sys.stderr.write("ctx search: %s\n" % (hdr.get("detail") or hdr.get("error")))
        return 1
    return 0


def _out(data):
    sys.stdout.flush()
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
