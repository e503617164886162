"""`ctx hook <harness>`: the per-tool-call entry point (the shim).

Contract with the harness (Claude Code): read one payload on stdin, print at
most one JSON object on stdout, exit 0, never block.  The fast path forwards
the raw payload bytes to the daemon and prints its answer: no json, no socket
module, no parsing at all here.  Only when the daemon cannot answer in time
does the slow path run: decode the payload, apply the safety plane locally
(safety never depends on the daemon), spool the event for the daemon to ingest
later, and start the daemon for the next call.

stdlib-only, and import-lean on purpose: every millisecond here is paid on
every tool call.
"""

import os
import sys
import time

from reflex import paths as paths_mod
from reflex.shim import client
from reflex import protocol
from reflex.harness.claude.payload import MAX_PAYLOAD

# A dead daemon refuses at once (ENOENT/ECONNREFUSED); a connect only waits
# when a live daemon's backlog is full, so this bound costs nothing when it is down.
CONNECT_TIMEOUT = 0.3
REPLY_TIMEOUT = float(os.environ.get("CTX_HOOK_REPLY_TIMEOUT", "1.5"))

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_EVENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _read_stdin():
    """Up to MAX_PAYLOAD bytes; the rest is drained so the writer never sees EPIPE."""
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        return b"", False
    try:
        data = stream.read(MAX_PAYLOAD + 1)
    except OSError:
        return b"", False
    if len(data) <= MAX_PAYLOAD:
        return data, False
    try:
        while stream.read(1 << 20):
            pass
    except OSError:
        pass
    return data[:MAX_PAYLOAD], True


# Harnesses that block the call on an empty answer (Cursor with failClosed): what "let it be" is there.
_NO_OPINION = {"cursor": b"{}"}


def main(argv):
    """Never raises and always exits 0: ctx's own failure must not block the agent."""
    argv = _harness_option(argv)
    try:
        return _main(argv)
    except BaseException as e:  # noqa: BLE001 - the contract is "never block"
        if not isinstance(e, KeyboardInterrupt):
            try:
                sys.stderr.write("ctx hook: internal error (%s: %s); call passed through\n" % (type(e).__name__, e))
            except Exception:
                pass
        _emit(_NO_OPINION.get(argv[0] if argv else "", b""), b"")
        return 0


def _harness_option(argv):
    """`ctx hook --harness NAME [EVENT]` is `ctx hook NAME [EVENT]`."""
    argv = list(argv)
    if argv and argv[0].startswith("--harness"):
        name = argv[0].partition("=")[2] if "=" in argv[0] else (argv[1] if len(argv) > 1 else "")
        return [name] + argv[1 if "=" in argv[0] else 2:]
    return argv


def _main(argv):
    harness = argv[0] if argv else "claude"
    if not harness or not set(harness) <= _SAFE or len(harness) > 32:
        sys.stderr.write("ctx hook: unknown harness %r\n" % harness[:40])
        return 0
    # Copilot's payloads do not name their event: its hooks are installed with the name as an argument.
    event = argv[1] if len(argv) > 1 and set(argv[1]) <= _EVENT_CHARS and len(argv[1]) <= 32 else ""
    data, truncated = _read_stdin()
    out, err = deliver(paths_mod.resolve(), harness, data, truncated, event)
    _emit(out or _NO_OPINION.get(harness, b""), err)
    return 0


