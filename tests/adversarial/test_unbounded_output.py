"""Class 5: unbounded output through `ctx run`.

Tables of cases, each run for real (a real daemon on a real socket, real commands, real
bash) and compared with what bash alone does:

- PIPELINES: `ctx run -- CMD` with a trailing slicer has bash's exit status, prints
  exactly bash's stdout below its census header, lets the producer's unpiped stderr
  through as bash does, and stops the producer when the slicer stops reading.
- SIGNALS: children start with SIGPIPE and SIGXFSZ at their defaults.
- HUGE: outputs far over the capture limit end as a digest that says what was kept,
  with a capture that never grows past the limit, a daemon whose memory stays bounded,
  and `ctx get` pages that reach both ends of what was kept.
- ENDLESS: a producer that never stops (with and without a slicer that lets everything
  through) keeps the disk use bounded until the harness kills it.

Every child runs under RLIMIT_FSIZE, so a regression fails the test instead of filling
the disk; every wait is bounded.  The tables share one real daemon (shared_daemon.py);
the memory test has its own.
"""

import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

import pytest
from blake3 import blake3

from reflex.shim import capture as capture_mod

from ..conftest import ctx_cmd, ledger_rows
from .shared_daemon import shared  # noqa: F401 - a module-scoped fixture

FSIZE = 64 * 1024 * 1024  # far above the capture limit, far below a full disk


def _limit_fsize():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


def ctx_run(command, *, timeout=120, env=None, cwd=None):
    # Not inside the repository: a watched worktree that changes would make answers stale.
    return subprocess.run(ctx_cmd() + ["run", "--", command], capture_output=True, timeout=timeout,
                          preexec_fn=_limit_fsize, env=env, cwd=cwd or (env or {}).get("CTX_HOME"))


def bash(command, *, timeout=120, cwd=None):
    return subprocess.run(["/bin/bash", "-c", command], capture_output=True, timeout=timeout,
                          preexec_fn=_limit_fsize, cwd=cwd)


def view_of(stdout):
    """What the slicer printed, as ctx shows it: the lines below `[ctx] requested view:`."""
    lines = stdout.split(b"\n")
    assert lines[0].startswith(b"[ctx] "), stdout[:300]
    at = lines.index(b"[ctx] requested view:")
    body = lines[at + 1:]
    assert not any(line.startswith(b"[ctx]") for line in body), stdout[-300:]
    return b"\n".join(body)


def handle_in(stdout):
    m = re.search(rb"\[ctx\][^\n]*?(r:[0-9a-f]{12})", stdout)
    assert m, stdout[:300]
    return m.group(1).decode()


def last_run(paths):
    row = ledger_rows(paths, "SELECT r.*, e.data AS event_data, e.output_bytes AS output_bytes "
                             "FROM runs r JOIN events e ON e.uid = r.event_uid ORDER BY r.id DESC LIMIT 1")[0]
    row["event_data"] = json.loads(row["event_data"])
    return row


# -- pipelines: exit status and stdout as bash, producer stopped by the slicer ------------------

PIPELINES = [
    # (command, why it is here)
    ("yes | head -5", "an endless producer: head must stop it (it used to fill the disk)"),
    ("seq 1 1000000 | head -3", "a producer far bigger than a pipe buffer"),
    ("(trap '' PIPE; yes) | head -1", "a producer that ignores SIGPIPE: EPIPE, 'Broken pipe', exit 1"),
    ("set -o pipefail; yes | head -1", "pipefail: the producer's SIGPIPE is the status (141)"),
    ("set -o pipefail; (trap '' PIPE; yes) | head -1", "pipefail with the producer's own failure (1)"),
    ("set -o pipefail; seq 1 100 | head -3", "pipefail, producer done before the slicer quits (0)"),
    ("set -o pipefail; false | head -1", "pipefail: a failing producer"),
    ("false | head -1", "no pipefail: the slicer's status"),
    ("seq 3 | grep 9", "the slicer's own failure"),
    ("seq 3 | grep -c 2", "a slicer that counts"),
    ("yes | head -c 1000 | wc -c", "several slicer stages"),
    ("sh -c 'echo out; echo err >&2' | head -1", "unpiped stderr goes around the slicer, as in bash"),
    ("sh -c 'echo out; echo err >&2' 2>&1 | sort", "2>&1: stderr goes through the slicer"),
    ("sh -c 'echo out; echo err >&2' |& sort", "|&: stderr goes through the slicer"),
    ("sh -c 'seq 1 100000 >&2; echo done' | tail -1", "a producer that writes mostly to stderr"),
    ("echo before; seq 5 | tail -2", "a command before the pipeline prints above the slicer's output"),
    ("cd / && pwd | cat", "a list prefix that changes the directory"),
    ("python3 -c 'import sys\nfor i in range(10**7): print(i)' | head -2",
     "a Python producer: BrokenPipeError on its own terms"),
    ("yes 'long line of text that fills pipes quickly' | head -n 20000 | tail -2", "head inside the slicer"),
    ("for i in 1 2 3; do echo $i; done | tail -1", "a compound producer"),
]


