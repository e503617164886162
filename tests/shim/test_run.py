"""`ctx run` and `ctx get`: exit codes, merged output, exact bytes, and life without a daemon."""

import os
import sqlite3
import subprocess
import time

import pytest

from tests.conftest import ctx_cmd, ledger_rows


def ctx_run(args, *, input=None, cwd=None, env=None, timeout=60):
    return subprocess.run(ctx_cmd() + ["run", "--"] + args, input=input, capture_output=True,
                          cwd=cwd, env=env, timeout=timeout)


def handle_from(stdout):
    import re
    text = stdout.decode(errors="replace")
    handles = re.findall(r"\[ctx\].*?(r:[0-9a-f]{12})", text)
    assert handles, text[-300:]
    return handles[-1]


@pytest.mark.parametrize("code", [0, 1, 3, 77])
def test_exit_code_is_preserved(paths, running_daemon, code):
    p = ctx_run(["exit %d" % code])
    assert p.returncode == code


def test_signal_death_maps_to_128_plus_n(paths, running_daemon):
    p = ctx_run(["kill -TERM $$"])
    assert p.returncode == 128 + 15


def test_merged_output_in_order_and_stdin_passthrough(paths, running_daemon):
    p = ctx_run(["read x; echo out1 $x; echo err1 >&2; echo out2; echo err2 >&2"], input=b"hello\n")
    body = p.stdout.decode()
    assert body.startswith("out1 hello\nerr1\nout2\nerr2\n"), body
    assert p.stderr == b""


def test_get_returns_exact_bytes_including_binary(paths, running_daemon, tmp_path):
    blob = bytes(range(256)) + b"\xff\xfe invalid utf-8 \xc3\x28\n" + "ünïcödé\n".encode()
    f = tmp_path / "b.bin"
    f.write_bytes(blob)
    p = ctx_run(["cat %s" % f])
    # What the agent reads is cleaned (control bytes dropped, invalid UTF-8
    # replaced, so output cannot forge ctx lines); what is stored is exact.
    assert "ünïcödé" in p.stdout.decode()
    assert b"[ctx]" not in p.stdout, "a small output passes through unchanged, no footer"
    h = ledger_rows(paths, "SELECT handle FROM runs ORDER BY id DESC LIMIT 1")[0]["handle"]
    g = subprocess.run(ctx_cmd() + ["get", h], capture_output=True, timeout=30)
    assert g.returncode == 0 and g.stdout == blob
    rows = ledger_rows(paths, "SELECT * FROM runs")
    assert rows[0]["raw_bytes"] == len(blob) and rows[0]["handle"] == h
    blob_file = os.path.join(paths.blobs, rows[0]["blob"][3:5], rows[0]["blob"][5:] + ".z")
    assert os.stat(blob_file).st_mode & 0o777 == 0o600


def test_multi_arg_form_is_quoted(paths, running_daemon):
    p = ctx_run(["printf", "%s|", "a b", "c"])
    assert p.stdout.startswith(b"a b|c|")


def test_without_daemon_raw_output_exit_code_and_spool(paths, daemon):
    p = ctx_run(["echo no daemon here; exit 4"])
    assert p.returncode == 4
    assert p.stdout == b"no daemon here\n", "raw output, unchanged, no footer"
    # the shim-style fallback spawned a daemon; it ingests the spool before it publishes its
    # socket, so once it answers, the run is in the ledger (the ledger file alone appears
    # before its migrations have created the tables)
    daemon.wait_ready(60)
    rows = ledger_rows(paths, "SELECT * FROM runs")
    assert len(rows) == 1 and rows[0]["exit_code"] == 4 and rows[0]["raw_bytes"] == len(b"no daemon here\n")
    ev = ledger_rows(paths, "SELECT * FROM events WHERE kind='run'")
    assert ev[0]["spooled"] == 1
    # the daemon removes the capture only after its blob and row are committed
    deadline = time.monotonic() + 10
    while os.listdir(paths.captures) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.listdir(paths.captures) == []


def test_get_unknown_handle_fails_clearly(paths, running_daemon):
    g = subprocess.run(ctx_cmd() + ["get", "r:000000000000"], capture_output=True, timeout=30)
    assert g.returncode == 1 and b"no run with handle" in g.stderr
