"""Worktree freshness against the real filesystem, real watchdog and real git.

The central property: the incrementally maintained hash equals the hash of a
fresh full scan once events have settled, whatever happened in between.
"""

import json
import logging
import os
import random
import shutil
import statistics
import subprocess
import sys
import textwrap
import time

import pytest

from reflex.worktree import ignore as worktree_ignore
from reflex.worktree import tree as worktree_tree
from reflex.worktree.registry import MISSING_HASH, WorktreeRegistry, full_scan_hash

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LATENCY_S = 0.2


def wait_until(pred, timeout=3.0, step=0.002):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


def write(path, text="x"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


@pytest.fixture
def logs():
    return []


@pytest.fixture
def reg(logs):
    r = WorktreeRegistry(debounce_s=0.02, log=logs.append)
    yield r
    r.close()


@pytest.fixture
def proj(tmp_path):
    root = tmp_path / "proj"
    write(str(root / "src" / "app.py"), "print(1)\n")
    write(str(root / "src" / "pkg" / "mod.py"), "x = 1\n")
    write(str(root / "README.md"), "hi\n")
    write(str(root / ".gitignore"), "*.log\nbuild/\n")
    os.makedirs(root / ".git" / "objects")
    write(str(root / ".git" / "HEAD"), "ref: refs/heads/main\n")
    return str(root)


def settled_equals_full_scan(reg, root, timeout=3.0):
    """Wait for the incremental hash to equal a fresh scan's; the scan is
    retaken each round so a late event cannot leave us comparing to old state."""
    return wait_until(lambda: reg.hash_for(root) == full_scan_hash(root, exclude=reg.exclude,
                                                                   always_ignored=reg.always_ignored),
                      timeout=timeout, step=0.02)


def change_latency(reg, root, action):
    before = reg.hash_for(root)
    t0 = time.monotonic()
    action()
    assert wait_until(lambda: reg.hash_for(root) != before, timeout=3.0), "change never reflected"
    return time.monotonic() - t0


# -- edits are reflected, quickly and exactly --------------------------------

def test_file_and_directory_operations_change_the_hash_within_200ms(reg, proj, tmp_path):
    p = lambda *a: os.path.join(proj, *a)
    os.makedirs(tmp_path / "elsewhere")
    ops = {
        "create file": lambda: write(p("src", "new.py"), "a = 1\n"),
        "modify file": lambda: write(p("src", "app.py"), "print(2)  # longer\n"),
        "rename file": lambda: os.rename(p("src", "new.py"), p("src", "renamed.py")),
        "atomic save": lambda: (write(p("src", ".app.py.swp~"), "print(3)\n"),
                                os.replace(p("src", ".app.py.swp~"), p("src", "app.py"))),
        "delete file": lambda: os.remove(p("src", "renamed.py")),
        "create dir": lambda: os.makedirs(p("lib", "deep")),
        "create tree": lambda: write(p("lib", "deep", "x", "y.py")),
        "rename dir": lambda: os.rename(p("lib"), p("lib2")),
        "delete dir": lambda: shutil.rmtree(p("lib2")),
        "chmod +x": lambda: os.chmod(p("src", "app.py"), 0o755),
        # An unpaired IN_MOVED_FROM: watchdog would hold it (and all behind it) for 0.5 s.
        "move out of tree": lambda: os.rename(p("README.md"), str(tmp_path / "elsewhere" / "README.md")),
        "move into tree": lambda: os.rename(str(tmp_path / "elsewhere" / "README.md"), p("README.md")),
    }
    reg.hash_for(proj)
    latencies = {}
    for name, action in ops.items():
        latencies[name] = change_latency(reg, proj, action)
        assert settled_equals_full_scan(reg, proj), name
    slow = {k: round(v, 3) for k, v in latencies.items() if v > LATENCY_S}
    assert not slow, "reflected later than 200 ms: %s" % slow
    st = reg.state(proj)
    assert st.mode == "watching" and st.generation >= len(ops) and st.full_rescans == 0


def test_ignored_paths_git_internals_and_caches_do_not_change_the_hash(reg, proj):
    h = reg.hash_for(proj)
    gen = reg.state(proj).generation
    write(os.path.join(proj, "debug.log"), "noise")
    write(os.path.join(proj, "build", "out", "a.o"), "obj")
    write(os.path.join(proj, ".git", "HEAD"), "ref: refs/heads/other\n")
    write(os.path.join(proj, ".git", "objects", "ab", "cdef"), "blob")
    write(os.path.join(proj, "src", "__pycache__", "app.cpython-311.pyc"), "pyc")
    write(os.path.join(proj, ".pytest_cache", "v", "cache", "lastfailed"), "{}")
    time.sleep(0.3)
    assert reg.hash_for(proj) == h
    assert reg.state(proj).generation == gen
    # ...and the watcher is alive: a real edit right after still shows up.
    assert change_latency(reg, proj, lambda: write(os.path.join(proj, "src", "b.py"))) < 3


def test_gitignore_edits_rejudge_existing_files(reg, proj):
    write(os.path.join(proj, "src", "gen.py"), "generated")
    h0 = reg.hash_for(proj)
    n0 = reg.state(proj).files
    change_latency(reg, proj, lambda: write(os.path.join(proj, "src", ".gitignore"), "gen.py\n"))
    assert settled_equals_full_scan(reg, proj)
    # gen.py left the index, the new .gitignore joined it.
    assert reg.state(proj).files == n0
    h1 = reg.hash_for(proj)
    assert h1 != h0
    write(os.path.join(proj, "src", "gen.py"), "regenerated, now ignored")
    time.sleep(0.25)
    assert reg.hash_for(proj) == h1
    os.remove(os.path.join(proj, "src", ".gitignore"))
    assert settled_equals_full_scan(reg, proj)
    assert reg.state(proj).files == n0


def test_info_exclude_edits_rejudge_the_tree(reg, proj):
    write(os.path.join(proj, "secret", "s.txt"))
    write(os.path.join(proj, ".git", "info", "exclude"), "")
    n0 = reg.state(proj).files
    change_latency(reg, proj, lambda: write(os.path.join(proj, ".git", "info", "exclude"), "secret/\n"))
    assert reg.state(proj).files == n0 - 1
    assert reg.state(proj).last_rescan_reason == "info/exclude changed"
    assert settled_equals_full_scan(reg, proj)


def wait_settled(reg, root):
    """The hash once no watch event is in flight (what a caller comparing hashes waits for)."""
    time.sleep(0.05)
    assert wait_until(lambda: not reg.state(root).pending and reg.state(root).quiet_s > 0.1, timeout=3.0)
    return reg.hash_for(root)


@pytest.mark.skipif(not shutil.which("git"), reason="git not installed")
def test_the_hash_is_about_content_not_stat_data(reg, tmp_path):
    """A touch, a byte-identical rewrite and `git add`/`git commit` leave the hash; an edit
    whose mtime is put back does not."""
    proj = str(tmp_path / "repo")
    write(os.path.join(proj, "src", "app.py"), "print(1)\n")
    _git(proj, "init", "-q")
    path = os.path.join(proj, "src", "app.py")
    h0 = wait_settled(reg, proj)
    with open(path, "rb") as f:
        body = f.read()
    os.utime(path)                       # same bytes, new mtime
    with open(path, "wb") as f:          # same bytes, rewritten (a formatter with nothing to do)
        f.write(body)
    _git(proj, "add", "-A")
    _git(proj, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "c", "--allow-empty")
    assert wait_settled(reg, proj) == h0
    st = os.stat(path)

    def edit_then_restore_mtime():
        with open(path, "r+b") as f:
            f.write(b"P")                # same size, different bytes
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    change_latency(reg, proj, edit_then_restore_mtime)
    assert reg.hash_for(proj) != h0
    with open(path, "wb") as f:          # the old bytes back: the old hash back
        f.write(body)
    assert wait_settled(reg, proj) == h0
    assert settled_equals_full_scan(reg, proj)


def test_harness_records_rewritten_on_every_call_do_not_count(reg, proj):
    """Hook setups that copy the session into tracked logs/*.json rewrite them on every tool
    call; a project file with the same name elsewhere still counts."""
    logs = os.path.join(proj, "logs")
    record = {"session_id": "s1", "hook_event_name": "PreToolUse", "transcript_path": "/t.jsonl"}
    write(os.path.join(logs, "pre_tool_use.json"), json.dumps([record]))
    write(os.path.join(logs, "chat.json"), json.dumps([{"sessionId": "s1", "parentUuid": None}]))
    h0 = wait_settled(reg, proj)
    for n in range(3):
        write(os.path.join(logs, "pre_tool_use.json"), json.dumps([record] * (n + 2)))
        write(os.path.join(logs, "chat.json"), json.dumps([{"sessionId": "s1", "parentUuid": str(i)}
                                                           for i in range(n + 2)]))
        assert wait_settled(reg, proj) == h0
    change_latency(reg, proj, lambda: write(os.path.join(proj, "data", "pre_tool_use.json"), json.dumps([record])))
    change_latency(reg, proj, lambda: write(os.path.join(logs, "notes.json"), '{"a": 1}'))
    assert settled_equals_full_scan(reg, proj)


def _follow_dir_change(paths, victim, dest):
    """Our model of `paths` after directory `victim` was removed (dest None) or moved to `dest`."""
    out = []
    for rel in paths:
        if rel == victim or rel.startswith(victim + "/"):
            if dest:
                out.append(dest + rel[len(victim):])
        else:
            out.append(rel)
    return out


def test_random_operations_converge_to_the_full_scan_hash(reg, proj):
    rng = random.Random(20240605)
    reg.hash_for(proj)
    files, dirs = [], ["src", "src/pkg"]
    for step in range(120):
        op = rng.choice(["create", "create", "modify", "delete", "mkdir", "rename", "rmdir", "mvdir",
                         "ignored", "gitignore"])
        d = rng.choice(dirs)
        if op == "create" or (op in ("modify", "delete", "rename") and not files):
            rel = "%s/f%d.%s" % (d, step, rng.choice(["py", "txt", "log"]))
            write(os.path.join(proj, rel), "x" * rng.randint(0, 50))
            files.append(rel)
        elif op == "modify":
            write(os.path.join(proj, rng.choice(files)), "y" * rng.randint(0, 50))
        elif op == "delete":
            rel = files.pop(rng.randrange(len(files)))
            os.remove(os.path.join(proj, rel))
        elif op == "rename":
            rel = files.pop(rng.randrange(len(files)))
            new = "%s/r%d.py" % (rng.choice(dirs), step)
            os.rename(os.path.join(proj, rel), os.path.join(proj, new))
            files.append(new)
        elif op == "mkdir":
            new = "%s/d%d" % (d, step)
            os.makedirs(os.path.join(proj, new))
            dirs.append(new)
        elif op in ("rmdir", "mvdir") and len(dirs) > 2:
            victim = rng.choice(dirs[2:])
            if op == "rmdir":
                shutil.rmtree(os.path.join(proj, victim))
                dest = None
            else:
                dest = "src/m%d" % step
                os.rename(os.path.join(proj, victim), os.path.join(proj, dest))
            files = _follow_dir_change(files, victim, dest)
            dirs = _follow_dir_change(dirs, victim, dest)
        elif op == "ignored":
            write(os.path.join(proj, "build", "gen%d" % step, "o"), "o")
        elif op == "gitignore":
            write(os.path.join(proj, d, ".gitignore"), rng.choice(["*.txt\n", "", "f*\n!*.py\n"]))
        if rng.random() < 0.2:
            time.sleep(rng.random() * 0.05)  # mix bursts with gaps around the debounce
    assert settled_equals_full_scan(reg, proj, timeout=5.0)
    assert reg.state(proj).full_rescans == 0  # reached incrementally, not by a rescue rescan


# -- overflow, watch limits, polling -----------------------------------------

def test_queue_overflow_triggers_a_rescan_with_the_same_result(proj, logs):
    reg = WorktreeRegistry(debounce_s=0.05, log=logs.append, queue_max=4)
    try:
        reg.hash_for(proj)
        for i in range(60):
            write(os.path.join(proj, "burst", "f%d.py" % i), str(i))
        assert settled_equals_full_scan(reg, proj)
        st = reg.state(proj)
        assert st.overflows >= 1 and st.full_rescans >= 1
        assert st.last_rescan_reason == "event queue overflow"
        assert any("full rescan" in m and "overflow" in m for m in logs)
    finally:
        reg.close()


def test_watchdog_overflow_log_line_triggers_a_rescan(reg, proj):
    reg.hash_for(proj)
    # watchdog's inotify layer reports a kernel IN_Q_OVERFLOW only as this log line.
    logging.getLogger("watchdog.observers.inotify_c").warning(
        "Inotify queue overflowed; filesystem events were lost")
    assert wait_until(lambda: reg.state(proj).full_rescans == 1)
    assert reg.state(proj).last_rescan_reason == "watchdog queue overflow"
    assert reg.hash_for(proj) == full_scan_hash(proj, exclude=reg.exclude)


def test_forced_polling_still_follows_edits(proj, logs):
    reg = WorktreeRegistry(log=logs.append, force_polling=True, poll_interval_s=0.1)
    try:
        h = reg.hash_for(proj)
        assert reg.state(proj).mode == "polling"
        assert any("falling back to polling" in m for m in logs)
        write(os.path.join(proj, "src", "polled.py"))
        assert wait_until(lambda: reg.hash_for(proj) != h, timeout=3)
        assert reg.hash_for(proj) == full_scan_hash(proj, exclude=reg.exclude)
    finally:
        reg.close()


_LIMIT_SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    limit, root = sys.argv[1], sys.argv[2]
    with open("/proc/sys/user/max_inotify_watches", "w") as f:
        f.write(limit)
    from reflex.worktree.registry import WorktreeRegistry
    logs = []
    reg = WorktreeRegistry(log=logs.append, poll_interval_s=0.1, exclude=())
    h = reg.hash_for(root)
    st = reg.state(root)
    with open(os.path.join(root, "d0", "edit.py"), "w") as f:
        f.write("x")
    t0 = time.monotonic()
    while reg.hash_for(root) == h and time.monotonic() - t0 < 5:
        time.sleep(0.01)
    print(json.dumps({"mode": st.mode, "error": st.error, "logs": logs,
                      "changed": reg.hash_for(root) != h, "latency": time.monotonic() - t0}))
    reg.close()
""")


@pytest.mark.parametrize("limit", ["0", "3"])
def test_inotify_watch_limit_falls_back_to_polling(tmp_path, limit):
    """A real ENOSPC: in a user namespace the per-user watch limit is ours to lower.
    With 0 the root watch itself fails; with 3 watchdog silently skips subdirectories."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rU", "true"], capture_output=True,
                                                     check=False).returncode != 0:
        pytest.skip("user namespaces unavailable")
    root = tmp_path / "tree"
    for i in range(10):
        write(str(root / ("d%d" % i) / "f.py"))
    env = dict(os.environ, PYTHONPATH=REPO)
    out = subprocess.run(["unshare", "-rU", sys.executable, "-c", _LIMIT_SCRIPT, limit, str(root)],
                         capture_output=True, text=True, timeout=60, env=env, check=False)
    assert out.returncode == 0, out.stderr
    import json
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["mode"] == "polling"
    assert "watch limit" in res["error"]
    assert any("falling back to polling" in m and "watch limit" in m for m in res["logs"])
    assert res["changed"]


