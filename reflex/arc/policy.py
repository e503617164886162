"""A policy epoch: the reviewed, committed starting point of the reflex arc.

A policy epoch is a TOML file (the shipped default is policies/default.toml; `ctx policy
compile` writes new ones from ledgers).  It fixes the starting digest density per command
family and reader tier, and every threshold the detectors use.  Reflexes then adapt within a
session from that starting point; the epoch itself never changes at runtime.

    from reflex.arc.policy import load_policy, default_policy
    policy = load_policy("policies/default.toml")   # PolicyError with every problem listed
    policy.start_density("pytest", "small")         # -> "normal"

Unknown keys are errors (a typo must not silently fall back to a default).  The pydantic
defaults below are the same values as policies/default.toml (a test holds them equal), so a
missing epoch file still yields the default behaviour.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from reflex.errors import UserError

Density = Literal["lean", "normal", "dense", "inline", "raw-capped"]
LADDER: tuple[str, ...] = ("lean", "normal", "dense", "inline", "raw-capped")
PROFILED_FAMILIES = ("pytest", "go-test", "cargo-test", "jest", "vitest", "tsc", "ruff", "mypy", "eslint", "make")
ROUTES = ("bash -c", "env", "abs-path", "python -m", "command", "exec", "script")

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "policies" / "default.toml"


class PolicyError(UserError):
    """A policy file that cannot be used; the message lists every problem."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Epoch(_Model):
    name: str = "default"
    version: int = 1
    created: str = ""
    source: str = "hand-written"
    ledgers: list[str] = Field(default_factory=list)
    events: int = 0


class Reflexes(_Model):
    enabled: bool = True


class DensityStart(_Model):
    start: Density = "normal"


class FamilyDefaults(_Model):
    density: Density | None = None
    tiers: dict[str, Density] = Field(default_factory=dict)
    # Hint cap for this family's digests (None: the renderer's own); a compiled epoch writes 0
    # where the ledgers show hints are never followed.
    hints: int | None = Field(None, ge=0)


class Starvation(_Model):
    fire_at: int = Field(2, ge=2)
    breaker_after: int = Field(2, ge=1)
    verbatim_after_digest: bool = True


class Affordance(_Model):
    min_hints: int = Field(1, ge=1)
    fire_after_ignored: int = Field(2, ge=1)


class Friction(_Model):
    retry_fire_at: int = Field(2, ge=2)
    routes: list[str] = Field(default_factory=lambda: list(ROUTES))


class Polling(_Model):
    output_patterns: list[str] = Field(default_factory=lambda: [r"/tasks/[^/]+\.output$", r"\.(log|out|output)$"])
    sleep_words: list[str] = Field(default_factory=lambda: ["sleep", "watch"])


class Landings(_Model):
    failure_count_falling: bool = True
    remediation_window: int = Field(1, ge=1)


class Policy(_Model):
    epoch: Epoch = Field(default_factory=Epoch)
    reflexes: Reflexes = Field(default_factory=Reflexes)
    density: DensityStart = Field(default_factory=DensityStart)
    tiers: dict[str, str] = Field(default_factory=lambda: {"haiku": "small", "sonnet": "mid", "opus": "large"})
    families: dict[str, FamilyDefaults] = Field(
        default_factory=lambda: {f: FamilyDefaults(density="normal") for f in PROFILED_FAMILIES})
    starvation: Starvation = Field(default_factory=Starvation)
    affordance: Affordance = Field(default_factory=Affordance)
    friction: Friction = Field(default_factory=Friction)
    polling: Polling = Field(default_factory=Polling)
    # Priors from evidence outcomes (`ctx policy compile --plan-value`): min_evidence plus, per
    # family, {runs, rates{outcome: float}, value, tiers{tier: float}}.  Read by reviewers and
    # by the next compile; no reflex depends on it at runtime.
    plan_value: dict = Field(default_factory=dict)
    landings: Landings = Field(default_factory=Landings)

    def tier_of(self, model: str | None) -> str | None:
        """The reader tier of a model id: the first tiers key contained in it."""
        if not model:
            return None
        m = model.lower()
        for key in sorted(self.tiers):
            if key.lower() in m:
                return self.tiers[key]
        return None

    def start_density(self, family: str | None, tier: str | None = None) -> str:
        fam = self.families.get(family or "")
        if fam is not None:
            if tier and tier in fam.tiers:
                return fam.tiers[tier]
            if fam.density:
                return fam.density
        return self.density.start


def _problems(e: ValidationError) -> list[str]:
    out = []
    for err in e.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(top level)"
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown key"
        out.append("%s: %s" % (loc, msg))
    return out


def parse_policy(text: str, origin: str = "<policy>") -> Policy:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise PolicyError("%s: not valid TOML: %s" % (origin, e)) from None
    try:
        return Policy.model_validate(data)
    except ValidationError as e:
        lines = _problems(e)
        raise PolicyError("%s: %d problem(s):\n  %s" % (origin, len(lines), "\n  ".join(lines))) from None


def load_policy(path) -> Policy:
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise PolicyError("%s: cannot read policy: %s" % (path, e.strerror or e)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PolicyError("%s: not UTF-8 (byte %d)" % (path, e.start)) from None
    return parse_policy(text, path)


_default: Policy | None = None


def default_policy() -> Policy:
    """The shipped default epoch (policies/default.toml), or the built-in defaults when the
    file is not installed alongside the package."""
    global _default
    if _default is None:
        _default = load_policy(DEFAULT_PATH) if DEFAULT_PATH.is_file() else Policy()
    return _default
