"""The safety plane's shared vocabulary: a broken rule (Finding) and the shell state that
flows along a command list (Ctx).  A leaf: the walker (shell.py) and the command handlers
(argv, cmds, files, readers, nested) all import it, and it imports nothing of theirs, so the
handlers never need the walker's module (they reach it through the `Scan` they are given).
Stdlib only.
"""


class Finding:
    """One broken rule: rule id, target path (or pattern), the word as written, verb, kind."""

    __slots__ = ("kind", "rule", "shown", "target", "verb")

    def __init__(self, rule, target, shown, verb, kind):
        self.rule = rule
        self.target = target
        self.shown = shown
        self.verb = verb
        self.kind = kind


class Ctx:
    """Shell state that flows along a command list: working directory and known variables."""

    __slots__ = ("cwd", "vars")

    def __init__(self, cwd, variables):
        self.cwd = cwd
        self.vars = variables

    def copy(self):
        return Ctx(self.cwd, dict(self.vars))