# -- roots that are missing, vanish, or contain ctx's own home -----------------

def test_nonexistent_root_has_a_stable_sentinel_then_recovers(tmp_path, logs):
    reg = WorktreeRegistry(log=logs.append, missing_recheck_s=0.0, debounce_s=0.02)
    try:
        root = str(tmp_path / "not-yet")
        assert reg.hash_for(root) == MISSING_HASH
        assert reg.hash_for(root) == MISSING_HASH
        assert reg.state(root).mode == "missing"
        assert any("does not exist" in m for m in logs)
        write(os.path.join(root, "a.py"))
        h = reg.hash_for(root)
        assert h != MISSING_HASH and h.startswith("wt:")
        assert reg.state(root).mode == "watching"
        shutil.rmtree(root)
        assert wait_until(lambda: reg.hash_for(root) == MISSING_HASH, timeout=5)
        assert any("disappeared" in m for m in logs)
    finally:
        reg.close()


def test_ctx_home_inside_the_root_is_excluded(tmp_path, ctx_env, logs):
    # conftest points CTX_HOME at tmp_path/ctxhome: make tmp_path the project root.
    root = str(tmp_path)
    write(os.path.join(root, "main.py"))
    write(os.path.join(str(ctx_env), "ledger.db"), "v1")
    reg = WorktreeRegistry(debounce_s=0.02, log=logs.append)  # exclude defaults to CTX_HOME
    try:
        h = reg.hash_for(root)
        write(os.path.join(str(ctx_env), "ledger.db"), "v2 longer")
        write(os.path.join(str(ctx_env), "blobs", "ab", "cd"), "blob")
        time.sleep(0.25)
        assert reg.hash_for(root) == h
        assert os.path.relpath(str(ctx_env), root) not in reg._roots[os.path.realpath(root)].index.entries
        change_latency(reg, root, lambda: write(os.path.join(root, "main.py"), "edited"))
    finally:
        reg.close()


