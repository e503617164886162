"""Class 4: a spooled frame the daemon cannot ingest must not block the frames behind it.

Each POISONS row puts one bad thing in the spool between good frames (as bytes, or as a
filesystem object where a frame should be) and says what must become of it: ingested
anyway, or quarantined with a reason that names the problem.  The scenario spools
everything with the daemon down, starts a real daemon, and checks: every good frame is
in the ledger, every poison is where its row says, `ctx doctor` and `ctx ledger verify`
show the quarantined ones, and the log does not grow once the spool is settled.
"""

import json
import os
import subprocess
import time

from reflex import doctor
from reflex.shim import spool
from reflex import protocol
from reflex.daemon.server import SPOOL_CRASHES_MAX

from ..conftest import ctx_cmd, ledger_rows, pre_bash


def _frame(fields, body=b""):
    hdr = {"v": protocol.PROTOCOL, "op": "hook", "harness": "claude", "ts": time.time(), "trunc": False,
           "spooled": True, "local": "none", "len": len(body)}
    hdr.update(fields)
    if hdr["op"] != "hook":  # the fields a hook frame has and other ops do not
        for name in ("harness", "trunc", "local"):
            hdr.pop(name)
    return json.dumps(hdr).encode() + b"\n" + body


def _hook(uid, command, **payload_fields):
    return _frame({"uid": uid}, json.dumps(pre_bash(command, session="sess-spool", **payload_fields),
                                           ensure_ascii=True).encode())


def _raw(data):
    return lambda spool_dir, name: _write(spool_dir, name, data)


def _write(spool_dir, name, data):
    with open(os.path.join(spool_dir, name), "wb") as f:
        f.write(data)


def _symlink(spool_dir, name):
    target = os.path.join(os.path.dirname(spool_dir), "victim.txt")
    with open(target, "wb") as f:
        f.write(b"not a frame\n")
    os.symlink(target, os.path.join(spool_dir, name))


def _fifo(spool_dir, name):
    os.mkfifo(os.path.join(spool_dir, name))


def _sparse(spool_dir, name):
    with open(os.path.join(spool_dir, name), "wb") as f:
        f.truncate(protocol.MAX_HEADER + protocol.MAX_BODY + 1)


def _died_on_repeatedly(spool_dir, name):
    # The state a daemon leaves when it dies while ingesting a frame (the marker names it and
    # counts the attempts), as many times as a frame that crashes or hangs the daemon would.
    _write(spool_dir, name, _hook("died0000aa", "echo crashes the daemon"))
    _write(spool_dir, spool.IN_PROGRESS, ("%s %d\n" % (name, SPOOL_CRASHES_MAX)).encode())


# name: (how to place it, None if it must be ingested / words its quarantine reason contains)
POISONS = {
    "lone surrogate in the command": (_raw(_hook("surr0000aa", "echo \ud800")), None),
    "lone surrogate in session and cwd": (_raw(_frame({"uid": "surr1111bb"}, json.dumps(
        pre_bash("ls", session="s\udc80", cwd="/tmp/\ud800")).encode())), None),
    "header not JSON": (_raw(b"this is not json\n{}"), "unreadable header"),
    "header not an object": (_raw(b"[1, 2]\n"), "unreadable header"),
    "no header line at all": (_raw(b'{"v": 1, "op": "hook"'), "unreadable header"),
    "empty file": (_raw(b""), "unreadable header"),
    "unknown op": (_raw(_frame({"op": "nope", "uid": "unkn0000aa"})), "unknown_op"),
    "hook frame without a uid": (_raw(_frame({}, b"{}")), "uid"),
    # Refused by the protocol's schema at dispatch, before any handler reads it.
    "timestamp that is an object": (_raw(_frame({"uid": "tsob0000aa", "ts": {"a": 1}},
                                                json.dumps(pre_bash("ls")).encode())), "'ts' of op 'hook' must be a number"),
    "a misspelled field": (_raw(_frame({"uid": "typo0000aa", "harnes": "claude"},
                                       json.dumps(pre_bash("ls")).encode())), "op 'hook' has no field 'harnes'"),
    "run.finish for a capture outside captures": (
        _raw(_frame({"op": "run.finish", "uid": "runx0000aa", "capture": "/etc/passwd"})), "forbidden"),
    "run.finish for a capture that is gone": (
        _raw(_frame({"op": "run.finish", "uid": "runy0000aa", "capture": "@CAPTURES@/gone.out"})), "does not exist"),
    "a link where a frame should be": (_symlink, "unreadable"),
    "a FIFO where a frame should be": (_fifo, "not a regular file"),
    "a file larger than any frame": (_sparse, "larger than any frame"),
    "a frame the daemon died on, repeatedly": (_died_on_repeatedly, "stopped %d times" % SPOOL_CRASHES_MAX),
}


