"""A command that outlives the harness's patience (Claude Code moves a Bash call to the background
at its timeout, 120 s by default, and the model sees what it printed so far): ctx run prints the
latest lines once, redacted, so the model never sees less than without ctx; the digest still comes
at the end and the exit status is the command's.  (`CTX_PROGRESS_AFTER_S` shortens the 110 s.)"""

import os
import tempfile

from reflex.shim import capture
from tests.shim.test_run import ctx_run

SECRET = "tok_live_9f8e7d6c5b4a39281706"


def _env(after):
    return dict(os.environ, CTX_PROGRESS_AFTER_S=str(after))


def test_a_long_command_shows_its_latest_lines_before_it_ends(paths, running_daemon, tmp_path):
    (tmp_path / ".env").write_text("API_TOKEN=%s\n" % SECRET)
    script = "for i in $(seq 1 60); do echo step $i; done; echo token %s; sleep 3; echo finished; exit 4" % SECRET
    p = ctx_run([script], cwd=tmp_path, env=_env(1), timeout=60)
    out = p.stdout.decode()
    assert p.returncode == 4
    note_at = out.index("[ctx] still running after 1 s; its last 20 lines so far")
    note = out[note_at:].split("\n")[1:21]
    assert note[0] == "step 42" and note[-1].startswith("token ") and "finished" not in note
    assert SECRET not in out and "[REDACTED" in note[-1]
    assert out.index("finished") > note_at  # the rest, as ctx run delivers it, after the note


def test_a_quick_command_has_no_note(paths, running_daemon):
    p = ctx_run(["echo quick"], env=_env(5))
    assert p.returncode == 0 and b"still running" not in p.stdout


def test_the_note_can_be_turned_off(paths, running_daemon):
    p = ctx_run(["echo a; sleep 2; echo b"], env=_env(0))
    assert p.returncode == 0 and b"still running" not in p.stdout


def test_recent_bytes_follow_the_ring_past_the_limit():
    with tempfile.TemporaryFile() as f:
        ring = capture.FileRing(f.fileno(), limit=256)
        data = b"".join(b"%05d\n" % i for i in range(2000))
        for k in range(0, len(data), 97):
            ring.write(data[k:k + 97])
            got = ring.recent(50)
            assert got == data[:k + 97][-50:]
        assert ring.recent(10 ** 6) == data[-ring.tail:]
