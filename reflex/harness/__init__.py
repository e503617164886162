"""Agent harnesses: one package per harness ctx speaks to.

    claude/     Claude Code (hook payloads, answers, permission mirror, transcripts,
                the daemon's hook handlers)

A harness package decodes what its harness sends, encodes what ctx answers, and knows the
harness's own rules (permissions, transcripts).  Policy lives in reflex.arc and safety in
reflex.safety; a harness package translates, it does not decide.

Imports: reflex's top-level modules, reflex.safety, reflex.arc; never reflex.analysis.
"""
