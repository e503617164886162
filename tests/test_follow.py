"""Counting a run's tokens while it runs gives exactly the after-the-fact count."""

import os
import threading
import time

from reflex import tokens
from reflex.daemon.follow import Followers


def test_follower_count_is_exact_on_a_growing_file(tmp_path):
    path = tmp_path / "cap.out"
    path.write_bytes(b"")
    chunks = [("line %d: ünïcödé \xff\xfe value=%d\n" % (i, i * 7)).encode("utf-8", "surrogateescape")
              for i in range(3000)]
    # split inside multi-byte characters on purpose
    data = b"".join(chunks) + "tail without newline ✓".encode()
    fl = Followers(log=lambda m: None)
    assert fl.start("u" * 10, str(path))

    def writer():
        with open(path, "ab") as f:
            for i in range(0, len(data), 997):
                f.write(data[i:i + 997])
                f.flush()
                time.sleep(0.0005)
    t = threading.Thread(target=writer)
    t.start()
    t.join()
    got = fl.finish("u" * 10, os.path.getsize(path))
    assert got == tokens.count(data.decode("utf-8", "replace"))


def test_follower_mismatch_or_unknown_uid_returns_none(tmp_path):
    path = tmp_path / "cap.out"
    path.write_bytes(b"abc\n")
    fl = Followers(log=lambda m: None)
    assert fl.finish("nope-nope", 4) is None
    fl.start("x" * 10, str(path))
    time.sleep(0.1)
    assert fl.finish("x" * 10, 999) is None, "size disagrees with what was followed: count afresh"
