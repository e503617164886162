"""Regenerate evals/corpus/git/: real git output on small real repositories, with truth from git's
structured forms.

Every case builds a small Python project ("shop": a package, tests, a ruff config) in a fresh
repository under /tmp/ctx-git-corpus/<case>/ (a bare repository beside it as `origin`: push and
pull stay on this machine), brings it to a state (commits, edits, a conflict, hooks), runs one
command through bash with stdout and stderr merged (`cmd 2>&1`, as `ctx run` captures it) and
stores the bytes.  Author, committer and dates are fixed, so commit hashes are the same on every
run.  Truth never comes from parsing those bytes: it comes from git's machine forms run on the
same repository (or on a rebuild of the same state when the command changed it):

    status        git status --porcelain=v2 --branch
    diff / show   git diff --numstat -z (same arguments), git show --numstat -z --format=
    log           git log --format=%H%x00%s (same range)
    commit        git rev-parse HEAD and git log -1 --format=%s after it; the hooks: each hook of
                  the pre-commit config run alone on a rebuild (`pre-commit run <id>`, its exit
                  code), ruff's `--output-format json`, pytest's `--junitxml`
    push          git ls-remote origin before and after
    pull          git rev-parse / git diff --numstat -z ORIG_HEAD HEAD, conflicts from porcelain v2
    checkout      git symbolic-ref HEAD after; the paths a checkout refused from
                  git diff --name-only -z (local changes) and git diff --name-only -z HEAD <target>

    python evals/gen_git_corpus.py            # every case
    python evals/gen_git_corpus.py --only status_mixed

Needs git, and pre-commit, ruff and pytest on PATH (the venv: `pip install pre-commit ruff`).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "evals" / "corpus" / "git"
BASE = Path("/tmp/ctx-git-corpus")
VENV_BIN = Path(sys.prefix) / "bin"
DATE0 = 1_767_225_600  # 2026-01-01T00:00:00Z: every commit a minute after the one before

# -- the project -----------------------------------------------------------------------------------------

CART = '''"""A shopping cart priced in cents."""

from shop.money import cents


class Cart:
    def __init__(self):
        self.lines = []

    def add(self, sku, price, qty=1):
        if qty <= 0:
            raise ValueError("quantity must be positive")
        self.lines.append((sku, cents(price), qty))

    def subtotal(self):
        return sum(price * qty for _, price, qty in self.lines)

    def total(self, code=None):
        amount = self.subtotal()
        if code == "TEN":
            amount -= amount // 10
        return amount
'''

MONEY = '''"""Money helpers."""


def cents(value):
    """Whole cents from an int or a decimal string ("12.50")."""
    if isinstance(value, int):
        return value
    whole, _, frac = str(value).partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


def format_cents(amount):
    return f"{amount // 100}.{amount % 100:02d}"
'''

TESTS = '''from shop.cart import Cart
from shop.money import cents, format_cents


def test_cents_from_string():
    assert cents("12.50") == 1250


def test_cents_from_int():
    assert cents(300) == 300


def test_format():
    assert format_cents(1205) == "12.05"


def test_subtotal():
    c = Cart()
    c.add("apple", 120, 3)
    c.add("pear", "0.99")
    assert c.subtotal() == 459


def test_ten_off():
    c = Cart()
    c.add("apple", 1000)
    assert c.total("TEN") == 900


def test_rejects_zero_quantity():
    c = Cart()
    try:
        c.add("apple", 100, 0)
    except ValueError:
        return
    raise AssertionError("no error")
'''

PYPROJECT = '''[project]
name = "shop"
version = "0.1.0"

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]

[tool.ruff]
line-length = 100

[tool.ruff.lint]
select = ["E", "F", "W"]
'''

README = "# shop\n\nA small cart.\n\n    pytest\n"
GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n.ruff_cache/\n"

PRE_COMMIT_CONFIG = r'''repos:
- repo: local
  hooks:
  - id: ruff
    name: ruff check
    entry: ruff check --no-cache
    language: system
    types: [python]
  - id: no-print
    name: no print statements
    entry: '^\s*print\('
    language: pygrep
    types: [python]
    exclude: ^tests/
  - id: check-json
    name: check json
    entry: python -m json.tool
    language: system
    files: \.json$
  - id: pytest
    name: pytest
    entry: pytest -q -p no:cacheprovider
    language: system
    pass_filenames: false
    always_run: true
'''
HOOK_IDS = ("ruff", "no-print", "check-json", "pytest")


class Repo:
    """A working repository at BASE/<case>/work with its bare `origin` at BASE/<case>/origin.git."""

    def __init__(self, case: str, home: Path):
        self.root = BASE / case
        shutil.rmtree(self.root, ignore_errors=True)
        self.work = self.root / "work"
        self.origin = self.root / "origin.git"
        self.work.mkdir(parents=True)
        self.tick = 0
        self.env = {
            "PATH": os.pathsep.join([str(VENV_BIN), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(home), "LANG": "C.UTF-8", "TERM": "dumb", "TZ": "UTC",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Ada Dev", "GIT_AUTHOR_EMAIL": "ada@example.com",
            "GIT_COMMITTER_NAME": "Ada Dev", "GIT_COMMITTER_EMAIL": "ada@example.com",
            "PRE_COMMIT_HOME": str(home / "pre-commit"), "PYTHONDONTWRITEBYTECODE": "1",
            "TMPDIR": str(home / "tmp"),
        }
        self.sh(f"git init -q --bare -b main {self.origin}", cwd=self.root)
        self.sh("git init -q -b main . && git config advice.detachedHead true && "
                f"git remote add origin {self.origin}")
        self._date()

    def _date(self) -> None:
        stamp = f"{DATE0 + 60 * self.tick} +0000"
        self.env["GIT_AUTHOR_DATE"] = self.env["GIT_COMMITTER_DATE"] = stamp

    def sh(self, cmd: str, cwd: Path | None = None, check: bool = True) -> tuple[bytes, int]:
        p = subprocess.run(["bash", "-c", cmd], cwd=cwd or self.work, env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300, check=False)
        if check and p.returncode != 0:
            raise RuntimeError(f"{cmd}: exit {p.returncode}\n{p.stdout.decode(errors='replace')}")
        return p.stdout, p.returncode

    def out(self, cmd: str) -> str:
        return self.sh(cmd)[0].decode()

    def write(self, files: dict[str, str | bytes]) -> None:
        for name, text in files.items():
            p = self.work / name
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                p.write_bytes(text)
            else:
                p.write_text(text)

    def commit(self, message: str, files: dict[str, str | bytes] | None = None) -> None:
        if files:
            self.write(files)
        self.tick += 1
        self._date()
        self.sh(f"git add -A && git commit -q -m {q(message)}")

    def next_tick(self) -> None:
        """The recorded command's own commit gets the next minute."""
        self.tick += 1
        self._date()


