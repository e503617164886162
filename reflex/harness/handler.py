"""The daemon's side of `ctx hook <harness>` for every harness but Claude: decode, decide once, encode.

A harness's payload is decoded by its codec into a ShellEvent, translated into the Claude-shaped
payload the daemon's decision path reads, and run through that path (ClaudeHandler: safety plane,
permission mirror, rewrite decision, post-hook digest, ledger event).  Its answer is turned back
into a Decision, fitted to the harness's Capabilities and encoded.  The ledger event keeps the
normalized event names (PreToolUse, PostToolUse, ...) that the fold and replay read, and is
labelled with the harness; the harness's own event name is kept in its data.

What the Claude path cannot know about another harness is supplied here:

- permissions: the mirror reads Claude Code's settings, which say nothing about another
  harness.  A command is rewritten (which, on Codex, also allows it) only where the harness runs
  every shell command unasked and unsandboxed, as read from the harness's command line: Codex's
  --dangerously-bypass-approvals-and-sandbox (its payload's `permission_mode` says
  bypassPermissions under any `codex exec` approval policy, and a sandboxed `ctx run` cannot
  write its capture, so the payload alone is not enough), Gemini's YOLO approval mode,
  Copilot's --allow-all-tools / --yolo, Droid's --skip-permissions-unsafe / --auto high,
  cursor-agent's --force, Qwen's YOLO mode (from its payload).  OpenCode checks its permission
  on the rewritten arguments (its plugin cannot say "allow"): ctx rewrites there only where
  OpenCode's own config (sent by the plugin) allows the rewrite as it allows the original
  (reflex.harness.opencode.rewrite_verdict).  Qwen cannot rewrite at all: in YOLO mode the rewrite becomes a deny naming the
  command to run, elsewhere its post hook replaces a successful command's output with the digest;
  Anywhere else the harness keeps its own decision and ctx digests the output in the post hook
  where the harness lets it replace output (Gemini, Copilot), or adds nothing (Codex);
- call ids: Gemini and Copilot have none; pre and post are paired by session and command (the
  post hook shows the command that ran, a rewrite's result);
- the session of a `ctx run`: Gemini's shell has no session variable, so the daemon remembers
  each rewrite (working directory, command) and gives the run that reports it the session.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from reflex.harness import codecs, fallback
from reflex.harness.claude import payload
from reflex.harness.claude.hooks import ClaudeHandler, base_event, malformed_event
from reflex.harness.claude.permissions import ALLOW, UNKNOWN, Verdict
from reflex.harness.model import (OTHER, POST_SHELL, POST_SHELL_FAILED, PRE_SHELL, Decision, ShellEvent, degrade,
                    from_claude, to_claude)

PENDING_LIMIT = 4096
PENDING_TTL_S = 3600.0
# Command-line flags under which the harness runs every shell command without asking anyone.
_AUTO_FLAGS = {
    "codex": (("--dangerously-bypass-approvals-and-sandbox",), ("--yolo",)),
    "gemini": (("--yolo",), ("-y",), ("--approval-mode", "yolo"), ("--approval-mode=yolo",)),
    "copilot": (("--allow-all-tools",), ("--allow-all",), ("--yolo",)),
    "droid": (("--skip-permissions-unsafe",), ("--auto", "high")),
    "cursor": (("--force",), ("-f",), ("--yolo",)),
}
# Harnesses whose own permission check runs on the arguments that actually run (a rewrite's), and
# whose rewrite carries no "allow": rewriting there leaves the decision to the harness.
_JUDGES_WHAT_RUNS = ("opencode",)
# Harnesses whose payload states their approval mode, and the modes that run every command unasked.
_MODE_IN_PAYLOAD = {"qwen": ("yolo",)}


class _Mode:
    """The permission context the Claude path records (path, mode)."""

    def __init__(self, mode: str, path: str | None = None) -> None:
        self.mode = mode
        self.path = path


class _Decider(ClaudeHandler):
    """The Claude decision path with the harness's own permission evidence."""

    def __init__(self, ctx: Any, harness: str) -> None:
        super().__init__(ctx)
        self.harness = harness

    def _digest_held_back(self, hook, ev, fields, text, exit_code):  # noqa: ANN001 - ClaudeHandler's signature
        # Where the post hook cannot replace the output (Codex), a digest could only be added
        # next to the whole output (more tokens, not fewer), and Codex's post hook does not say
        # the exit status the digest would report: none is made.
        # Nor where the harness cannot replace a failure's output (Qwen's PostToolUseFailure).
        codec = codecs.get(self.harness)
        if codec is None or not codec.CAPS.post_replaces_output or (
                exit_code != 0 and not codec.CAPS.post_replaces_failed_output):
            self.held_back.pop(hook.tool_use_id, None)
            return None
        return super()._digest_held_back(hook, ev, fields, text, exit_code)

    def _permission(self, hook, hdr, env, root):  # noqa: ANN001 - ClaudeHandler's signature
        if self.harness in _MODE_IN_PAYLOAD:
            # Qwen says its approval mode in the payload; in YOLO it runs every command unasked.
            auto = hook.permission_mode in _MODE_IN_PAYLOAD[self.harness]
            why = "%s approval mode %s" % (self.harness, hook.permission_mode or "unknown")
            return _Mode("auto" if auto else "default", None), Verdict(ALLOW if auto else UNKNOWN, why)
        if self.harness in _JUDGES_WHAT_RUNS:
            # The harness judges the rewritten text: rewrite only where it allows that as it
            # allows the original (the rewrite's text is decide.decide_bash's).
            import shlex
            rewritten = "%s run -- %s" % (shlex.quote(self.ctx.launcher), shlex.quote(hook.command or ""))
            kind, why = codecs.get(self.harness).rewrite_verdict(hook.command or "", rewritten,
                                                                 hdr.get("harness_permission"))
            return _Mode("default", "opencode config"), Verdict(kind, why)
        argv = harness_argv(self.harness, hdr.get("pid"))
        auto = argv is not None and _has_auto_flag(self.harness, argv)
        if self.harness == "codex" and hook.permission_mode != "bypassPermissions":
            auto = False
        why = "command line %s" % ("has " if auto else "lacks ") + "an approve-everything flag" \
            if argv is not None else "command line not found"
        if auto:
            return _Mode("auto", None), Verdict(ALLOW, "%s runs every command unasked (%s)" % (self.harness, why))
        return _Mode("default", None), Verdict(UNKNOWN, "%s decides (%s)" % (self.harness, why))


