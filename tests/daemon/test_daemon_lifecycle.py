"""The daemon as a real process on a real socket: start, stale state, locks, errors, shutdown."""

import json
import os
import socket
import stat
import subprocess
import sys
import time

from reflex.shim import client
from reflex.daemon import control as daemon_control
from reflex import protocol


def raw_request(paths, data, timeout=5):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(paths.socket)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    chunks = []
    while True:
        c = s.recv(65536)
        if not c:
            break
        chunks.append(c)
    s.close()
    buf = b"".join(chunks)
    head, _, body = buf.partition(b"\n")
    return json.loads(head), body


def test_not_running_then_start_and_permissions(paths, daemon):
    st = daemon_control.status(paths)
    assert st["running"] is False
    daemon.start()
    st = daemon_control.status(paths)
    assert st["running"] and st["protocol"] == protocol.PROTOCOL
    assert stat.S_IMODE(os.stat(paths.socket).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(paths.run_dir).st_mode) == 0o700
    with open(paths.status) as f:
        status = json.load(f)
    assert status["pid"] == daemon.proc.pid and status["socket"] == paths.socket


def test_stale_socket_and_status_are_replaced(paths, daemon):
    os.makedirs(paths.run_dir, mode=0o700)
    with open(paths.socket, "w") as f:  # a dead daemon's leftover, as a plain file
        f.write("stale")
    with open(paths.status, "w") as f:
        json.dump({"pid": 999999, "socket": paths.socket}, f)
    assert daemon_control.status(paths)["running"] is False
    daemon.start()
    assert stat.S_ISSOCK(os.stat(paths.socket).st_mode)
    assert daemon_control.status(paths)["pid"] == daemon.proc.pid


def test_second_instance_exits_on_lock(paths, running_daemon):
    p = subprocess.run([sys.executable, "-m", "reflex.daemon", "run"], capture_output=True, timeout=20)
    assert p.returncode == 1
    assert b"already running" in p.stderr
    assert daemon_control.status(paths)["pid"] == running_daemon.proc.pid


def test_protocol_mismatch_is_a_structured_answer(paths, running_daemon):
    hdr, _ = raw_request(paths, b'{"v":999,"op":"ping"}\n')
    assert hdr["ok"] is False and hdr["error"] == "protocol" and hdr["want"] == protocol.PROTOCOL


def test_per_request_errors_do_not_kill_the_daemon(paths, running_daemon):
    hdr, _ = raw_request(paths, b"this is not json\n")
    assert hdr["error"] == "bad_request"
    hdr, _ = raw_request(paths, b'{"v":1,"op":"no-such-op"}\n')
    assert hdr["error"] == "unknown_op"
    hdr, _ = raw_request(paths, b'{"v":1,"op":"ping","len":-5}\n')
    assert hdr["error"] == "bad_request"
    hdr, _ = raw_request(paths, ('{"v":1,"op":"ping","len":%d}\n' % (protocol.MAX_BODY + 1)).encode())
    assert hdr["error"] == "too_large"
    hdr, _ = raw_request(paths, b'{"v":1,"op":"ping","pad":"' + b"x" * (protocol.MAX_HEADER + 10) + b'"}\n')
    assert hdr["error"] == "too_large"
    hdr, _ = raw_request(paths, b'{"v":1,"op":"run.finish","uid":"0123456789","capture":"/etc/passwd"}\n')
    assert hdr["error"] == "forbidden"
    hdr, _ = client.request_json(paths, "ping")
    assert hdr["ok"] is True


def test_clean_shutdown_removes_status_and_socket(paths, running_daemon):
    assert daemon_control.stop(paths) is True
    running_daemon.proc.wait(10)
    assert not os.path.exists(paths.socket)
    assert not os.path.exists(paths.status)
    assert running_daemon.proc.returncode == 0


def test_idle_exit(paths, daemon):
    daemon.start()
    from reflex import config
    config.save(paths.config, dict(config.DEFAULTS, idle_seconds=1))
    daemon_control.stop(paths)
    daemon.proc.wait(10)
    daemon.start()
    daemon.proc.wait(timeout=10)  # exits by itself after ~1 s of silence
    assert daemon.proc.returncode == 0
    assert "idle for 1s" in daemon.log()


def test_kill9_then_shim_restarts_daemon(paths, daemon):
    from tests.conftest import pre_bash, run_hook
    daemon.start()
    daemon.kill9()
    rc, out, err, _ = run_hook(pre_bash("ls"))
    assert rc == 0 and out == b""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not daemon_control.status(paths)["running"]:
        time.sleep(0.1)
    assert daemon_control.status(paths)["running"], "the shim should have started a daemon"
    # and the spooled event was ingested exactly once
    deadline = time.monotonic() + 10
    from tests.conftest import ledger_rows
    while time.monotonic() < deadline:
        rows = ledger_rows(paths, "SELECT * FROM events WHERE session_id='sess-1'")
        if rows:
            break
        time.sleep(0.1)
    assert len(rows) == 1 and rows[0]["spooled"] == 1


def test_captures_of_runs_killed_before_they_finished_are_removed_at_start(paths, daemon):
    # `ctx run` killed with SIGKILL leaves its capture (raw output, secret values not yet
    # redacted) behind; the next daemon removes it once it is stale, and leaves live ones alone.
    os.makedirs(paths.captures, mode=0o700, exist_ok=True)
    stale = os.path.join(paths.captures, "a" * 20 + ".out")
    live = os.path.join(paths.captures, "b" * 20 + ".out")
    for p in (stale, live):
        with open(p, "w") as f:
            f.write("AWS_SECRET_ACCESS_KEY=not-yet-redacted\n")
    old = time.time() - 7 * 3600
    os.utime(stale, (old, old))
    daemon.start()
    assert not os.path.exists(stale)
    assert os.path.exists(live)
    assert "removed 1 capture file(s)" in daemon.log()
