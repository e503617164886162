"""Generate evals/corpus/search/ and evals/corpus/listing/: real grep, rg, find, ls and tree runs.

    python evals/gen_search_corpus.py            # run every case, write output.txt + meta.json
    python evals/gen_search_corpus.py --measure  # census coverage vs truth and tokens, per case

Each case is one command run by the real tool (GNU grep, ripgrep, GNU find, GNU ls, tree) on a
real tree: the repository's own fixtures, and a small web project stored beside the cases
(`search/_web/`: a package.json, its package-lock.json, and minified files from the npm
packages it names, the long lines that made a 13k-token grep result in the recorded sessions).
Truth never comes from our parsers: it is a separate run of the same tool in its structured
form — `grep … -Z` (the path ends with a NUL: a trivial split), `rg --json` (match events with
path and line number), `rg -0`, `find -print0`, `find -printf '%h %f %y'` for what ls lists
(name and kind, the NUL-separated form of what `ls --quoting-style=literal -1A` and `stat`
say), and `tree -J`.  The stored run is made twice and must be byte-identical (the tree is
not changing under it; rg's, which searches on several threads, in the same lines in any order).
`held_out` cases were generated and scored, never looked at while the
profiles were written.

Meta follows evals/corpus/README.md (the shared REQUIRED_META; the test-runner truth keys are
present and empty: a search finds no failing test) plus, in truth, `matches` ["file:line"] (line
empty when the search printed none, file empty when it printed no path),
`files`, `paths`, `counts` {file: n}, `names` {dir: [{name, type}]}, `report` (tree's own).
`CASES` (with `.key`) is what evals/gen_corpus.py's case list needs to include them.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "evals" / "corpus"
WEB = "evals/corpus/search/_web"
FX = "evals/fixtures"

# The web project: what `npm pack` brings for these packages (the files listed are kept, nothing else).
WEB_PACKAGES = {"dayjs@1.11.13": ["dayjs.min.js", "plugin/relativeTime.js", "plugin/utc.js", "plugin/duration.js",
                                  "locale/de.js", "locale/fr.js", "locale/es.js", "locale/ja.js", "locale/pt-br.js"],
                "js-cookie@3.0.5": ["dist/js.cookie.min.js"]}


@dataclasses.dataclass(frozen=True)
class Case:
    family: str  # "search" or "listing"
    name: str
    cwd: str  # relative to the repository root
    command: str
    truth: str  # how truth is taken: grep-z, rg-json, rg-files, find0, ls, ls-r, tree-json
    note: str = ""
    held_out: bool = False

    @property
    def key(self) -> str:
        return f"{self.family}/{self.name}"


CASES: list[Case] = [
    Case("search", "grep_rn", f"{FX}/py_toolz", "grep -rn import toolz", "grep-z"),
    Case("search", "grep_r_plain", f"{FX}/py_billing", "grep -r 'def ' .", "grep-z",
         note="no line numbers: path:text"),
    Case("search", "grep_context", f"{FX}/py_inflection", "grep -rn -C2 'return ' inflection", "grep-z",
         note="context lines (path-N-text) and -- separators"),
    Case("search", "grep_l", FX, "grep -rl 'describe(' --include=*.js --include=*.ts .", "grep-z"),
    Case("search", "grep_c", f"{FX}/py_toolz", "grep -rc 'return' toolz", "grep-z"),
    Case("search", "grep_minified", WEB, "grep -rn 'function' vendor", "grep-z",
         note="minified one-line files: every match is a line of thousands of characters"),
    Case("search", "grep_lockfile", WEB, "grep -n integrity package-lock.json", "grep-z",
         note="one file: line:text, no path"),
    Case("search", "rg_default", f"{FX}/ts_ledger", "rg 'export' src test", "rg-json",
         note="rg piped: path:text, no line numbers"),
    Case("search", "rg_n", f"{FX}/go_textkit", "rg -n 'func ' .", "rg-json"),
    Case("search", "rg_heading", f"{FX}/rs_roman", "rg --heading -n 'fn ' .", "rg-json"),
    Case("search", "rg_minified", WEB, "rg -n 'return' vendor package-lock.json", "rg-json"),
    Case("search", "rg_files_with_matches", FX, "rg -l 'TODO|FIXME|assert'", "rg-files"),
    Case("search", "find_name", FX, "find . -name '*.py' -not -path '*/node_modules/*'", "find0"),
    Case("search", "find_type_d", FX, "find go_textkit rs_roman ts_workspace -type d", "find0"),
    Case("search", "heldout_grep_B", f"{FX}/py_shapes", "grep -rn -B1 'assert' .", "grep-z", held_out=True),
    Case("search", "heldout_rg_java", f"{FX}/java_cart", "rg -n 'public' src", "rg-json", held_out=True),
    Case("search", "heldout_find_all", f"{FX}/ex_cart", "find . -not -path './_build*' -not -path './deps*'", "find0",
         held_out=True),
    Case("listing", "ls_la", f"{FX}/py_toolz", "ls -la toolz", "ls"),
    Case("listing", "ls_plain", FX, "ls", "ls"),
    Case("listing", "ls_columns", ".", "ls -C reflex/digest/profiles", "ls",
         note="columns (-C): many names a line"),
    Case("listing", "ls_F", f"{FX}/ts_workspace", "ls -F . packages", "ls-r", note="two operands: two sections"),
    Case("listing", "ls_laR", f"{FX}/go_textkit", "ls -laR", "ls-r"),
    Case("listing", "tree", f"{FX}/ts_workspace", "tree -I node_modules", "tree-json"),
    Case("listing", "tree_deep", FX, "tree -L 3 -I 'node_modules|target|_build|deps|build|classes' .", "tree-json"),
    Case("listing", "heldout_ls_lah", f"{FX}/rs_roman", "ls -lah src tests", "ls-r", held_out=True),
    Case("listing", "heldout_tree_F", f"{FX}/py_billing", "tree -F -I node_modules", "tree-json", held_out=True),
]


def sh(command: str, cwd: Path) -> tuple[bytes, int]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "HOME": "/tmp"}
    p = subprocess.run(["bash", "-c", command + " 2>&1"], cwd=cwd, env=env, capture_output=True, check=False)
    return p.stdout, p.returncode


def with_flag(command: str, tool: str, flag: str) -> str:
    """`command` with `flag` right after `tool` (its first word)."""
    words = shlex.split(command)
    assert words[0] == tool, command
    return shlex.join([tool, flag] + words[1:])


def empty_truth() -> dict:
    return {"failed": [], "failed_count": 0, "passed_count": 0, "error_count": 0, "skipped_count": 0, "errors": [],
            "diagnostics": [], "collection_errors": []}


def truth_grep(case: Case, cwd: Path) -> tuple[dict, str]:
    cmd = with_flag(case.command, "grep", "-Z")
    raw, _ = sh(cmd, cwd)
    words = shlex.split(case.command)
    shorts = "".join(w[1:] for w in words[1:] if w.startswith("-") and not w.startswith("--"))
    numbered, files_only, counts = "n" in shorts, "l" in shorts, "c" in shorts
    t = empty_truth()
    matches, files, per_file = [], set(), {}
    for line in raw.decode("utf-8", "replace").split("\n"):
        if not line:
            continue
        if "\0" not in line:  # single file: no path printed even with -Z
            if line == "--":
                continue
            path = None
            rest = line
        else:
            path, rest = line.split("\0", 1)
        if files_only:
            files.add(path)
            continue
        if counts:
            per_file[path or "(input)"] = int(rest)
            continue
        if numbered:
            num, sep = "", ""
            for k, ch in enumerate(rest):
                if ch.isdigit():
                    continue
                num, sep = rest[:k], ch
                break
            if sep != ":":
                continue  # a context line (N-text)
            matches.append(f"{path or ''}:{num}")
        else:
            matches.append(f"{path or ''}:")
        if path is not None:
            files.add(path)
    if files_only:
        t["paths"] = sorted(files)
    elif counts:
        t["counts"] = per_file
    else:
        t["matches"] = matches
        t["files"] = sorted(files)
    return t, cmd


def truth_rg(case: Case, cwd: Path) -> tuple[dict, str]:
    cmd = with_flag(case.command, "rg", "--json")
    raw, _ = sh(cmd, cwd)
    t = empty_truth()
    numbered = "-n" in shlex.split(case.command)
    matches, files = [], set()
    for line in raw.decode("utf-8").splitlines():
        ev = json.loads(line)
        if ev["type"] != "match":
            continue
        path = ev["data"]["path"].get("text")
        matches.append(f"{path}:{ev['data']['line_number'] if numbered else ''}")
        files.add(path)
    t["matches"] = matches
    t["files"] = sorted(files)
    return t, cmd


def truth_rg_files(case: Case, cwd: Path) -> tuple[dict, str]:
    cmd = with_flag(case.command, "rg", "-0")
    raw, _ = sh(cmd, cwd)
    t = empty_truth()
    t["paths"] = sorted(p for p in raw.decode("utf-8").split("\0") if p.strip("\n"))
    return t, cmd


def truth_find(case: Case, cwd: Path) -> tuple[dict, str]:
    cmd = case.command + " -print0"
    raw, _ = sh(cmd, cwd)
    t = empty_truth()
    t["paths"] = sorted(p for p in raw.decode("utf-8").split("\0") if p)
    return t, cmd


_FIND_TYPES = {"d": "directory", "f": "file", "l": "link"}


def ls_operands(command: str) -> tuple[list[str], bool, bool]:
    words = shlex.split(command)[1:]
    flags = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
    return [w for w in words if not w.startswith("-")] or ["."], "a" in flags or "A" in flags, "R" in flags


def truth_ls(case: Case, cwd: Path) -> tuple[dict, str]:
    """Names and kinds of what ls lists, per directory listed: find's NUL-separated `%h %f %y`."""
    operands, hidden, recursive = ls_operands(case.command)
    depth = "" if recursive else "-maxdepth 1"
    hide = "" if hidden else r"-not -path '*/.*'"
    cmds = [f"find {shlex.quote(op)} -mindepth 1 {depth} {hide} -printf '%h\\0%f\\0%y\\0'" for op in operands]
    names: dict[str, list[dict]] = {}
    for cmd in cmds:
        raw, code = sh(cmd, cwd)
        assert code == 0, (cmd, raw)
        parts = raw.decode("utf-8").split("\0")[:-1]
        for h, f, y in zip(parts[0::3], parts[1::3], parts[2::3]):
            names.setdefault(h, []).append({"name": f, "type": _FIND_TYPES.get(y, "other")})
    for v in names.values():
        v.sort(key=lambda e: e["name"])
    t = empty_truth()
    t["names"] = names
    return t, " ; ".join(cmds)


