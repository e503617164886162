"""Would the harness run this command without ctx?  The permission mirror.

ctx changes what a command's output looks like, never whether it runs.  A
PreToolUse rewrite to `ctx run -- '<command>'` is judged by Claude Code as a
different command: no prefix rule of the user's matches it, so a rewrite that
leaves the decision to the harness is refused wherever the original was
allowed by a rule, and one that answers "allow" would run it wherever the
original would have been refused.  So ctx rewrites only when it can show that
the harness would have run the ORIGINAL without asking anyone, and answers
"allow" then; in every other case it passes the command through untouched and
the harness decides exactly as it would without ctx (docs/permissions.md has
what was measured on the real CLI).

The evidence, all of it visible to a hook:

- the rules of every settings file the harness loads (managed, user, project,
  local — honouring `--setting-sources`), plus a `--settings` file or JSON;
- the harness's own command line (`--allowedTools`, `--disallowedTools`,
  `--permission-mode`, `--dangerously-skip-permissions`,
  `--permission-prompt-tool`), which is how headless runs and the Agent SDK
  grant permissions; the daemon reads it from the harness process;
- the payload's `permission_mode`.

Matching is asymmetric on purpose.  An allow rule is read NARROWLY (a command
we wrongly think allowed would widen what runs), deny and ask rules BROADLY
(one we wrongly think denied only costs a digest).  A compound command is
allowed only when every part is: each matches an allow rule or is one of the
few read-only commands the harness was seen to allow on its own.  Anything we
cannot split with confidence (substitutions, heredocs, subshells, file
redirections) is never "allow".

Pure and stdlib-only: replay and tests call it with recorded inputs.
"""

import json
import os
import re
from dataclasses import dataclass, field

ALLOW, ASK, DENY, UNKNOWN = "allow", "ask", "deny", "unknown"
SOURCES = ("user", "project", "local")
# Modes in which a model-side classifier, not rules, decides: nothing to mirror.
CLASSIFIER_MODES = frozenset({"auto", "plan"})


# -- rules ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rules:
    allow: tuple = ()
    ask: tuple = ()
    deny: tuple = ()

    def merged(self, other):
        return Rules(self.allow + other.allow, self.ask + other.ask, self.deny + other.deny)


def bash_rule_body(rule):
    """'Bash(npm test:*)' -> 'npm test:*'; 'Bash' / 'Bash(*)' -> '*'; other tools -> None."""
    if not isinstance(rule, str):
        return None
    rule = rule.strip()
    if rule == "Bash":
        return "*"
    if rule.startswith("Bash(") and rule.endswith(")"):
        return rule[5:-1].strip() or "*"
    return None


def rules_from_settings(data):
    """Rules of one parsed settings object (missing or malformed parts count as none)."""
    perms = data.get("permissions") if isinstance(data, dict) else None
    if not isinstance(perms, dict):
        return Rules()
    out = {}
    for kind in ("allow", "ask", "deny"):
        values = perms.get(kind)
        bodies = [bash_rule_body(r) for r in values] if isinstance(values, list) else []
        out[kind] = tuple(b for b in bodies if b is not None)
    return Rules(**out)


def settings_mode(data):
    perms = data.get("permissions") if isinstance(data, dict) else None
    mode = perms.get("defaultMode") if isinstance(perms, dict) else None
    return mode if isinstance(mode, str) else None


def load_settings(path):
    """A settings file's JSON object, or None (absent, unreadable or not JSON: the harness ignores those too)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def managed_settings_files():
    return ["/etc/claude-code/managed-settings.json",
            "/Library/Application Support/ClaudeCode/managed-settings.json"]


def settings_files(project_dir, home, sources=SOURCES, config_dir=None):
    """The settings files Claude Code loads for a session, managed policy first."""
    files = managed_settings_files()
    user_dir = config_dir or os.path.join(home, ".claude")
    if "user" in sources:
        files.append(os.path.join(user_dir, "settings.json"))
    if project_dir and "project" in sources:
        files.append(os.path.join(project_dir, ".claude", "settings.json"))
    if project_dir and "local" in sources:
        files.append(os.path.join(project_dir, ".claude", "settings.local.json"))
    return files


# -- the harness's command line ------------------------------------------------------------

@dataclass(frozen=True)
class HarnessFlags:
    """What Claude Code's command line says about permissions."""
    allow: tuple = ()
    deny: tuple = ()
    mode: str | None = None
    settings: str | None = None          # --settings value: a file path or a JSON string
    setting_sources: tuple | None = None  # None: the default (all)
    prompt_tool: str | None = None
    headless: bool = False


