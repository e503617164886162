"""Claude Code hook events -> (answer, ledger event).

One function per hook event; each returns what to print on the hook's stdout
(possibly nothing) and the event row to append.  The safety plane runs first
and its answer is independent of everything else the daemon knows.
"""

import json
import re
import time

from pydantic import ValidationError

from reflex import project
from reflex.harness.claude import answers as claude_answers
from reflex.arc import decide
from reflex.shim import fallback as local_decision
from reflex.harness.claude import payload
from reflex.harness.claude import permissions
from reflex.harness.claude import proc as harness_proc
from reflex.harness.claude.models import ClaudeHookInput
from reflex.arc.intents import declare
from reflex.digest.redact import redact

_EXIT_RE = re.compile(r"^\s*Exit code (-?\d+)")
_DATA_ERROR_CHARS = 2000


def _with_newline(text):
    return text if text.endswith("\n") else text + "\n"


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
        self.expected_rewrites = {}  # tool_use_id -> (original, rewritten command) (bounded)
        self.held_back = {}          # tool_use_id -> (command, family): passed through for permissions
        self.reads = SessionReads()  # per-session ReadMemo: unchanged re-reads (docs/reads.md)

    def handle(self, hdr, data):
        """-> (stdout bytes, stderr bytes, event dict, session dict | None)."""
        ev = base_event(hdr["uid"], hdr.get("ts") or time.time(), "claude", hdr.get("spooled"))
        reading = payload.read(data, bool(hdr.get("trunc")))
        # The safety verdict comes first and from the raw payload, exactly as the
        # shim computes it: whether the rest of the payload is valid for the
        # evidence plane must not change whether a secret read runs.
        denial = None
        if not hdr.get("spooled"):
            env = local_decision.env_from_header(hdr) if hdr.get("transport") != "http" else \
                local_decision.hook_env(cwd=None)
            found = local_decision.verdict("claude", reading, env)
            if found is not None:
                # (verdict, the answer the shim would give): built in one place for both.
                denial = (found, local_decision.safety_answer(reading.obj, found, env))
        try:
            if reading.problem is not None:
                raise reading.problem
            hook = ClaudeHookInput.model_validate(reading.obj)
        except payload.Malformed as e:
            return self._malformed(ev, e.code, e.detail, data, denial, hdr)
        except (ValidationError, RecursionError) as e:
            if isinstance(e, ValidationError):
                first = e.errors()[0]
                detail = "%s: %s" % (".".join(str(p) for p in first.get("loc", ())), first.get("msg"))
            else:
                detail = "nested too deeply to validate"
            return self._malformed(ev, "invalid", detail, data, denial, hdr)
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
            answer = fn(hook, ev, data_fields, hdr, denial)
            if answer is not None and not hdr.get("spooled"):
                out = claude_answers.dumps(answer).encode()
        ev["data"] = {k: v for k, v in data_fields.items() if v is not None}
        return out, b"", ev, session

    def _malformed(self, ev, code, detail, data, denial, hdr):
        """A payload the evidence plane cannot use: recorded; a safety denial still stands."""
        err = ("ctx hook: ignored malformed payload: %s: %s\n" % (code, detail)).encode()
        malformed_event(ev, code, detail, data)
        if hdr.get("spooled") and hdr.get("local") == "deny":
            ev.update(decision="deny", decision_detail="decided by the shim while the daemon was down")
        if denial is None or denial[1] is None:
            return b"", err, ev, None
        found, answer = denial
        ev.update(decision="rewrite" if found.rule == "secret-redact" else "deny", decision_detail=found.rule)
        ev["data"].update(safety=found.to_dict(), intents=[declare("deny")])
        return claude_answers.dumps(answer).encode(), b"", ev, None

    # -- events -----------------------------------------------------------
    def _on_PreToolUse(self, hook, ev, fields, hdr, denial):
        self._note_tool_call(hook)
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
        if denial is not None:
            found, answer = denial
            fields["safety"] = found.to_dict()
            if found.rule != "secret-redact":
                ev.update(decision="deny", decision_detail=found.rule)
                fields["intents"] = [declare("deny")]
                return answer
            if answer is not None:
                # A recursive read, sent through ctx run --raw (or a Grep given secret-excluding
                # globs): the same answer the shim gives when the daemon is down.
                updated = answer["hookSpecificOutput"]["updatedInput"]
                ev.update(decision="rewrite", decision_detail=updated.get("command") or found.rule)
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
        pctx, verdict = self._permission(hook, hdr, env, root)
        stand_down, teaching = False, None
        if sig is not None:
            # Evidence plane only: the safety verdict above is already final.
            sr = self.ctx.reflexes.session(hook.session_id, hook.cwd)
            fields["policy_epoch"] = getattr(sr, "epoch", None)
            teaching = sr.escalate_teaching(sig.core_hash)
            stand_down = sr.stand_down(sig.core_hash)
        d = decide.decide_bash(hook.command, hook.tool_input or {}, sig, launcher=self.ctx.launcher,
                               permission=verdict, mode=self.ctx.rewrite_mode(), stand_down=stand_down)
        if teaching:
            fields["teaching"] = True
        fields["permission"] = {"verdict": verdict.kind, "reason": verdict.reason, "path": pctx.path,
                                "mode": pctx.mode}
        if d.action != "rewrite":
            ev.update(decision="pass", decision_detail=d.why)
            if d.held_back:
                fields["rewrite_held_back"] = True
                if hook.tool_use_id:
                    _bounded_put(self.held_back, hook.tool_use_id, (hook.command, sig.family))
            return claude_answers.context("PreToolUse", teaching) if teaching else None
        ev.update(decision="rewrite", decision_detail=d.command)
        fields["intents"] = [declare("rewrite")]
        if hook.tool_use_id:
            self._remember(hook.tool_use_id, (hook.command, d.command))
        answer = claude_answers.rewrite(hook.tool_input or {}, d.command, d.permission, "ctx: %s" % d.why)
        if teaching:
            answer["hookSpecificOutput"]["additionalContext"] = teaching
        return answer

    def _permission(self, hook, hdr, env, root):
        """The permission mirror's evidence and verdict on the command as the model wrote it."""
        argv = harness_proc.harness_argv(hdr.get("cpid"), hdr.get("pid"))
        pctx = self.ctx.permission_context(project_dir=hdr.get("pdir") or root, home=env["HOME"],
                                           payload_mode=hook.permission_mode, argv=argv,
                                           config_dir=hdr.get("ccfg") or None)
        return pctx, permissions.verdict(hook.command, pctx)

    def _on_PostToolUse(self, hook, ev, fields, hdr, denial):
        if hook.tool_name == "Read":
            return self._on_read_post(hook, ev, fields, hdr)
        if hook.tool_name == "Grep":
            return self._on_grep_post(hook, ev, fields, hdr)
        resp = hook.tool_response if isinstance(hook.tool_response, dict) else {}
        stdout = resp.get("stdout") if isinstance(resp.get("stdout"), str) else ""
        ev["exit_code"] = 0 if not resp.get("interrupted") else None
        ev["output_bytes"] = len(stdout.encode("utf-8", "surrogatepass"))
        fields.update(interrupted=resp.get("interrupted"), duration_ms=hook.duration_ms,
                      persisted_output=resp.get("persistedOutputPath"))
        self._post_common(hook, ev)
        stderr = resp.get("stderr") if isinstance(resp.get("stderr"), str) else ""
        d = self._digest_held_back(hook, ev, fields, stdout + ("\n" + stderr if stderr else ""), 0)
        return claude_answers.replace_bash_output(_with_newline(d.text)) if d is not None else None

    def _on_PostToolUseFailure(self, hook, ev, fields, hdr, denial):
        err = hook.error or ""
        m = _EXIT_RE.match(err)
        ev["exit_code"] = int(m.group(1)) if m else None
        ev["output_bytes"] = len(err.encode("utf-8", "surrogatepass"))
        # The ledger keeps the failure's head for replay and stats, with the secret shapes a
        # digest would redact redacted here too: the ledger is exported and shared.
        fields.update(error=redact(err[:_DATA_ERROR_CHARS]), is_interrupt=hook.is_interrupt,
                      duration_ms=hook.duration_ms)
        self._post_common(hook, ev)
        # The failure text is "Exit code N" and then the output.
        output = err.split("\n", 1)[1] if m and "\n" in err else ("" if m else err)
        d = self._digest_held_back(hook, ev, fields, output, ev["exit_code"])
        return claude_answers.context("PostToolUseFailure", _with_newline(d.text)) if d is not None else None

    def _on_SessionStart(self, hook, ev, fields, hdr, denial):
        ev["decision"] = "none"
        self.ctx.worktree_hash(hook.cwd)  # start watching the project now, not at the first run
        fields.update(model=hook.model, source=hook.source, transcript_path=hook.transcript_path)
        self.reads.session_started(hook.session_id, hook.source)
        return None

    def _on_SessionEnd(self, hook, ev, fields, hdr, denial):
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
        _bounded_put(self.expected_rewrites, tool_use_id, command)

    def _digest_held_back(self, hook, ev, fields, text, exit_code):
        """The digest of a command ctx let through untouched to keep the harness's permission
        decision its own (-> Digest or None).  The command ran as the harness decided; its output
        is here in the post hook, so the model can still get the census: as a replacement of the
        output after a success, as added context after a failure (PostToolUseFailure cannot
        replace output).  Recorded as a run, so `ctx get` answers its hints."""
        held = self.held_back.pop(hook.tool_use_id, None) if hook.tool_use_id else None
        if held is None or not text or hdr_spooled(ev):
            return None
        command, family = held
        raw = text.encode("utf-8", "replace")
        try:
            from reflex import blobs
            from reflex.digest import build_digest
            sig = self.ctx.signature(command, hook.cwd)
            density, reason = self.ctx.density_for(hook.session_id, sig, family, hook.cwd)
            bid = self.ctx.blobs.put(raw)
            handle = blobs.handle_of(bid)
            d = build_digest(raw, family=family, exit_code=exit_code, command=command, handle=handle,
                             density=density, reason=reason, cwd=hook.cwd)
        except Exception as e:  # the output already reached the model; a digest bug must not cost more
            self.ctx.log("post-hook digest failed for %s: %r" % (family, e))
            return None
        if d.raw_tokens is not None and d.tokens >= d.raw_tokens:
            return None  # small output: the model is better served by the output itself
        fields["post_digest"] = {"handle": handle, "blob": bid, "tokens": d.tokens, "raw_tokens": d.raw_tokens,
                                 "delivered_as": "replace" if exit_code == 0 else "context"}
        ev["_run"] = {"event_uid": ev["uid"], "handle": handle, "blob": bid, "session_id": hook.session_id,
                      "command": command, "cwd": hook.cwd, "exit_code": exit_code,
                      "duration_ms": hook.duration_ms, "raw_bytes": len(raw), "family": family,
                      "core_hash": sig.core_hash if sig else None, "profile": d.profile, "density": d.density,
                      "raw_tokens": d.raw_tokens, "delivered_tokens": d.tokens,
                      "worktree_hash": self.ctx.worktree_hash(hook.cwd) if hook.cwd else None,
                      "meta": json.dumps({"failures": [{"id": f.id, "span": list(f.span) if f.span else None}
                                                       for f in d.facts.failures if f.id],
                                          "hints": [h.address for h in d.hints],
                                          "counts": d.facts.counts.model_dump(), "omitted": d.omitted,
                                          "truncated": d.truncated, "post_hook": True}, sort_keys=True)}
        return d

    # -- file reads (docs/reads.md) -------------------------------------------
    def _note_tool_call(self, hook):
        """Every PreToolUse: one more call in the session (the memo's clock), and the files
        the call is about to write forgotten (Edit/Write/MultiEdit/NotebookEdit, shell writes)."""
        memo = self.reads.tick(hook.session_id)
        if memo is None or not len(memo):
            return  # nothing read yet: no signature work on the hot path
        for path in self._written_paths(hook):
            memo.edited(path)

    def _written_paths(self, hook):
        tool_input = hook.tool_input or {}
        if hook.tool_name in _FILE_WRITERS:
            value = tool_input.get(_FILE_WRITERS[hook.tool_name])
            return [_abspath(value, hook.cwd)] if isinstance(value, str) and value else []
        if hook.tool_name == "Bash" and hook.command is not None:
            sig = self.ctx.signature(hook.command, hook.cwd)
            return [_abspath(w.path, hook.cwd) for w in (sig.writes if sig is not None else ())
                    if isinstance(w.path, str) and w.path]
        return []

    def _on_read_post(self, hook, ev, fields, hdr):
        """PostToolUse for Read: an unchanged re-read of a window the model was given recently is
        answered with a pointer, and a large full read with its first lines plus ctx's outline
        of the rest (`updatedToolOutput` in Read's own output shape, any other shape is silently
        ignored by Claude Code; the outline goes in `additionalContext`, outside the numbered
        content, so every line number the model sees is the file's).  Anything unexpected: the
        Read is left alone (docs/reads.md)."""
        ev["decision"] = "none"
        ev["exit_code"] = 0
        read = _read_text(hook)
        if read is None or hdr.get("spooled"):
            return None  # a spooled event was answered (with nothing) by the shim long ago
        path, offset, limit, file_obj = read
        text = file_obj["content"]
        ev["output_bytes"] = len(text.encode("utf-8", "surrogatepass"))
        from reflex import blobs
        content_hash = blobs.blob_id(text.encode("utf-8", "surrogatepass"))
        memo = self.reads.memo(hook.session_id, hook.transcript_path)
        seq = self.reads.seq(hook.session_id)
        fields["read"] = {"path": path, "offset": offset, "limit": limit, "hash": content_hash,
                          "chars": len(text)}
        ask = dict(path=path, content_hash=content_hash, offset=offset, limit=limit, text=text, seq=seq,
                   call_id=hook.tool_use_id, total_lines=file_obj["totalLines"])
        answer = memo.answer(**ask)
        if answer is not None and answer.kind == "pointer" and \
                self.reads.compacted_since(hook.session_id, hook.transcript_path):
            # The transcript shows a compaction the hooks did not (a spooled SessionStart): what
            # the pointer would refer to is gone.  Forget, and ask again (a delivery, or an outline).
            memo.compacted()
            answer = memo.answer(**ask)
        if answer is None:
            return None
        fields["read"][answer.kind] = True
        fields["read"][answer.kind + "_chars"] = answer.chars
        lines = answer.shown_lines if answer.shown_lines is not None else 1
        replaced = {"filePath": file_obj["filePath"], "content": answer.content, "numLines": lines,
                    "startLine": file_obj["startLine"], "totalLines": file_obj["totalLines"]}
        out = {"hookEventName": "PostToolUse", "updatedToolOutput": {"type": "text", "file": replaced}}
        if answer.note is not None:
            out["additionalContext"] = answer.note
        return {"hookSpecificOutput": out}


    # -- Grep results (docs/harnesses.md, "Claude Code's Grep tool") -------------------------
    def _on_grep_post(self, hook, ev, fields, hdr):
        """PostToolUse for Grep: a result larger than its search digest is replaced by the digest,
        in Grep's own output shape (Claude Code silently ignores any other shape).  The result is
        stored and recorded as a run, so `ctx get` answers the digest's addresses.  Anything
        unexpected: the result is left alone (it already reached the harness)."""
        from reflex.harness.claude import grep_result
        ev["decision"] = "none"
        ev["exit_code"] = 0
        fields["duration_ms"] = hook.duration_ms
        tool_input = hook.tool_input or {}
        mode = grep_result.mode_of(tool_input, hook.tool_response)
        if mode is None or hdr.get("spooled"):
            return None  # a spooled event was answered (with nothing) by the shim long ago
        try:
            command = grep_result.rg_command(tool_input, mode)
            sig = self.ctx.signature(command, hook.cwd)
            density, reason = self.ctx.density_for(hook.session_id, sig, "search", hook.cwd)
            g = grep_result.digest(tool_input, hook.tool_response, cwd=hook.cwd, density=density, reason=reason)
            if g is None:
                fields["grep"] = {"mode": mode, "command": command}
                return None
            bid = self.ctx.blobs.put(g.raw)
        except Exception as e:  # a digest bug must not cost the model its result
            self.ctx.log("Grep post-hook digest failed: %r" % (e,))
            return None
        d = g.digest
        ev["output_bytes"] = len(g.raw)
        fields["grep"] = {"mode": mode, "command": command}
        fields["post_digest"] = {"handle": g.handle, "blob": bid, "tokens": d.tokens, "raw_tokens": d.raw_tokens,
                                 "received_tokens": g.received_tokens, "delivered_as": "replace"}
        ev["_run"] = {"event_uid": ev["uid"], "handle": g.handle, "blob": bid, "session_id": hook.session_id,
                      "command": command, "cwd": hook.cwd, "exit_code": 0, "duration_ms": hook.duration_ms,
                      "raw_bytes": len(g.raw), "family": "search", "core_hash": sig.core_hash if sig else None,
                      "profile": d.profile, "density": d.density, "raw_tokens": d.raw_tokens,
                      "delivered_tokens": d.tokens,
                      "worktree_hash": self.ctx.worktree_hash(hook.cwd) if hook.cwd else None,
                      "meta": json.dumps({"hints": [h.address for h in d.hints], "counts": d.facts.counts.model_dump(),
                                          "omitted": d.omitted, "truncated": d.truncated, "post_hook": True,
                                          "tool": "Grep"}, sort_keys=True)}
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": g.output}}


