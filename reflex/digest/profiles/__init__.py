"""The profile registry: family name -> profile, and how a family picks one.

A plain dict (greppable, no import magic).  `for_family` maps the signature
module's family names (pytest, go-test, npm-script, make, ...) onto profiles;
npm scripts run anything, so their output is sniffed with each profile's
cheap `detect`.  Families without a profile get the generic one.
"""

from __future__ import annotations

from reflex.digest.facts import Facts
from reflex.digest.profiles import (cargotest, ctest, eslint, exunit, generic, gotest, gotestsum, jest, junit, minitest,
                                    mypy, nodetest, phpunit, prove, pytest, rspec, ruff, tsc, vitest)
from reflex.digest.profiles import buntest, denotest, playwright
from reflex.digest.profiles.base import Profile
from reflex.digest.text import Output

PROFILES: dict[str, Profile] = {
    "pytest": pytest.PROFILE,
    "gotest": gotest.PROFILE,
    "cargotest": cargotest.PROFILE,
    "jest": jest.PROFILE,
    "vitest": vitest.PROFILE,
    "tsc": tsc.PROFILE,
    "eslint": eslint.PROFILE,
    "ruff": ruff.PROFILE,
    "mypy": mypy.PROFILE,
    "nodetest": nodetest.PROFILE,
    "exunit": exunit.PROFILE,
    "rspec": rspec.PROFILE,
    "minitest": minitest.PROFILE,
    "phpunit": phpunit.PROFILE,
    "junit": junit.PROFILE,
    "gotestsum": gotestsum.PROFILE,
    "prove": prove.PROFILE,
    "ctest": ctest.PROFILE,
    "generic": generic.PROFILE,
}
# JS runtimes' runners (issue 13)
PROFILES.update({"buntest": buntest.PROFILE, "denotest": denotest.PROFILE, "playwright": playwright.PROFILE})

# Signature family -> profile name.
FAMILIES: dict[str, str] = {
    "pytest": "pytest",
    "go-test": "gotest",
    "go": "gotest",
    "cargo-test": "cargotest",
    "cargo": "cargotest",
    "node-test": "nodetest",
    "mix": "exunit",  # other mix tasks' output is not ExUnit's: handed over to generic
}
FAMILIES.update({"bun-test": "buntest", "deno": "denotest",  # other deno subcommands: generic
                 "playwright": "playwright"})

# Order matters: more specific formats first.
SNIFF_ORDER: tuple[str, ...] = ("vitest", "jest", "tsc", "eslint", "pytest", "gotestsum", "gotest", "cargotest", "ruff", "mypy",
                                "nodetest", "exunit", "rspec", "minitest",
                                "phpunit", "junit")
# `bun test v1.x` opens every bun test run: no other runner prints it.
SNIFF_ORDER = ("buntest",) + SNIFF_ORDER + ("denotest", "playwright")


def sniff(raw: bytes) -> Profile:
    out = Output.of(raw)
    for name in SNIFF_ORDER:
        if name in PROFILES and PROFILES[name].detect(out):
            return PROFILES[name]
    return PROFILES["generic"]


def for_family(family: str, raw: bytes) -> Profile:
    name = FAMILIES.get(family)
    if name is None and family in PROFILES:
        name = family
    if name is None:
        return sniff(raw) if family == "npm-script" else PROFILES["generic"]
    return PROFILES[name]


def extract(raw: bytes, *, family: str, exit_code: int | None, command: str) -> Facts:
    return for_family(family, raw).extract(raw, exit_code, command)
