"""Claude Code's Grep with ctx installed, on the REAL CLI (a scripted model; the CLI, its Grep
tool, the hooks, the daemon and the files are real): a large result reaches the model as ctx's
search digest, a `ctx get` of one of its addresses (through Bash) returns the whole line, a large
file list becomes a census, and small results reach the model untouched.  A second run without
ctx holds `grep_result.received_text` (ctx's model of what the CLI sends) to what the CLI sent.
What this proves and what it does not: docs/harnesses.md, "Claude Code's Grep tool".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.claude_harness import ClaudeEnv, ctx_env as _env, install_ctx as _install, hook_group, write_settings
from tests.support.scripted_model import (
    Action,
    DeterministicPolicy,
    FinalText,
    ModelState,
    ScriptedCommands,
    ToolResultSeen,
    ToolUse,
)

pytestmark = pytest.mark.e2e

TOOLS = ("Bash", "Grep")
# Claude Code's Grep runs rg with `--max-columns 500`: a longer line reaches the hook (and the
# model) as rg's `[Omitted long line …]`.  A 450-character line is delivered whole, and the
# digest clips it with the address of the whole line.
MINIFIED = "export const table={" + ",".join("key_%03d:%d" % (i, i) for i in range(40)) + "};"
assert 400 < len(MINIFIED) < 480
HINT = re.compile(r"ctx get (r:[0-9a-f]{12}:L\d+-\d+) (b3=[0-9a-f]{8})")



def _project(repo: Path) -> None:
    (repo / "dist").mkdir()
    for i in range(12):
        (repo / "dist" / ("bundle_%02d.js" % i)).write_text(
            "// needle: bundle %d\n%s // needle\nconst needle_%d = %d;\n" % (i, MINIFIED, i, i))
    (repo / "small.py").write_text("haystack = 1\nhaystack_again = 2\n")
    for d in range(8):
        sub = repo / "pkg" / ("component_%02d" % d) / "implementation"
        sub.mkdir(parents=True)
        for i in range(12):
            (sub / ("a_descriptive_module_name_%03d.ts" % i)).write_text("export const marker = %d;\n" % i)


def _grep(**tool_input: object) -> ToolUse:
    return ToolUse("grep", name="Grep", extra=dict(tool_input))


class GrepThenGet(DeterministicPolicy):
    """Greps; then follows the first address of the digest with `ctx get` through Bash."""

    def first(self, state: ModelState) -> Action:
        return _grep(pattern="needle", output_mode="content")

    def after(self, state: ModelState, last: ToolResultSeen) -> Action:
        if state.step == 1:
            m = HINT.search(last.text)
            return ToolUse("ctx get %s %s" % m.groups()) if m else FinalText("no address")
        follow = [_grep(pattern="haystack", output_mode="content"), _grep(pattern="marker"),
                  _grep(pattern="haystack"), _grep(pattern="marker", output_mode="count")]
        return follow[state.step - 2] if state.step - 2 < len(follow) else FinalText()


def test_a_large_grep_reaches_the_model_as_its_digest_and_its_address_returns_the_line(
        claude_env: ClaudeEnv, tmp_path, ctx_home):
    _project(claude_env.repo)
    settings = _install(tmp_path, ctx_home)
    run = claude_env.run("find the needle", settings_path=settings, policy=GrepThenGet(),
                         env_extra=_env(ctx_home), allowed_tools=TOOLS)
    assert run.returncode == 0, run.describe()
    assert not claude_env.model_server.errors, claude_env.model_server.errors
    seen = run.tool_results
    assert len(seen) == 6, run.describe()
    digest, got, small, files, small_files, counts = (r.text for r in seen)
    # the model's next request holds the digest, not the 6 minified lines
    assert digest.startswith("[ctx] search") and "36 matches in 12 files" in digest, digest
    assert MINIFIED not in digest and len(digest) < 12 * len(MINIFIED) * 2 // 3
    assert "dist/bundle_00.js" in digest
    # the address, followed through Bash, returns the whole line the digest clipped
    assert not seen[1].is_error and MINIFIED in got, got
    # small results are the CLI's own
    assert small == "small.py:1:haystack = 1\nsmall.py:2:haystack_again = 2", small
    assert small_files == "Found 1 file\nsmall.py", small_files
    # 96 long paths: a census by directory, answered as text
    assert files.startswith("[ctx] search") and "96 files" in files, files
    assert "pkg/component_07/implementation/" in files and files.count("pkg/component_07/") == 1, files
    # counts: the census, and under it the CLI's own total (from the numMatches ctx kept)
    assert counts.startswith("[ctx] search") and "96 files" in counts, counts
    assert counts.endswith("Found 96 total occurrences across 96 files."), counts


def test_the_model_of_what_the_cli_sends_matches_the_cli(claude_env: ClaudeEnv, tmp_path):
    """Without ctx: what the model received for each Grep, against received_text of the
    tool_response the PostToolUse hook saw (exact below the CLI's limit; for the persisted-output
    preview, whose path ctx does not know, a few dozen tokens under: 836 against 875 measured)."""
    from reflex import tokens
    from reflex.harness.claude import grep_result
    _project(claude_env.repo)
    (claude_env.repo / "huge.txt").write_text("".join("needle %d %s\n" % (i, "z" * 150) for i in range(300)))
    log = tmp_path / "post.jsonl"
    hook = tmp_path / "log_hook.sh"
    hook.write_text("#!/bin/sh\ncat >> '%s'\necho >> '%s'\n" % (log, log))
    hook.chmod(0o755)
    settings = write_settings(tmp_path / "plain.json", {
        "PostToolUse": [hook_group([{"type": "command", "command": str(hook)}], matcher="Grep")]})
    script = [_grep(pattern="needle", output_mode="content", glob="*.js"), _grep(pattern="marker"),
              _grep(pattern="marker", output_mode="count"), _grep(pattern="needle", output_mode="content", head_limit=5),
              _grep(pattern="needle", output_mode="content"), _grep(pattern="nothing_matches_this")]
    run = claude_env.run("grep", settings_path=settings, policy=ScriptedCommands(script), allowed_tools=("Grep",))
    assert run.returncode == 0, run.describe()
    posts = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    by_id = {p["tool_use_id"]: p for p in posts}
    assert len(by_id) == len(script) == len(run.tool_results)
    for seen in run.tool_results:
        post = by_id[seen.tool_use_id]
        mode = grep_result.mode_of(post["tool_input"], post["tool_response"])
        modelled = grep_result.received_text(post["tool_response"], mode)
        if seen.text.startswith("<persisted-output>"):
            assert modelled.startswith("<persisted-output>")
            # within a few dozen tokens, and not above: the digest's budget is capped below this count
            shortfall = tokens.count(seen.text) - tokens.count(modelled)
            assert 0 <= shortfall <= 60, (shortfall, modelled, seen.text)
        else:
            assert modelled == seen.text, (post["tool_response"], seen.text)
    assert any(s.text.startswith("<persisted-output>") for s in run.tool_results), run.describe()
