"""The `ctx` console entry: agent-facing commands on a stdlib-only fast path.

`ctx hook`, `ctx run`, `ctx get` and `ctx search` run on every tool call or
inside the agent's loop, so they are dispatched here without importing click,
pydantic, sqlite_utils or tiktoken.  Everything else is the click CLI
(reflex.cli), which may import anything.

When started from the -S launcher (see reflex.shim.launcher), site-packages are
not on sys.path; the slow path turns them on before importing the CLI.
"""

import sys

FAST = {
    "hook": ("reflex.shim.hook", "main"),
    "run": ("reflex.shim.run", "main"),
    "get": ("reflex.shim.retrieve", "get_main"),
    "search": ("reflex.shim.retrieve", "search_main"),
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "hook":  # a hook fails open, even here
        from reflex import platform
        problem = platform.unsupported()
        if problem:
            sys.stderr.write(problem + "\n")
            sys.exit(1)
    if argv and argv[0] in FAST and not any(a in ("-h", "--help") for a in argv[1:2]):
        mod, fn = FAST[argv[0]]
        __import__(mod)
        code = getattr(sys.modules[mod], fn)(argv[1:])
        sys.exit(code)
    if sys.flags.no_site:
        import site
        site.main()
    from reflex.cli import main as cli_main
    cli_main(argv)


if __name__ == "__main__":
    main()
