"""The safety plane: deny secret reads and writes outside the project, daemon up or down.

    plane.py    the entry: check_command / check_tool -> Denial, Redact or None; the rules
    shell.py    walks a lexed command line the way bash would (Scan, Ctx, Finding)
    lex.py      a small bash lexer that never raises except Overflow
    words.py    words after expansion (Arg): globs, braces, tilde, variables
    argv.py     argument parsing shared by the command handlers
    cmds.py     dispatch of simple commands, and the shell builtins
    files.py    commands that copy, move, archive, transfer, change or delete files
    readers.py  readers whose first operand is not a file (grep PATTERN, sed SCRIPT, git REV)
    nested.py   commands that run other commands (env, sudo, bash -c, xargs, find -exec)
    paths.py    what is a secret file, what is outside the project
    disk.py     what a path resolves to on disk (symlinks, globs, directories)
    secrets.py  the values secret files hold, and their removal from captured output

Order of dependence: paths, disk, lex, words are leaves; argv uses words; shell walks
and hands simple commands to cmds, which dispatches to files, readers and nested (these
call back into the walker for nested command lines, through the `Ctx` they are given,
never by importing shell); plane sits on top.

    pipesplit.py  a command line as `producer | slicer` (shared with `ctx run`)

Imports: the standard library, reflex.paths and reflex.config only.  Decisions depend on the command, the
cwd, the policy and the disk, never on the clock, the session or the daemon.
"""
