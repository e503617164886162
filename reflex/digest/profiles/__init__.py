"""The profile registry: family name -> profile, and how a family picks one.

A plain dict (greppable, no import magic).  `for_family` maps the signature
module's family names (pytest, go-test, npm-script, make, ...) onto profiles;
npm scripts run anything, so their output is sniffed with each profile's
cheap `detect`.  Families without a profile get the generic one.
"""

from __future__ import annotations

from reflex.digest.facts import Facts
from reflex.digest.profiles import (biome, buntest, cargobuild, cargotest, cc, cilog, ctest, denotest, esbuild, eslint, exunit, flake8, generic,
                                    git, gobuild, gotest, gotestsum, gradle, install, jest, junit, listing, minitest, mypy, nodetest, phpunit,
                                    playwright, prove, pylint, pyright, pytest, rspec, ruff, search, shellcheck, surefire, tsc, vite,
                                    vitest, webpack)
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
    "surefire": surefire.PROFILE,
    "gradle": gradle.PROFILE,
    "esbuild": esbuild.PROFILE,
    "webpack": webpack.PROFILE,
    "vite": vite.PROFILE,
    "flake8": flake8.PROFILE,
    "pylint": pylint.PROFILE,
    "shellcheck": shellcheck.PROFILE,
    "pyright": pyright.PROFILE,
    "biome": biome.PROFILE,
    "buntest": buntest.PROFILE,
    "denotest": denotest.PROFILE,
    "playwright": playwright.PROFILE,
    "cc": cc.PROFILE,  # gcc/clang diagnostics through make, cmake --build, ninja (sniffed)
    "cargobuild": cargobuild.PROFILE,
    "gobuild": gobuild.PROFILE,
    "govet": gobuild.VET_PROFILE,
    # Tools that are not runners (issue 29): their census is Items (facts.Item).
    "git": git.PROFILE,
    "search": search.PROFILE,
    "listing": listing.PROFILE,
    "cilog": cilog.PROFILE,  # gh run view --log / --log-failed: GitHub Actions logs
    "install": install.PROFILE,  # package managers: pip, npm, apt (others hand over to generic)
    "generic": generic.PROFILE,
}

# Signature family -> profile name.
FAMILIES: dict[str, str] = {
    "pytest": "pytest",
    "go-test": "gotest",
    "go": "gotest",
    "cargo-test": "cargotest",
    "cargo": "cargotest",
    "node-test": "nodetest",
    "mix": "exunit",  # other mix tasks' output is not ExUnit's: handed over to generic
    "maven": "surefire",  # Maven's log: Surefire's report, javac's errors, a failed goal
    "bun-test": "buntest",
    "deno": "denotest",  # other deno subcommands: generic
    "cargo-build": "cargobuild",  # cargo build / check / clippy
    "go-build": "gobuild",
    "go-vet": "govet",
    "git": "git",
    "search": "search",
    "listing": "listing",
    "gh": "cilog",
    "pkg-install": "install",
}

# Order matters: more specific formats first (`bun test v1.x` opens every bun test run: no other
# runner prints it).
SNIFF_ORDER: tuple[str, ...] = ("buntest", "vitest", "jest", "tsc", "eslint", "pytest", "gotestsum", "gotest", "cargotest",
                                "ruff", "mypy", "nodetest", "exunit", "rspec", "minitest", "phpunit", "junit", "webpack",
                                "esbuild", "vite", "pylint", "shellcheck", "pyright", "biome", "denotest", "playwright",
                                # build tools' output (make, cmake --build, ninja) after every runner and linter
                                "ctest", "cc")
# Build tools run anything (`make test` may run pytest or ctest): their output is sniffed like an npm
# script's, the test and lint profiles first, then compiler diagnostics (cc), then generic.
SNIFFED_FAMILIES = frozenset({"npm-script", "make", "cmake-build", "ninja"})


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
        return sniff(raw) if family in SNIFFED_FAMILIES else PROFILES["generic"]
    return PROFILES[name]


def extract(raw: bytes, *, family: str, exit_code: int | None, command: str) -> Facts:
    return for_family(family, raw).extract(raw, exit_code, command)
