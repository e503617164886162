"""Claude Code hook events -> (answer, ledger event).

One function per hook event; each returns what to print on the hook's stdout
(possibly nothing) and the event row to append.  The safety plane runs first
and its answer is independent of everything else the daemon knows.
"""

import re
import time

from pydantic import ValidationError

from .. import claude_answers, decide, local_decision, payload, permissions, project
from ..hookmodels import ClaudeHookInput
from ..intents import declare

_EXIT_RE = re.compile(r"^\s*Exit code (-?\d+)")
_DATA_ERROR_CHARS = 2000


def base_event(uid, ts, harness, spooled):
    return {"uid": uid, "ts": ts, "harness": harness, "spooled": 1 if spooled else 0,
            "session_id": "-", "kind": "hook"}


def malformed_event(ev, code, detail, data):
    ev.update(kind="malformed", decision="none",
              data={"code": code, "detail": detail, "bytes": len(data), "head": data[:200].hex()})
    return ev


class ClaudeHandler:
    """Stateful only in small, rebuildable caches; decisions read them, never write history."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.expected_rewrites = {}  # tool_use_id -> rewritten command (bounded)

    def handle(self, hdr, data):
        """-> (stdout bytes, stderr bytes, event dict, session dict | None)."""
        ev = base_event(hdr["uid"], hdr.get("ts") or time.time(), "claude", hdr.get("spooled"))
        try:
            obj = payload.decode(data, bool(hdr.get("trunc")))
            hook = ClaudeHookInput.model_validate(obj)
        except payload.Malformed as e:
            return b"", ("ctx hook: ignored malformed payload: %s\n" % e).encode(), \
                malformed_event(ev, e.code, e.detail, data), None
        except ValidationError as e:
            first = e.errors()[0]
            detail = "%s: %s" % (".".join(str(p) for p in first.get("loc", ())), first.get("msg"))
            return b"", ("ctx hook: ignored malformed payload: invalid: %s\n" % detail).encode(), \
                malformed_event(ev, "invalid", detail, data), None
        ev.update(session_id=hook.session_id, hook_event=hook.hook_event_name, cwd=hook.cwd,
                  tool_name=hook.tool_name, tool_use_id=hook.tool_use_id, command=hook.command)
        session = {"session_id": hook.session_id, "harness": "claude", "first_ts": ev["ts"], "cwd": hook.cwd}
        fn = getattr(self, "_on_" + hook.hook_event_name, None)
        out = b""
        data_fields = {"permission_mode": hook.permission_mode, "prompt_id": hook.prompt_id,
                       "agent_id": hook.agent_id}
        if fn is None:
            ev["decision"] = "none"
            data_fields["unknown_event"] = True
        else:
            answer = fn(hook, ev, data_fields, hdr)
            if answer is not None and not hdr.get("spooled"):
                out = claude_answers.dumps(answer).encode()
        ev["data"] = {k: v for k, v in data_fields.items() if v is not None}
        return out, b"", ev, session

    # -- events -----------------------------------------------------------
    def _on_PreToolUse(self, hook, ev, fields, hdr):
        fields["tool_input"] = {k: v for k, v in (hook.tool_input or {}).items() if k != "command"}
        if hdr.get("spooled"):
            # The shim already answered this call; record what it decided.
            ev["decision"] = {"deny": "deny", "redact": "rewrite"}.get(hdr.get("local"), "none")
            ev["decision_detail"] = "decided by the shim while the daemon was down"
            self._annotate(hook, ev)
            return None
        env = {"CLAUDE_PROJECT_DIR": hdr.get("pdir") or "", "HOME": hdr.get("home") or self.ctx.home_dir}
        if not env["CLAUDE_PROJECT_DIR"]:
            del env["CLAUDE_PROJECT_DIR"]
        obj = hook.model_dump()
        verdict = local_decision.safety_verdict(obj, env)
        if verdict is not None:
            answer = local_decision.safety_answer(obj, verdict, env)
            fields["safety"] = verdict.to_dict()
            if verdict.rule != "secret-redact":
                ev.update(decision="deny", decision_detail=verdict.rule)
                fields["intents"] = [declare("deny")]
                return answer
            if answer is not None:
                # A recursive read, sent through ctx run --raw (or a Grep given secret-excluding
                # globs): the same answer the shim gives when the daemon is down.
                updated = answer["hookSpecificOutput"]["updatedInput"]
                ev.update(decision="rewrite", decision_detail=updated.get("command") or verdict.rule)
                fields["permission"] = answer["hookSpecificOutput"].get("permissionDecision")
                fields["intents"] = [declare("rewrite")]
                if hook.tool_name == "Bash" and hook.tool_use_id and hook.command is not None:
                    self._remember(hook.tool_use_id, (hook.command, updated["command"]))
                self._annotate(hook, ev)
                return answer
        root = project.project_root(hook.cwd, env)
        fields["worktree_hash"] = self.ctx.worktree_hash(hook.cwd, root)
        if hook.tool_name != "Bash" or hook.command is None:
            ev["decision"] = "pass"
            return None
        sig = self._annotate(hook, ev)
        verdict = permissions.verdict(hook.command, self.ctx.rules_for(root, env["HOME"]),
                                      hook.permission_mode)
        stand_down, teaching = False, None
        if sig is not None:
            # Evidence plane only: the safety verdict above is already final.
            sr = self.ctx.reflexes.session(hook.session_id, hook.cwd)
            fields["policy_epoch"] = getattr(sr, "epoch", None)
            teaching = sr.escalate_teaching(sig.core_hash)
            stand_down = sr.stand_down(sig.core_hash)
        d = decide.decide_bash(hook.command, hook.tool_input or {}, sig, launcher=self.ctx.launcher,
                               rule_verdict=verdict, stand_down=stand_down)
        if teaching:
            fields["teaching"] = True
        if d.action != "rewrite":
            ev.update(decision="pass", decision_detail=d.why)
            return claude_answers.context("PreToolUse", teaching) if teaching else None
        permission = self.ctx.rewrite_permission(d.permission)
        ev.update(decision="rewrite", decision_detail=d.command)
        fields["permission"] = permission
        fields["intents"] = [declare("rewrite")]
        fields["rule_verdict"] = verdict
        if hook.tool_use_id:
            self._remember(hook.tool_use_id, (hook.command, d.command))
        answer = claude_answers.rewrite(hook.tool_input or {}, d.command, permission, "ctx: %s" % d.why)
        if teaching:
            answer["hookSpecificOutput"]["additionalContext"] = teaching
        return answer

    def _on_PostToolUse(self, hook, ev, fields, hdr):
        resp = hook.tool_response if isinstance(hook.tool_response, dict) else {}
        stdout = resp.get("stdout") if isinstance(resp.get("stdout"), str) else ""
        ev["exit_code"] = 0 if not resp.get("interrupted") else None
        ev["output_bytes"] = len(stdout.encode("utf-8", "surrogatepass"))
        fields.update(interrupted=resp.get("interrupted"), duration_ms=hook.duration_ms,
                      persisted_output=resp.get("persistedOutputPath"))
        self._post_common(hook, ev)
        return None

    def _on_PostToolUseFailure(self, hook, ev, fields, hdr):
        err = hook.error or ""
        m = _EXIT_RE.match(err)
        ev["exit_code"] = int(m.group(1)) if m else None
        ev["output_bytes"] = len(err.encode("utf-8", "surrogatepass"))
        fields.update(error=err[:_DATA_ERROR_CHARS], is_interrupt=hook.is_interrupt,
                      duration_ms=hook.duration_ms)
        self._post_common(hook, ev)
        return None

    def _on_SessionStart(self, hook, ev, fields, hdr):
        ev["decision"] = "none"
        self.ctx.worktree_hash(hook.cwd)  # start watching the project now, not at the first run
        fields.update(model=hook.model, source=hook.source, transcript_path=hook.transcript_path)
        return None

    def _on_SessionEnd(self, hook, ev, fields, hdr):
        ev["decision"] = "none"
        fields.update(reason=hook.reason)
        return None

    # -- helpers ----------------------------------------------------------
    def _annotate(self, hook, ev):
        """Family and core hash of the event's command (as the model wrote it) -> Signature."""
        if ev.get("command") is None:
            return None
        sig = self.ctx.signature(ev["command"], hook.cwd)
        if sig is not None:
            ev["family"] = sig.family
            ev["core_hash"] = sig.core_hash
        return sig

    def _post_common(self, hook, ev):
        # Post events see the REWRITTEN input (Claude Code keeps no copy of
        # the original), so the PreToolUse decision is looked up to record
        # whether our rewrite was really applied, and the event carries the
        # command as the model wrote it.
        ev["decision"] = "none"
        if hook.tool_use_id and hook.command is not None:
            pair = self.expected_rewrites.pop(hook.tool_use_id, None)
            if pair is None:
                pair = self.ctx.recorded_rewrite(hook.tool_use_id)
            if pair is not None:
                original, rewritten = pair
                applied = hook.command == rewritten
                ev["rewrite_applied"] = 1 if applied else 0
                if applied:
                    ev["command"] = original
                    ev["decision_detail"] = rewritten
        self._annotate(hook, ev)

    def _remember(self, tool_use_id, command):
        if len(self.expected_rewrites) > 10000:
            for k in list(self.expected_rewrites)[:5000]:
                del self.expected_rewrites[k]
        self.expected_rewrites[tool_use_id] = command
