"""Generate evals/corpus/cilog/: GitHub Actions logs as `gh run view --log` / `--log-failed` print them.

gh cannot reach GitHub from this machine, so each case is a workflow run REALLY executed here: every
`run:` step is a real command (python -m venv, a real `pip install` from PyPI, a real pytest or ruff
run that fails, a real `git clone` of a local repository for the checkout step) run with bash in a
scratch workspace, and its merged output is captured line by line as it arrives.  What is emulated
is only the framing GitHub's runner and gh add around that output: the runner's "Set up job" lines,
the `##[group]Run …` header of each step, `##[error]Process completed with exit code N.`, the post
and "Complete job" steps, each line's UTC timestamp (the time the line was read, in the runner's
7-digit form) and gh's `JOB<TAB>STEP<TAB>` prefix (or `UNKNOWN STEP` when the archive lacks per-step
logs, gh's fallback since cli/cli#10740).

Truth comes from the commands run, never from parsing the log: which job/step failed and its exit
code (the step's real exit status), the failing tests from a separate pytest run with --junitxml,
the lint findings from `ruff check --output-format json` on the same files.

    python evals/gen_cilog_corpus.py            # writes evals/corpus/cilog/<case>/{output.txt,meta.json}
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "evals" / "corpus" / "cilog"
FIXTURE = ROOT / "evals" / "fixtures" / "py_inflection"
VENV_BIN = ROOT / ".venv" / "bin"
REPO = "acme/inflection"
WORKSPACE = "/home/runner/work/inflection/inflection"  # where the log says the checkout is
BOM = "\ufeff"  # every per-step log file GitHub archives starts with one; gh prints it


@dataclasses.dataclass
class Step:
    name: str  # the step's name as the workflow gives it (gh prints it)
    run: str = ""  # a `run:` step's script (empty: an action, emulated by `kind`)
    kind: str = "run"  # run | checkout | setup-python


@dataclasses.dataclass
class Job:
    name: str
    steps: list[Step]


@dataclasses.dataclass
class Case:
    name: str
    command: str
    jobs: list[Job]
    failed_only: bool = False  # --log-failed: only the failed steps' lines
    unknown_steps: bool = False  # the archive had only the whole-job log: gh prints UNKNOWN STEP
    held_out: bool = False
    note: str = ""


PIP = "python -m venv .venv && .venv/bin/pip install --disable-pip-version-check pytest==8.3.5"
PYTEST = ".venv/bin/python -m pytest -q --tb=short -p no:cacheprovider"
RUFF = "ruff check --no-cache --select F,E7 ."


def python_job(name: str, test: str = PYTEST, lint: str | None = None) -> Job:
    steps = [Step("Run actions/checkout@v4", kind="checkout"), Step("Set up Python", kind="setup-python"),
             Step("Install dependencies", PIP)]
    if lint:
        steps.append(Step("Lint", lint))
    steps.append(Step("Test", test))
    return Job(name, steps)


CASES: list[Case] = [
    Case("log_failed", "gh run view 14829301 --log-failed", [python_job("test")], failed_only=True),
    Case("log_full", "gh run view 14829301 --log", [python_job("test")]),
    Case("lint_failed", "gh run view 14829322 --log-failed", [python_job("lint", lint=RUFF)], failed_only=True,
         note="ruff fails: the steps after it never run"),
    Case("green", "gh run view 14829340 --log",
         [python_job("test", test=PYTEST + " -k 'dasherize or underscore'", lint="ruff check --no-cache --select E9 .")]),
    Case("missing_script", "gh run view --job 41200981 --log",
         [Job("build", [Step("Run actions/checkout@v4", kind="checkout"),
                        Step("Check metadata", "echo '::warning file=setup.cfg,line=1::license_file is deprecated, "
                                               "use license_files'; python -c 'import configparser as c; "
                                               "p = c.ConfigParser(); p.read(\"setup.cfg\"); print(p.sections())'"),
                        Step("Build docs", "./scripts/build-docs.sh")])],
         note="a step that is not a test runner: bash's own error, exit 127"),
    Case("matrix_failed", "gh run view 14829377 --log-failed",
         [python_job("test (tb-short)"), python_job("test (tb-line)", test=PYTEST.replace("short", "line"))],
         failed_only=True, held_out=True),
    Case("unknown_step", "gh run view 14829301 --log", [python_job("test")], unknown_steps=True, held_out=True,
         note="gh's fallback when the archive has only the whole-job log: every line is `UNKNOWN STEP`"),
]


# --------------------------------------------------------------------------- running steps

class Clock:
    """UTC timestamps in the runner's form, 2026-05-01T10:00:00.1234567Z, of the moment a line arrives."""

    def stamp(self) -> str:
        now = dt.datetime.now(dt.UTC)
        return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond:06d}0Z"


