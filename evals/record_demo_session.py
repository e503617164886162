"""Record the demo session from the REAL Claude Code CLI (a scripted model drives it).

Runs `claude -p` (bundled in claude-agent-sdk) against the scripted local model
server from tests/e2e, in a copy of reflex/data/demo_project, with ctx's hooks
installed AND a recording hook that appends every payload Claude Code sends.
Paths are replaced by placeholders ({project}, {ctx}) and the result written
to reflex/data/demo_session.jsonl, which `ctx demo` replays.

Usage: python evals/record_demo_session.py
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# What a careful agent does: run the tests, read the failure's detail at the address the digest
# printed (`ctx get ADDRESS`, the step where the scripted model reads its last tool result), try
# to read the secrets (denied), fix the bug, re-run the tests to confirm.  No re-run of an
# unchanged tree: the session shows what ctx saves an ordinary session, not a contrived loop.
SCRIPT = [
    "pytest -v",
    "ctx get <the address the digest printed>",
    "cat .env",
    "sed -i 's|// len(values)|/ len(values)|' calc.py",
    "pytest -v",
]
ADDRESS = re.compile(r"ctx get (r:[0-9a-f]{12}\S*(?: b3=[0-9a-f]+)?)")

RECORDER = """
import sys
data = sys.stdin.buffer.read()
with open(sys.argv[1], "ab") as f:
    f.write(data.replace(b"\\n", b" ") + b"\\n")
"""


def follow_the_digest(state):
    """The scripted model: SCRIPT, with step 2 the `ctx get` of the address in step 1's result."""
    from tests.support.scripted_model import FinalText, ToolUse
    if state.step == 1:
        found = ADDRESS.search(state.last.text if state.last else "")
        if not found:
            raise SystemExit("the first run printed no address to follow: %r" % (state.last.text[:500],))
        return ToolUse("ctx get " + found.group(1))
    if state.step < len(SCRIPT):
        return ToolUse(SCRIPT[state.step])
    return FinalText("Fixed mean(); tests pass.")


def main():
    from reflex import demo
    from tests.support.claude_harness import make_scratch_repo, run_claude
    from tests.support.scripted_model import ScriptedModelServer

    tmp = Path(tempfile.mkdtemp(prefix="ctx-record-"))
    project = make_scratch_repo(tmp / "project")
    demo.prepare_project(str(project))
    ctx_home = tmp / "ctxhome"
    log = tmp / "payloads.jsonl"
    recorder = tmp / "recorder.py"
    recorder.write_text(RECORDER)
    settings = tmp / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": [demo.ALLOW_RULE]}}))
    env = dict(os.environ, CTX_HOME=str(ctx_home))
    subprocess.run([sys.executable, "-m", "reflex.entry", "install", "--settings", str(settings)],
                   env=env, check=True)
    data = json.loads(settings.read_text())
    rec = {"type": "command", "command": " ".join(shlex.quote(str(x)) for x in (sys.executable, recorder, log)),
           "timeout": 5}
    for event, groups in data["hooks"].items():
        groups.append({"matcher": groups[0].get("matcher"), "hooks": [rec]} if groups[0].get("matcher")
                      else {"hooks": [rec]})
    settings.write_text(json.dumps(data, indent=2))
    launcher = str(ctx_home / "bin" / "ctx")
    with ScriptedModelServer(follow_the_digest) as server:
        run = run_claude("The tests fail; find out why and fix it.", cwd=project, settings_path=settings,
                         model_server=server, home=tmp / "home",
                         env_extra={"CTX_HOME": str(ctx_home),
                                    "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
                                    "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")})
    print(run.describe()[:3000])
    from tests.support.claude_harness import claude_version
    out = REPO / "reflex" / "data" / "demo_session.jsonl"
    n = 0
    with open(out, "w") as f:
        for line in log.read_text().splitlines():
            p = json.loads(line)
            text = json.dumps(p).replace(str(project), "{project}").replace(launcher, "{ctx}")
            text = text.replace(str(tmp / "home"), "{home}")
            f.write(text + "\n")
            n += 1
    meta = {"recorded_with": "claude " + claude_version(), "script": SCRIPT, "payloads": n,
            "note": "payloads as sent by the real Claude Code CLI; the model was a scripted stand-in"}
    (REPO / "reflex" / "data" / "demo_session.meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    print("wrote %d payloads to %s" % (n, out))
    subprocess.run([sys.executable, "-m", "reflex.entry", "daemon", "stop"], env=env)


if __name__ == "__main__":
    main()
