"""The census's listings kept between runs (reflex.safety.secrets.DirCache): a run that reuses
them finds exactly what a fresh walk finds, whatever changed in between; a directory whose mtime
was set back, a racy change, or a garbage cache file cannot hide a secret file."""

import json
import os
import random
import shutil
import time

import pytest

from reflex.safety import secrets as sv

SECRET_NAMES = [".env", ".env.local", "id_rsa", "credentials.json", "server.key", "db.pem"]
PLAIN_NAMES = ["a.py", "README.md", "notes.txt", "env.py", "key.txt", "data.json"]
DIR_NAMES = ["src", "pkg", "config", "node_modules", ".git", "sub", "deep", "venvish"]


def census(proj, home, ctx):
    c = sv.collect(str(proj), {"HOME": str(home), "CTX_HOME": str(ctx)})
    return c.files, c.values, c.truncated


@pytest.fixture
def world(tmp_path, monkeypatch):
    # A listing is kept once its directory is this old (the real RACY_NS is 2 s): the test
    # sleeps past it after each change, so every run may reuse what has not changed.
    monkeypatch.setattr(sv.DirCache, "RACY_NS", 30_000_000)
    proj, home, outside = tmp_path / "proj", tmp_path / "home", tmp_path / "outside"
    for d in (proj, home, outside):
        d.mkdir(exist_ok=True)          # (the conftest's HOME may be tmp_path/home already)
    (outside / ".env").write_text("OUT=" + "o9" * 8 + "\n")
    (outside / "tree").mkdir()
    (outside / "tree" / "id_rsa").write_text("r" * 30 + "\n")
    return tmp_path, proj, home, outside


def _dirs(proj):
    return [d for d, _s, _f in os.walk(proj)]


def _files(proj):
    return [os.path.join(d, f) for d, _s, fs in os.walk(proj) for f in fs]


def _mutate(rnd, proj, outside, n):
    dirs = _dirs(proj)
    d = rnd.choice(dirs)
    op = rnd.randrange(9)
    if op == 0:
        p = os.path.join(d, rnd.choice(SECRET_NAMES))
        if not os.path.isdir(p):
            with open(p, "w") as f:
                f.write("K%d=%s\n" % (n, "v%dx" % n * 6))
    elif op == 1:
        p = os.path.join(d, rnd.choice(PLAIN_NAMES))
        if not os.path.isdir(p):
            open(p, "w").write("plain %d\n" % n)
    elif op == 2:
        sub = os.path.join(d, rnd.choice(DIR_NAMES))
        os.makedirs(sub, exist_ok=True)
        if sub.endswith("venvish") and rnd.random() < 0.5:
            open(os.path.join(sub, "pyvenv.cfg"), "w").write("home = /usr\n")
    elif op == 3 and _files(proj):
        os.unlink(rnd.choice(_files(proj)))
    elif op == 4 and _files(proj):
        src = rnd.choice(_files(proj))
        dst = os.path.join(os.path.dirname(src), rnd.choice(SECRET_NAMES + PLAIN_NAMES))
        if not os.path.isdir(dst):
            os.replace(src, dst)
    elif op == 5:
        link = os.path.join(d, rnd.choice(["lnk", ".env", "cfg"]))
        if not os.path.lexists(link):
            os.symlink(rnd.choice([str(outside / ".env"), str(outside / "tree"), str(proj), d]), link)
    elif op == 6 and len(dirs) > 1:
        victim = rnd.choice(dirs[1:])
        shutil.rmtree(victim) if not os.path.islink(victim) else os.unlink(victim)
    elif op == 7:
        # a file replaced by a directory of the same name, or the other way round
        p = os.path.join(d, rnd.choice(SECRET_NAMES))
        if os.path.isfile(p) and not os.path.islink(p):
            os.unlink(p)
            os.mkdir(p)
        elif os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
            open(p, "w").write("T=%s\n" % ("t%dz" % n * 6))
    else:
        # the contents of a secret file change: its values are read afresh, never kept
        secrets_here = [f for f in _files(proj) if os.path.basename(f) in SECRET_NAMES and not os.path.islink(f)]
        if secrets_here:
            open(rnd.choice(secrets_here), "w").write("NEW=%s\n" % ("n%dw" % n * 6))