def deliver(paths, harness, data, truncated=False, event=""):
    """One hook call: ask the daemon, or fall back locally.  -> (stdout, stderr) bytes.

    Library form of the shim (benchmarks and the durability test drive it
    in-process with exactly the code the shim runs).
    """
    uid = os.urandom(10).hex()
    env = local_env(paths)
    fields = {"harness": harness, "uid": uid, "ts": time.time(), "pid": os.getpid(), "trunc": bool(truncated)}
    fields.update(env)
    fields.update(_harness_fields())
    if event:
        fields["event"] = event
    head = protocol.request_header("hook", fields, len(data))
    try:
        reply, body = client.request(paths, head, data, connect_timeout=CONNECT_TIMEOUT,
                                     reply_timeout=REPLY_TIMEOUT)
    except client.Unavailable as e:
        if not (_is_session_start(data) or event in _SESSION_START_EVENTS) or isinstance(e, client.Impostor):
            return _fallback(paths, harness, head, data, truncated, uid, e, env, event)
        # Once per session it is worth waiting for a cold daemon (~1 s to
        # import its stack): every tool call after this one then meets a
        # warm daemon instead of falling back.
        try:
            reply, body = client.with_daemon(
                paths, lambda: client.request(paths, head, data, connect_timeout=CONNECT_TIMEOUT,
                                              reply_timeout=REPLY_TIMEOUT), SESSION_START_WAIT)
        except client.Unavailable as e2:
            return _fallback(paths, harness, head, data, truncated, uid, e2, env, event)
    if not protocol.header_true(reply, "ok"):
        return _fallback(paths, harness, head, data, truncated, uid, "daemon refused: %s" % reply[:200], env,
                         event)
    return protocol.split_reply(reply, body)


SESSION_START_WAIT = float(os.environ.get("CTX_SESSION_START_WAIT", "3"))
_SESSION_START_EVENTS = ("SessionStart", "sessionStart")


def _is_session_start(data):
    head = data[:4096]
    return b'"hook_event_name":"SessionStart"' in head or b'"hook_event_name": "SessionStart"' in head


def local_env(paths):
    """The hook process's environment as the safety plane sees it (local_decision.hook_env)."""
    from reflex.shim.fallback import hook_env
    return hook_env(config=paths.config)


def _harness_fields():
    """Where the harness's permissions come from (its pid, whose command line holds the session's
    --allowedTools, and its settings directory), so a rewrite never changes whether a command runs.
    Kept apart from the hook_env fields: the safety plane's decision must not depend on them."""
    fields = {}
    for key, name in (("cpid", "CLAUDE_PID"), ("ccfg", "CLAUDE_CONFIG_DIR")):
        value = os.environ.get(name)
        if value and len(value) < 4096:
            fields[key] = value
    return fields


def _emit(out, err):
    if err:
        try:
            sys.stderr.buffer.write(err)
            sys.stderr.flush()
        except OSError:
            pass
    if out:
        try:
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
        except OSError:
            pass


def _fallback(paths, harness, head, data, truncated, uid, why, env, event=""):
    """Daemon unreachable: decide locally (safety only), spool, start the daemon."""
    from reflex.shim import spool
    try:
        from reflex.shim import fallback as local_decision
        answer, err, local = local_decision.decide(harness, data, truncated, env, event)
    except Exception as e:  # a broken safety module must not lose the event
        answer, err, local = b"", ("ctx hook: local decision failed: %r\n" % (e,)).encode(), "error"
    # One line for the user when the reason is another user's directory or
    # socket: what is wrong, what to do, and that safety still applied.
    notice = str(why) if isinstance(why, client.Impostor) else None
    # The spooled header records what the shim decided, so the ledger shows
    # what actually happened to this call rather than what the daemon would
    # have said.
    head = protocol.with_fields(head, {"spooled": True, "local": local})
    try:
        spool.write(paths.spool, uid, head + data)
    except paths_mod.UntrustedPath as e:
        notice = notice or str(e)
    except OSError as e:
        err = (err or b"") + ("ctx: could not spool event (%s); it is lost\n" % e).encode()
    try:
        client.spawn_daemon(paths)
    except paths_mod.UntrustedPath as e:
        notice = notice or str(e)
    except OSError:
        pass
    if notice:
        err = (err or b"") + ("%s (this call was checked by ctx's local safety plane)\n" % notice).encode()
    _log(paths, "hook fallback (%s): %s" % (harness, why))
    return answer, err


def _log(paths, line):
    paths_mod.append_log(paths.log, "%s shim[%d] %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), os.getpid(), line))
