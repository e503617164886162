"""The real Codex, Gemini, Copilot, Qwen Code, OpenCode and Droid CLIs, installed from npm (pinned) and run headless, offline,
against a scripted model server.

Installs are cached under $CTX_TEST_NPM_CACHE, else $XDG_CACHE_HOME/ctx-tests/npm, else
~/.cache/ctx-tests/npm, one prefix per package@version, so CI pays each once.  A test skips only
when npm is missing or the registry cannot be reached; any other install failure fails it.

Each run gets a throwaway HOME (XDG dirs under it), the harness's own config pointing at the
scripted server, the harness's normal automation mode (what users run in CI or scripts:
`codex exec --dangerously-bypass-approvals-and-sandbox`, `gemini -p --approval-mode yolo`,
`copilot -p --allow-all-tools`, `qwen -p --yolo`, `droid exec --skip-permissions-unsafe`, `opencode run`
with OpenCode's default permissions), and its own process group, killed afterwards.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

PINNED = {"codex": ("@openai/codex", "0.171.0"), "gemini": ("@google/gemini-cli", "0.61.0"),
          "copilot": ("@github/copilot", "1.0.102"), "qwen": ("@qwen-code/qwen-code", "0.24.4"),
          "opencode": ("opencode-ai", "1.18.33"), "droid": ("@factory/cli-linux-x64", "0.225.2")}
# Where the executable lands when it is not node_modules/.bin/<name>: Droid's platform package has
# no bin entry (its wrapper @factory/cli 0.225.1 names a platform package the registry lacks).
_BINARY = {"droid": ("node_modules", "@factory", "cli-linux-x64", "bin", "droid")}
_NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH",
                   "network request", "getaddrinfo")
_SCRUB_PREFIXES = ("CODEX_", "GEMINI_", "GOOGLE_", "COPILOT_", "OPENAI_", "ANTHROPIC_", "CLAUDE", "OTEL_",
                   "GH_", "GITHUB_", "QWEN_", "OPENCODE", "FACTORY_", "DROID_")
_SCRUB_NAMES = {"IS_SANDBOX", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                "CTX_HOME", "CTX_SESSION_START_WAIT"}


def _npm_cache_dir() -> Path:
    if os.environ.get("CTX_TEST_NPM_CACHE"):
        return Path(os.environ["CTX_TEST_NPM_CACHE"])
    # The account's real home, not $HOME: the suite's fixtures point HOME at a per-test directory,
    # and the cache must outlive the test.
    import pwd
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".cache")
    return Path(base) / "ctx-tests" / "npm"


NPM_CACHE = _npm_cache_dir()  # resolved at import, before any fixture changes the environment


def npm_cache_dir() -> Path:
    return NPM_CACHE


def cli_binary(name: str) -> Path:
    """The pinned CLI's launcher, installed on first use; skips when npm cannot reach its registry."""
    package, version = PINNED[name]
    prefix = npm_cache_dir() / ("%s@%s" % (package.replace("/", "+"), version))
    binary = prefix.joinpath(*_BINARY.get(name, ("node_modules", ".bin", name)))
    if os.access(binary, os.X_OK):
        return binary
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: cannot install %s@%s" % (package, version))
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test processes install once
        if not os.access(binary, os.X_OK):
            p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(prefix),
                                "%s@%s" % (package, version)], capture_output=True, text=True, timeout=600)
            if p.returncode != 0:
                text = p.stdout + p.stderr
                if any(e in text for e in _NETWORK_ERRORS):
                    pytest.skip("npm registry unreachable, cannot install %s@%s: %s" % (package, version, text[-300:]))
                raise AssertionError("npm install %s@%s failed:\n%s" % (package, version, text[-2000:]))
    assert os.access(binary, os.X_OK), binary
    return binary


@dataclass
class CLIRun:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        return "rc=%d %.1fs\n--- stdout\n%s\n--- stderr\n%s" % (self.returncode, self.seconds, self.stdout[-3000:],
                                                                   self.stderr[-3000:])


def base_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES) and k not in _SCRUB_NAMES}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_STATE_HOME=str(home / ".local" / "state"),
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.update(extra or {})
    return env