def truth_tree(case: Case, cwd: Path) -> tuple[dict, str]:
    cmd = with_flag(case.command, "tree", "-J")
    raw, _ = sh(cmd, cwd)
    doc = json.loads(raw)
    names: dict[str, list[dict]] = {}
    report = {}

    def walk(node: dict, parent: str) -> None:
        for child in node.get("contents", []):
            names.setdefault(parent, []).append({"name": child["name"], "type": child["type"]})
            if child["type"] == "directory":
                walk(child, parent.rstrip("/") + "/" + child["name"])

    for top in doc:
        if top["type"] == "report":
            report = {k: v for k, v in top.items() if k != "type"}
        else:
            walk(top, top["name"])
    t = empty_truth()
    t["names"] = names
    t["report"] = report
    return t, cmd


TRUTH = {"grep-z": truth_grep, "rg-json": truth_rg, "rg-files": truth_rg_files, "find0": truth_find,
         "ls": truth_ls, "ls-r": truth_ls, "tree-json": truth_tree}
TRUTH_SOURCE = {"grep-z": "grep -Z (NUL after the path) of the same command",
                "rg-json": "rg --json of the same command (match events)",
                "rg-files": "rg -0 of the same command", "find0": "find -print0 of the same command",
                "ls": "find -mindepth 1 -maxdepth 1 -printf '%h\\0%f\\0%y\\0' on each operand",
                "ls-r": "find -mindepth 1 [-maxdepth 1] -printf '%h\\0%f\\0%y\\0' on each operand",
                "tree-json": "tree -J of the same command"}