def _spool_world(paths):
    """Good frames around every poison, all spooled while no daemon runs -> (good uids, names)."""
    os.makedirs(paths.spool, mode=0o700)
    os.makedirs(paths.captures, mode=0o700)
    good, names = [], {}
    t = time.time_ns()
    for i, (case, (place, _)) in enumerate(sorted(POISONS.items())):
        uid = "good%06d" % i
        good.append(uid)
        _write(paths.spool, "%020d-%s%s" % (t + 2 * i, uid, spool.SUFFIX), _hook(uid, "echo %d" % i))
        name = "%020d-poison%02d%s" % (t + 2 * i + 1, i, spool.SUFFIX)
        names[case] = name
        place(paths.spool, name)
    last = "good-last0"
    good.append(last)
    _write(paths.spool, "%020d-%s%s" % (t + 2 * len(POISONS), last, spool.SUFFIX), _hook(last, "echo last"))
    # The capture path is only known now.
    for case, name in names.items():
        p = os.path.join(paths.spool, name)
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                data = f.read()
            if b"@CAPTURES@" in data:
                _write(paths.spool, name, data.replace(b"@CAPTURES@", paths.captures.encode()))
    return good, names


def _settled(paths):
    return not spool.pending(paths.spool)


def test_every_frame_is_ingested_or_quarantined_none_blocks_and_it_shows(paths, daemon):
    good, names = _spool_world(paths)
    daemon.start(wait=60)
    deadline = time.monotonic() + 60
    while spool.pending(paths.spool) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert spool.pending(paths.spool) == [], "frames still waiting: %s" % spool.pending(paths.spool)

    uids = {r["uid"] for r in ledger_rows(paths, "SELECT uid FROM events")}
    assert set(good) <= uids, "good frames behind a poison were not ingested: %s" % sorted(set(good) - uids)
    quarantined = {os.path.basename(p): why for p, why in spool.quarantined(paths.spool)}
    for case, (_, reason) in POISONS.items():
        name = names[case]
        if reason is None:
            assert name not in quarantined, (case, quarantined.get(name))
        else:
            assert name in quarantined, "%s: not quarantined (%s)" % (case, sorted(quarantined))
            assert reason in quarantined[name], (case, quarantined[name])
    # the case: stored, with the surrogate spelled out
    rows = ledger_rows(paths, "SELECT command FROM events WHERE uid='surr0000aa'")
    assert rows == [{"command": "echo \\ud800"}]

    # shown where the user looks, until they deal with it
    check = doctor.quarantine_check(paths)
    n_bad = sum(1 for _, reason in POISONS.values() if reason is not None)
    assert not check.ok and ("%d spooled event(s)" % n_bad) in check.detail and check.fix
    v = subprocess.run(ctx_cmd() + ["ledger", "verify"], capture_output=True, text=True, timeout=120)
    assert v.returncode == 1 and v.stdout.count("quarantined, not in the ledger") == n_bad, v.stdout

    # and settled: no line per scan
    size = os.path.getsize(paths.log)
    time.sleep(2.5)  # more than two spool scans
    assert os.path.getsize(paths.log) == size, open(paths.log).read()[size:][:500]