def q(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def project(r: Repo, pushed: bool = True) -> None:
    """The shop project in three commits, pushed to origin."""
    r.commit("Initial project layout", {"README.md": README, ".gitignore": GITIGNORE, "pyproject.toml": PYPROJECT,
                                         "src/shop/__init__.py": ""})
    r.commit("Add money helpers", {"src/shop/money.py": MONEY})
    r.commit("Add the cart and its tests", {"src/shop/cart.py": CART, "tests/test_cart.py": TESTS})
    if pushed:
        r.sh("git push -q -u origin main")


# -- truth from git's machine forms ----------------------------------------------------------------------------


def empty_truth() -> dict:
    return {"failed": [], "failed_count": 0, "passed_count": 0, "skipped_count": 0, "errors": [], "error_count": 0,
            "diagnostics": [], "collection_errors": []}


def finish(t: dict) -> dict:
    t["failed"] = sorted(set(t["failed"]))
    t["failed_count"] = len(t["failed"])
    t["errors"] = sorted(set(t["errors"]))
    t["error_count"] = len(t["errors"]) + sum(1 for d in t["diagnostics"] if d["severity"] == "error")
    return t


def status_truth(r: Repo) -> dict:
    """`git status --porcelain=v2 --branch`: branch, ahead/behind, every path by the census group it
    belongs to ("staged", "modified", "deleted", "typechange", "untracked", "conflicted")."""
    git: dict = {"branch": None, "ahead": None, "behind": None, "paths": []}
    for line in r.out("git status --porcelain=v2 --branch --untracked-files=all").splitlines():
        if line.startswith("# branch.head "):
            git["branch"] = line.split(" ", 2)[2]
        elif line.startswith("# branch.ab "):
            a, b = line.split(" ")[2:4]
            git["ahead"], git["behind"] = int(a), -int(b)
        elif line[:2] in ("1 ", "2 "):
            fields = line.split(" ", 9 if line[0] == "2" else 8)
            xy, path = fields[1], fields[-1]
            if line[0] == "2":
                path, orig = path.split("\t")
                path = f"{orig} -> {path}"
            if xy[0] != ".":
                git["paths"].append({"group": "staged", "path": path, "xy": xy})
            if xy[1] != ".":
                group = {"M": "modified", "D": "deleted", "T": "typechange"}[xy[1]]
                git["paths"].append({"group": group, "path": path.split(" -> ")[-1], "xy": xy})
        elif line.startswith("u "):
            git["paths"].append({"group": "conflicted", "path": line.split(" ", 10)[10], "xy": line[2:4]})
        elif line.startswith("? "):
            git["paths"].append({"group": "untracked", "path": line[2:]})
    return git


def numstat(r: Repo, args: str) -> list[dict]:
    """`git <args> --numstat -z`: one entry per file, renames as `old -> new`, binary as None."""
    raw = r.sh(f"git {args} --numstat -z")[0].decode()
    parts = raw.split("\0")
    files = []
    k = 0
    while k < len(parts):
        rec = parts[k].lstrip("\n")
        if not rec:
            k += 1
            continue
        added, deleted, path = rec.split("\t", 2)
        if path == "":  # a rename: the next two fields are the old and the new path
            path = f"{parts[k + 1]} -> {parts[k + 2]}"
            k += 2
        files.append({"path": path, "added": None if added == "-" else int(added),
                      "deleted": None if deleted == "-" else int(deleted)})
        k += 1
    return files


def log_truth(r: Repo, args: str) -> list[dict]:
    out = r.out(f"git log --format=%H%x00%s {args}")
    return [dict(zip(("hash", "subject"), line.split("\0", 1))) for line in out.splitlines() if line]


def head_commit(r: Repo) -> dict:
    h, subject = r.out("git log -1 --format=%H%x00%s").strip().split("\0", 1)
    return {"hash": h, "subject": subject}


def remote_refs(r: Repo) -> dict[str, str]:
    out = r.out(f"git ls-remote {r.origin}")
    return {ref.removeprefix("refs/heads/"): h for h, ref in (line.split("\t") for line in out.splitlines())
            if ref.startswith("refs/heads/")}


def pytest_truth(r: Repo, t: dict) -> None:
    """The project's tests as pytest's JUnit XML reports them (ids as pytest prints them)."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "junit.xml"
        r.sh(f"pytest -q -p no:cacheprovider -o junit_family=xunit1 --junitxml={xml}", check=False)
        for tc in ET.parse(xml).getroot().iter("testcase"):
            tid = f"{tc.get('file')}::{tc.get('name')}"
            if tc.find("failure") is not None or tc.find("error") is not None:
                t["failed"].append(tid)
            elif tc.find("skipped") is not None:
                t["skipped_count"] += 1
            else:
                t["passed_count"] += 1


def ruff_truth(r: Repo, t: dict, files: str = ".") -> None:
    out, _ = r.sh(f"ruff check --no-cache --output-format json {files}", check=False)
    for d in json.loads(out):
        t["diagnostics"].append({"file": os.path.relpath(d["filename"], r.work), "line": d["location"]["row"],
                                 "col": d["location"]["column"], "code": d["code"], "message": d["message"],
                                 "severity": "error"})


def hooks_truth(rebuild: Callable[[], Repo]) -> dict[str, int]:
    """Each pre-commit hook run alone, in the config's order, on a rebuild of the state the commit
    ran on (everything staged): hook id -> exit code."""
    r = rebuild()
    r.sh("git add -A")
    return {hid: r.sh(f"pre-commit run {hid}", check=False)[1] for hid in HOOK_IDS}


# -- cases ---------------------------------------------------------------------------------------------------


# (the repository after the command, its exit code, a rebuild of the state before it, what `before` read)
Truth = Callable[["Repo", int, Callable[[], "Repo"], "dict | None"], dict]


@dataclasses.dataclass
class GitCase:
    name: str
    setup: Callable[[Repo], None]
    command: str
    truth: Truth
    note: str = ""
    held_out: bool = False
    before: Callable[[Repo], dict] | None = None  # state read before the command (push: the remote's refs)


def s_status_clean(r: Repo) -> None:
    project(r)
    r.commit("Round totals down", {"src/shop/cart.py": CART.replace("amount // 10", "(amount * 10) // 100")})
    r.commit("Document the discount", {"README.md": README + "\nCode TEN takes 10% off.\n"})


def s_status_mixed(r: Repo) -> None:
    project(r)
    r.commit("Add a changelog", {"CHANGELOG.md": "# Changes\n", "docs/old-notes.md": "notes\n"})
    r.write({"src/shop/cart.py": CART.replace('"TEN"', '"TEN" or code == "10OFF"'),
             "src/shop/tax.py": "RATE = 20\n", "docs/api guide.md": "# API\n", "docs/café.md": "menu\n"})
    r.sh("git mv docs/old-notes.md docs/notes.md && git rm -q CHANGELOG.md && git add src/shop/tax.py src/shop/cart.py")
    r.write({"src/shop/cart.py": CART.replace('"TEN"', '"TEN" or code == "10OFF"') + "\n# TODO: codes table\n",
             "README.md": README + "\nMore.\n", "scratch/todo.txt": "x\n", "scratch/data.json": "{}\n"})
    (r.work / "src/shop/money.py").unlink()


def s_conflict(r: Repo) -> None:
    project(r)
    r.sh("git checkout -q -b feature")
    r.commit("Fifteen percent code", {"src/shop/cart.py": CART.replace('"TEN"', '"FIFTEEN"').replace("// 10", "* 15 // 100"),
                                      "README.md": README + "\nCode FIFTEEN.\n"})
    r.sh("git checkout -q main")
    r.commit("Twenty percent code", {"src/shop/cart.py": CART.replace('"TEN"', '"TWENTY"').replace("// 10", "// 5"),
                                     "README.md": README + "\nCode TWENTY.\n"})
    r.next_tick()
    r.sh("git merge feature", check=False)


def s_status_short(r: Repo) -> None:
    s_status_mixed(r)
    r.sh("git commit -q -m 'Rename notes' && git reset -q --soft HEAD~1")  # a local commit: ahead of origin


def s_worktree_diff(r: Repo) -> None:
    project(r)
    r.write({"src/shop/cart.py": CART.replace("    def subtotal(self):",
                                              "    def count(self):\n        return sum(q for _, _, q in self.lines)\n\n"
                                              "    def subtotal(self):").replace('"TEN"', '"TEN" or code == "10OFF"'),
             "src/shop/money.py": MONEY.replace('f"{amount // 100}', 'f"{amount // 100:,}'),
             "README.md": README.replace("A small cart.", "A small cart, priced in cents.")})


def s_staged_diff(r: Repo) -> None:
    project(r)
    r.write({"src/shop/tax.py": "RATE = 20\n\n\ndef with_tax(amount):\n    return amount * (100 + RATE) // 100\n",
             "tests/test_cart.py": TESTS + "\n\ndef test_with_tax():\n    from shop.tax import with_tax\n"
                                           "    assert with_tax(100) == 120\n"})
    r.sh("git rm -q README.md && git add -A")


def s_show_rename(r: Repo) -> None:
    project(r)
    r.sh("git mv src/shop/money.py src/shop/pricing.py")
    r.commit("Rename money to pricing", {"src/shop/cart.py": CART.replace("shop.money", "shop.pricing"),
                                         "tests/test_cart.py": TESTS.replace("shop.money", "shop.pricing")})


def s_log(r: Repo) -> None:
    project(r)
    for k in range(3):
        r.commit(f"Tweak the README ({k + 1})", {"README.md": README + f"\nRevision {k + 1}.\n"})


def s_log_graph(r: Repo) -> None:
    project(r)
    r.sh("git checkout -q -b feature")
    r.commit("Add a tax module", {"src/shop/tax.py": "RATE = 20\n"})
    r.commit("Use the tax rate", {"src/shop/cart.py": CART + "\n# tax applied at checkout\n"})
    r.sh("git checkout -q main")
    r.commit("Tidy the README", {"README.md": README + "\nTidy.\n"})
    r.next_tick()
    r.sh("git merge -q --no-edit feature")


def s_commit_plain(r: Repo) -> None:
    project(r)
    r.write({"src/shop/tax.py": "RATE = 20\n", "README.md": README + "\nTax: 20%.\n"})
    (r.work / "src/shop/__init__.py").unlink()
    r.next_tick()


def precommit(r: Repo, broken: bool) -> None:
    project(r)
    r.commit("Add the pre-commit config", {".pre-commit-config.yaml": PRE_COMMIT_CONFIG})
    r.sh("pre-commit install -q 2>/dev/null || pre-commit install >/dev/null")
    edits: dict[str, str | bytes] = {"src/shop/tax.py": "RATE = 20\n\n\ndef with_tax(amount):\n"
                                                        "    return amount * (100 + RATE) // 100\n",
                                     "data/rates.json": '{"standard": 20}\n'}
    if broken:
        edits["src/shop/tax.py"] = ("import os\nRATE = 20\n\n\ndef with_tax(amount):\n    print(amount)\n"
                                    "    return amount * (100 + RATE) // 100 + unknown\n")
        edits["src/shop/cart.py"] = CART.replace("amount // 10", "amount // 5")
    r.write(edits)
    r.next_tick()


def plain_hook(r: Repo, script: str, broken: bool) -> None:
    project(r)
    hook = r.work / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n" + script + "\n")
    hook.chmod(0o755)
    r.write({"src/shop/tax.py": "RATE = 20\n", "README.md": README + "\nTax.\n"})
    if broken:
        r.write({"src/shop/money.py": MONEY.replace("* 100 + int", "* 10 + int")})
    r.next_tick()


def s_push_rejected(r: Repo) -> None:
    project(r)
    other = r.root / "other"
    r.sh(f"git clone -q {r.origin} {other}")
    r.tick += 1
    r._date()
    r.sh("echo 'From another clone.' >> README.md && git commit -qam 'Note from elsewhere' && git push -q", cwd=other)
    r.commit("Local change", {"src/shop/tax.py": "RATE = 20\n"})


def s_push_branch(r: Repo) -> None:
    project(r)
    r.commit("Local work on main", {"src/shop/tax.py": "RATE = 20\n"})
    r.sh("git checkout -q -b feature/tax")
    r.commit("Tax on the feature branch", {"src/shop/tax.py": "RATE = 21\n"})


def s_pull_ff(r: Repo) -> None:
    project(r)
    other = r.root / "other"
    r.sh(f"git clone -q {r.origin} {other}")
    r.tick += 1
    r._date()
    r.sh("printf 'RATE = 20\\n' > src/shop/tax.py && echo 'Taxes.' >> README.md && git rm -q src/shop/__init__.py && "
         "git add -A && git commit -qm 'Add tax, drop the package init' && git push -q", cwd=other)
    r.sh("git config pull.rebase false")


def s_pull_conflict(r: Repo) -> None:
    project(r)
    other = r.root / "other"
    r.sh(f"git clone -q {r.origin} {other}")
    r.tick += 1
    r._date()
    r.sh("sed -i 's/\"TEN\"/\"TWENTY\"/' src/shop/cart.py && git commit -qam 'Twenty' && git push -q", cwd=other)
    r.commit("Fifteen", {"src/shop/cart.py": CART.replace('"TEN"', '"FIFTEEN"')})
    r.sh("git config pull.rebase false")
    r.next_tick()


def s_checkout_new(r: Repo) -> None:
    project(r)
    r.write({"README.md": README + "\nWork in progress.\n", "src/shop/tax.py": "RATE = 20\n"})
    r.sh("git add src/shop/tax.py")


def s_checkout_blocked(r: Repo) -> None:
    project(r)
    r.sh("git checkout -q -b feature")
    r.commit("Feature cart", {"src/shop/cart.py": CART.replace('"TEN"', '"FEATURE"'), "README.md": README + "\nF.\n"})
    r.sh("git checkout -q main")
    r.write({"src/shop/cart.py": CART + "\n# local edit\n", "README.md": README + "\nlocal\n"})


def s_diff_odd(r: Repo) -> None:
    """Bad input: a binary file, a non-UTF-8 file, one 40,000-character line."""
    project(r)
    r.commit("Add assets", {"assets/logo.png": bytes(range(256)) * 4, "data/latin1.txt": "caf\xe9\n".encode("latin-1"),
                            "data/big.min.js": "var a=1;\n"})
    r.write({"assets/logo.png": bytes(reversed(range(256))) * 4, "data/latin1.txt": "caf\xe9 cr\xe8me\n".encode("latin-1"),
             "data/big.min.js": "var a=[" + ",".join(str(k) for k in range(8000)) + "];\n"})


def module(k: int, rate: int) -> str:
    body = "".join(f"\n\ndef price_{k}_{m}(amount):\n    return amount * {rate + m} // 100\n" for m in range(8))
    return f'"""Region {k} prices."""\n\nREGION = {k}\n{body}'


def s_many(r: Repo) -> None:
    """30 region modules, each edited in two places, plus scratch files: a large diff and status."""
    project(r)
    r.commit("Add the region modules", {f"src/shop/regions/r{k:02d}.py": module(k, 10) for k in range(30)})
    edited = {}
    for k in range(30):
        text = module(k, 10).replace(f"REGION = {k}", f"REGION = {k}\nCURRENCY = 'EUR'")
        edited[f"src/shop/regions/r{k:02d}.py"] = text.replace(f"return amount * {10 + 7} // 100",
                                                               f"return round(amount * {10 + 7} / 100)")
    r.write(edited)
    r.write({f"scratch/notes-{k:02d}.txt": "x\n" for k in range(40)})


def s_log_long(r: Repo) -> None:
    project(r)
    for k in range(40):
        r.commit(f"Region {k}: adjust the rounding of prices (ticket SHOP-{100 + k})",
                 {f"src/shop/regions/r{k % 7}.py": module(k, k)})


def t_status(r: Repo, rc: int, _rebuild: Callable[[], Repo], _before: dict | None) -> dict:
    t = empty_truth()
    t["git"] = status_truth(r)
    if rc:
        t["errors"].append("status")
    return t


def t_diff(args: str) -> Truth:
    def truth(r: Repo, rc: int, _rebuild: Callable[[], Repo], _before: dict | None) -> dict:
        t = empty_truth()
        t["git"] = {"files": numstat(r, args)}
        return t

    return truth


def t_show(r: Repo, rc: int, _rebuild: Callable[[], Repo], _before: dict | None) -> dict:
    t = empty_truth()
    t["git"] = {"commits": [head_commit(r)], "files": numstat(r, "show --format= -M HEAD")}
    return t


def t_log(args: str) -> Truth:
    def truth(r: Repo, rc: int, _rebuild: Callable[[], Repo], _before: dict | None) -> dict:
        t = empty_truth()
        t["git"] = {"commits": log_truth(r, args)}
        return t

    return truth


def t_commit(hooks: str) -> Truth:
    """The commit (when it was made), and what its hooks found: "precommit" (the framework's config),
    "pytest" / "ruff" (a plain hook script running that tool), "" (no hook)."""

    def truth(r: Repo, rc: int, rebuild: Callable[[], Repo], _before: dict | None) -> dict:
        t = empty_truth()
        # the worktree after it: not printed by a commit, so not census truth (kept for reading the case)
        t["git"] = {"commits": [head_commit(r)] if rc == 0 else [], "worktree_after": status_truth(r)["paths"]}
        if rc == 0:  # a commit prints its shortstat (and create/delete mode lines), not every file
            files = numstat(r, "show --format= -M HEAD")
            t["git"]["stat"] = {"files changed": len(files), "insertions": sum(f["added"] or 0 for f in files),
                                "deletions": sum(f["deleted"] or 0 for f in files)}
        if hooks == "precommit":
            results = hooks_truth(rebuild)
            t["git"]["hooks"] = results
            t["errors"] += [f"hook {hid}" for hid, code in results.items() if code]
            fresh = rebuild()
            fresh.sh("git add -A")
            ruff_truth(fresh, t, "$(git diff --cached --name-only --diff-filter=d -- '*.py')")
            pytest_truth(fresh, t)
        elif hooks == "pytest":
            pytest_truth(rebuild(), t)
            if t["failed"]:
                t["errors"].append("hook pre-commit")
        elif hooks == "ruff":
            ruff_truth(rebuild(), t, "src tests")
        return t

    return truth


def t_push(r: Repo, rc: int, _rebuild: Callable[[], Repo], before: dict | None) -> dict:
    t = empty_truth()
    before = before or {}
    after = remote_refs(r)
    local = {b: r.out(f"git rev-parse {b}").strip() for b in r.out("git for-each-ref --format='%(refname:short)' refs/heads").split()}
    refs = []
    for branch, h in local.items():
        if before.get(branch) == h:
            continue
        if after.get(branch) == h:
            refs.append({"ref": branch, "status": "updated" if branch in before else "new", "old": before.get(branch), "new": h})
        elif branch in before or rc:
            refs.append({"ref": branch, "status": "rejected", "old": before.get(branch), "new": h})
            t["errors"].append(f"push {branch}")
    t["git"] = {"refs": refs}
    return t


def t_pull(r: Repo, rc: int, _rebuild: Callable[[], Repo], _before: dict | None) -> dict:
    t = empty_truth()
    paths = status_truth(r)["paths"]
    conflicts = [p["path"] for p in paths if p["group"] == "conflicted"]
    t["git"] = {"conflicts": conflicts}
    if rc == 0:
        t["git"]["files"] = numstat(r, "diff ORIG_HEAD HEAD")
        t["git"]["head"] = r.out("git rev-parse HEAD").strip()
    t["errors"] += [f"conflict {p}" for p in conflicts]
    return t


def t_checkout(target: str) -> Truth:
    def truth(r: Repo, rc: int, _rebuild: Callable[[], Repo], _before: dict | None) -> dict:
        t = empty_truth()
        t["git"] = {"branch": r.out("git symbolic-ref --short HEAD").strip(),
                    "worktree_after": status_truth(r)["paths"]}  # not printed by a checkout: not census truth
        if rc:
            local = set(r.out("git diff --name-only -z").split("\0")) - {""}
            differ = set(r.out(f"git diff --name-only -z HEAD {target}").split("\0")) - {""}
            t["git"]["blocked"] = sorted(local & differ)
            t["errors"].append(f"checkout {target}")
        return t

    return truth


CASES: list[GitCase] = [
    GitCase("status_clean", s_status_clean, "git status", t_status, "two local commits ahead of origin, nothing changed"),
    GitCase("status_mixed", s_status_mixed, "git status -uall", t_status,
            "staged new/modified/deleted/renamed, unstaged modified/deleted, untracked (a space, a non-ASCII name)"),
    GitCase("status_conflict", s_conflict, "git status", t_status, "a merge with conflicts in progress"),
    GitCase("status_short", s_status_short, "git status -sb -uall", t_status, "the short form with its branch line",
            held_out=True),
    GitCase("status_many", s_many, "git status -uall", t_status, "30 modified files and 40 untracked ones"),
    GitCase("diff_many", s_many, "git diff", t_diff("diff"), "30 files, two hunks each"),
    GitCase("log_long", s_log_long, "git log -n 40", t_log("-n 40"), "40 commits, the default format"),
    GitCase("log_long_stat", s_log_long, "git log --stat -n 12", t_log("-n 12"), "12 commits with --stat",
            held_out=True),
    GitCase("diff_worktree", s_worktree_diff, "git diff", t_diff("diff"), "three files, several hunks"),
    GitCase("diff_cached", s_staged_diff, "git diff --cached", t_diff("diff --cached"),
            "a new file, a deleted file, an appended test"),
    GitCase("diff_stat", s_worktree_diff, "git diff --stat", t_diff("diff"), "the --stat form"),
    GitCase("diff_odd_bytes", s_diff_odd, "git diff", t_diff("diff"),
            "a binary file, a Latin-1 file (not UTF-8), a 40,000-character line"),
    GitCase("show_rename", s_show_rename, "git show", t_show, "a commit renaming a module and editing its users"),
    GitCase("log_default", s_log, "git log -n 5", t_log("-n 5"), "the default format"),
    GitCase("log_oneline_graph", s_log_graph, "git log --oneline --graph --decorate", t_log(""),
            "a merge in --graph form"),
    GitCase("log_patch", s_log, "git log -p -2", t_log("-2"), "two commits with their diffs", held_out=True),
    GitCase("commit_plain", s_commit_plain, "git add -A && git commit -m 'Add tax rate, drop the package init'",
            t_commit(""), "no hook: the result line, its stat and mode lines"),
    GitCase("commit_precommit_pass", lambda r: precommit(r, broken=False),
            "git add -A && git commit -m 'Add with_tax'", t_commit("precommit"),
            "the pre-commit framework: ruff, a pygrep check, check-json, pytest, all passing"),
    GitCase("commit_precommit_fail", lambda r: precommit(r, broken=True),
            "git add -A && git commit -m 'Add with_tax'", t_commit("precommit"),
            "ruff finds errors, the pygrep check a print, pytest a failing test: no commit"),
    GitCase("commit_hook_pytest_fail", lambda r: plain_hook(r, "exec pytest -q -p no:cacheprovider", broken=True),
            "git add -A && git commit -m 'Add tax'", t_commit("pytest"),
            "a plain .git/hooks/pre-commit running pytest, which fails"),
    GitCase("commit_hook_ruff_push", lambda r: plain_hook(r, "exec ruff check --no-cache src tests", broken=False),
            "git add -A && git commit -m 'Add tax' && git push", t_commit("ruff"),
            "a chain: a plain hook running ruff (passes), the commit, the push", held_out=True),
    GitCase("push_rejected", s_push_rejected, "git push", t_push, "the remote has a commit this clone lacks",
            before=remote_refs),
    GitCase("push_new_branch", s_push_branch, "git push -u origin main feature/tax", t_push,
            "one branch fast-forwarded, one created", before=remote_refs),
    GitCase("pull_ff", s_pull_ff, "git pull", t_pull, "a fast-forward with a diffstat and a delete mode line"),
    GitCase("pull_conflict", s_pull_conflict, "git pull", t_pull, "a merge conflict", held_out=True),
    GitCase("checkout_new_branch", s_checkout_new, "git checkout -b feature/wip", t_checkout("feature/wip"),
            "carried local changes"),
    GitCase("checkout_blocked", s_checkout_blocked, "git checkout feature", t_checkout("feature"),
            "local changes the checkout would overwrite"),
]


def generate(case: GitCase, home: Path) -> dict:
    r = Repo(case.name, home)
    case.setup(r)
    before = case.before(r) if case.before else None
    raw, rc = r.sh(case.command, check=False)

    def rebuild() -> Repo:
        again = Repo(case.name + "-truth", home)
        case.setup(again)
        return again

    truth = case.truth(r, rc, rebuild, before)
    finish(truth)
    version = r.out("git --version").strip()
    if "pre-commit" in case.name or "precommit" in case.name:
        version += "; " + r.out("pre-commit --version").strip()
    if "ruff" in case.name or "precommit" in case.name:
        version += "; " + r.out("ruff --version").strip()
    if "pytest" in case.name or "precommit" in case.name:
        version += "; " + r.out("pytest --version").strip()
    case_dir = CORPUS / case.name
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    (case_dir / "output.txt").write_bytes(raw)
    meta = {
        "family": "git", "case": case.name, "command": case.command, "cwd": "evals/corpus/git",
        "exit_code": rc, "tool": "git", "tool_version": version, "truth": truth,
        "truth_source": "git's machine forms (porcelain v2, --numstat -z, --format=%H%x00%s, rev-parse, ls-remote); "
                        "hooks: each pre-commit hook's exit code, ruff --output-format json, pytest --junitxml",
        "truth_command": "evals/gen_git_corpus.py (per case: " + case.truth.__name__ + ")",
        "note": case.note, "output_bytes": len(raw), "output_sha256": hashlib.sha256(raw).hexdigest(),
        "held_out": case.held_out,
        "nondeterministic": "nothing: author, committer and dates are fixed (the same hashes on every run); "
                            "the repository was " + str(r.work),
        "repo_dir": str(r.work),
    }
    (case_dir / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    shutil.rmtree(r.root, ignore_errors=True)
    shutil.rmtree(BASE / (case.name + "-truth"), ignore_errors=True)
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", default=[], help="case name (repeatable)")
    args = ap.parse_args(argv)
    missing = [t for t in ("git", "pre-commit", "ruff", "pytest") if not shutil.which(t, path=f"{VENV_BIN}:/usr/bin:/bin")]
    if missing:
        print(f"missing: {', '.join(missing)} (pip install pre-commit ruff pytest)", file=sys.stderr)
        return 2
    cases = [c for c in CASES if not args.only or c.name in args.only]
    with tempfile.TemporaryDirectory(prefix="ctx-git-home-") as home_s:
        home = Path(home_s)
        (home / "tmp").mkdir()
        for case in cases:
            meta = generate(case, home)
            print(f"git/{case.name:28} exit={meta['exit_code']:<3} bytes={meta['output_bytes']}")
    shutil.rmtree(BASE, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