def tool_version(case: Case) -> str:
    word = shlex.split(case.command)[0]
    out = subprocess.run([word, "--version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0].strip() if out else word


def make_web() -> None:
    """The web project under search/_web: package.json, its lock file, the packed packages' files."""
    web = ROOT / WEB
    if (web / "package-lock.json").exists():
        return
    vendor = web / "vendor"
    vendor.mkdir(parents=True, exist_ok=True)
    tmp = Path("/tmp/ctx-gen-web")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    deps = {}
    for spec, keep in WEB_PACKAGES.items():
        name, version = spec.rsplit("@", 1)
        deps[name] = "^" + version
        tgz = subprocess.run(["npm", "pack", spec, "--silent"], cwd=tmp, capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()[-1]
        subprocess.run(["tar", "xzf", tgz], cwd=tmp, check=True)
        for rel in keep:
            dst = vendor / name / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(tmp / "package" / rel, dst)
        shutil.rmtree(tmp / "package")
    (web / "package.json").write_text(json.dumps({"name": "web-shop-dates", "version": "1.0.0", "private": True,
                                                  "dependencies": deps}, indent=2) + "\n")
    subprocess.run(["npm", "install", "--package-lock-only", "--ignore-scripts", "--silent"], cwd=web, check=True)


def generate(cases: list[Case]) -> None:
    make_web()
    for case in cases:
        cwd = ROOT / case.cwd
        raw, code = sh(case.command, cwd)
        again, _ = sh(case.command, cwd)
        # rg searches files on several threads: its order may differ between runs, its lines may not.
        same = sorted(raw.split(b"\n")) == sorted(again.split(b"\n")) if case.truth.startswith("rg") else raw == again
        assert same, f"{case.key}: two runs differ (the tree changed under it)"
        assert code == 0 and raw, (case.key, code, raw[:200])
        truth, truth_cmd = TRUTH[case.truth](case, cwd)
        out = CORPUS / case.family / case.name
        out.mkdir(parents=True, exist_ok=True)
        (out / "output.txt").write_bytes(raw)
        meta = {"family": case.family, "case": case.name, "command": case.command, "cwd": case.cwd,
                "exit_code": code, "tool": shlex.split(case.command)[0], "tool_version": tool_version(case),
                "truth": truth, "truth_source": TRUTH_SOURCE[case.truth], "truth_command": truth_cmd,
                "note": case.note, "output_bytes": len(raw), "output_sha256": hashlib.sha256(raw).hexdigest(),
                "nondeterministic": case.family == "listing", "held_out": case.held_out}
        (out / "meta.json").write_text(json.dumps(meta, ensure_ascii=False) + "\n")
        print(f"{case.key}: {len(raw)} bytes, exit {code}")


# ---------------------------------------------------------------- measuring


def expected_items(meta: dict) -> list[tuple[str, str]]:
    """(group-ish, entry) pairs the census must name, from the truth alone."""
    t = meta["truth"]
    if "matches" in t:
        pairs = [m.rsplit(":", 1) for m in t["matches"]]
        return [(file, f"L{line}" if line else "") for file, line in pairs]
    if "paths" in t:
        return [(os.path.dirname(p.rstrip("/")), os.path.basename(p.rstrip("/")) or p) for p in t["paths"]]
    if "counts" in t:
        return [(p, str(n)) for p, n in t["counts"].items()]
    return [(d, e["name"]) for d, entries in t["names"].items() for e in entries]


def facts_coverage(meta: dict, facts) -> float:
    """Share of the truth's entries that a parsed item names (its group and its text)."""
    want = expected_items(meta)
    if not want:
        return 1.0
    have = [(it.group, it.text) for it in facts.items]
    found = 0
    for group, entry in want:
        g = group.rstrip("/") or "."
        if any((not group or it_g.rstrip("/") in (g, "./" + g, g.removeprefix("./")) or it_g.rstrip("/").endswith("/" + g)
                or g.endswith(it_g.rstrip("/")) or it_g in ("names", "dirs", "files", "links", "other", "counts",
                                                             "no match", "matches"))
               and (text == entry or text.startswith((entry + ":", entry + " ", entry + "/", entry + "@"))
                    or (entry and text.endswith(entry)) or (not entry and text))
               for it_g, text in have):
            found += 1
    return found / len(want)


def measure() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", "/work/shared/tiktoken")
    from blake3 import blake3

    from reflex.digest import DENSITIES, build_digest
    from reflex.digest import profiles as registry
    from reflex.digest.profiles import listing, search

    profile = {"search": search.PROFILE, "listing": listing.PROFILE}
    print(f"{'case':34} {'facts cov':>9} " + " ".join(f"{d:>16}" for d in DENSITIES))
    for case in CASES:
        case_dir = CORPUS / case.family / case.name
        meta = json.loads((case_dir / "meta.json").read_text())
        raw = (case_dir / "output.txt").read_bytes()
        facts = profile[case.family].extract(raw, meta["exit_code"], meta["command"])
        cov = facts_coverage(meta, facts)
        cells = []
        # Until the families are wired to these profiles in the registry, they are looked up by name.
        registry.PROFILES.setdefault(case.family, profile[case.family])
        for d in DENSITIES:
            dg = build_digest(raw, family=case.family, exit_code=meta["exit_code"], command=meta["command"],
                              handle="r:" + blake3(raw).hexdigest()[:12], density=d)
            cells.append(f"{dg.tokens:>6}/{dg.raw_tokens:<6}{'P' if dg.passthrough else ' '}{'T' if dg.truncated else ' '}")
        print(f"{case.key + (' (held out)' if case.held_out else ''):34} {cov:9.0%} " + " ".join(f"{c:>16}" for c in cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--measure", action="store_true", help="print coverage and tokens of the stored cases")
    ap.add_argument("cases", nargs="*", help="family/name of the cases to run (default: all)")
    args = ap.parse_args()
    if args.measure:
        measure()
        return
    cases = [c for c in CASES if not args.cases or c.key in args.cases]
    generate(cases)


if __name__ == "__main__":
    main()
