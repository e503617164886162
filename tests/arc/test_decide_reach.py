"""The rewrite decision for the tools that are not runners (issue 29): git, gh, package installs,
searches, listings, golangci-lint.  Digested only when what the tool prints is what reaches the
model, and never when the agent asked for a machine format that it or a script parses."""

import pytest

from reflex.arc.decide import decide_bash
from reflex.signature import signature


class _Allow:
    kind = "allow"
    reason = "test: the harness runs it unasked"


def _decide(command):
    return decide_bash(command, {}, signature(command), launcher="ctx", permission=_Allow())


DIGESTED = [
    "git status", "git diff", "git diff HEAD~1 -- src/", "git show HEAD", "git log --oneline -20",
    "git log --pretty=oneline", "git add -A && git commit -m 'fix: parse' && git push",
    "cd app && git status 2>&1", "git status && echo done", "git diff | head -80", "git pull --rebase",
    "gh run view 123 --log-failed", "gh run view 123 --log --job 456",
    "npm install", "npm ci", "pnpm add lodash", "yarn", "pip install -r requirements.txt",
    "python -m pip install requests", "uv pip install -e .", "uv sync", "cargo fetch", "go mod tidy",
    "apt-get install -y ripgrep",
    "grep -n TODO src/app.py", "ls -la", "ls -la src | head -50", "tree -L 2", "golangci-lint run ./...",
]
PASSED = {
    "git status --porcelain": "machine format",
    "git status -z": "machine format",
    "git log --format=%H": "machine format",
    "git log --pretty=format:%h%x09%s": "machine format",
    "git log --oneline | xargs -n1 echo": "not what reaches the model",
    "git diff --name-only": "machine format",
    "git ls-files | while read f; do echo $f; done": "not digested",
    "git rev-parse HEAD": "not digested",
    "x=$(git status); echo $x": "",  # tree-sitter: an assignment (family other); shlex: consumed
    "gh run view 12 --json jobs": "machine format",
    "gh run watch 123": "not digested",
    "gh pr checks 7": "not digested",
    "gh api repos/o/r/actions/runs": "not digested",
    "npm install --json": "machine format",
    "rg --json TODO": "machine format",
    "find . -name '*.py' -print0": "machine format",
    "tree -J": "machine format",
    "ls | xargs rm": "not what reaches the model",
    "echo '== src ==' && cat src/a.py && ls": "not what reaches the model",
    "golangci-lint run --out-format json": "machine format",
}


@pytest.mark.parametrize("command", DIGESTED)
def test_reach_commands_are_rewritten(command):
    d = _decide(command)
    assert d.action == "rewrite", (command, d.why)
    assert d.command.startswith("ctx run -- ")


@pytest.mark.parametrize("command,why", sorted(PASSED.items()))
def test_machine_formats_and_consumed_output_pass(command, why):
    d = _decide(command)
    assert d.action == "pass", (command, d)
    assert why in d.why, (command, d.why)


def test_background_tasks_still_pass():
    d = decide_bash("git log", {"run_in_background": True}, signature("git log"), launcher="ctx",
                    permission=_Allow())
    assert d.action == "pass" and d.why == "background task"


def test_permission_still_decides():
    class _Ask:
        kind = "ask"
        reason = "no rule"

    d = decide_bash("git status", {}, signature("git status"), launcher="ctx", permission=_Ask())
    assert d.action == "pass" and d.held_back