def run_lines(cmd: str, cwd: Path, env: dict[str, str], clock: Clock) -> tuple[list[tuple[str, str]], int]:
    """Run cmd with bash -e (the runner's `shell: /usr/bin/bash -e {0}`); (timestamp, line) as they arrive."""
    proc = subprocess.Popen(["bash", "-e", "-c", cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    lines = [(clock.stamp(), raw.decode("utf-8", "replace").rstrip("\r\n")) for raw in proc.stdout]
    return lines, proc.wait(timeout=600)


def step_env(home: Path) -> dict[str, str]:
    return {"PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
            "PIP_CACHE_DIR": str(home / "pip-cache"), "PYTHONDONTWRITEBYTECODE": "1", "CI": "true",
            "GITHUB_ACTIONS": "true", "PIP_NO_INPUT": "1"}


def workflow_command(line: str) -> str:
    """The runner consumes `::warning file=…::msg` / `::error …::msg` and logs `##[warning]msg`."""
    for kind in ("warning", "error", "notice"):
        if line.startswith((f"::{kind} ", f"::{kind}::")):
            return f"##[{kind}]" + line.split("::", 2)[2]
    return line


def set_up_job(job: str, actions: list[str]) -> list[str]:
    lines = ["Current runner version: '2.323.0'",
             "##[group]Runner Image Provisioner", "Hosted Compute Agent", "Version: 20250508.323",
             "Commit: 81b259f29879f73b4213d199e42d8c3465dae986", "Build Date: 2025-05-08T19:40:08Z", "##[endgroup]",
             "##[group]Operating System", "Ubuntu", "24.04.2", "LTS", "##[endgroup]",
             "##[group]Runner Image", "Image: ubuntu-24.04", "Version: 20250511.1.0",
             ("Included Software: https://github.com/actions/runner-images/blob/ubuntu24/20250511.1/images/ubuntu/"
              "Ubuntu2404-Readme.md"),
             "Image Release: https://github.com/actions/runner-images/releases/tag/ubuntu24%2F20250511.1",
             "##[endgroup]",
             "##[group]GITHUB_TOKEN Permissions", "Contents: read", "Metadata: read", "Packages: read", "##[endgroup]",
             "Secret source: Actions", "Prepare workflow directory", "Prepare all required actions",
             "Getting action download info"]
    shas = {"actions/checkout@v4": "11bd71901bbe5b1630ceea73d27597364c9af683",
            "actions/setup-python@v5": "a26af69be951a213d495a4c3e4e4022e16d87065"}
    lines += [f"Download action repository '{a}' (SHA:{shas[a]})" for a in actions]
    return lines + [f"Complete job name: {job}"]


def git_commands(cmds: list[str], cwd: Path, env: dict[str, str], clock: Clock) -> list[tuple[str, str]]:
    """actions/checkout's way of logging: `[command]/usr/bin/git …` and then git's real output."""
    out: list[tuple[str, str]] = []
    for c in cmds:
        out.append((clock.stamp(), f"[command]/usr/bin/git {c}"))
        lines, code = run_lines(f"git {c}", cwd, env, clock)
        out += lines
        if code:
            raise SystemExit(f"checkout emulation failed: git {c}")
    return out


def checkout(origin: Path, work: Path, env: dict[str, str], clock: Clock) -> list[tuple[str, str]]:
    """A real fetch of the fixture's repository (a local clone stands in for github.com)."""
    t = clock.stamp
    header = ["##[group]Run actions/checkout@v4", "with:", f"  repository: {REPO}", "  token: ***",
              "  ssh-strict: true", "  ssh-user: git", "  persist-credentials: true", "  clean: true",
              "  fetch-depth: 1", "  lfs: false", "  submodules: false", "##[endgroup]"]
    out = [(t(), s) for s in header]
    out.append((t(), f"Syncing repository: {REPO}"))
    out += [(t(), "##[group]Getting Git version info"), (t(), f"Working directory is '{WORKSPACE}'")]
    out += git_commands(["version"], work, env, clock)
    out.append((t(), "##[endgroup]"))
    out += [(t(), "##[group]Initializing the repository")]
    out += git_commands(["init .", f"remote add origin {origin}"], work, env, clock)
    out.append((t(), "##[endgroup]"))
    out += [(t(), "##[group]Fetching the repository")]
    fetch = ("-c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules --depth=1 origin "
             "+refs/heads/main:refs/remotes/origin/main")
    out += git_commands([fetch], work, env, clock)
    out.append((t(), "##[endgroup]"))
    out += [(t(), "##[group]Checking out the ref")]
    out += git_commands(["checkout --progress --force -B main refs/remotes/origin/main"], work, env, clock)
    out.append((t(), "##[endgroup]"))
    out += git_commands(["log -1 --format=%H"], work, env, clock)
    return out


def run_header(script: str, python_dir: str) -> list[str]:
    first = script.splitlines()[0]
    return [f"##[group]Run {first}", *script.splitlines(), "shell: /usr/bin/bash -e {0}", "env:",
            f"  pythonLocation: {python_dir}", "##[endgroup]"]


@dataclasses.dataclass
class StepLog:
    job: str
    name: str  # as gh prints it
    lines: list[tuple[str, str]]
    status: str  # success | failure
    exit_code: int | None = None


def run_job(job: Job, home: Path, clock: Clock) -> tuple[list[StepLog], Path]:
    env = step_env(home)
    work = Path(tempfile.mkdtemp(dir=home, prefix="work-"))
    origin = home / f"origin-{job.name.replace(' ', '_').replace('(', '').replace(')', '')}"
    if not origin.exists():
        shutil.copytree(FIXTURE, origin)
        for c in ("init -q -b main", "add -A", "-c user.name=ci -c user.email=ci@example.com commit -q -m fixture"):
            subprocess.run(f"git {c}", shell=True, cwd=origin, env=env, check=True)
    pyver = subprocess.run(["python3", "-c", "import platform; print(platform.python_version())"],
                           capture_output=True, text=True, check=True).stdout.strip()
    python_dir = f"/opt/hostedtoolcache/Python/{pyver}/x64"
    actions = sorted({"actions/checkout@v4" if s.kind == "checkout" else "actions/setup-python@v5"
                      for s in job.steps if s.kind != "run"})
    logs = [StepLog(job.name, "Set up job", [(clock.stamp(), s) for s in set_up_job(job.name, actions)], "success")]
    failed = False
    for step in job.steps:
        if failed:
            break  # later steps are skipped: the runner logs nothing for them
        if step.kind == "checkout":
            logs.append(StepLog(job.name, step.name, checkout(origin, work, env, clock), "success"))
            continue
        if step.kind == "setup-python":
            t = clock.stamp
            lines = [(t(), s) for s in ("##[group]Run actions/setup-python@v5", "with:", "  python-version: 3.11",
                                        "  check-latest: false", "  token: ***", "  update-environment: true",
                                        "  allow-prereleases: false", "##[endgroup]",
                                        "##[group]Installed versions")]
            real, _ = run_lines("python3 --version", work, env, clock)
            lines += [(ts, f"Successfully set up C{s.replace(' ', ' (')})") for ts, s in real]
            lines.append((t(), "##[endgroup]"))
            logs.append(StepLog(job.name, step.name, lines, "success"))
            continue
        lines = [(clock.stamp(), s) for s in run_header(step.run, python_dir)]
        out, code = run_lines(step.run, work, env, clock)
        lines += [(ts, workflow_command(s)) for ts, s in out]
        if code:
            lines.append((clock.stamp(), f"##[error]Process completed with exit code {code}."))
            failed = True
        logs.append(StepLog(job.name, step.name, lines, "failure" if code else "success", code))
    if any(s.kind == "checkout" for s in job.steps):
        post = [(clock.stamp(), "Post job cleanup.")]
        post += git_commands(["version"], work, env, clock)
        post += git_commands(["config --local --name-only --get-regexp core\\.sshCommand || true"], work, env, clock)
        logs.append(StepLog(job.name, "Post Run actions/checkout@v4", post, "success"))
    logs.append(StepLog(job.name, "Complete job", [(clock.stamp(), "Cleaning up orphan processes")], "success"))
    return logs, work


def gh_format(logs: list[StepLog], failed_only: bool, unknown_steps: bool) -> str:
    out: list[str] = []
    for log in logs:
        if failed_only and log.status != "failure":
            continue
        step = "UNKNOWN STEP" if unknown_steps else log.name
        for k, (ts, s) in enumerate(log.lines):
            bom = BOM if k == 0 and not unknown_steps else ""
            out.append(f"{log.job}\t{step}\t{bom}{ts} {s}")
    if unknown_steps:  # the whole-job log has one BOM, at its very start
        first = out[0].split("\t", 2)
        out[0] = f"{first[0]}\t{first[1]}\t{BOM}{first[2]}"
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- truth

def pytest_truth(cmd: str, work: Path, env: dict[str, str], xml: Path) -> tuple[list[str], int]:
    subprocess.run(["bash", "-c", f"{cmd} -o junit_family=xunit1 --junitxml={xml}"], cwd=work, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    failed, passed = [], 0
    for tc in ET.parse(xml).getroot().iter("testcase"):
        nodeid = f"{tc.get('file')}::{tc.get('name')}"
        if tc.find("failure") is not None or tc.find("error") is not None:
            failed.append(nodeid)
        elif tc.find("skipped") is None:
            passed += 1
    return sorted(set(failed)), passed


def ruff_truth(cmd: str, work: Path, env: dict[str, str]) -> list[dict]:
    out = subprocess.run(["bash", "-c", f"{cmd} --output-format json"], cwd=work, env=env, capture_output=True,
                         check=False).stdout
    return [{"file": d["filename"][len(str(work)) + 1:] if d["filename"].startswith(str(work)) else d["filename"],
             "line": d["location"]["row"], "col": d["location"]["column"], "code": d["code"],
             "message": d["message"], "severity": "error"} for d in json.loads(out)]


def truth_of(case: Case, runs: list[tuple[Job, list[StepLog], Path]], home: Path) -> dict:
    env = step_env(home)
    t: dict = {"failed": [], "failed_count": 0, "passed_count": 0, "error_count": 0, "skipped_count": 0,
               "errors": [], "diagnostics": [], "collection_errors": [], "failed_steps": [], "steps_passed": 0,
               "jobs": [], "warnings": []}
    for k, (job, logs, work) in enumerate(runs):
        t["jobs"].append(job.name)
        shown = [s for s in logs if not case.failed_only or s.status == "failure"]
        t["steps_passed"] += sum(1 for s in shown if s.status == "success")
        for s in shown:
            t["warnings"] += [line[len("##[warning]"):] for _, line in s.lines if line.startswith("##[warning]")]
        for s in logs:
            if s.status != "failure":
                continue
            step = next(x for x in job.steps if x.name == s.name)
            t["failed_steps"].append({"job": job.name, "step": s.name, "exit_code": s.exit_code,
                                      "command": step.run})
            if "pytest" in step.run:
                failed, passed = pytest_truth(step.run, work, env, home / f"junit-{k}.xml")
                # A test failing in two jobs of a matrix is two failures, each named by its job.
                qualify = sum(1 for _, ls, _ in runs if any(x.status == "failure" for x in ls)) > 1
                t["failed"] += [f"{job.name} > {f}" for f in failed] if qualify else failed
                t["passed_count"] += passed
            elif step.run.startswith("ruff "):
                t["diagnostics"] += ruff_truth(step.run, work, env)
    t["failed"] = sorted(set(t["failed"]))
    t["failed_count"] = len(t["failed"])
    t["error_count"] = len(t["errors"]) + sum(1 for d in t["diagnostics"] if d["severity"] == "error")
    return t


def generate(case: Case, home: Path) -> None:
    clock = Clock()
    runs = []
    for job in case.jobs:
        logs, work = run_job(job, home, clock)
        runs.append((job, logs, work))
    text = gh_format([s for _, logs, _ in runs for s in logs], case.failed_only, case.unknown_steps)
    raw = text.encode("utf-8")
    truth = truth_of(case, runs, home)
    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    ruff = subprocess.run([str(VENV_BIN / "ruff"), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    meta = {
        "family": "cilog", "case": case.name, "command": case.command,
        "cwd": str(FIXTURE.relative_to(ROOT)), "exit_code": 0,
        "tool": "gh (format emulated; steps run for real)",
        "tool_version": f"GitHub Actions runner 2.323.0 log format; Python {sys.version.split()[0]}; {git}; {ruff}",
        "truth": truth,
        "truth_source": "the steps' real exit codes; pytest --junitxml (xunit1) of the failing test step; "
                        "ruff --output-format json of the failing lint step",
        "truth_command": "; ".join(s["command"] for s in truth["failed_steps"]),
        "note": ("`gh run view` exits 0 whether or not the run failed (only --exit-status changes that); "
                 + case.note).strip("; "),
        "held_out": case.held_out, "nondeterministic": True,
        "output_bytes": len(raw), "output_sha256": hashlib.sha256(raw).hexdigest(),
    }
    dest = OUT / case.name
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "output.txt").write_bytes(raw)
    (dest / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"cilog/{case.name}: {len(raw)} bytes, failed steps {len(truth['failed_steps'])}, "
          f"failed tests {truth['failed_count']}, diagnostics {len(truth['diagnostics'])}")


def main(argv: list[str]) -> int:
    wanted = set(argv)
    with tempfile.TemporaryDirectory(prefix="ctx-cilog-") as tmp:
        home = Path(tmp)
        for case in CASES:
            if not wanted or case.name in wanted:
                generate(case, home)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
