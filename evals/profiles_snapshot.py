"""A fingerprint of what every digest profile does with the corpus, for refactors that must not change a byte.

Run it before and after a change to reflex/digest/profiles/ and compare the two files: equal files
mean the change kept every digest and every profile's Facts as they were.  It records, for every
case of evals/corpus/*/*/:

- `digests`: the digest the case's own command selects (as `ctx run` does), at every density in
  reflex.digest.DENSITIES: sha256 of its text and its token count;
- `facts`: sha256 of the Facts each registered profile extracts, for the whole output, its first
  half and its last half (cut on a line boundary), so that hand-overs and "run did not finish"
  paths are held too, not only the profile each case selects;
- `detect`: which profiles' `detect` claim the output, and what `sniff` (npm scripts) picks.

Usage: python -m evals.profiles_snapshot OUT.json   (compare: cmp before.json after.json)
"""

from __future__ import annotations

import hashlib
import json
import sys

from reflex.digest import DENSITIES
from reflex.digest.profiles import PROFILES, sniff
from reflex.digest.text import Output
from tests.support.corpus import CASES, case_id, digest_of, load


def _sha(data: str) -> str:
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _halves(raw: bytes) -> dict[str, bytes]:
    cut = raw.rfind(b"\n", 0, len(raw) // 2) + 1
    return {"whole": raw, "head": raw[:cut], "tail": raw[cut:]}


def snapshot() -> dict[str, dict]:
    result: dict[str, dict] = {}
    for path in CASES:
        meta, raw = load(path)
        case: dict[str, dict] = {"digests": {}, "facts": {}, "detect": {}}
        for density in DENSITIES:
            d = digest_of(meta, raw, density)
            case["digests"][density] = {"sha256": _sha(d.text), "tokens": d.tokens}
        for part, data in _halves(raw).items():
            for name, profile in PROFILES.items():
                facts = profile.extract(data, meta["exit_code"], meta["command"])
                case["facts"][f"{part}/{name}"] = _sha(facts.model_dump_json())
            out = Output.of(data)
            case["detect"][part] = {"claims": sorted(n for n, p in PROFILES.items() if p.detect(out)),
                                    "sniff": sniff(data).name}
        result[case_id(path)] = case
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    with open(argv[0], "w") as f:
        json.dump(snapshot(), f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