def prepare_home(name: str, home: Path, api_url: str) -> dict[str, str]:
    """Write the CLI's model config under `home`; -> the variables the CLI needs."""
    home.mkdir(parents=True, exist_ok=True)
    if name == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(exist_ok=True)
        if not (codex_home / "config.toml").exists():
            (codex_home / "config.toml").write_text(
                'model_provider = "scripted"\nmodel = "gpt-5"\n\n[model_providers.scripted]\nname = "scripted"\n'
                'base_url = "%s"\nwire_api = "responses"\nenv_key = "SCRIPTED_KEY"\n' % api_url)
        return {"CODEX_HOME": str(codex_home), "SCRIPTED_KEY": "dummy"}
    if name == "gemini":
        (home / ".gemini").mkdir(exist_ok=True)
        path = home / ".gemini" / "settings.json"
        settings = json.loads(path.read_text()) if path.exists() else {}  # keep hooks installed there
        settings.update({"security": {"auth": {"selectedType": "gemini-api-key"}},
                         "privacy": {"usageStatisticsEnabled": False},
                         "general": {"disableAutoUpdate": True, "disableUpdateNag": True}})
        path.write_text(json.dumps(settings))
        return {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": api_url, "GEMINI_CLI_TRUST_WORKSPACE": "true",
                "GEMINI_CLI_NO_RELAUNCH": "true"}
    if name == "copilot":
        (home / ".copilot").mkdir(exist_ok=True)
        return {"COPILOT_HOME": str(home / ".copilot"), "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
                "COPILOT_PROVIDER_BASE_URL": api_url, "COPILOT_PROVIDER_WIRE_API": "responses",
                "COPILOT_PROVIDER_API_KEY": "dummy", "COPILOT_MODEL": "gpt-5"}
    if name == "qwen":
        (home / ".qwen").mkdir(exist_ok=True)
        path = home / ".qwen" / "settings.json"
        settings = json.loads(path.read_text()) if path.exists() else {}  # keep hooks installed there
        settings.update({"security": {"auth": {"selectedType": "openai"}}, "privacy": {"usageStatisticsEnabled": False},
                         "general": {"disableAutoUpdate": True, "disableUpdateNag": True}})
        path.write_text(json.dumps(settings))
        return {"OPENAI_API_KEY": "dummy", "OPENAI_BASE_URL": api_url, "OPENAI_MODEL": "mock-model",
                "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1", "QWEN_CODE_NO_RELAUNCH": "true"}
    if name == "droid":
        # A BYOK model needs no Factory login; airgap mode skips the telemetry that costs ~6 s offline.
        (home / ".factory").mkdir(exist_ok=True)
        path = home / ".factory" / "settings.json"
        settings = json.loads(path.read_text()) if path.exists() else {}
        settings["customModels"] = [{"model": "mock-model", "displayName": "Mock", "baseUrl": api_url,
                                     "apiKey": "dummy", "provider": "generic-chat-completion-api",
                                     "maxOutputTokens": 4096}]
        path.write_text(json.dumps(settings))
        return {"FACTORY_AIRGAP_ENABLED": "true", "FACTORY_DROID_AUTO_UPDATE_ENABLED": "false",
                "FACTORY_DISABLE_KEYRING": "1"}
    if name == "opencode":
        # The provider goes in the project's opencode.json (written by the session, which knows the
        # repo).  OpenCode creates ~/.config/opencode and npm-installs its plugin SDK there, and waits
        # for that before it loads any plugin: ~10 s online, ~70 s until it fails offline.  Its
        # installer skips a directory whose node_modules exists and whose package-lock lists every
        # dependency, so the home says the SDK is installed (ctx's plugin imports nothing from it).
        config_dir = home / ".config" / "opencode"
        (config_dir / "node_modules").mkdir(parents=True, exist_ok=True)
        sdk = {"@opencode-ai/plugin": PINNED["opencode"][1]}
        (config_dir / "package.json").write_text(json.dumps({"dependencies": sdk}))
        (config_dir / "package-lock.json").write_text(json.dumps({"packages": {"": {"dependencies": sdk}}}))
        return {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
                "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1"}
    raise ValueError(name)


def opencode_config(api_url: str) -> dict:
    """A project opencode.json for the scripted model (the Chat Completions provider is bundled)."""
    return {"$schema": "https://opencode.ai/config.json", "model": "mock/mock-model", "autoupdate": False,
            "share": "disabled", "provider": {"mock": {
                "npm": "@ai-sdk/openai-compatible", "name": "Mock", "options": {"baseURL": api_url, "apiKey": "dummy"},
                "models": {"mock-model": {"name": "Mock Model", "tool_call": True,
                                          "limit": {"context": 128000, "output": 8192}}}}}}


def argv_for(name: str, binary: Path, repo: Path, prompt: str, extra: Sequence[str] = ()) -> list[str]:
    if name == "codex":
        return [str(binary), "exec", "--json", "--dangerously-bypass-approvals-and-sandbox",
                "--dangerously-bypass-hook-trust", "-C", str(repo), *extra, prompt]
    if name == "gemini":
        return [str(binary), "-p", prompt, "--approval-mode", "yolo", "-o", "json", "-m", "gemini-2.5-flash", *extra]
    if name == "copilot":
        return [str(binary), "-p", prompt, "--allow-all-tools", "--output-format", "json", *extra]
    if name == "qwen":
        return [str(binary), "-p", prompt, "--yolo", "-o", "json", *extra]
    if name == "droid":
        return [str(binary), "exec", "--skip-permissions-unsafe", "-m", "custom:Mock-0", "-o", "json", *extra, prompt]
    if name == "opencode":
        return [str(binary), "run", "--format", "json", "-m", "mock/mock-model", *extra, prompt]
    raise ValueError(name)


def run_cli(name: str, *, repo: Path, home: Path, api_url: str, prompt: str, env_extra: Mapping[str, str],
            extra_args: Sequence[str] = (), timeout: float = 120.0, argv: Sequence[str] | None = None) -> CLIRun:
    binary = cli_binary(name)
    # PWD as a shell would set it: OpenCode takes its project directory from it, not from getcwd().
    env = base_env(home, {**prepare_home(name, home, api_url), "PWD": str(repo), **env_extra})
    cmd = list(argv) if argv is not None else argv_for(name, binary, repo, prompt, extra_args)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError("%s timed out after %ss\n%s\n%s" % (name, timeout, out[-2000:], err[-2000:]))
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # hooks and shell children must not outlive the run
        except OSError:
            pass
    return CLIRun(proc.returncode, out, err, time.monotonic() - t0)
