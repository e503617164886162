"""Run the real Claude Code CLI headless, offline, against a ScriptedModelServer.

The CLI is the one bundled in the `claude-agent-sdk` wheel (the `e2e` extra). Each run gets:

- a throwaway HOME (and XDG dirs under it), so the user's settings, credentials and transcripts
  are neither read nor written;
- ANTHROPIC_BASE_URL pointing at the scripted model, a dummy API key, and the switches that turn
  off telemetry, auto-update and other non-essential traffic;
- `--allowedTools Bash` instead of `--permission-mode bypassPermissions`, which the CLI refuses
  as root;
- its own process group, killed after the run, so a hook or Bash subprocess cannot outlive it.

A ClaudeRun holds everything a test needs to check: the stream-json events, the requests the
model server received, the tool_results the model saw (ground truth), and the transcript JSONL.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.scripted_model import (
    Policy,
    RecordedRequest,
    ScriptedModelServer,
    ToolResultSeen,
    tool_results_in,
)

CLAUDE_BINARY_ENV = (
    "CTX_E2E_CLAUDE"  # optional override: path to another `claude` executable
)

# Variables from the outer environment that would change which backend, account or settings the
# CLI uses, or leak this (possibly Claude-Code-hosted) session into the child.
_SCRUBBED_PREFIXES = (
    "ANTHROPIC_",
    "CLAUDE",
    "OTEL_",
    "AWS_BEARER_TOKEN_BEDROCK",
    "VERTEX_",
    "MCP_",
)
_SCRUBBED_NAMES = {
    "IS_SANDBOX",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
}


class ClaudeTimeout(AssertionError):
    """The CLI did not finish within the timeout; carries what it had printed."""


def claude_binary() -> Path:
    """The bundled `claude` executable; skips the calling test if it is not installed."""
    import pytest

    override = os.environ.get(CLAUDE_BINARY_ENV)
    if override:
        path = Path(override)
        if not os.access(path, os.X_OK):
            pytest.skip(f"{CLAUDE_BINARY_ENV}={override} is not an executable")
        return path
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(
            "claude-agent-sdk is not installed (pip install -e '.[e2e]'); it bundles the Claude Code CLI"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude"
    if not os.access(path, os.X_OK):
        pytest.skip(f"claude-agent-sdk is installed but has no bundled CLI at {path}")
    return path


def claude_version(binary: Path | None = None) -> str:
    """e.g. '2.1.332'. Reads claude.version beside the bundled binary, else asks the binary."""
    binary = binary or claude_binary()
    version_file = binary.with_name("claude.version")
    if version_file.is_file():
        return version_file.read_text().strip()
    out = subprocess.run(
        [str(binary), "--version"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    ).stdout
    return out.split()[0] if out.split() else ""


def offline_env(
    home: Path, model_url: str, env_extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The child environment: the outer one minus backend/session variables, plus offline switches."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(_SCRUBBED_PREFIXES) and k not in _SCRUBBED_NAMES
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        ANTHROPIC_BASE_URL=model_url,
        ANTHROPIC_API_KEY="dummy",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    if env_extra:
        env.update(env_extra)
    return env


def transcript_dir_name(cwd: Path) -> str:
    """How the CLI names a project's transcript directory: every non-alphanumeric char becomes '-'."""
    return "".join(c if c.isalnum() else "-" for c in str(cwd))


