"""The loopback HTTP hook transport: token required, same answers as the command shim."""

import json
import socket

import pytest

from reflex import config, install

from tests.conftest import ledger_rows, pre_bash, run_hook


def post(port, body, token=None, path="/hook/claude", keepalive_requests=1):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    replies = []
    for i in range(keepalive_requests):
        last = i == keepalive_requests - 1
        head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\nConnection: %s\r\n" % (path, len(body), "close" if last else "keep-alive"))
        if token:
            head += "Authorization: Bearer %s\r\n" % token
        s.sendall(head.encode() + b"\r\n" + body)
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += s.recv(65536)
        head_b, rest = buf.split(b"\r\n\r\n", 1)
        length = int([h for h in head_b.split(b"\r\n") if h.lower().startswith(b"content-length")][0].split(b":")[1])
        while len(rest) < length:
            rest += s.recv(65536)
        status = int(head_b.split(b" ")[1])
        replies.append((status, rest[:length]))
    s.close()
    return replies


@pytest.fixture
def http_daemon(paths, daemon):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    config.save(paths.config, dict(config.DEFAULTS, http_port=port))
    token = install.ensure_token(paths)
    daemon.start()
    return port, token


def test_token_is_required(http_daemon):
    port, token = http_daemon
    body = json.dumps(pre_bash("ls")).encode()
    [(status, _)] = post(port, body)
    assert status == 401
    [(status, _)] = post(port, body, token="wrong")
    assert status == 401
    [(status, _)] = post(port, body, token=token, path="/elsewhere")
    assert status == 404


def test_same_answers_as_the_command_shim(paths, http_daemon):
    port, token = http_daemon
    for cmd in ("pytest -q", "cat .env", "ls"):
        body = json.dumps(pre_bash(cmd, cwd=str(paths.home))).encode()
        [(status, http_answer)] = post(port, body, token=token)
        _, shim_answer, _, _ = run_hook(pre_bash(cmd, cwd=str(paths.home)))
        assert status == 200
        assert http_answer == shim_answer, cmd


def test_keepalive_and_malformed(paths, http_daemon):
    port, token = http_daemon
    replies = post(port, b"{not json", token=token, keepalive_requests=3)
    assert [r[0] for r in replies] == [200, 200, 200] and all(r[1] == b"" for r in replies)
    assert len(ledger_rows(paths, "SELECT * FROM events WHERE kind='malformed'")) == 3