@pytest.mark.parametrize("command,why", PIPELINES, ids=[p[0][:40] for p in PIPELINES])
def test_pipeline_matches_bash(shared, tmp_path, command, why):
    want = bash(command, timeout=60, cwd=tmp_path)
    t0 = time.monotonic()
    got = ctx_run(command, timeout=60, cwd=tmp_path, env=shared.env())
    took = time.monotonic() - t0
    assert got.returncode == want.returncode, (why, got.stderr[-500:])
    assert view_of(got.stdout) == want.stdout, why
    assert got.stderr == want.stderr, why
    assert took < 30, "%s: the pipeline must end when bash's does (took %.1f s)" % (why, took)
    run = last_run(shared.paths)
    assert run["raw_bytes"] <= capture_mod.LIMIT + 512, "the capture is bounded whatever the producer wrote"
    assert os.listdir(shared.paths.captures) == [], "no capture, tee report or status file is left behind"


def test_slicer_that_stops_early_stops_a_slow_producer(shared):
    # The producer takes a second to start, then writes forever: only `head` can end it.
    command = "sleep 1; yes 'spam spam spam' | head -5"
    got = ctx_run(command, timeout=60, env=shared.env())
    assert got.returncode == 0 and view_of(got.stdout) == b"spam spam spam\n" * 5


# -- signals: children start with SIGPIPE and SIGXFSZ at their defaults -------------------------

def _ignored_mask(stdout):
    m = re.search(rb"SigIgn:\s*([0-9a-f]+)", stdout)
    assert m, stdout[:300]
    return int(m.group(1), 16)


@pytest.mark.parametrize("command", ["grep SigIgn /proc/self/status",
                                     "grep SigIgn /proc/self/status | cat"])
def test_children_do_not_inherit_ignored_signals(shared, command):
    got = _ignored_mask(ctx_run(command, env=shared.env()).stdout)
    want = _ignored_mask(bash(command).stdout)
    assert got == want
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not got & (1 << (sig - 1)), "%s is ignored in the child" % sig.name


def test_file_size_limit_kills_like_bash(shared, tmp_path):
    command = "ulimit -f 1; yes > %s/big" % tmp_path
    want = bash(command)
    got = ctx_run(command, env=shared.env())
    assert want.returncode == 128 + signal.SIGXFSZ
    assert got.returncode == want.returncode


def test_uncaptured_fallback_restores_signals_too(paths, tmp_path):
    # A read-only capture directory forces `ctx run` to exec the command plainly.
    os.makedirs(paths.captures, exist_ok=True)
    os.chmod(paths.captures, 0o500)
    try:
        if os.access(paths.captures, os.W_OK):
            pytest.skip("running as a user that can write a read-only directory")
        got = ctx_run("grep SigIgn /proc/self/status")
    finally:
        os.chmod(paths.captures, 0o700)
    assert b"running uncaptured" in got.stderr
    mask = _ignored_mask(got.stdout)
    assert not mask & (1 << (signal.SIGPIPE - 1)) and not mask & (1 << (signal.SIGXFSZ - 1))


# -- huge outputs: a digest that says what was kept; bounded capture, memory and pages ---------

LINE = "line %09d of a long build log with some words in it\n"


def _numbered(n_lines):
    """A command printing LINE % i for i < n_lines."""
    return "seq -f '%s' 0 %d" % (LINE.rstrip("\n").replace("%09d", "%09.0f"), n_lines - 1)


def _vm_hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmHWM:\s*(\d+)", f.read()).group(1))


def _get(*args, env=None, timeout=60):
    return subprocess.run(ctx_cmd() + ["get"] + list(args), capture_output=True, timeout=timeout, env=env,
                          cwd=(env or {}).get("CTX_HOME"))