def test_never_raises_and_unknown_answers_never_repeat(reg, proj, logs):
    a, b = reg.hash_for(None), reg.hash_for(None)
    assert a.startswith("wt:") and a != b
    assert reg.changed_since(None, a)
    assert any("hash_for(None) failed" in m for m in logs)
    h = reg.hash_for(proj)
    assert not reg.changed_since(proj, h)
    reg.close()
    assert reg.hash_for(proj) != h  # closed: answers "unknown", does not raise
    assert reg.state(proj).mode == "closed"


def test_a_root_too_large_to_index_reads_as_always_changed(proj, logs):
    reg = WorktreeRegistry(log=logs.append, max_entries=3)
    try:
        a, b = reg.hash_for(proj), reg.hash_for(proj)
        assert a != b and a.startswith("wt:")
        st = reg.state(proj)
        assert st.mode == "too-large" and "TreeTooLarge" in st.error
        assert any("always changed" in m for m in logs)
    finally:
        reg.close()


def test_a_root_that_grows_too_large_gives_up_instead_of_growing(proj, logs):
    reg = WorktreeRegistry(debounce_s=0.02, log=logs.append, max_entries=20)
    try:
        assert reg.state(proj).mode == "watching"
        for i in range(25):
            write(os.path.join(proj, "gen", "f%d.py" % i))
        assert wait_until(lambda: reg.state(proj).mode == "too-large")
        assert reg.hash_for(proj) != reg.hash_for(proj)
    finally:
        reg.close()


