"""Harness name -> codec module (decode, encode, CAPS, SESSION_ENV).  stdlib-only; imported lazily."""

from __future__ import annotations

from types import ModuleType

NAMES = ("codex", "gemini", "copilot", "qwen", "opencode", "droid", "cursor")


def get(name: str) -> ModuleType | None:
    if name not in NAMES:
        return None
    if name == "codex":
        from reflex.harness import codex as codec
    elif name == "gemini":
        from reflex.harness import gemini as codec
    elif name == "copilot":
        from reflex.harness import copilot as codec
    elif name == "qwen":
        from reflex.harness import qwen as codec
    elif name == "opencode":
        from reflex.harness import opencode as codec
    elif name == "droid":
        from reflex.harness import droid as codec
    else:
        from reflex.harness import cursor as codec
    return codec