def _follow_pages(address, max_pages, env):
    """Every page of an address (text output), following `next`; -> (pages of bytes, knows)."""
    pages, knows = [], []
    for _ in range(max_pages):
        ans = json.loads(_get(address, "--json", env=env).stdout)
        know = ans["know"]
        raw = know["text"].encode()
        assert not know["lossy"] and not know["redacted"]
        assert len(raw) == know["bytes"] and blake3(raw).hexdigest() == know["b3"], "the page is the exact bytes"
        pages.append(raw)
        knows.append(know)
        if not know["truncated"]:
            return pages, knows
        address = know["next"]
    raise AssertionError("more than %d pages" % max_pages)


HUGE = [
    # (label, command, output bytes, sliced)
    ("numbered lines", _numbered(1_000_000), 1_000_000 * len(LINE % 0), False),
    ("one-character lines", "(yes | head -c 50000000)", 50_000_000, False),
    ("sliced through tail", _numbered(1_000_000) + " | tail -3", 1_000_000 * len(LINE % 0), True),
]


@pytest.mark.parametrize("label,command,size,sliced", HUGE, ids=[h[0] for h in HUGE])
def test_huge_output_is_digested_with_what_was_kept_declared(shared, label, command, size, sliced):
    env = shared.env()
    got = ctx_run(command, timeout=300, env=env)
    assert got.returncode == 0, got.stderr[-500:]
    header = got.stdout.split(b"\n", 1)[0].decode()
    assert header.startswith("[ctx] ")
    assert len(got.stdout) < 64 * 1024, "the agent gets a digest, never the raw bytes"
    assert re.search(r"output [0-9.]+ MiB: kept first 2\.0 MiB \+ last [0-9.]+ MiB, [0-9.]+ MiB elided; "
                     r"raw tokens counted on the first 1\.0 MiB", header), header
    run = last_run(shared.paths)
    kept = run["event_data"]["capture"]
    assert run["output_bytes"] == size == kept["output_bytes"]
    assert run["raw_bytes"] == kept["stored_bytes"] <= capture_mod.LIMIT + 512
    assert kept["elided_bytes"] == size - kept["kept_head"] - kept["kept_tail"]
    assert "capture_error" not in run["event_data"] and kept["error"] is None
    assert os.listdir(shared.paths.captures) == []
    if sliced:
        assert view_of(got.stdout) == "".join(LINE % i for i in range(1_000_000 - 3, 1_000_000)).encode()
    # What `ctx get` reaches: the output's first line, its last line, and the marker between.
    h = handle_in(got.stdout)
    first_page = json.loads(_get(h, "--json", env=env).stdout)["know"]
    assert first_page["truncated"] and first_page["next"] and first_page["bytes"] <= 64 * 1024
    expect_line = (lambda i: b"y\n") if label == "one-character lines" else (lambda i: (LINE % i).encode())
    n_output_lines = size // len(expect_line(0))
    assert _get(h + ":L1-1", env=env).stdout == expect_line(0)
    past_end = json.loads(_get(h + ":L999999999-999999999", "--json", env=env).stdout)["miss"]
    n_lines = int(re.search(r"holds (\d+) lines", past_end["detail"]).group(1))
    assert _get(h + ":L%d-%d" % (n_lines, n_lines), env=env).stdout == expect_line(n_output_lines - 1)
    marker = _get(h + ":B%d-%d" % (kept["kept_head"], kept["kept_head"] + 300), env=env).stdout.lstrip(b"\n")
    assert marker.startswith(b"~~~ ctx: output of %d bytes; %d bytes elided here" % (size, kept["elided_bytes"]))