_LIST_FLAGS = {"--allowedTools": "allow", "--allowed-tools": "allow",
               "--disallowedTools": "deny", "--disallowed-tools": "deny"}


def split_tool_list(value):
    """`Bash(git log:*),Read Edit` -> ['Bash(git log:*)', 'Read', 'Edit']: commas and spaces split, but
    not inside parentheses (how the CLI tokenises --allowedTools)."""
    out, cur, depth = [], [], 0
    for ch in value:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            if cur:
                out.append("".join(cur))
                cur = []
            continue
        cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def parse_harness_argv(argv):
    """-> HarnessFlags from Claude Code's argv (the process's cmdline, argv[0] included or not)."""
    allow, deny = [], []
    mode = settings = prompt_tool = None
    sources = None
    headless = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _LIST_FLAGS:
            # A variadic option: values until the next option.
            values = [inline] if eq else []
            while not eq and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                i += 1
                values.append(argv[i])
            target = allow if _LIST_FLAGS[name] == "allow" else deny
            for v in values:
                target.extend(split_tool_list(v))
        elif name in ("--permission-mode", "--settings", "--setting-sources", "--permission-prompt-tool"):
            value = inline if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            if not eq:
                i += 1
            if name == "--permission-mode":
                mode = value
            elif name == "--settings":
                settings = value
            elif name == "--setting-sources":
                sources = tuple(s.strip() for s in value.split(",") if s.strip())
            else:
                prompt_tool = value
        elif name == "--dangerously-skip-permissions":
            mode = "bypassPermissions"
        elif name in ("-p", "--print"):
            headless = True
        i += 1
    rules_allow = tuple(b for b in (bash_rule_body(r) for r in allow) if b is not None)
    rules_deny = tuple(b for b in (bash_rule_body(r) for r in deny) if b is not None)
    return HarnessFlags(rules_allow, rules_deny, mode, settings, sources, prompt_tool, headless)


# -- the whole picture ---------------------------------------------------------------------

@dataclass(frozen=True)
class PermissionContext:
    rules: Rules = field(default_factory=Rules)
    mode: str | None = None
    flags_known: bool = False     # the harness's command line was read
    prompt_tool: str | None = None
    sources: tuple = ()           # where the rules came from, for doctor and the ledger

    @property
    def path(self):
        """One line for doctor, stats and the ledger: which evidence the decision had."""
        return "settings+flags" if self.flags_known else "settings only"


def gather(*, project_dir, home, payload_mode=None, argv=None, config_dir=None, read=load_settings):
    """-> PermissionContext from everything a hook can see.  `read(path)` loads a settings file."""
    flags = parse_harness_argv(argv) if argv is not None else HarnessFlags()
    sources = flags.setting_sources if flags.setting_sources is not None else SOURCES
    rules, used, file_mode = Rules(), [], None
    for path in settings_files(project_dir, home, sources, config_dir):
        data = read(path)
        if data is None:
            continue
        rules = rules.merged(rules_from_settings(data))
        file_mode = file_mode or settings_mode(data)
        used.append(path)
    if flags.settings:
        data = _inline_or_file(flags.settings, read)
        if data is not None:
            rules = rules.merged(rules_from_settings(data))
            file_mode = file_mode or settings_mode(data)
            used.append("--settings")
    if flags.allow or flags.deny:
        rules = rules.merged(Rules(allow=flags.allow, deny=flags.deny))
        used.append("command line")
    mode = payload_mode or flags.mode or file_mode or "default"
    return PermissionContext(rules, mode, argv is not None, flags.prompt_tool, tuple(used))


def _inline_or_file(value, read):
    if value.lstrip().startswith("{"):
        try:
            data = json.loads(value)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None
    return read(value)


# -- the verdict ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    kind: str      # allow | ask | deny | unknown
    reason: str


def verdict(command, pctx):
    """Would the harness run `command` with no one asked?  allow only when that is certain."""
    rules = pctx.rules
    if any(_matches_broadly(b, command) for b in rules.deny):
        return Verdict(DENY, "a deny rule matches")
    if any(_matches_broadly(b, command) for b in rules.ask):
        return Verdict(ASK, "an ask rule matches")
    if pctx.mode == "bypassPermissions":
        return Verdict(ALLOW, "bypassPermissions mode")
    if pctx.mode in CLASSIFIER_MODES:
        return Verdict(UNKNOWN, "%s mode: the harness's classifier decides" % pctx.mode)
    parts = split_segments(command)
    if parts is None:
        if "*" in rules.allow:
            return Verdict(ALLOW, "all Bash commands allowed")
        return Verdict(UNKNOWN, "the command cannot be split with confidence")
    for position, part in parts:
        if not any(_matches_narrowly(b, part) for b in rules.allow) and not _harness_allows_itself(part, position):
            return Verdict(UNKNOWN, "no allow rule covers %r" % part[:80])
    return Verdict(ALLOW, "allow rules cover every part")


