"""The digest corpus (evals/corpus/<tool>/<case>/) and the census grammar digests are read
back with, shared by tests/digest/test_digest_corpus.py and evals/bench_digest.py.

The grammar is the one reflex/digest/census.py documents:

- failures: `FAIL <id> …` / `ERROR <id> …`; parametrized cases of one test may
  share a line as `FAIL file::test[p1] [p2] …`;
- diagnostics, by file: a file line, then `  line:col [code] message` lines;
  by code: `CODE ×n: message`, then `  file:line:col line:col …` lines;
  codes only: `codes: CODE ×n, …` plus a `[ctx] locations of N diagnostics
  not listed` line;
- omissions: `[ctx] N more <things> not listed: ctx get …`.
"""

import glob
import json
import os
import re

from blake3 import blake3

from reflex.digest import build_digest, family_of_command

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = sorted(glob.glob(os.path.join(REPO, "evals", "corpus", "*", "*", "meta.json")))


def load(meta_path):
    meta = json.load(open(meta_path))
    raw = open(os.path.join(os.path.dirname(meta_path), "output.txt"), "rb").read()
    return meta, raw


def family_of(meta):
    """The family the hook would give the case's command: the profile is chosen as in ctx run."""
    return family_of_command(meta["command"])


def digest_of(meta, raw, density, budget=None):
    handle = "r:" + blake3(raw).hexdigest()[:12]
    return build_digest(raw, family=family_of(meta), exit_code=meta["exit_code"],
                        command=meta["command"], handle=handle, density=density, budget=budget,
                        cwd=recorded_cwd(meta))


def recorded_cwd(meta):
    """The directory the case's command ran in when it was recorded: the tool printed absolute
    paths under it, and a digest shows paths under its cwd relative.  Reading them against this
    clone's path instead would make every figure depend on where the repository is checked out."""
    return os.path.join(meta.get("recorded_root") or REPO, meta["cwd"])


def case_id(p):
    return "/".join(p.split(os.sep)[-3:-1])


_OMITTED = re.compile(r"^\[ctx\] (\d+) more (.+?) not listed: ctx get ")


def omitted(text):
    return {m.group(2): int(m.group(1)) for m in map(_OMITTED.match, text.split("\n")) if m}


def failure_lines(text):
    return [s for s in text.split("\n") if s.startswith("FAIL ") or s.startswith("ERROR ")]


DATA_SET = " with data set "


def listed(test_id, lines):
    """The id on a census line, literally or as a grouped parametrized case: pytest's
    `FAIL f::t[a] [b]`, PHPUnit's `FAIL C::t with data set "a" "b" #0`."""
    for s in lines:
        if test_id in s:
            return True
        # The names end where the location starts (` (line N)`, ` (file:N)`); an id may hold ` (` itself
        # (a CI matrix job `test (tb-line) > f::t[a]`).
        names = re.split(r" \((?:line \d+|[^()\s]+:\d+)\)", s)[0] + " "
        if test_id.endswith("]") and "[" in test_id:
            base, param = test_id[: test_id.index("[")], test_id[test_id.index("[") :]
            if (" " + base + "[") in s and (" " + param) in names:
                return True
        if DATA_SET in test_id:
            base, param = test_id.split(DATA_SET, 1)
            if (" " + base + DATA_SET) in s and (" " + param + " ") in names:
                return True
    return False


def diagnostic_locations(text):
    """(file, line, col, key) tuples named by a by-file or by-code census, and the codes-only counts."""
    found, codes = set(), {}
    file = None
    code = None
    for s in text.split("\n"):
        m = re.match(r"^codes: (.+)$", s)
        if m:
            for part in m.group(1).split(", "):
                k, n = part.rsplit(" ×", 1)
                codes[k] = int(n)
            continue
        m = re.match(r"^(\S+)(?: \((\w+)\))? ×(\d+): ", s)
        if m:
            code, file = m.group(1), None
            continue
        if s.startswith("  ") and code is not None and not s.startswith("  ctx get"):
            for tok in s.split():
                parts = tok.split(":")
                if len(parts) >= 2 and not parts[-1].isdigit():
                    continue
                if len(parts) == 3 or (len(parts) == 2 and not parts[0].isdigit()):
                    file, nums = parts[0], parts[1:]
                else:
                    nums = parts
                if file is not None and all(x.isdigit() for x in nums):
                    found.add((file, int(nums[0]), int(nums[1]) if len(nums) > 1 else None, code))
            continue
        if s and not s.startswith(" ") and not s.startswith("[ctx]") and not re.match(r"^(FAIL|ERROR|note:|codes:)", s):
            file, code = s.strip(), None
            continue
        m = re.match(r"^  (\d+)(?::(\d+))?(?: (.*))?$", s)
        if m and file is not None and code is None:
            found.add((file, int(m.group(1)), int(m.group(2)) if m.group(2) else None, m.group(3) or ""))
    return found, codes


def diagnostic_listed(d, found):
    key = d["code"] or d["severity"]
    for file, line, col, rest in found:
        if not (file.endswith(d["file"]) or d["file"].endswith(file)):
            continue
        if line != d["line"] or (col is not None and col != d["col"]):
            continue
        if rest == key or (d["code"] is None or (" " + d["code"] + " ") in " " + rest + " "):
            return True
    return False


def codes_stated(diagnostics, text):
    """For an output that prints codes and counts only (ruff --statistics, biome's summary): the
    codes the digest does not state. A code is stated as `CODE ×n` or `n CODE`, or, for findings
    the output lists by file without a count (biome's "files have parsing errors"), as the code on
    a line that names each of their files."""
    want, files = {}, {}
    for d in diagnostics:
        want[d["code"]] = want.get(d["code"], 0) + 1
        files.setdefault(d["code"], set()).add(d["file"])
    lines = text.split("\n")
    missing = []
    for code, n in want.items():
        if re.search(rf"(?<![\w/]){re.escape(code)} ×{n}\b|\b{n}\s+{re.escape(code)}(?![\w/])", text):
            continue
        if any(re.search(rf"(?<![\w/]){re.escape(code)}(?![\w/])", s) and all(f and f in s for f in files[code])
               for s in lines):
            continue
        missing.append((code, n))
    return missing

