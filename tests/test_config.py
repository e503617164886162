"""Issue 30 item 3: a broken config.json is refused loudly (daemon, doctor, install), naming the
file and the key; the hot path (`ctx run`, `ctx hook`) fails open and says what is wrong, once."""

import json
import os
import subprocess
import sys

import pytest

from reflex import config, config_model

from tests.conftest import ctx_cmd

INVALID_JSON = b'{"rewrite_permission": "auto",\n'
BAD_VALUE = b'{"rewrite_permission": "bogus"}'
BROKEN = [pytest.param(INVALID_JSON, "not valid JSON", id="invalid-json"),
          pytest.param(BAD_VALUE, "'rewrite_permission'", id="bad-value")]


def _write(paths, raw):
    os.makedirs(paths.home, mode=0o700, exist_ok=True)
    with open(paths.config, "wb") as f:
        f.write(raw)
    os.chmod(paths.config, 0o600)


@pytest.mark.parametrize("raw, says", BROKEN)
def test_the_daemon_refuses_a_broken_config(paths, raw, says):
    _write(paths, raw)
    p = subprocess.run([sys.executable, "-m", "reflex.daemon", "run"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and paths.config in p.stderr and says in p.stderr, p.stderr
    p = subprocess.run(ctx_cmd() + ["daemon", "start"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and paths.config in p.stderr and says in p.stderr, p.stderr
    assert not os.path.exists(paths.socket)


@pytest.mark.parametrize("raw, says", BROKEN)
def test_doctor_fails_on_a_broken_config_naming_the_key(paths, raw, says):
    _write(paths, raw)
    p = subprocess.run(ctx_cmd() + ["doctor", "--json"], capture_output=True, text=True, timeout=120)
    check = {c["name"]: c for c in json.loads(p.stdout)}["config"]
    assert p.returncode == 1 and not check["ok"], check
    assert paths.config in check["detail"] and says in check["detail"], check


@pytest.mark.parametrize("raw, says", BROKEN)
def test_install_will_not_rewrite_a_broken_config(paths, tmp_path, raw, says):
    _write(paths, raw)
    p = subprocess.run(ctx_cmd() + ["install", "--settings", str(tmp_path / "settings.json")], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1 and says in p.stderr and "nothing was installed" in p.stderr, p.stderr
    assert open(paths.config, "rb").read() == raw, "the user's file is left as it was"
    assert not (tmp_path / "settings.json").exists()


@pytest.mark.parametrize("raw, says", BROKEN)
def test_ctx_run_fails_open_and_says_once_what_is_wrong(paths, raw, says):
    _write(paths, raw)
    code = "for i in range(50): print('line %d' % i)"
    p = subprocess.run(ctx_cmd() + ["run", "--", "python3 -c \"%s\"" % code], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0 and "line 49" in p.stdout, "the command ran and its output is kept"
    lines = [ln for ln in p.stderr.splitlines() if paths.config in ln]
    assert len(lines) == 1 and says in lines[0] and "ctx doctor" in lines[0], p.stderr


@pytest.mark.parametrize("raw, says", BROKEN)
def test_ctx_hook_still_denies_a_secret_read_and_says_what_is_wrong(paths, tmp_path, raw, says):
    _write(paths, raw)
    payload = json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "cwd": str(tmp_path),
                          "tool_name": "Bash", "tool_input": {"command": "cat .env"}, "tool_use_id": "t"})
    p = subprocess.run(ctx_cmd() + ["hook", "claude"], input=payload, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and '"deny"' in p.stdout, (p.stdout, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if paths.config in ln]
    assert len(lines) == 1 and says in lines[0], p.stderr


CASES = [b'{}', b'{"launcher": null, "http_port": 8080, "idle_seconds": 5.5}', b'{"rewrite_permission": "omit"}',
         INVALID_JSON, BAD_VALUE, b'[1]', b'{"http_port": "80"}', b'{"http_port": 70000}', b'{"http_port": true}',
         b'{"idle_seconds": -1}', b'{"search_time_limit_s": 0}', b'{"search_warm": 1}', b'{"session_facts": "no"}',
         b'{"safety_allow": "*.env"}', b'{"safety_allow": ["a", 2]}', b'{"installed_harnesses": {"codex": [1]}}',
         b'{"installed_harnesses": {"codex": ["/x"]}}', b'{"rewrite_permision": "off"}', b'{"launcher": 3}',
         b'{"blob_max_bytes": 1.5}', b'{"blob_max_age_days": 7}', b'\xff\xfe']


@pytest.mark.parametrize("raw", CASES)
def test_the_hot_path_check_agrees_with_pydantic(raw):
    """The stdlib check and the pydantic model find the same keys wrong."""
    strict = config_model.check_bytes(raw)
    cheap = config.parse(raw)[1]
    key = lambda line: line.split("'")[1].split(".")[0] if "'" in line else line.split(" (")[0]
    assert sorted(map(key, strict)) == sorted(map(key, cheap)), (strict, cheap)


def test_a_bad_value_falls_back_to_its_default_alone(paths):
    _write(paths, b'{"rewrite_permission": "bogus", "idle_seconds": 60}')
    cfg = config.load(paths.config, warn=False)
    assert cfg["rewrite_permission"] == "auto" and cfg["idle_seconds"] == 60


def test_every_key_has_a_check_in_both_validators():
    assert set(config._CHECKS) == set(config.DEFAULTS) == set(config_model.ConfigFile.model_fields)
    assert config_model.ConfigFile().model_dump() == config.DEFAULTS
