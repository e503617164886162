"""Which directory is "the project" for a command.

Claude Code exports CLAUDE_PROJECT_DIR (where the session started) to hooks;
the payload's cwd follows the agent around.  The project root is the former
when the cwd is inside it, else the nearest enclosing git work tree of the
cwd, else the cwd itself.  stdlib-only and filesystem-light (a few stats).
"""

import os


def project_root(cwd, environ=None):
    env = os.environ if environ is None else environ
    cwd = os.path.abspath(cwd or os.getcwd())
    declared = env.get("CLAUDE_PROJECT_DIR")
    if declared:
        declared = os.path.abspath(declared)
        if cwd == declared or cwd.startswith(declared.rstrip("/") + "/"):
            return declared
    probe = cwd
    for _ in range(64):
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    return cwd