def test_daemon_memory_stays_bounded_on_a_huge_output(paths, running_daemon):
    before = _vm_hwm_kb(running_daemon.proc.pid)
    got = ctx_run("seq 1 14000000", timeout=300)  # ~110 MB
    assert got.returncode == 0
    after = _vm_hwm_kb(running_daemon.proc.pid)
    # The daemon used to read the whole output, hash, compress, decode and split it
    # (~6 GB peak for 200 MB); bounded, it grows by what one capture costs to digest.
    assert after - before < 150 * 1024, "daemon peak RSS grew by %d MB" % ((after - before) // 1024)


@pytest.mark.parametrize("unit", ["ab0123456789", "word ab12 "], ids=["no spaces", "words"])
def test_get_pages_reach_every_byte_of_a_long_line(shared, unit):
    # One 100 KB line (minified code, a base64 blob): pages must cut inside it and continue.
    env = shared.env()
    got = ctx_run("python3 -c 'import sys; sys.stdout.write(\"%s\" * 10000)'" % unit, env=env)
    h = handle_in(got.stdout)
    pages, knows = _follow_pages(h, 40, env)
    assert b"".join(pages) == unit.encode() * 10000
    assert len(pages) > 1 and all(len(p) <= 64 * 1024 for p in pages)
    assert all(k["next"].startswith(h + ":B") for k in knows[:-1])
    if " " in unit:
        assert all(p.endswith(b" ") for p in pages[:-1]), "a cut inside a line falls after a space"


def test_get_pages_reach_every_line(shared):
    env = shared.env()
    got = ctx_run(_numbered(4000), env=env)  # ~220 KB
    h = handle_in(got.stdout)
    pages, knows = _follow_pages(h, 40, env)
    assert b"".join(pages) == "".join(LINE % i for i in range(4000)).encode()
    assert len(pages) > 1 and all(p.endswith(b"\n") for p in pages), "pages end at line ends when lines fit"
    assert all(re.fullmatch(re.escape(h) + r":L\d+-4000", k["next"]) for k in knows[:-1])


# -- endless producers: bounded on disk until the harness kills them ---------------------------

ENDLESS = [
    ("yes", "no slicer: the capture is the pipe ctx run drains"),
    ("yes | cat", "a slicer that lets everything through: the view is bounded too"),
    ("yes 'a longer line of output for a change' | grep -v nothing", "a filter that keeps every line"),
]


@pytest.mark.parametrize("command,why", ENDLESS, ids=[e[0][:30] for e in ENDLESS])
def test_endless_output_stays_bounded_until_killed(shared, command, why):
    paths = shared.paths
    p = subprocess.Popen(ctx_cmd() + ["run", "--", command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=_limit_fsize, start_new_session=True, env=shared.env(), cwd=shared.home)
    biggest = 0
    deadline = time.monotonic() + 2.0
    try:
        while time.monotonic() < deadline:
            biggest = max(biggest, _dir_bytes(paths.captures))
            time.sleep(0.05)
        assert p.poll() is None, "still running: nothing in it ends"
        os.killpg(p.pid, signal.SIGTERM)  # what a harness does at its timeout
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)
    assert biggest <= capture_mod.LIMIT + 64 * 1024, "%s: capture grew to %d bytes" % (why, biggest)
    assert p.returncode == 128 + signal.SIGTERM
    assert len(out) < 64 * 1024, "a digest, not the output"
    deadline = time.monotonic() + 20
    while _dir_bytes(paths.captures) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _dir_bytes(paths.captures) == 0


def _dir_bytes(d):
    total = 0
    try:
        names = os.listdir(d)
    except OSError:
        return 0
    for n in names:
        try:
            total += os.stat(os.path.join(d, n)).st_blocks * 512
        except OSError:
            pass
    return total


# -- the pieces, directly ------------------------------------------------------------------------

def test_ring_keeps_head_and_tail_exactly(tmp_path):
    path = tmp_path / "cap"
    data = b"".join(b"%07d\n" % i for i in range(200_000))  # 1.6 MB
    for limit in (4096, 65536, len(data) - 1, len(data), len(data) + 1):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            ring = capture_mod.FileRing(fd, limit)
            for i in range(0, len(data), 7777):
                ring.write(data[i:i + 7777])
                assert os.fstat(fd).st_size <= limit
            kept = ring.finish()
        finally:
            os.close(fd)
        stored = path.read_bytes()
        assert kept.total == len(data) and kept.stored == len(stored)
        if len(data) <= limit:
            assert stored == data and kept.elided == 0
            continue
        head, tail = capture_mod.split_limit(limit)
        assert stored[:head] == data[:head]
        assert stored[kept.head + kept.marker_len:] == data[len(data) - kept.tail:]
        assert kept.tail <= tail and data[len(data) - kept.tail - 1:len(data) - kept.tail] == b"\n"
        assert kept.elided == len(data) - head - kept.tail


def test_daemon_reads_at_most_the_limit_of_an_oversized_capture(tmp_path):
    # A capture bigger than the limit (an older ctx run, a run spooled before the limit):
    # read as head + marker + tail, never whole.
    from reflex.daemon.runs import read_capture
    path = tmp_path / "old.out"
    with open(path, "wb") as f:
        for i in range(400_000):
            f.write(b"old line %08d\n" % i)
    raw, kept = read_capture(str(path), None, 1 << 20)
    size = os.path.getsize(path)
    assert kept.total == size and kept.elided and len(raw) == kept.stored <= (1 << 20) + 512
    assert raw.startswith(b"old line 00000000\n") and raw.endswith(b"old line 00399999\n")


def test_streamed_and_loaded_resolution_agree(tmp_path):
    # Blobs stored before captures were bounded are streamed; both paths must answer alike.
    import random
    from reflex import address
    from reflex.daemon import retrieval
    rnd = random.Random(5)
    raw = b"".join(b"x" * rnd.randint(0, 90) + b"\n" for _ in range(60_000)) + b"no newline at the end"
    n_lines = raw.count(b"\n") + 1
    chunked = [raw[i:i + 65536] for i in range(0, len(raw), 65536)]
    addrs = ["r:0123456789ab", "r:0123456789ab:L1-1", "r:0123456789ab:L%d-%d" % (n_lines, n_lines + 5),
             "r:0123456789ab:L%d-%d" % (n_lines + 1, n_lines + 1), "r:0123456789ab:B5-7000000"]
    addrs += ["r:0123456789ab:L%d-%d" % (a, a + rnd.randint(0, 3000)) for a in
              (rnd.randint(1, n_lines) for _ in range(20))]
    for q in addrs:
        a = address.parse_address(q)
        whole = retrieval._locate([raw], a, None, True)
        streamed = retrieval._locate(chunked, a, None, True)
        for k in retrieval._Located.__slots__:
            assert getattr(whole, k) == getattr(streamed, k), (q, k)
        if whole.start is not None and whole.start < len(raw):
            assert whole.span_b3 == blake3(raw[whole.start:whole.end]).hexdigest()
            if a.kind == "lines":
                assert (whole.start, whole.end) == address.line_span(raw, a.first_line, a.last_line)


def test_pipeline_tee_keeps_a_bounded_copy_and_reports_it(tmp_path):
    from reflex.shim import run as runner
    from reflex.shim.pipetee import read_stats
    cap = tmp_path / "c.out"
    cap.write_bytes(b"")
    stats = str(cap) + ".kept"
    open(stats, "wb").close()  # ctx run creates it; the tee only fills it
    tee = runner._tee_command(str(cap), 65536, stats)
    p = subprocess.run(["/bin/bash", "-c", "seq 1 300000 | %s | tail -1" % tee], capture_output=True, timeout=60,
                       preexec_fn=_limit_fsize)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"300000\n", b"")
    kept = read_stats(stats)
    data = b"".join(b"%d\n" % i for i in range(1, 300001))
    stored = cap.read_bytes()
    assert kept.total == len(data) and kept.stored == len(stored) <= 65536 + 512 and kept.error is None
    assert stored[:kept.head] == data[:kept.head] and stored.endswith(data[-kept.tail:])


def test_memory_head_tail_keeps_the_ends(tmp_path):
    data = b"".join(b"%06d\n" % i for i in range(100_000))
    for limit in (1000, len(data), len(data) + 5):
        ht = capture_mod.MemoryHeadTail(limit)
        for i in range(0, len(data), 4093):
            ht.write(data[i:i + 4093])
        out, kept = ht.finish()
        assert kept.total == len(data) and kept.stored == len(out)
        if limit >= len(data):
            assert out == data
        else:
            assert out[:kept.head] == data[:kept.head] and out.endswith(data[-kept.tail:])
            assert out[kept.head:kept.head + kept.marker_len].lstrip(b"\n").startswith(capture_mod.MARKER_PREFIX)


def test_ctx_run_and_its_tee_import_only_the_standard_library():
    code = ("import sys\n"
            "before = set(sys.modules)\n"
            "import reflex.shim.run, reflex.shim.capture, reflex.shim.pipetee, reflex.safety.pipesplit\n"
            "print('\\n'.join(sorted(set(sys.modules) - before)))\n")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.returncode == 0, out.stderr
    foreign = [m for m in out.stdout.split() if m.split(".")[0] not in sys.stdlib_module_names
               and m.split(".")[0] != "reflex"]
    assert foreign == []
