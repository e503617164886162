"""Generate evals/corpus/install/: real package installs (pip from PyPI, npm from the npm registry,
apt-get from Debian), recorded byte for byte, with truth from each tool's structured form.

Every case runs in a scratch directory with a throwaway HOME, pip cache and npm cache (nothing is
installed outside /tmp).  Truth:

- pip: a second, separate run of the same command in a fresh venv with `--report FILE` (pip's JSON
  installation report: what it installed, name and version); for a failing install the exit code
  and the requirement the command named (pip writes no report when it fails).
- npm: a second run of the same command in a fresh copy of the project with `--json` (npm's JSON
  result: `added`, `audit` counts, or `error.code`); npm prints its deprecation warnings on stderr
  even with `--json`, so those come from that run's stderr, one `npm warn deprecated` record each.
- apt-get: the exit code and the package the command named.

    python evals/gen_install_corpus.py
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "evals" / "corpus" / "install"
CWD = "evals/fixtures"  # the recorded runs happen in scratch dirs; this only satisfies meta's cwd
TIMEOUT = 600


@dataclasses.dataclass
class Case:
    name: str
    tool: str  # pip | npm | apt
    command: str  # as recorded (what the agent typed); `pip` is the scratch venv's pip
    package_json: dict | None = None  # npm: the project's package.json (None: npm's default empty dir)
    held_out: bool = False
    note: str = ""
    failing_requirement: str | None = None  # what the command asked for that could not be installed


BROKEN_SETUP = """from setuptools import setup
raise RuntimeError("libfoo-dev is required to build fastfoo (pkg-config found no libfoo)")
setup(name="fastfoo", version="0.1")
"""

CASES: list[Case] = [
    Case("pip_ok", "pip", "pip install requests==2.32.3 rich==13.9.4"),
    Case("pip_not_found", "pip", "pip install ctx-no-such-package-xyzzy", failing_requirement="ctx-no-such-package-xyzzy"),
    Case("pip_bad_pin", "pip", "pip install 'requests==0.0.999'", failing_requirement="requests==0.0.999"),
    Case("pip_build_failure", "pip", "pip install ./fastfoo", failing_requirement="./fastfoo",
         note="a local sdist whose setup.py raises: pip's subprocess-exited-with-error block"),
    Case("pip_conflict", "pip", "pip install 'requests==2.32.3' 'urllib3<1.21'", held_out=True,
         failing_requirement="urllib3<1.21"),
    Case("npm_ok", "npm", "npm install express@4.21.2", {"name": "shop", "version": "1.0.0", "private": True}),
    Case("npm_two", "npm", "npm install request@2.88.2 glob@7.2.3",
         {"name": "shop", "version": "1.0.0", "private": True}, note="the registry reachable here serves no deprecation notices and no audit: npm printed neither"),
    Case("npm_404", "npm", "npm install ctx-no-such-package-xyzzy", {"name": "shop", "version": "1.0.0"},
         failing_requirement="ctx-no-such-package-xyzzy"),
    Case("npm_ci_no_lock", "npm", "npm ci", {"name": "shop", "version": "1.0.0", "dependencies": {"ms": "^2.1.3"}},
         held_out=True, failing_requirement="package-lock.json"),
    Case("apt_missing", "apt", "apt-get install -y ctx-no-such-package-xyzzy",
         failing_requirement="ctx-no-such-package-xyzzy"),
]


def env_for(home: Path) -> dict[str, str]:
    return {"PATH": f"{home / 'venv' / 'bin'}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": str(home),
            "LANG": "C.UTF-8", "PIP_CACHE_DIR": str(home / "pip-cache"), "npm_config_cache": str(home / "npm-cache"),
            "npm_config_update_notifier": "false", "npm_config_fund": "true", "TMPDIR": str(home / "tmp"),
            "PYTHONDONTWRITEBYTECODE": "1", "DEBIAN_FRONTEND": "noninteractive"}


def sh(cmd: str, cwd: Path, env: dict[str, str], merge: bool = True) -> tuple[bytes, bytes, int]:
    p = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT if merge else subprocess.PIPE, timeout=TIMEOUT, check=False)
    return p.stdout, p.stderr or b"", p.returncode


def fresh(case: Case, base: Path) -> tuple[Path, dict[str, str]]:
    """A scratch HOME with an empty venv (pip) or project (npm), and its environment."""
    home = Path(tempfile.mkdtemp(dir=base, prefix=case.name + "-"))
    (home / "tmp").mkdir()
    env = env_for(home)
    proj = home / "proj"
    proj.mkdir()
    if case.tool == "pip":
        subprocess.run([sys.executable, "-m", "venv", str(home / "venv")], check=True)
        (proj / "fastfoo").mkdir()
        (proj / "fastfoo" / "setup.py").write_text(BROKEN_SETUP)
    if case.package_json is not None:
        (proj / "package.json").write_text(json.dumps(case.package_json, indent=2) + "\n")
    return proj, env


def truth_base() -> dict:
    return {"failed": [], "failed_count": 0, "passed_count": 0, "error_count": 0, "skipped_count": 0, "errors": [],
            "diagnostics": [], "collection_errors": [], "installed": [], "added": None, "warnings": [],
            "vulnerabilities": None}


def truth_pip(case: Case, base: Path, exit_code: int) -> tuple[dict, str]:
    proj, env = fresh(case, base)
    report = proj.parent / "report.json"
    cmd = f"{case.command} --report {report}"
    _, _, code = sh(cmd, proj, env)
    t = truth_base()
    if report.exists():
        doc = json.loads(report.read_text())
        t["installed"] = sorted(f"{i['metadata']['name']}-{i['metadata']['version']}" for i in doc.get("install", []))
    if code or exit_code:
        t["errors"] = [case.failing_requirement or case.command]
    return t, cmd


def truth_npm(case: Case, base: Path, exit_code: int) -> tuple[dict, str]:
    proj, env = fresh(case, base)
    cmd = f"{case.command} --json"
    out, err, code = sh(cmd, proj, env, merge=False)
    t = truth_base()
    doc = json.loads(out or b"{}")
    if "added" in doc:
        t["added"] = doc["added"]
    vulns = (doc.get("audit") or {}).get("vulnerabilities") or (doc.get("audit") or {}).get("metadata", {}).get(
        "vulnerabilities")
    if isinstance(vulns, dict):
        t["vulnerabilities"] = {k: v for k, v in vulns.items() if k != "total" and v}
    if "error" in doc:
        t["npm_error_code"] = doc["error"].get("code")
    t["warnings"] = sorted({line.split("deprecated ", 1)[1].split(":", 1)[0]
                            for line in err.decode("utf-8", "replace").splitlines()
                            if line.startswith("npm warn deprecated ")})
    if code or exit_code:
        t["errors"] = [case.failing_requirement or case.command]
    return t, cmd


def finish(t: dict) -> dict:
    t["errors"] = sorted(set(t["errors"]))
    t["error_count"] = len(t["errors"])
    return t


def version(tool: str, env: dict[str, str], cwd: Path) -> str:
    cmd = {"pip": "pip --version | cut -d' ' -f1-2", "npm": "echo npm $(npm --version); node --version",
           "apt": "apt-get --version | head -1"}[tool]
    return "; ".join(sh(cmd, cwd, env)[0].decode().split("\n")).strip("; ")


def generate(case: Case, base: Path) -> None:
    proj, env = fresh(case, base)
    raw, _, code = sh(case.command, proj, env)
    if case.tool == "pip":
        truth, truth_cmd = truth_pip(case, base, code)
        source = "pip install --report (JSON installation report) of a separate run in a fresh venv; exit code"
    elif case.tool == "npm":
        truth, truth_cmd = truth_npm(case, base, code)
        source = ("npm --json of a separate run in a fresh project (added, audit, error.code); its stderr's "
                  "`npm warn deprecated` records; exit code")
    else:
        truth, truth_cmd = truth_base(), case.command
        if code:
            truth["errors"] = [case.failing_requirement or case.command]
        source = "exit code; the package the command named"
    truth = finish(truth)
    meta = {"family": "install", "case": case.name, "command": case.command, "cwd": CWD, "exit_code": code,
            "tool": case.tool, "tool_version": version(case.tool, env, proj), "truth": truth,
            "truth_source": source, "truth_command": truth_cmd, "note": case.note, "held_out": case.held_out,
            "nondeterministic": True, "output_bytes": len(raw), "output_sha256": hashlib.sha256(raw).hexdigest()}
    dest = OUT / case.name
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "output.txt").write_bytes(raw)
    (dest / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"install/{case.name}: exit {code}, {len(raw)} bytes, installed {len(truth['installed'])}, "
          f"added {truth['added']}, warnings {len(truth['warnings'])}, errors {truth['errors']}")


def main(argv: list[str]) -> int:
    wanted = set(argv)
    base = Path(tempfile.mkdtemp(prefix="ctx-install-"))
    try:
        for case in CASES:
            if not wanted or case.name in wanted:
                generate(case, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
