"""Worked example: a team compiles one policy epoch from several developers' exported ledgers.

Each developer's ctx keeps its own ledger (~/.local/share/ctx/ledger.db or $CTX_HOME).  To pool
them, each developer exports theirs and drops the file in a shared directory; anyone then
compiles the directory:

    # on each developer's machine
    ctx ledger export --format jsonl --out team-ledgers/alice.jsonl
    ctx ledger export --format parquet --out team-ledgers/bob.parquet    # needs ctx-reflex[parquet]

    # once, anywhere
    ctx policy compile --ledger team-ledgers/ --plan-value --out .ctx/policies/epoch-2.toml
    ctx policy check .ctx/policies/epoch-2.toml
    git add .ctx/policies/epoch-2.toml     # reviewed and committed like code

A directory is read as every *.db, *.sqlite, *.sqlite3, *.ledger, *.jsonl and *.parquet file in
it.  The epoch is the same bytes whatever order the files are listed or found in, and a session
that appears in two files (a ledger and its own export) is counted once; its [epoch] block
lists each input's blake3 digest and event count as provenance.

This script does all of it for real, end to end: it runs two "developers" (two CTX_HOMEs,
two real daemons) through simulated agent sessions: hook payloads delivered with
reflex.shim.hook.deliver exactly as the shim sends them and commands run through `ctx run` when
the daemon rewrites them, against a small real pytest project.  The agent is a simulation
(a fixed script of commands); the daemon, the hooks, `ctx run`, pytest and the ledgers are
real.  Then it exports alice as JSONL and bob as parquet (JSONL when pyarrow is missing),
compiles the directory twice (files listed in opposite orders) and checks the bytes agree.

Usage: python evals/team_ledgers_example.py [--keep DIR]
Writes evals/out/team_ledgers_example.json and prints the epoch's provenance.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402
from tests.support.team_ledgers import Developer, careful_session, loop_session  # noqa: E402


def run(keep=None, log=print):
    root = keep or tempfile.mkdtemp(prefix="ctx-team-")
    os.makedirs(root, exist_ok=True)
    share = os.path.join(root, "team-ledgers")
    os.makedirs(share, exist_ok=True)
    alice, bob = Developer(root, "alice"), Developer(root, "bob")
    try:
        alice.start()
        loop_session(alice, "alice-1", "claude-haiku-4-5")
        careful_session(alice, "alice-2", "claude-sonnet-4-5")
        alice.stop()
        bob.start()
        careful_session(bob, "bob-1", "claude-opus-4-1")
        loop_session(bob, "bob-2", "claude-haiku-4-5")
        bob.stop()
    finally:
        alice.stop()
        bob.stop()
    alice.ctx("ledger", "export", "--format", "jsonl", "--out", os.path.join(share, "alice.jsonl"))
    try:
        import pyarrow  # noqa: F401
        bob_file = os.path.join(share, "bob.parquet")
        bob.ctx("ledger", "export", "--format", "parquet", "--out", bob_file)
    except ImportError:
        bob_file = os.path.join(share, "bob.jsonl")
        bob.ctx("ledger", "export", "--format", "jsonl", "--out", bob_file)
    epoch_dir = os.path.join(root, "epoch-from-dir.toml")
    epoch_listed = os.path.join(root, "epoch-listed.toml")
    alice.ctx("policy", "compile", "--ledger", share, "--plan-value", "--out", epoch_dir)
    alice.ctx("policy", "compile", "--ledger", bob_file, "--ledger", os.path.join(share, "alice.jsonl"),
              "--plan-value", "--out", epoch_listed)
    with open(epoch_dir, "rb") as f:
        a_bytes = f.read()
    with open(epoch_listed, "rb") as f:
        b_bytes = f.read()
    check = alice.ctx("policy", "check", epoch_dir).stdout.strip()
    stats = json.loads(alice.ctx("stats", "--ledger", alice.paths.ledger, "--json").stdout)
    result = {"inputs": sorted(os.listdir(share)), "identical": a_bytes == b_bytes, "check": check,
              "epoch_bytes": len(a_bytes), "alice_sessions": stats["sessions"],
              "provenance": [ln for ln in a_bytes.decode().splitlines() if ln.startswith("#   b3:")]}
    if keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return result, a_bytes.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", default=None, help="keep the developers' homes, exports and epochs here")
    a = ap.parse_args()
    result, text = run(a.keep)
    print(text.split("\n\n")[0])
    print("inputs:", ", ".join(result["inputs"]))
    print("same bytes whatever the order:", result["identical"])
    print(result["check"])
    print("wrote", _common.write_json("team_ledgers_example.json", result))
    sys.exit(0 if result["identical"] else 1)


if __name__ == "__main__":
    main()
