"""ctx: the reflex layer between coding agents and their shell.

Where things live (docs/architecture.md has the full map and the contracts):

    shim/       the hot path: `ctx hook`, `ctx run`, `ctx get`, `ctx search`, and the
                safety decision the shim takes itself when the daemon is down
    safety/     the safety plane: secret reads, writes outside the project
    harness/    one folder per agent harness (claude/: payloads, answers, permission
                mirror, transcripts, the daemon's hook handlers)
    arc/        the reflex arc: events, intents, the session fold, detectors, policy
    analysis/   offline readers of the ledger: stats, evidence, policy compile, replay
    daemon/     the per-user daemon: server, ops, retrieval, runs
    digest/     raw output -> census-first digest under a token budget
    signature/  command -> normalized signature
    ledger/     the append-only SQLite ledger, its export and verification
    worktree/   worktree freshness hashes
    commands/   the click CLI's commands (cli.py is the group)

Top-level modules are the shared vocabulary every package may import: paths, config,
protocol (the one wire format), errors (the one error base), tokens, blobs, address,
project; and the entry points: entry (the `ctx` console script), cli, demo, doctor,
install.

Import rule: STDLIB_ONLY below names every module the hot path imports.  They import only
the standard library and each other (tests/test_import_contract.py imports each one under
`python -S -I`); `pkg.*` means every module of that package, a bare package name its
`__init__` alone.
"""

__version__ = "0.1.0"

STDLIB_ONLY = (
    "reflex",
    "reflex.entry",
    "reflex.paths",
    "reflex.platform",
    "reflex.config",
    "reflex.protocol",
    "reflex.errors",
    "reflex.project",
    "reflex.address",
    "reflex.shim.*",
    "reflex.safety.*",
    "reflex.harness",
    "reflex.harness.claude",
    "reflex.harness.claude.payload",
    "reflex.harness.claude.answers",
    "reflex.harness.claude.permissions",
    # the shim's fallback for Codex, Gemini and Copilot
    "reflex.harness.model",
    "reflex.harness.codecs",
    "reflex.harness.fallback",
    "reflex.harness.codex",
    "reflex.harness.gemini",
    "reflex.harness.copilot",
    "reflex.harness.claude_shaped",
    "reflex.harness.qwen",
    "reflex.harness.opencode",
    "reflex.harness.droid",
    "reflex.harness.cursor",
    "reflex.digest.redact",
    "reflex.digest.neutralize",
    "reflex.worktree.ignore",
    "reflex.worktree.tree",
)


def stdlib_only_modules():
    """Every module STDLIB_ONLY covers, as (dotted name, file path); packages expanded."""
    import os

    root = os.path.dirname(os.path.abspath(__file__))
    parent = os.path.dirname(root)
    out = []
    for entry in STDLIB_ONLY:
        name = entry[:-2] if entry.endswith(".*") else entry
        path = os.path.join(parent, *name.split("."))
        if os.path.isdir(path):
            out.append((name, os.path.join(path, "__init__.py")))
            if entry.endswith(".*"):
                # The whole package; its subpackages name themselves.
                for f in sorted(os.listdir(path)):
                    if f.endswith(".py") and f != "__init__.py":
                        out.append(("%s.%s" % (name, f[:-3]), os.path.join(path, f)))
        else:
            out.append((name, path + ".py"))  # a missing file: the contract test reports it
    return out
