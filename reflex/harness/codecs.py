"""Harness name -> codec module (decode, encode, CAPS, SESSION_ENV).  stdlib-only; imported lazily."""

from __future__ import annotations

from types import ModuleType

NAMES = ("codex", "gemini", "copilot")


def get(name: str) -> ModuleType | None:
    if name not in NAMES:
        return None
    if name == "codex":
        from reflex.harness import codex as codec
    elif name == "gemini":
        from reflex.harness import gemini as codec
    else:
        from reflex.harness import copilot as codec
    return codec
