"""Rewrite to `ctx run` vs digest in the post hook, for the harnesses whose post hook can replace
the output (Gemini AfterTool, Copilot modifiedResult).  Same failing pytest suite, same run.

Arms, per harness and per command (`pytest -q`, and the agent's own slice `pytest -q 2>&1 |
tail -5`):
  raw          what the harness alone delivers: the command's output in the harness's wrapper
  rewrite      `ctx run -- CMD` (what the pre hook rewrites to): its printed digest
  post digest  the command run as is, its output given to `ctx hook <harness>` as the harness's
               post payload after a pre hook the permission mirror held back: the replacement
               the model would receive (or the raw view, when ctx left a small output alone)
For each arm: o200k tokens delivered, and how many of the failing test ids it names.

Usage: python evals/bench_post_digest.py [--failing N] [--passing N]
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

COMMANDS = ("pytest -q", "pytest -q 2>&1 | tail -5")


def make_repo(root, failing, passing):
    os.makedirs(root, exist_ok=True)
    lines = ["import pytest", "", "DATA = {%s}" % ", ".join('"k%d": %d' % (i, i) for i in range(failing)), ""]
    lines += ["@pytest.mark.parametrize('key', %r)" % ["k%d" % i for i in range(failing)],
              "def test_value(key):", "    got = DATA[key] * 2 + 1",
              "    assert got == DATA[key] * 2, 'value of %s is off: %d' % (key, got)", ""]
    lines += ["@pytest.mark.parametrize('n', range(%d))" % passing, "def test_ok(n):", "    assert n >= 0", ""]
    with open(os.path.join(root, "test_bench.py"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(root, "pyproject.toml"), "w") as f:
        f.write("[tool.pytest.ini_options]\naddopts = '-p no:cacheprovider'\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return ["test_value[k%d]" % i for i in range(failing)]


def wrap(harness, output, exit_code):
    """The harness's own post payload field for a shell output (shapes recorded from the CLIs)."""
    if harness == "gemini":
        tail = "" if exit_code == 0 else "\nExit Code: %d" % exit_code
        return {"llmContent": "<untrusted_context>\nOutput: %s%s\nProcess Group PGID: 1\n</untrusted_context>"
                              % (output.rstrip("\n") or "(empty)", tail), "returnDisplay": output}
    return {"resultType": "success",
            "textResultForLlm": "%s\n<shellId: 0 completed with exit code %d>" % (output.rstrip("\n"), exit_code)}


def payloads(harness, session, cwd, command, output=None, exit_code=None):
    if harness == "gemini":
        base = {"session_id": session, "cwd": cwd, "transcript_path": "/tmp/s.jsonl", "timestamp": "t",
                "tool_name": "run_shell_command", "tool_input": {"command": command, "description": "tests"}}
        if output is None:
            return dict(base, hook_event_name="BeforeTool"), []
        return dict(base, hook_event_name="AfterTool", tool_response=wrap(harness, output, exit_code)), []
    base = {"sessionId": session, "timestamp": 1, "cwd": cwd, "toolName": "bash",
            "toolArgs": {"command": command, "description": "tests"}}
    if output is None:
        return base, ["preToolUse"]
    return dict(base, toolResult=wrap(harness, output, exit_code)), ["postToolUse"]


def hook(fast, harness, obj, extra, env):
    p = subprocess.run([fast, "hook", harness] + extra, input=json.dumps(obj).encode(), capture_output=True,
                       env=env, timeout=60)
    return json.loads(p.stdout) if p.stdout.strip() else None


def replaced_text(harness, answer):
    if not answer:
        return None
    if harness == "gemini":
        return answer.get("reason") if answer.get("decision") == "deny" else None
    return (answer.get("modifiedResult") or {}).get("textResultForLlm")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--failing", type=int, default=8)
    ap.add_argument("--passing", type=int, default=60)
    args = ap.parse_args()
    paths = _common.setup_env()
    from reflex import tokens
    from reflex.shim import launcher
    fast = launcher.write_launcher(paths)
    repo = os.path.join(os.path.dirname(paths.home), "repo")
    ids = make_repo(repo, args.failing, args.passing)
    proc = _common.start_daemon(paths)
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    result = {"machine": _common.machine(), "failing": args.failing, "passing": args.passing, "cases": {}}

    def named(text):
        # a digest names parametrized siblings after the first: `test_value[k0] [k1] [k2]`
        return sum(1 for i in ids if i in text or ("[" + i.split("[", 1)[1]) in text) if text else 0
    try:
        for harness in ("gemini", "copilot"):
            for n, command in enumerate(COMMANDS):
                session = "bench-%s-%d" % (harness, n)
                raw = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True, env=env)
                output, code = raw.stdout + raw.stderr, raw.returncode
                view = wrap(harness, output, code)
                harness_view = view["llmContent"] if harness == "gemini" else view["textResultForLlm"]
                run = subprocess.run([fast, "run", "--", command], cwd=repo, capture_output=True, text=True,
                                     env=env, timeout=120)
                pre, extra = payloads(harness, session, repo, command)
                hook(fast, harness, pre, extra, env)
                post, extra = payloads(harness, session, repo, command, output, code)
                digest = replaced_text(harness, hook(fast, harness, post, extra, env))
                case = {"raw": {"tokens": tokens.count(harness_view), "failing_named": named(output)},
                        "rewrite": {"tokens": tokens.count(run.stdout), "failing_named": named(run.stdout)},
                        # no replacement: the output was smaller than a digest, the model gets it as is
                        "post_digest": {"tokens": tokens.count(digest if digest else harness_view),
                                        "failing_named": named(digest if digest else output),
                                        "replaced": digest is not None}}
                result["cases"]["%s | %s" % (harness, command)] = case
                print("%-40s raw %5d tok %2d ids | rewrite %5d tok %2d ids | post %5s tok %2d ids" % (
                    "%s | %s" % (harness, command), case["raw"]["tokens"], case["raw"]["failing_named"],
                    case["rewrite"]["tokens"], case["rewrite"]["failing_named"],
                    case["post_digest"]["tokens"], case["post_digest"]["failing_named"]))
    finally:
        _common.stop_daemon(paths, proc)
    print("wrote", _common.write_json("bench_post_digest.json", result))


if __name__ == "__main__":
    main()