@dataclass
class ClaudeRun:
    """The outcome of one `claude -p` run."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    home: Path
    cwd: Path
    requests: list[RecordedRequest]
    events: list[dict[str, Any]] = field(default_factory=list)
    unparsed_lines: list[str] = field(default_factory=list)
    # seconds since spawn: total_s, first_request_s (startup), result_s, exit_after_result_s
    timings: dict[str, float | None] = field(default_factory=dict)

    @property
    def session_id(self) -> str | None:
        for event in self.events:
            if event.get("session_id"):
                return event["session_id"]
        return None

    @property
    def result(self) -> dict[str, Any] | None:
        """The final `{"type": "result", ...}` event."""
        results = [e for e in self.events if e.get("type") == "result"]
        return results[-1] if results else None

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "main"]

    @property
    def tool_results(self) -> list[ToolResultSeen]:
        """The tool_results the model received, in order (ground truth, from the model server)."""
        seen: list[ToolResultSeen] = []
        for request in self.main_requests:
            found = tool_results_in(request.body or {})
            if len(found) > len(seen):
                seen = found
        return seen

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """The tool_use blocks the model emitted (as echoed in the stream-json events)."""
        uses = []
        for event in self.events:
            if event.get("type") == "assistant":
                for block in event.get("message", {}).get("content", []):
                    if block.get("type") == "tool_use":
                        uses.append(block)
        return uses

    @property
    def transcript_path(self) -> Path | None:
        """~/.claude/projects/<munged cwd>/<session_id>.jsonl under the throwaway HOME."""
        projects = self.home / ".claude" / "projects"
        sid = self.session_id
        if sid:
            expected = projects / transcript_dir_name(self.cwd) / f"{sid}.jsonl"
            if expected.is_file():
                return expected
            found = sorted(projects.glob(f"*/{sid}.jsonl"))
            if found:
                return found[0]
        return None

    def transcript(self) -> list[dict[str, Any]]:
        path = self.transcript_path
        if path is None:
            return []
        records = []
        for line in path.read_text().splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                continue  # the transcript format is unofficial; skip what we cannot read
        return records

    def describe(self) -> str:
        """A compact dump for assertion messages."""
        tail = self.stderr[-2000:]
        results = "\n".join(
            f"  {r.tool_use_id} err={r.is_error}: {r.text[:200]!r}"
            for r in self.tool_results
        )
        return (
            f"claude exited {self.returncode} in {self.duration_s:.2f}s "
            f"(first model request at {self.timings.get('first_request_s')}s); "
            f"{len(self.requests)} model requests\ntool_results seen by the model:\n{results}\n"
            f"result: {json.dumps(self.result)[:500] if self.result else None}\nstderr tail:\n{tail}"
        )


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_claude(
    prompt: str,
    *,
    cwd: Path | str,
    settings_path: Path | str,
    model_server: ScriptedModelServer,
    env_extra: Mapping[str, str] | None = None,
    timeout: float = 120,
    home: Path | str | None = None,
    policy: Policy | None = None,
    extra_args: Sequence[str] = (),
    reap_process_group: bool = True,
    allowed_tools: Sequence[str] | None = ("Bash",),
) -> ClaudeRun:
    """Run `claude -p <prompt>` headless against `model_server` and collect what happened.

    `home` defaults to a fresh temp dir (left in place so the transcript can be read).
    `policy`, if given, replaces the server's policy for this run.
    `allowed_tools` becomes `--allowedTools …` (None: no flag at all, as a headless user without one runs).
    With `reap_process_group`, anything still alive in the CLI's process group after it exits is
    killed (hooks, Bash subprocesses). A daemon that must outlive the run has to setsid itself.
    """
    binary = claude_binary()
    cwd = Path(cwd).resolve()
    home_path = (
        Path(home)
        if home is not None
        else Path(tempfile.mkdtemp(prefix="claude-home-"))
    )
    home_path.mkdir(parents=True, exist_ok=True)
    if policy is not None:
        model_server.policy = policy
    argv = [
        str(binary),
        "-p",
        prompt,
        "--settings",
        str(settings_path),
        "--output-format",
        "stream-json",
        "--verbose",
        *(["--allowedTools", *allowed_tools] if allowed_tools else []),
        *extra_args,
    ]
    env = offline_env(home_path, model_server.url, env_extra)
    first_request = len(model_server.requests)
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    # Reader threads, so stdout lines get arrival times (to measure the CLI's exit tail) and
    # neither pipe can fill up and stall the CLI.
    stdout_lines: list[tuple[float, str]] = []
    stderr_chunks: list[str] = []
    readers = [
        threading.Thread(
            target=lambda: stdout_lines.extend(
                (time.monotonic(), line) for line in proc.stdout
            ),
            daemon=True,
        ),
        threading.Thread(target=lambda: stderr_chunks.extend(proc.stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.wait()
        for reader in readers:
            reader.join(timeout=5)
        raise ClaudeTimeout(
            f"claude -p did not finish in {timeout}s; {len(model_server.requests) - first_request} model "
            f"requests.\nstdout tail:\n{''.join(line for _, line in stdout_lines)[-2000:]}\n"
            f"stderr tail:\n{''.join(stderr_chunks)[-2000:]}"
        ) from None
    finally:
        if reap_process_group:
            _kill_group(proc.pid)
    ended = time.monotonic()
    for reader, pipe in zip(readers, (proc.stdout, proc.stderr)):
        # A grandchild that escaped the group reaping could hold the pipes open; do not hang on it.
        reader.join(timeout=5)
        if not reader.is_alive():
            pipe.close()

    events, unparsed = [], []
    result_at = None
    for at, line in stdout_lines:
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            unparsed.append(line)
            continue
        events.append(event)
        if event.get("type") == "result":
            result_at = at
    requests = model_server.requests[first_request:]
    timings = {
        "total_s": ended - started,
        "first_request_s": (requests[0].received_at - started) if requests else None,
        "result_s": (result_at - started) if result_at is not None else None,
        "exit_after_result_s": (ended - result_at) if result_at is not None else None,
    }
    return ClaudeRun(
        argv=argv,
        returncode=proc.returncode,
        stdout="".join(line for _, line in stdout_lines),
        stderr="".join(stderr_chunks),
        duration_s=timings["total_s"],
        home=home_path,
        cwd=cwd,
        requests=requests,
        events=events,
        unparsed_lines=unparsed,
        timings=timings,
    )


# --------------------------------------------------------------------------------------------
# Settings helpers
# --------------------------------------------------------------------------------------------


def hook_group(
    handlers: Iterable[Mapping[str, Any]], matcher: str | None = None
) -> dict[str, Any]:
    """One matcher group of a settings `hooks` event list."""
    group: dict[str, Any] = {"hooks": [dict(h) for h in handlers]}
    if matcher is not None:
        group["matcher"] = matcher
    return group


def write_settings(
    path: Path | str, hooks: Mapping[str, list[dict[str, Any]]], **extra: Any
) -> Path:
    """Write a settings.json with the given `hooks` mapping (event -> matcher groups)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": dict(hooks), **extra}, indent=2))
    return path