def test_close_stops_every_thread_it_started(proj, tmp_path, logs):
    import threading
    before = set(threading.enumerate())
    reg = WorktreeRegistry(log=logs.append)
    other = str(tmp_path / "other")
    write(os.path.join(other, "a.py"))
    reg.hash_for(proj)
    reg.hash_for(other)
    assert len(set(threading.enumerate()) - before) >= 4  # observers, emitters, workers
    reg.close()
    assert wait_until(lambda: not (set(threading.enumerate()) - before), timeout=5)


def test_hash_query_is_o1_after_the_initial_scan(reg, proj):
    reg.hash_for(proj)
    samples = []
    for _ in range(2000):
        t0 = time.perf_counter()
        reg.hash_for(proj)
        samples.append(time.perf_counter() - t0)
    assert statistics.median(samples) < 1e-3


def test_symlinks_are_hashed_as_links_not_followed(reg, tmp_path, proj):
    outside = tmp_path / "outside"
    write(str(outside / "big.py"))
    os.symlink(str(outside), os.path.join(proj, "linked"))
    reg.hash_for(proj)
    st = reg.state(proj)
    h = reg.hash_for(proj)
    write(str(outside / "other.py"))
    time.sleep(0.2)
    assert reg.hash_for(proj) == h and reg.state(proj).files == st.files