def _has_auto_flag(harness: str, argv: list[str]) -> bool:
    for flags in _AUTO_FLAGS.get(harness, ()):
        n = len(flags)
        if any(tuple(argv[i:i + n]) == flags for i in range(len(argv) - n + 1)):
            return True
    return False


def harness_argv(harness: str, hook_pid: Any) -> list[str] | None:
    """argv of the nearest ancestor of the hook process that is the harness itself (its name in
    its first two arguments), ours by uid; None when there is none or no /proc."""
    from reflex.harness.claude import proc as hp
    try:
        pid = int(hook_pid)
    except (TypeError, ValueError):
        return None
    for _ in range(hp.MAX_DEPTH):
        pid = hp._parent(pid)
        if pid is None or pid <= 1:
            return None
        argv = hp._cmdline(pid)
        if argv and any(harness in os.path.basename(a) for a in argv[:2]) and hp._same_uid(pid):
            return argv
    return None


class HarnessHandler:
    """All non-Claude harnesses; small bounded caches, nothing that history depends on."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.deciders: dict[str, _Decider] = {}
        self.calls: dict[tuple[str, str, str], tuple[str, float]] = {}   # (harness, session, cmd) -> call id
        self.runs: dict[tuple[str, str], tuple[str, str, float]] = {}    # (cwd, cmd) -> (session, harness)
        self.counter = 0

    def knows(self, harness: Any) -> bool:
        return isinstance(harness, str) and codecs.get(harness) is not None

    def handle(self, hdr: dict[str, Any], data: bytes) -> tuple[bytes, bytes, dict[str, Any], dict | None]:
        harness = hdr["harness"]
        codec = codecs.get(harness)
        spooled = bool(hdr.get("spooled"))
        ts = hdr.get("ts") or time.time()
        reading = payload.read(data, bool(hdr.get("trunc")))
        if reading.problem is not None or not reading.complete:
            return self._unreadable(hdr, harness, data, reading, ts)
        event = codec.decode(reading.obj, hdr.get("event") if isinstance(hdr.get("event"), str) else "")
        if event.kind == OTHER or not event.session_id:
            return self._other(hdr, harness, event, ts)
        event = self._with_call_id(harness, codec.CAPS.has_call_id, event)
        claude = to_claude(event)
        sub_hdr = dict(hdr, trunc=False, harness="claude")
        if hasattr(codec, "permission_evidence"):
            sub_hdr["harness_permission"] = codec.permission_evidence(reading.obj)
        out, err, ev, session = self._decider(harness).handle(sub_hdr, json.dumps(claude).encode())
        ev["harness"] = harness
        if session is not None:
            session["harness"] = harness
        data_fields = ev.setdefault("data", {})
        data_fields["native_event"] = event.native_event
        if event.kind in (POST_SHELL, POST_SHELL_FAILED) and not codec.CAPS.post_sees_exit_code:
            ev["exit_code"] = None  # the post hook does not say; ctx run's own event has it
        decision = from_claude(json.loads(out) if out else None)
        if (event.kind == POST_SHELL_FAILED and data_fields.get("post_digest") and decision.context
                and codec.CAPS.post_replaces_output):
            # The Claude path adds a failed command's digest as context (Claude Code cannot
            # replace a failure's output); this harness can, so the digest replaces it.
            decision = Decision("replace_output", output=decision.context)
            data_fields["post_digest"]["delivered_as"] = "replace"
        fitted = degrade(decision, codec.CAPS)
        if fitted != decision:
            data_fields["degraded"] = {"from": decision.action, "to": fitted.action}
            if decision.action == "rewrite" and fitted.action != "rewrite":
                ev["decision"] = "deny" if fitted.action == "deny" else "pass"
        if event.kind == PRE_SHELL and fitted.action == "rewrite" and event.command is not None:
            self._expect_run(harness, event, fitted.command)
        elif event.kind == PRE_SHELL and decision.action == "rewrite" and fitted.action == "deny":
            # Denied with the command to run instead: the `ctx run` the model starts next reports
            # the original command and belongs to this session.
            self._expect_run(harness, event, None)
        answer = codec.encode(fitted, event) if not spooled else b""
        return answer, err, ev, session

    # -- helpers ----------------------------------------------------------------------------
    def _decider(self, harness: str) -> _Decider:
        d = self.deciders.get(harness)
        if d is None:
            d = self.deciders[harness] = _Decider(self.ctx, harness)
        return d

    def _with_call_id(self, harness: str, has_id: bool, event: ShellEvent) -> ShellEvent:
        """A synthetic call id pairing pre and post, for harnesses without one."""
        if has_id or event.call_id or event.command is None or event.kind not in (PRE_SHELL, POST_SHELL,
                                                                                  POST_SHELL_FAILED):
            return event
        from dataclasses import replace
        key = (harness, event.session_id or "", event.command)
        if event.kind == PRE_SHELL:
            self.counter += 1
            call_id = "%s-%d-%s" % (harness, self.counter, os.urandom(3).hex())
            _bounded_put(self.calls, key, (call_id, time.monotonic()))
            return replace(event, call_id=call_id)
        hit = self.calls.pop(key, None)
        if hit is None:
            return event
        for k in [k for k, v in self.calls.items() if v[0] == hit[0]]:
            del self.calls[k]
        return replace(event, call_id=hit[0])

    def _expect_run(self, harness: str, event: ShellEvent, rewritten: str | None) -> None:
        key = (_real(event.cwd), event.command)
        _bounded_put(self.runs, key, (event.session_id or "-", harness, time.monotonic()))
        if rewritten and event.call_id:
            # The post hook shows the rewritten command: pair it with the same call.
            hit = self.calls.get((harness, event.session_id or "", event.command))
            if hit is not None:
                _bounded_put(self.calls, (harness, event.session_id or "", rewritten), hit)

    def claim_run(self, command: str, cwd: str | None) -> str | None:
        """The session of a `ctx run` that reported none: the one whose rewrite produced it."""
        hit = self.runs.pop((_real(cwd), command), None)
        if hit is None or time.monotonic() - hit[2] > PENDING_TTL_S:
            return None
        return hit[0]

    def _unreadable(self, hdr, harness, data, reading, ts):  # noqa: ANN001
        """A payload the evidence plane cannot use: the shim's own safety answer, recorded."""
        ev = base_event(hdr["uid"], ts, harness, hdr.get("spooled"))
        problem = reading.problem or payload.Malformed("incomplete", "payload not read to its end")
        malformed_event(ev, problem.code, problem.detail, data)
        if hdr.get("spooled"):
            return b"", b"", ev, None
        from reflex.shim import fallback as shim_fallback
        out, err, tag = fallback.decide(harness, data, bool(hdr.get("trunc")), shim_fallback.env_from_header(hdr),
                                        hdr.get("event") if isinstance(hdr.get("event"), str) else "",
                                        verdict=shim_fallback.verdict, safety_answer=shim_fallback.safety_answer)
        if tag in ("deny", "redact"):
            ev.update(decision="deny" if tag == "deny" else "rewrite", decision_detail="safety on an unreadable payload")
        return out, err, ev, None

    def _other(self, hdr, harness, event, ts):  # noqa: ANN001
        """An event ctx does not act on (another tool, a turn's end): recorded, not answered."""
        ev = base_event(hdr["uid"], ts, harness, hdr.get("spooled"))
        ev.update(session_id=event.session_id or "-", hook_event=event.native_event or None, cwd=event.cwd,
                  tool_name=event.tool_name, command=event.command, decision="none",
                  data={"native_event": event.native_event})
        session = {"session_id": event.session_id, "harness": harness, "first_ts": ts, "cwd": event.cwd} \
            if event.session_id else None
        return b"", b"", ev, session


def _real(path: str | None) -> str:
    try:
        return os.path.realpath(path) if path else ""
    except (OSError, ValueError):
        return path or ""


def _bounded_put(table: dict, key: Any, value: Any, limit: int = PENDING_LIMIT) -> None:
    if len(table) > limit:
        for k in list(table)[:limit // 2]:
            del table[k]
    table[key] = value
