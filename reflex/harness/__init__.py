"""Agent harnesses: one package or module per harness ctx speaks to, and the model they share.

    claude/      Claude Code (hook payloads, answers, permission mirror, transcripts,
                 the daemon's hook handlers)
    model.py     one normalized shell event and decision for every other harness, each harness's
                 Capabilities, and the translation to and from the Claude-shaped payload that
                 reflex.harness.claude.hooks (the one decision path) reads
    codex.py     OpenAI Codex CLI codec (PreToolUse/PostToolUse/SessionStart, tool "Bash")
    gemini.py    Google Gemini CLI codec (BeforeTool/AfterTool/SessionStart/SessionEnd)
    copilot.py   GitHub Copilot CLI codec (preToolUse/postToolUse/sessionStart/sessionEnd)
    qwen.py      Qwen Code codec (Claude-named events, Gemini's tools; no rewrite: post-output digest)
    opencode.py  OpenCode codec: what ctx's in-process plugin (reflex/data/opencode/) sends and applies
    droid.py     Factory Droid codec (Claude-shaped hooks, tool "Execute")
    claude_shaped.py  decode/encode shared by the harnesses that copied Claude Code's protocol
                 (Codex, Qwen, Droid)
    cursor.py    Cursor codec, from its documented hook schema (preToolUse/postToolUse, failClosed)
    transcripts.py  Qwen's and Droid's own session files as Claude transcript records (`ctx replay`)
    codecs.py    harness name -> codec module
    fallback.py  a codec'd payload judged by the shim's own safety verdict (daemon down)
    handler.py   the daemon side: decode, run the Claude decision path once, encode
    install.py   `ctx install --harness NAME`: hook entries (OpenCode: the plugin) per harness and scope
    doctor.py    what `ctx doctor` reports per harness it finds (Codex hook trust included)
    calls.py     a recorded session's tool calls -> fold events: the builder every transcript
                 reader shares (ctx digests and `ctx get` answers read off what the model received)
    recordings.py  Codex rollouts, Gemini chat recordings, Copilot events.jsonl -> fold events
                 (`ctx replay`), each harness's own cut and hook denials read off its wrapping

A harness package decodes what its harness sends, encodes what ctx answers, and knows the
harness's own rules (permissions, transcripts).  Policy lives in reflex.arc and safety in
reflex.safety; a harness package translates, it does not decide.

model, claude_shaped, the codecs, codecs.py and fallback.py run in the shim (reflex.STDLIB_ONLY).

Imports: reflex's top-level modules, reflex.safety, reflex.arc; never reflex.analysis.
"""