# Commands the harness ran with no rule at all, as a pipeline consumer or chained after the
# original (seen on Claude Code 2.1.332; docs/permissions.md).  Kept short on purpose: a
# command missing here costs a digest, one wrongly here would widen what runs.
_PIPE_CONSUMERS = frozenset({"tail", "head", "grep"})
_ANYWHERE = frozenset({"echo"})
_WRAPPER = re.compile(r"^timeout\s+\d+[smhd]?\s+")


def _harness_allows_itself(part, position):
    words = part.split()
    if not words:
        return True
    head = words[0]
    if head in _ANYWHERE:
        return True
    if head in _PIPE_CONSUMERS and position == "pipe":
        return True
    if head == "cd" and len(words) == 2:
        target = words[1]
        return not target.startswith(("/", "~", "-", "$")) and ".." not in target.split("/")
    return False


def _words(text):
    return " ".join(text.split())


def _pattern_regex(body):
    """A rule body with `*` wildcards -> an anchored regex; nothing else is special."""
    return re.compile("".join(".*" if ch == "*" else re.escape(ch) for ch in body), re.S)


def _matches_narrowly(body, part):
    """Does an allow rule certainly cover this one simple command?"""
    if body in ("*", ":*"):
        return True
    part = _words(_WRAPPER.sub("", part.strip()))
    body = _words(body)
    if body.endswith(":*"):
        prefix = body[:-2].rstrip()
        return part == prefix or part.startswith(prefix + " ")
    if body.endswith(" *") and "*" not in body[:-2]:
        prefix = body[:-2]
        return part == prefix or part.startswith(prefix + " ")
    if "*" in body:
        return bool(_pattern_regex(body).fullmatch(part))
    return part == body


def _matches_broadly(body, command):
    """Could a deny/ask rule apply anywhere in this command (wrappers, env, substitutions included)?"""
    if body in ("*", ":*"):
        return True
    literal = body[:-2] if body.endswith(":*") else body
    pieces = [p for p in (_words(x) for x in literal.split("*")) if p]
    if not pieces:
        return True
    text = _words(command)
    # Every literal piece appears, at word boundaries, in order: broader than the harness's
    # own matching, which is the safe side for a rule that stops a command.
    pos = 0
    for piece in pieces:
        m = re.compile(r"(?<![\w.-])" + re.escape(piece) + r"(?![\w])").search(text, pos)
        if m is None:
            return False
        pos = m.end()
    return True


# Descriptor duplications write no file; every other redirection is a file access the harness
# judges on its own (a `> out.txt` was seen to need approval even with a matching rule).
_FD_DUPS = re.compile(r"(?<![\w>&])[012]?>&[012](?=\s|$)")


def split_segments(command):
    """-> [(position, simple command)] with position 'first' | 'pipe' | 'chain', or None when the
    command uses anything we do not split with confidence."""
    text = _FD_DUPS.sub(" ", command)
    parts, cur, position = [], [], "first"
    i, n = 0, len(text)
    quote = None
    while i < n:
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"' and i + 1 < n:
                cur.append(text[i + 1])
                i += 1
            i += 1
            continue
        if ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch == "\\":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2
                continue
            cur.append(text[i:i + 2])
            i += 1
        elif ch in "`$":
            return None  # substitutions and expansions: what runs is not in the text
        elif ch in "<>(){}":
            return None
        elif ch in ";\n" or text.startswith("&&", i) or text.startswith("||", i):
            step = 2 if text.startswith(("&&", "||"), i) else 1
            parts.append((position, "".join(cur)))
            cur, position = [], "chain"
            i += step
            continue
        elif ch == "&":
            return None  # backgrounding
        elif ch == "|":
            if text.startswith("|&", i):
                return None
            parts.append((position, "".join(cur)))
            cur, position = [], "pipe"
        else:
            cur.append(ch)
        i += 1
    if quote:
        return None
    parts.append((position, "".join(cur)))
    out = [(p, s.strip()) for p, s in parts]
    if any(not s for _, s in out[:-1]) or not out[-1][1] and len(out) > 1:
        return None
    if any(re.match(r"^\w+=", s) for _, s in out):
        return None  # env assignments: the harness strips only some of them
    return [(p, s) for p, s in out if s]