# -- the ignore matcher agrees with git ---------------------------------------

GITIGNORE = """\
# comment
*.log
!keep.log
build/
/rootonly.txt
docs/**/gen
**/tmp_*
vendor/**
!vendor/keep/
foo?.txt
[abc]z.dat
\\#hash
trailing.txt   
log[0-9].txt
nest/**/deep/
*.bak
!/root.bak
spaced\\ name 
"""

NESTED = "*.tmp\n!important.tmp\n/local\nsub2/\n"

FILES = [
    "a.py", "x.log", "keep.log", "sub/keep.log", "build/o.o", "sub/build/o.o", "rootonly.txt",
    "sub/rootonly.txt", "docs/gen", "docs/a/b/gen", "docs/a/gen/inner.md", "docs/ok.md",
    "tmp_1", "deep/er/tmp_2", "vendor/lib.js", "vendor/keep/k.js", "vendorx/lib.js", "foo1.txt",
    "foo12.txt", "az.dat", "dz.dat", "#hash", "trailing.txt", "sub/a.tmp", "sub/important.tmp",
    "sub/local", "sub/deeper/local", "sub/sub2/x", "sub/deeper/sub2/y", "secret_dir/s.txt",
    "other/secret_dir/s.txt", "sub/x.tmp.py", "log1.txt", "logx.txt", "sub/log2.txt", "nest/deep/a",
    "nest/x/deep/b", "nest/deepfile", "root.bak", "sub/root.bak", "spaced name", "spaced name2",
]