def hdr_spooled(ev):
    return bool(ev.get("spooled"))


def _bounded_put(table, key, value, limit=10000):
    if len(table) > limit:
        for k in list(table)[:limit // 2]:
            del table[k]
    table[key] = value


# -- file reads (docs/reads.md) ---------------------------------------------------------

# The tools that write a file, and the tool_input field naming it.
_FILE_WRITERS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
                 "NotebookEdit": "notebook_path"}
# What Claude Code itself answered an unchanged re-read with in the versions that did (2.1.332
# still recognises these in transcripts but delivers the bytes): ctx must not point at a stub.
_HARNESS_STUBS = ("File unchanged since last read", "Wasted call \u2014 file unchanged",
                  "<system-reminder>This file is already in your context")


def _abspath(path, cwd):
    import os
    return os.path.normpath(path if os.path.isabs(path) or not cwd else os.path.join(cwd, path))


def _read_text(hook):
    """-> (path, offset, limit, tool_response["file"]) for a successful text Read, else None."""
    tool_input = hook.tool_input or {}
    resp = hook.tool_response
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path or not isinstance(resp, dict) or resp.get("type") != "text":
        return None
    file_obj = resp.get("file")
    if not isinstance(file_obj, dict) or not isinstance(file_obj.get("content"), str) \
            or not isinstance(file_obj.get("filePath"), str):
        return None
    if not all(isinstance(file_obj.get(k), int) and not isinstance(file_obj.get(k), bool)
               for k in ("startLine", "totalLines")):
        return None
    if tool_input.get("pages") is not None or file_obj["content"].startswith(_HARNESS_STUBS):
        return None
    offset, limit = tool_input.get("offset"), tool_input.get("limit")
    offset = offset if isinstance(offset, int) and not isinstance(offset, bool) else None
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
    return _abspath(path, hook.cwd), offset, limit, file_obj


