"""ctx's config file, validated with pydantic: what the daemon and `ctx doctor` accept.

A broken config.json is refused, loudly, naming the file and the key: the daemon does not start
on it, `ctx doctor` fails its check, `ctx install` will not rewrite it.  The hot path (`ctx run`,
`ctx hook`) cannot import pydantic; it runs `reflex.config.parse`, the same rules in the standard
library, fails open with the defaults and says what is wrong on stderr (tests/test_config.py
holds both to the same verdicts).
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from reflex.errors import UserError

_Seconds = Annotated[StrictFloat, Field(ge=0)]   # strict: an int is a float, a bool is not


class ConfigFile(BaseModel):
    """Every key is optional (its default is in reflex.config.DEFAULTS); no other key is allowed."""
    model_config = ConfigDict(extra="forbid", strict=True)

    launcher: StrictStr | None = None
    rewrite_permission: Literal["auto", "allow", "off", "ask", "omit"] = "auto"
    http_port: Annotated[StrictInt, Field(ge=0, le=65535)] = 0
    idle_seconds: _Seconds = 1800
    installed_settings: list[StrictStr] = []
    installed_harnesses: dict[StrictStr, list[StrictStr]] = {}
    safety_allow: list[StrictStr] = []
    blob_max_bytes: Annotated[StrictInt, Field(ge=0)] = 1 << 30
    blob_max_age_days: _Seconds = 30
    search_time_limit_s: Annotated[StrictFloat, Field(gt=0)] = 1.0
    search_warm: StrictBool = True
    session_facts: StrictBool = True
    session_facts_after_s: _Seconds = 30.0


class ConfigInvalid(UserError):
    """ctx's config file cannot be used as written."""


def check_bytes(raw: bytes) -> list[str]:
    """What is wrong with a config file's bytes, one line per problem, each naming its key."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        return ["not UTF-8 (%s)" % e]
    except ValueError as e:
        return ["not valid JSON (%s)" % e]
    if not isinstance(data, dict):
        return ["not a JSON object"]
    try:
        ConfigFile.model_validate(data)
    except ValidationError as e:
        return [_describe(err) for err in e.errors()]
    return []


def _describe(err: dict) -> str:
    loc = err.get("loc") or ()
    key = ".".join(str(x) for x in loc) or "(file)"
    if err.get("type") == "extra_forbidden":
        return "unknown key %r" % key
    return "key %r: %s, not %s" % (key, err.get("msg"), json.dumps(err.get("input"), default=str)[:80])


def check(path: str) -> list[str]:
    """What is wrong with the config file at `path` ([] when it is fine or absent; a file load()
    ignores as untrusted is doctor's other check)."""
    from reflex.paths import read_private_file
    raw = read_private_file(path)
    return [] if raw is None else check_bytes(raw)


def require_valid(path: str) -> None:
    """Raise ConfigInvalid naming the file and every bad key, or return."""
    found = check(path)
    if found:
        raise ConfigInvalid("ctx: %s is invalid: %s; fix it, or move it away to use the defaults"
                            % (path, "; ".join(found)))
