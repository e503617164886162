"""The shim's answer to a non-Claude harness when the daemon cannot give one: safety only.

The payload is decoded by the harness's codec, translated into the Claude shape, and judged by
exactly the functions the daemon uses (reflex.shim.fallback's verdict and safety_answer, passed
in by the shim, which owns them); the answer is fitted to the harness and encoded.  So `cat .env` is denied with the same reason whether the
daemon is up or down.  How far the original payload could be read decides, as for Claude, whether
a call whose command was cut off is denied as unverifiable.

stdlib-only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reflex.harness import codecs
from reflex.harness.claude import payload
from reflex.harness.model import PRE_FILE, PRE_SHELL, degrade, from_claude, to_claude

# Where each harness keeps the tool's arguments, so a cut inside them reads as a cut in tool_input.
_ARGS_KEY = {"copilot": "toolArgs"}


def decide(harness: str, data: bytes, truncated: bool, env: dict[str, Any], event_hint: str, *,
           verdict: Callable[..., Any], safety_answer: Callable[..., Any]) -> tuple[bytes, bytes, str]:
    """-> (stdout, stderr, local decision tag: deny | redact | malformed | none).

    `verdict(harness, reading, env)` and `safety_answer(obj, found, env)` are the shim's."""
    codec = codecs.get(harness)
    if codec is None:
        return b"", ("ctx hook: unknown harness %r\n" % harness).encode(), "none"
    reading = payload.read(data, truncated)
    if reading.obj is None:
        return b"", ("ctx hook: ignored malformed payload: %s\n" % reading.problem).encode(), "malformed"
    event = codec.decode(reading.obj, event_hint)
    if event.kind not in (PRE_SHELL, PRE_FILE):
        return b"", b"", "none"
    claude = to_claude(event)
    open_keys = tuple("tool_input" if k == _ARGS_KEY.get(harness) else k for k in reading.open_keys)
    if event.kind == PRE_SHELL and event.command is None and not reading.complete:
        # The command itself was cut off: the Claude reading must not look like a complete call.
        claude["tool_input"].pop("command", None)
        open_keys = ("tool_input",)
    translated = payload.Reading(claude, reading.problem, reading.complete, open_keys)
    found = verdict("claude", translated, env)
    answer = safety_answer(claude, found, env) if found is not None else None
    if answer is None:
        if reading.problem is not None:
            return b"", ("ctx hook: ignored malformed payload: %s\n" % reading.problem).encode(), "malformed"
        return b"", b"", "none"
    decision = degrade(from_claude(answer), codec.CAPS)
    tag = "redact" if found.rule == "secret-redact" else "deny"
    return codec.encode(decision, event), b"", tag