class SessionReads:
    """Per-session read memos, tool-call clocks and transcript offsets (bounded, rebuildable:
    a daemon restart only costs pointers, never correctness)."""

    def __init__(self, limit=256):
        self.limit = limit
        self._memos = {}         # session_id -> ReadMemo
        self._clock = {}         # session_id -> tool calls seen (PreToolUse)
        self._transcript = {}    # session_id -> bytes of the transcript already scanned

    def tick(self, session_id):
        _bounded_put(self._clock, session_id, self._clock.get(session_id, 0) + 1, self.limit)
        return self._memos.get(session_id)

    def seq(self, session_id):
        return self._clock.get(session_id, 0)

    def memo(self, session_id, transcript_path):
        memo = self._memos.get(session_id)
        if memo is None:
            from reflex.arc.reads import ReadMemo
            memo = ReadMemo()
            _bounded_put(self._memos, session_id, memo, self.limit)
            # A compaction before this session's first read here cannot hide anything from it.
            _bounded_put(self._transcript, session_id, _size(transcript_path), self.limit)
        return memo

    def session_started(self, session_id, source):
        if source in ("compact", "clear") and session_id in self._memos:
            self._memos[session_id].compacted()

    def compacted_since(self, session_id, transcript_path):
        """Whether the transcript got a compaction boundary since it was last looked at.  Read
        only when a pointer is about to be given, and only the bytes appended since."""
        if not transcript_path:
            return False
        start = self._transcript.get(session_id, 0)
        try:
            with open(transcript_path, "rb") as f:
                f.seek(start)
                data = f.read()
        except OSError:
            return False
        end = start + data.rfind(b"\n") + 1  # a line still being written is read next time
        self._transcript[session_id] = end
        return b'"compact_boundary"' in data[:end - start] or b'"isCompactSummary":true' in data[:end - start]


def _size(path):
    import os
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0
