"""ctx run's redaction of secret values (reflex.safety.secrets), on real files.

What values a secret file yields, what is replaced (exact values, JSON-escaped forms, values
split by colour codes, truncated pieces) and what is left alone, and the capture rewrite:
in memory and chunk by chunk, with values across chunk boundaries, the descriptor pointing
at the redacted file afterwards.
"""

import os
import secrets

import pytest

from reflex.safety import secrets as sv


def census_of(text, kind="env", label=".env"):
    c = sv.Census()
    for v in sv.values_of(text.encode(), kind):
        c.values.setdefault(v, label)
    return c


def test_values_of_dotenv_yaml_json_and_keys():
    env = ('export API_KEY="sk_live_4eC39HqLyjWDarjtT1zdp7dc"\nDEBUG=1\nNODE_ENV=production\n'
           "DB_URL=postgres://app:hunter2hunter@db.internal:5432/app\nNAME=plain value # comment\n")
    vals = set(sv.values_of(env.encode(), "env"))
    assert b"sk_live_4eC39HqLyjWDarjtT1zdp7dc" in vals
    assert b"postgres://app:hunter2hunter@db.internal:5432/app" in vals and b"hunter2hunter" in vals
    assert b"plain value" in vals
    assert not {b"1", b"production", b"DEBUG=1"} & vals
    yaml = b"db:\n  password: 'c0rrect-h0rse-battery'\n  port: 5432\n"
    assert set(sv.values_of(yaml, "secrets")) == {b"c0rrect-h0rse-battery"}
    js = b'{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQ\\n-----END PRIVATE KEY-----\\n",\n "q": "a\\"b\\"cdef"}'
    vals = set(sv.values_of(js, "cred"))
    assert b"MIIEvQIBADANBgkqhkiG9w0BAQ" in vals
    pem = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA==\n-----END OPENSSH PRIVATE KEY-----\n"
    assert set(sv.values_of(pem, "key")) == {b"b3BlbnNzaC1rZXktdjEAAAAA=="}


def test_exact_json_escaped_and_coloured_values_are_replaced_and_names_stay():
    value = "tok_" + secrets.token_hex(12)
    c = census_of('TOKEN=%s\nQUOTED="a\\"b%s"\n' % (value, value[:10]))
    out, n, labels = sv.redact_bytes(("./.env:1:TOKEN=%s\n" % value).encode(), c)
    assert out == b"./.env:1:TOKEN=[REDACTED:.env]\n" and n == 1 and labels == {".env": 1}
    colored = "TOKEN=\x1b[01;31m%s\x1b[m%s\n" % (value[:6], value[6:])
    out, n, _ = sv.redact_bytes(colored.encode(), c)
    assert value.encode() not in out and value[6:].encode() not in out and n == 1
    assert sv.redact_bytes(b"nothing to see\n", c) == (b"nothing to see\n", 0, {})


def test_pieces_of_random_values_are_replaced_but_not_ordinary_text():
    value = "sk_live_" + secrets.token_hex(16)
    c = census_of("KEY=%s\nURL=http://localhost:8000/api/v1/items\n" % value)
    text = ("AssertionError: assert '%s...%s' == 'x'\ncut: %s\nGET http://localhost:8000/health ok\n"
            % (value[:14], value[-13:], value[3:20]))
    out, n, _ = sv.redact_bytes(text.encode(), c)
    assert n == 3
    for i in range(len(value) - 11):
        assert value[i:i + 12].encode() not in out
    assert b"http://localhost:8000/health" in out       # a URL value is not random-looking


def _capture(tmp_path, data):
    path = str(tmp_path / "cap.out")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.write(fd, data)
    return path, fd


@pytest.mark.parametrize("chunk", [sv.CHUNK, 4096])
def test_capture_is_rewritten_across_chunks_and_the_descriptor_follows(tmp_path, chunk):
    value = "pw-" + secrets.token_hex(20)
    c = census_of("PASSWORD=%s\n" % value)
    lines = [b"line %06d ordinary output\n" % i for i in range(3000)]
    for i in (0, 7, 1499, 2999):
        lines[i] = b"PASSWORD=" + value.encode() + b" at %d\n" % i
    data = b"".join(lines)
    assert len(data) > 4 * 4096
    path, fd = _capture(tmp_path, data)
    try:
        n, labels = sv.redact_capture(fd, path, c, chunk=chunk)
        assert n == 4 and labels == {".env": 4}
        os.lseek(fd, 0, os.SEEK_SET)
        through_fd = b""
        while True:
            b = os.read(fd, 1 << 16)
            if not b:
                break
            through_fd += b
        with open(path, "rb") as f:
            on_disk = f.read()
        assert through_fd == on_disk == data.replace(value.encode(), b"[REDACTED:.env]")
        assert oct(os.stat(path).st_mode & 0o777) == "0o600" and not os.path.exists(path + ".redacted")
    finally:
        os.close(fd)


def test_clean_capture_is_left_untouched(tmp_path):
    c = census_of("PASSWORD=%s\n" % secrets.token_hex(20))
    path, fd = _capture(tmp_path, b"all good\n" * 1000)
    ino = os.fstat(fd).st_ino
    try:
        assert sv.redact_capture(fd, path, c, chunk=1024) == (0, {})
        assert os.stat(path).st_ino == ino and not os.path.exists(path + ".redacted")
    finally:
        os.close(fd)


def test_census_skips_virtualenvs_and_dependencies_and_labels_by_path(tmp_path):
    proj = tmp_path / "proj"
    (proj / "config").mkdir(parents=True)
    (proj / ".env").write_text("A=" + "x1" * 8 + "\n")
    (proj / "config" / "db.pem").write_text("k" * 20 + "\n")
    (proj / "node_modules" / "pkg").mkdir(parents=True)
    (proj / "node_modules" / "pkg" / ".env").write_text("B=" + "y2" * 8 + "\n")
    venv = proj / ".env-venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr\n")
    (venv / ".env").write_text("C=" + "z3" * 8 + "\n")
    (proj / ".git").mkdir()
    home = tmp_path / "home"          # the conftest's empty HOME: no home secrets
    c = sv.collect(str(proj), {"HOME": str(home), "CTX_HOME": str(tmp_path / "ctx")})
    assert sorted(label for _, label in c.files) == [".env", "config/db.pem"]
    assert set(c.values) == {b"x1" * 8, b"k" * 20}