@dataclass
class ClaudeEnv:
    """A scratch git repo, a throwaway HOME and a model server: one sandbox for `claude -p` runs."""

    repo: Path
    home: Path
    model_server: ScriptedModelServer

    def run(
        self,
        prompt: str,
        *,
        settings_path: Path | str,
        policy: Policy | None = None,
        env_extra: Mapping[str, str] | None = None,
        timeout: float = 120,
        extra_args: Sequence[str] = (),
        allowed_tools: Sequence[str] | None = ("Bash",),
    ) -> ClaudeRun:
        return run_claude(
            prompt,
            cwd=self.repo,
            settings_path=settings_path,
            model_server=self.model_server,
            env_extra=env_extra,
            timeout=timeout,
            home=self.home,
            policy=policy,
            extra_args=extra_args,
            allowed_tools=allowed_tools,
        )


def make_scratch_repo(path: Path) -> Path:
    """`git init` a repo with a local identity (no global git config exists under a fake HOME)."""
    path.mkdir(parents=True, exist_ok=True)
    for args in (
        ["init", "-q"],
        ["config", "user.email", "e2e@example.invalid"],
        ["config", "user.name", "ctx e2e"],
        ["config", "commit.gpgsign", "false"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path


def install_ctx(tmp_path: Path, ctx_home: Path) -> Path:
    """`ctx install --settings` into an empty settings file (no permission rule: the world most
    headless users run), with `ctx_home` as CTX_HOME -> the settings file to hand the CLI."""
    import sys
    settings = tmp_path / "settings.json"
    settings.write_text("{}")
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "install", "--settings", str(settings)],
                       env=dict(os.environ, CTX_HOME=str(ctx_home)), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return settings


def ctx_env(ctx_home: Path) -> dict[str, str]:
    """What a CLI session with ctx needs in its environment: ctx's home, this venv's bin on PATH
    (so the hooks' `ctx` is this tree's), the tokenizer's cache if the run has one."""
    import sys
    venv_bin = os.path.dirname(sys.executable)
    return {"CTX_HOME": str(ctx_home), "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
            "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")}


def kill_daemon_of(ctx_home: Path) -> None:
    """The daemon the session's hooks started under `ctx_home`, if one is still running."""
    from reflex import paths
    from reflex.daemon import control
    pid = control.lock_pid(paths.resolve({"CTX_HOME": str(ctx_home)}))
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
