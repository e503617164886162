"""Replay cost: `ctx replay` over a ~3 MB Claude Code transcript.

The corpus transcripts (/work/shared/corpus/transcripts) are concatenated, copy after copy,
into one file in a temp dir until it reaches the target size; each copy gets its own tool-use
ids so every call counts.  Timed two ways:

  in-process    reflex.analysis.replay.load + replay (parse, safety + rewrite decisions, fold, detectors)
  command       a fresh Python process running the replay command with --json (imports included)

Target: under 2 s for the 3 MB transcript.

Usage: python evals/bench_replay.py [--mb 3] [--rounds 3]
"""

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402
from reflex.analysis.replay import load, replay  # noqa: E402

CORPUS = "/work/shared/corpus/transcripts"
TARGET_S = 2.0
_CLI = ("import sys; from reflex.commands.replay_cmd import replay_cmd; "
        "replay_cmd.main(args=[sys.argv[1], '--json'], standalone_mode=True)")


def build(path, target_bytes):
    sources = []
    for p in sorted(glob.glob(os.path.join(CORPUS, "*.jsonl"))):
        with open(p, "r", encoding="utf-8", errors="replace") as f:
            sources.append(f.read())
    size, copy = 0, 0
    with open(path, "w", encoding="utf-8") as out:
        while size < target_bytes:
            for text in sources:
                chunk = text.replace("toolu_", "toolu_c%d_" % copy)
                if not chunk.endswith("\n"):
                    chunk += "\n"
                out.write(chunk)
                size += len(chunk.encode("utf-8"))
                if size >= target_bytes:
                    break
            copy += 1
    return size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ctx-bench-replay-")
    path = os.path.join(tmp, "big.jsonl")
    size = build(path, int(args.mb * 1024 * 1024))
    inproc, report = [], None
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        report = replay(load(path))
        inproc.append(time.perf_counter() - t0)
    env = dict(os.environ, PYTHONPATH=_common.REPO)
    cli = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _CLI, path], capture_output=True, env=env, cwd=tmp)
        cli.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit("replay command failed: %s" % proc.stderr.decode()[-2000:])
    os.unlink(path)
    os.rmdir(tmp)
    firings = {}
    for f in report["firings"]:
        firings[f["detector"]] = firings.get(f["detector"], 0) + 1
    result = {
        "machine": _common.machine(),
        "bytes": size,
        "commands": report["commands"],
        "firings": firings,
        "in_process_s": {"median": round(statistics.median(inproc), 3), "max": round(max(inproc), 3)},
        "command_s": {"median": round(statistics.median(cli), 3), "max": round(max(cli), 3)},
        "target_s": TARGET_S,
        "pass": statistics.median(cli) < TARGET_S,
    }
    print("replay of a %.2f MB transcript (%d Bash calls), %d rounds" % (
        size / 1048576, report["commands"], args.rounds))
    print("  in-process  median %.3f s  max %.3f s" % (result["in_process_s"]["median"], result["in_process_s"]["max"]))
    print("  command     median %.3f s  max %.3f s   (fresh process, imports included)" % (
        result["command_s"]["median"], result["command_s"]["max"]))
    print("  firings: %s" % (", ".join("%s %d" % kv for kv in sorted(firings.items())) or "none"))
    print("target < %.1f s: %s" % (TARGET_S, "PASS" if result["pass"] else "FAIL"))
    print("wrote", _common.write_json("bench_replay.json", result))


if __name__ == "__main__":
    main()