def _git(cwd, *args):
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=env).stdout


@pytest.mark.skipif(not shutil.which("git"), reason="git not installed")
@pytest.mark.parametrize("subdir", ["", "sub"])
def test_ignore_matcher_agrees_with_git(tmp_path, subdir):
    repo = str(tmp_path / "repo")
    os.makedirs(repo)
    _git(repo, "init", "-q")
    write(os.path.join(repo, ".gitignore"), GITIGNORE)
    write(os.path.join(repo, "sub", ".gitignore"), NESTED)
    write(os.path.join(repo, ".git", "info", "exclude"), "secret_dir/\n")
    for rel in FILES:
        write(os.path.join(repo, rel))
    root = os.path.join(repo, subdir) if subdir else repo
    expected = set(_git(root, "ls-files", "-o", "--exclude-standard").splitlines())
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    index = worktree_tree.TreeIndex(root, worktree_ignore.find_repo(root, env), always_ignored=())
    index.scan_all()
    ours = {rel for rel in index.entries if rel not in index.kids}
    assert ours == expected
    assert len(expected) > 5


@pytest.mark.parametrize("pattern,path,is_dir,ignored", [
    ("*.py", "a/b/c.py", False, True),
    ("/top.py", "sub/top.py", False, False),
    ("a/**/b", "a/b", False, True),
    ("a/**/b", "a/x/y/b", False, True),
    ("**/b", "x/b", True, True),
    ("b/", "b", False, False),
    ("b/", "b", True, True),
    ("x**y", "xay", False, True),
    ("[!a]b", "cb", False, True),
    ("[!a]b", "ab", False, False),
    ("\\!bang", "!bang", False, True),
])
def test_single_patterns(pattern, path, is_dir, ignored):
    stack = (worktree_ignore.parse_rules(pattern + "\n"),)
    name = path.rpartition("/")[2]
    assert worktree_ignore.is_ignored(stack, path, name, is_dir) is ignored

