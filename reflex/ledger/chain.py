"""The ledger's hash chain: one canonical encoding, one hash function.

canonical(row) is compact JSON with sorted keys over HASHED_COLUMNS; the hash
of a row is blake3(prev_hash + "\\n" + canonical(row)), tagged "b3:".  The
first row's prev_hash is GENESIS.  Writer and verifier both call this module,
so they cannot disagree about encoding.
"""

import json

from blake3 import blake3

from reflex.ledger.schema import HASHED_COLUMNS

GENESIS = "b3:genesis"


def canonical(row):
    return json.dumps({c: row.get(c) for c in HASHED_COLUMNS}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)


def link(prev_hash, row):
    h = blake3(prev_hash.encode() + b"\n" + canonical(row).encode())
    return "b3:" + h.hexdigest()