def test_a_reused_listing_finds_what_a_fresh_walk_finds(world, monkeypatch):
    tmp, proj, home, outside = world
    rnd = random.Random(5)
    ctx = tmp / "ctx"                   # kept: its census/ holds the listings between runs
    scans, asks = [], []
    real_listing, real_ask = sv._listing, sv.DirCache.listing
    monkeypatch.setattr(sv, "_listing", lambda d, k: scans.append(d) or real_listing(d, k))
    monkeypatch.setattr(sv.DirCache, "listing", lambda self, d, k: asks.append(d) or real_ask(self, d, k))
    reused = found = 0
    for n in range(120):
        for _ in range(rnd.randint(1, 3)):
            _mutate(rnd, proj, outside, n)
        time.sleep(0.04)
        fresh_ctx = tmp / ("fresh-%d" % n)
        want = census(proj, home, fresh_ctx)        # no listing kept: a full walk
        shutil.rmtree(fresh_ctx)
        scans.clear()
        asks.clear()
        got = census(proj, home, ctx)
        assert got == want, n
        mine = str(proj)                            # (the home secrets' walks are never cached)
        reused += len([d for d in asks if d.startswith(mine)]) - len([d for d in scans if d.startswith(mine)])
        found += len(got[0])
        again = census(proj, home, ctx)             # nothing changed: the same again
        assert again == want, n
    assert reused > 300 and found > 100, (reused, found)   # listings were reused; secrets were found


def test_a_directory_whose_mtime_is_set_back_is_read_again(world):
    tmp, proj, home, _outside = world
    sub = proj / "config"
    sub.mkdir()
    (sub / "a.py").write_text("x\n")
    old = os.stat(sub)
    time.sleep(0.04)
    ctx = tmp / "ctx"
    assert census(proj, home, ctx)[0] == []
    (sub / ".env").write_text("TOKEN=" + "s3cr3tvalue" * 2 + "\n")
    os.utime(sub, ns=(old.st_atime_ns, old.st_mtime_ns))      # as tar or rsync -a would
    assert os.stat(sub).st_mtime_ns == old.st_mtime_ns
    files, values, _t = census(proj, home, ctx)
    assert [label for _p, label in files] == ["config/.env"] and b"s3cr3tvalue" * 2 in values


def test_a_directory_changed_just_now_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(sv.DirCache, "RACY_NS", 2_000_000_000)      # the real window
    proj, home, ctx = tmp_path / "proj", tmp_path / "home", tmp_path / "ctx"
    (proj / "src").mkdir(parents=True)
    home.mkdir(exist_ok=True)
    census(proj, home, ctx)
    kept = {}
    for name in os.listdir(ctx / "census"):        # (no file at all when nothing was kept)
        kept.update(json.loads((ctx / "census" / name).read_text())["dirs"])
    assert str(proj) not in kept and str(proj / "src") not in kept
    # ... so a second change in the same clock tick cannot go unseen
    (proj / "src" / ".env").write_text("K=" + "q7" * 8 + "\n")
    assert [label for _p, label in census(proj, home, ctx)[0]] == ["src/.env"]


@pytest.mark.parametrize("content", [b"", b"not json", b'{"v": 1, "dirs": []}', b'{"v": 99, "dirs": {}}',
                                     b'{"v": 1, "dirs": {"X": [1, 2]}}'])
def test_a_garbage_cache_file_is_ignored(world, content):
    tmp, proj, home, _outside = world
    (proj / "pkg").mkdir()
    (proj / "pkg" / ".env").write_text("K=" + "g4" * 8 + "\n")
    time.sleep(0.04)
    ctx = tmp / "ctx"
    want = census(proj, home, ctx)
    (cache,) = os.listdir(ctx / "census")
    path = ctx / "census" / cache
    data = content.replace(b'"X"', json.dumps(str(proj / "pkg")).encode())
    path.write_bytes(data)
    assert census(proj, home, ctx) == want


def test_a_cache_entry_naming_no_secret_for_a_directory_that_holds_one_is_not_trusted(world):
    """A listing is trusted only with the directory's own stamp: a forged or stale entry with other
    times is ignored (here: the entry of pkg/ from before its .env, stamped with pkg/'s old times)."""
    tmp, proj, home, _outside = world
    (proj / "pkg").mkdir()
    time.sleep(0.04)
    ctx = tmp / "ctx"
    census(proj, home, ctx)
    (cache,) = os.listdir(ctx / "census")
    path = ctx / "census" / cache
    before = path.read_text()
    (proj / "pkg" / ".env").write_text("K=" + "h5" * 8 + "\n")
    path.write_text(before)                        # the listing from before, put back
    assert [label for _p, label in census(proj, home, ctx)[0]] == ["pkg/.env"]
