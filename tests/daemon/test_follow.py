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
    final = path.read_bytes()
    got = fl.finish("u" * 10, final, len(final), len(final))
    assert got == tokens.count(data.decode("utf-8", "replace"))


def test_follower_mismatch_or_unknown_uid_returns_none(tmp_path):
    path = tmp_path / "cap.out"
    path.write_bytes(b"abc\n")
    fl = Followers(log=lambda m: None)
    assert fl.finish("nope-nope", b"abc\n", 4, 4) is None
    fl.start("x" * 10, str(path))
    time.sleep(0.1)
    assert fl.finish("x" * 10, b"ab", 2, 2) is None, "it read bytes that changed, with no checkpoint: count afresh"


def test_follower_resumes_from_its_checkpoint_when_the_capture_was_elided(tmp_path):
    # The head of a bounded capture never changes; what follows it is rewritten at the end
    # (reflex.shim.capture).  The count of the head is exact however far the follower read.
    path = tmp_path / "cap.out"
    head = "".join("héad line %d ✓\n" % i for i in range(2000)).encode()[:20000]  # cut inside a character
    path.write_bytes(head + b"ring bytes that will be overwritten\n" * 500)
    fl = Followers(log=lambda m: None)
    assert fl.start("y" * 10, str(path), stable=len(head))
    deadline = time.monotonic() + 10
    while fl._by_uid["y" * 10].offset < os.path.getsize(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    final = head + b"\n~~~ ctx: marker ~~~\nlast lines\n"
    assert fl.finish("y" * 10, final, len(head), len(head)) == tokens.count(head.decode("utf-8", "replace"))
