"""Small output and retrieval defects, as tables compared with bash or with the stored bytes.

- What `ctx run` prints for a small output is byte for byte what bash prints (no newline
  added to `printf abc`, nothing at all for `true`).
- `ctx get` of lines or bytes past the end of an output answers miss, never an empty know.
- `ctx get --json` answers valid JSON for any bytes (binary output, undecodable arguments),
  says when its text is not the exact bytes, and its hash is always of the exact bytes.
"""

import json
import re
import resource
import subprocess

import pytest
from blake3 import blake3

from ..conftest import ctx_cmd, ledger_rows
from .shared_daemon import shared  # noqa: F401 - a module-scoped fixture

FSIZE = 64 * 1024 * 1024


def _limit_fsize():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


def ctx(*args, env=None, timeout=60):
    # Not inside the repository: a watched worktree that changes would make answers stale.
    return subprocess.run(ctx_cmd() + list(args), capture_output=True, timeout=timeout, preexec_fn=_limit_fsize,
                          env=env, cwd=(env or {}).get("CTX_HOME"))


def last_handle(paths):
    return ledger_rows(paths, "SELECT handle FROM runs ORDER BY id DESC LIMIT 1")[0]["handle"]


SMALL = [
    # (command, why)
    ("true", "no output prints nothing (it used to print a newline)"),
    ("printf abc", "no final newline stays without one"),
    ("printf 'abc\\n'", "a final newline stays one"),
    ("printf ''", "an empty write"),
    ("printf '\\n'", "a lone newline"),
    ("printf '\\n\\n\\n'", "blank lines"),
    ("printf 'a\\nb'", "a last line without newline"),
    ("echo out; echo err >&2", "stderr merged in order"),
    ("printf 'caf\\303\\251\\n'", "UTF-8"),
    ("exit 5", "no output, an exit status"),
]


@pytest.mark.parametrize("command,why", SMALL, ids=[s[0] for s in SMALL])
def test_small_output_is_printed_as_bash_prints_it(shared, command, why):
    want = subprocess.run(["/bin/bash", "-c", "{ %s\n} 2>&1" % command], capture_output=True, timeout=60)
    got = ctx("run", "--", command, env=shared.env())
    assert got.returncode == want.returncode, why
    assert got.stdout == want.stdout, why
    assert got.stderr == b"", why


def _stored(shared, data):
    """Store `data` as a run's output (through ctx run, as an agent would) -> handle."""
    f = shared.home + "/payload.bin"
    with open(f, "wb") as fh:
        fh.write(data)
    p = ctx("run", "--", "cat %s" % f, env=shared.env())
    assert p.returncode == 0, p.stderr
    return last_handle(shared.paths)


THREE_LINES = b"one\ntwo\nthree\n"

PAST_END = [
    # (output, address suffix, "know" bytes or None for a miss)
    (THREE_LINES, ":L4-4", None),
    (THREE_LINES, ":L4-9", None),
    (THREE_LINES, ":L999999-1000000", None),
    (THREE_LINES, ":L3-9", b"three\n"),          # runs past the end: clamped
    (THREE_LINES, ":L2-3", b"two\nthree\n"),
    (THREE_LINES, ":B14-20", None),              # bytes past the end
    (THREE_LINES, ":B10-99", b"ree\n"),
    (b"one\ntwo", ":L3-3", None),                # no final newline: two lines
    (b"one\ntwo", ":L2-2", b"two"),
    (b"", "", b""),                              # the whole of an empty output is known and empty
    (b"", ":L1-1", None),
]


@pytest.mark.parametrize("data,suffix,expect", PAST_END, ids=["%r%s" % (d[:8], s) for d, s, _ in PAST_END])
def test_get_past_the_end_is_a_miss(shared, data, suffix, expect):
    h = _stored(shared, data)
    g = ctx("get", h + suffix, "--json", env=shared.env())
    ans = json.loads(g.stdout)
    if expect is None:
        assert g.returncode == 1 and "know" not in ans
        assert ans["miss"]["reason"] == "abstain" and "past its end" in ans["miss"]["detail"]
        assert ans["miss"]["escalate_to"]
        plain = ctx("get", h + suffix, env=shared.env())
        assert plain.returncode == 1 and plain.stdout == b"" and b"past its end" in plain.stderr
    else:
        assert g.returncode == 0 and ans["know"]["bytes"] == len(expect)
        assert ctx("get", h + suffix, env=shared.env()).stdout == expect


BINARY = [
    ("all byte values", bytes(range(256)) * 4),
    ("invalid UTF-8 sequences", b"ok \xff\xfe \xc3\x28 \xe2\x82 end\n"),
    ("a NUL-filled line (valid UTF-8)", b"\x00" * 100 + b"\n"),
    ("UTF-8 cut inside a character", "déjà vu ✓".encode()[:-1]),
]


@pytest.mark.parametrize("label,data", BINARY, ids=[b[0] for b in BINARY])
def test_get_json_on_binary_output(shared, label, data):
    h = _stored(shared, data)
    g = ctx("get", h, "--json", env=shared.env())
    assert g.returncode == 0, g.stderr
    know = json.loads(g.stdout.decode("utf-8"))["know"]
    assert know["b3"] == blake3(data).hexdigest() and know["bytes"] == len(data)
    try:
        data.decode("utf-8")
        assert know["lossy"] is False and know["text"] == data.decode("utf-8")
    except UnicodeDecodeError:
        assert know["lossy"] is True and know["text"] == data.decode("utf-8", "replace")
    assert ctx("get", h, env=shared.env()).stdout == data, "without --json the bytes are exact"


def test_get_json_of_text_is_not_lossy(shared):
    h = _stored(shared, "plain text, ünïcödé ✓\n".encode())
    know = json.loads(ctx("get", h, "--json", env=shared.env()).stdout)["know"]
    assert know["lossy"] is False and know["text"] == "plain text, ünïcödé ✓\n"


@pytest.mark.parametrize("arg", [b"r:\xff", b"\xff\xfe", b"r:0123456789ab:L1-\xff"])
def test_get_json_with_undecodable_address_answers_valid_json(shared, arg):
    g = ctx("get", arg, "--json", env=shared.env())
    ans = json.loads(g.stdout)
    assert g.returncode == 1 and ans["miss"]["reason"] == "abstain"


def test_get_b3_checks_the_whole_span_not_the_page(shared):
    data = b"".join(b"row %06d with some padding to make it long enough\n" % i for i in range(20000))
    h = _stored(shared, data)
    full = blake3(data).hexdigest()[:8]
    g = ctx("get", h, "b3=" + full, "--json", env=shared.env())
    know = json.loads(g.stdout)["know"]
    assert know["truncated"] and re.fullmatch(re.escape(h) + r":L\d+-20000", know["next"])
    bad = ctx("get", h, "b3=00000000", "--json", env=shared.env())
    assert json.loads(bad.stdout)["miss"]["reason"] == "denatured"
