"""The safety plane: the bypass table, invariance under any other state, never raising.

The table (tests/data/safety_bypass_table.json) holds the commands and tool calls the safety
plane must deny — RTK's reported leaks (`cat .env`, `head -3 .env`), wrappers, quoting
tricks, interpreters, copies, exfiltration, writes outside the root — and the ordinary
commands it must let through.
"""

import json
import os
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reflex.safety import plane as safety
from reflex.safety.plane import Denial, Redact, SafetyPolicy, check_command, check_tool

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE_PATH = os.path.join(REPO, "tests", "data", "safety_bypass_table.json")
with open(TABLE_PATH) as _f:
    TABLE = json.load(_f)
POLICIES = {k: SafetyPolicy(v["project_root"], v["home"], tuple(v["tmp_dirs"]), tuple(v["allow"]),
                            ctx_home=v.get("ctx_home"))
            for k, v in TABLE["policies"].items()}
CASES = TABLE["cases"]
ROOT = TABLE["cwd"]
HOME = POLICIES["default"].home


def decide(case, policy=None):
    policy = policy or POLICIES[case.get("policy", "default")]
    cwd = case.get("cwd", ROOT)
    if "tool" in case:
        return check_tool(case["tool"], case["input"], cwd, policy)
    return check_command(case["command"], cwd, policy)


def as_bytes(d):
    return None if d is None else d.to_json().encode()


# -- the table ------------------------------------------------------------------------

def test_table_has_the_required_evidence():
    deny = [c for c in CASES if c["expect"] == "deny"]
    allow = [c for c in CASES if c["expect"] == "allow"]
    assert len(deny) >= 40 and len(allow) >= 15
    ids = {c["id"] for c in CASES}
    assert len(ids) == len(CASES)
    # RTK's reported bypasses: `head -3 .env` (#2428) and reading through a wrapper.
    assert {"rtk-cat-env", "rtk-2428-head", "rtk-wrapper-bash-c"} <= ids


def assess(case):
    policy = POLICIES[case.get("policy", "default")]
    cwd = case.get("cwd", ROOT)
    if "tool" in case:
        return safety.assess_tool(case["tool"], case["input"], cwd, policy)
    return safety.assess_command(case["command"], cwd, policy)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_bypass_table(case):
    v = assess(case)
    if case["expect"] == "redact":
        # A recursive read: it runs, through ctx run's redaction, reading under these roots.
        assert isinstance(v, Redact), "%s not redacted: %r" % (case["id"], v)
        assert list(v.roots) == case["roots"] and v.reason.startswith("ctx safety: ")
        assert decide(case) is None
        return
    d = decide(case)
    assert d == (v if isinstance(v, Denial) else None)
    if case["expect"] == "allow":
        assert v is None, "%s wrongly %s: %s" % (case["id"], type(v).__name__, v and v.reason)
        return
    assert d is not None, "%s not denied: %r" % (case["id"], case.get("command", case.get("input")))
    assert d.rule == case["rule"] and d.target == case.get("target", d.target)
    assert d.rule in safety.RULES
    # The reason says what was blocked and what to do instead.
    assert d.reason.startswith("ctx safety: blocked ")
    assert "ask the user" in d.reason.lower()
    shown = d.target if len(d.target) < 100 else d.target[:50]
    assert shown in d.reason


def test_secret_remediations_name_the_alternative():
    env = check_command("head -3 .env", ROOT, POLICIES["default"])
    assert ".env.example" in env.reason and "set -a; . ./.env; set +a" in env.reason
    key = check_command("cat ~/.ssh/id_ed25519", ROOT, POLICIES["default"])
    assert "ssh -i PATH" in key.reason and ".pub" in key.reason
    out = check_command("rm -rf ~/.config", ROOT, POLICIES["default"])
    assert ROOT in out.reason and "/tmp" in out.reason and "allow list" in out.reason
    unknown = check_command("rm -rf ~", "/srv/x", POLICIES["no-root"])
    assert "project root is unknown" in unknown.reason


def test_denial_serializations():
    d = check_command("cat .env", ROOT, POLICIES["default"])
    assert json.loads(d.to_json()) == d.to_dict() == {"rule": d.rule, "target": d.target, "reason": d.reason}
    assert d.to_json() == json.dumps(d.to_dict(), sort_keys=True, separators=(",", ":"))
    out = d.hook_output()["hookSpecificOutput"]
    assert out == {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                   "permissionDecisionReason": d.reason}


def test_policy_and_denial_are_frozen_values():
    p = SafetyPolicy("/r/x/", "/home/u/", ["/tmp/"], ["a"])
    assert (p.project_root, p.home, p.tmp_dirs, p.allow) == ("/r/x", "/home/u", ("/tmp",), ("a",))
    assert p == SafetyPolicy("/r/x", "/home/u", ("/tmp",), ("a",)) and hash(p) == hash(p.replace())
    assert p.replace(allow=()).allow == ()
    with pytest.raises(AttributeError):
        p.home = "/"
    d = Denial("secret-read", "/x/.env", "r")
    with pytest.raises(AttributeError):
        d.rule = "x"
    assert d == Denial("secret-read", "/x/.env", "r") and d != Denial("secret-read", "/y", "r")
    assert SafetyPolicy(None, "/home/u").tmp_dirs[:2] == ("/tmp", "/var/tmp")
    assert SafetyPolicy("relative/root", "/home/u").project_root is None


# -- semantics worth pinning beyond the table -----------------------------------------

@pytest.mark.parametrize("command,expect", [
    ("cd ~/.ssh; cat *", "deny"),                         # cwd is tracked into globs
    ("(cd ~/.ssh); cat id_ed25519.pub", "allow"),         # a subshell's cd does not leak
    ("cd /tmp && rm -rf *", "allow"),
    ("cd .. && rm -rf proj2", "deny"),
    ("f=.env; unset f; cat $f", "allow"),
    ("read f < list; cat $f", "allow"),
    ("python -m venv .env", "allow"),                    # .env as a venv directory name
    ("case $x in *.env) echo env;; esac", "allow"),
    ("case x in x) cat .env;; esac", "deny"),
    ("source .env && echo $HOME", "allow"),              # only non-secret variables printed
    ("source .env && declare -p", "deny"),
    ("node --env-file=.env -e \"console.log(process.env.KEY)\"", "deny"),
    ("node -e \"require('dotenv').config(); console.log(process.env.KEY)\"", "deny"),
    ("git -C ~/.ssh show HEAD:id_rsa", "deny"),
    ("cat .env.bak", "deny"),
    ("cat secrets.py", "allow"),
    ("cat .npmrc", "deny"),                              # a project .npmrc often holds an _authToken (issue 31)
    ("cat ~/.npmrc", "deny"),                            # ~/.npmrc holds registry tokens
    ("cat ~/.envrc", "deny"),
    ("ls -la ~/.ssh && stat ~/.ssh/id_rsa", "allow"),
    ("cp -r src /tmp/backup && rsync -a dist/ /tmp/site/", "allow"),
    ("rm -rf /tmp", "deny"),                             # the shared temp dir itself
    ("echo data > /dev/null; echo x >/dev/stderr", "allow"),
])
def test_semantics(command, expect):
    d = check_command(command, ROOT, POLICIES["default"])
    assert ("deny" if d else "allow") == expect, d and d.reason


@pytest.mark.parametrize("command,verb", [
    ("source .env && export", "export"),
    ("source .env && declare -p", "declare"),
    ("set -a; . ./.env; typeset -x", "typeset"),
])
def test_listing_variables_after_sourcing_a_secret_is_the_env_dump_rule(command, verb):
    # Found by mypy: a local flag named `dump` shadowed the rule's function, so the builtins
    # that list variables raised and only the fallback mention scan denied, under the wrong rule.
    d = check_command(command, ROOT, POLICIES["default"])
    assert d is not None and d.rule == "secret-env-dump", d
    assert "`%s`" % verb in d.reason and ROOT + "/.env" in d.reason


def test_glob_before_double_star_is_a_tree_read_under_the_known_part():
    # Found by mypy: a glob component before `**` put a compiled pattern among the directory
    # names joined into the tree's root; the walk raised and the recursive read went through
    # unredacted.
    v = safety.assess_command("cat src/*/x/**/y", ROOT, POLICIES["default"])
    assert isinstance(v, Redact) and list(v.roots) == [ROOT + "/src"], v
    assert isinstance(safety.assess_command("cat ~/*/**/y", ROOT, POLICIES["default"]), Denial)


def test_unknown_root_protects_only_home_dotfiles_root_and_system():
    p = POLICIES["no-root"]
    assert check_command("rm -rf build && cp x ~/Documents/y", HOME + "/proj", p) is None
    assert check_command("cp x /srv/data/y", "/srv/data", p) is None
    for cmd in ("rm -rf ~", "rm -rf /", "rm ~/.bashrc", "cp x /usr/bin/", "rm -rf /home", "rm -rf ~/*"):
        assert check_command(cmd, HOME + "/proj", p) is not None, cmd


def test_allow_list_forms():
    base = POLICIES["default"]
    assert check_command("cat ~/.aws/credentials", ROOT, base) is not None
    assert check_command("cat ~/.aws/credentials", ROOT, base.replace(allow=("~/.aws/credentials",))) is None
    assert check_command("rm -rf ~/.cache/x/y", ROOT, base.replace(allow=("~/.cache",))) is None  # and below
    assert check_command("rm -rf ~/.cachex", ROOT, base.replace(allow=("~/.cache",))) is not None
    assert check_command("cat config/.env.ci", ROOT, base.replace(allow=("config/.env.*",))) is None
    assert check_command("cat other/.env.ci", ROOT, base.replace(allow=("config/.env.*",))) is not None
    assert check_command("cat a/b/.env.test", ROOT, base.replace(allow=(".env.test",))) is None
    assert check_command("cp x /opt/tool/bin/", ROOT, base.replace(allow=("/opt/**",))) is None


def test_tools():
    p = POLICIES["default"]
    assert check_tool("Read", {"file_path": ".env.example"}, ROOT, p) is None
    assert check_tool("Read", {"file_path": "config/.env.local"}, ROOT, p).rule == "secret-read"
    assert check_tool("MultiEdit", {"file_path": "/etc/hosts", "edits": []}, ROOT, p).rule == "write-outside-root"
    assert check_tool("Edit", {"file_path": "/tmp/scratch.py"}, ROOT, p) is None
    assert check_tool("Grep", {"pattern": "x", "glob": "*.py"}, ROOT, p) is None
    assert check_tool("Grep", {"pattern": "x", "glob": "!.env"}, ROOT, p) is None
    assert check_tool("Bash", {"command": 42}, ROOT, p) is None
    assert check_tool("Read", "not a dict", ROOT, p) is None
    assert check_tool(None, {"file_path": ".env"}, ROOT, p) is None


CORPUS = os.path.join(REPO, "..", "shared", "corpus", "transcripts")


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="shared transcript corpus not present")
def test_real_transcripts_have_no_false_secret_denials():
    """Every Bash call in the recorded Claude Code sessions: none reads a secret."""
    import glob
    import re
    commands = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.jsonl"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                content = (obj.get("message") or {}).get("content") if isinstance(obj.get("message"), dict) else None
                for block in content if isinstance(content, list) else ():
                    if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Bash":
                        commands.append((block["input"].get("command", ""), obj.get("cwd") or "/"))
    assert len(commands) > 100
    for command, cwd in commands:
        m = re.match(r"(/Users/[^/]+|/home/[^/]+|/root)", cwd)
        d = check_command(command, cwd, SafetyPolicy(None, m.group(1) if m else "/root"))
        assert d is None or not d.rule.startswith("secret-"), (command, d.reason)


# -- work caps ------------------------------------------------------------------------

def test_huge_and_deep_inputs_are_capped_and_conservative():
    p = POLICIES["default"]
    t0 = time.perf_counter()
    assert check_command("echo " + "a" * (1 << 20), ROOT, p) is None
    assert check_command("echo " + "a " * (1 << 19) + "; cat .env", ROOT, p).rule == "secret-read"
    assert check_command("echo " + "a " * (1 << 19) + "; rm -rf ~", ROOT, p).rule == "delete-outside-root"
    deep = "echo " + "$(" * 60 + "cat .env" + ")" * 60
    assert check_command(deep, ROOT, p).rule == "secret-read"
    nested = "bash -c " + "'bash -c " * 30 + "ls"
    assert check_command(nested, ROOT, p) is None
    braces = "cat " + "{a,b}" * 40
    assert check_command(braces, ROOT, p) is None
    assert time.perf_counter() - t0 < 10


# -- properties -----------------------------------------------------------------------

FRAGMENTS = ["cat", "head -3", " ", ".env", "'", '"', "$(", ")", "`", "<<", "EOF", "\n", "<(", ">", ">>",
             "<", "|", "&&", ";", "{", "}", ",", "*", "?", "[", "]", "~", "$", "${", ":-", "\\", "bash -c",
             "eval", "for f in", "do", "done", "case", "in", ";;", "esac", "find", "-exec", "{}", "\\;",
             "xargs", "-I", "sed", "-i", "awk", "python -c", "node -e", "cp", "mv", "rm -rf", "/", "~/.ssh/",
             "id_rsa", "=", "@", "tar", "czf", "git", "show", "HEAD:", "cd", "..", "env", "-S", "sudo", "-u",
             "source", "#", "$'\\x2e'", "\x00", "\udcff", "é", "\t", "2>&1", "&>", "[[", "]]", "((", "))",
             "function", "f()", "if", "then", "fi", "-", "--", "ssh", "host", "curl", "-F", "x=@", "export",
             "printenv", "tee", "chmod", "dd", "if=", "of=", "find / -delete", "ln -s", "zip", "rsync"]
shellish = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=30).map("".join)
anything = st.one_of(shellish, st.text(max_size=200),
                     st.binary(max_size=200).map(lambda b: b.decode("utf-8", "surrogateescape")))
cwds = st.one_of(st.sampled_from([ROOT, "/", "", "relative", HOME, "/tmp", HOME + "/.ssh"]), st.text(max_size=20))
policies = st.one_of(
    st.sampled_from(list(POLICIES.values())),
    st.builds(SafetyPolicy, st.one_of(st.none(), st.text(max_size=15)), st.text(max_size=15),
              st.lists(st.text(max_size=10), max_size=3), st.lists(st.text(max_size=10), max_size=3)))
FAST = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(command=anything, cwd=cwds, policy=policies)
def test_check_command_never_raises(command, cwd, policy):
    # The inner function must not raise either: the public guard is a backstop, not a crutch.
    d = safety._check_command(command, cwd, policy)
    assert d is None or (isinstance(d, Denial) and d.rule in safety.RULES and d.reason) or \
        (isinstance(d, Redact) and d.rule == "secret-redact" and d.reason)
    assert check_command(command, cwd, policy) == (d if isinstance(d, Denial) else None)
    assert safety.assess_command(command, cwd, policy) == d


@FAST
@given(tool=st.sampled_from(["Bash", "Read", "Grep", "Glob", "Edit", "Write", "MultiEdit", "NotebookEdit", "X"]),
       tool_input=st.dictionaries(st.sampled_from(["command", "file_path", "path", "glob", "notebook_path"]),
                                  st.one_of(anything, st.integers(), st.none()), max_size=3),
       cwd=cwds, policy=policies)
def test_check_tool_never_raises(tool, tool_input, cwd, policy):
    d = safety._check_tool(tool, tool_input, cwd, policy)
    assert d is None or isinstance(d, (Denial, Redact))


@pytest.fixture(scope="module")
def clean_process_baseline():
    """Every table decision computed in a fresh interpreter: other hash seed, bare env, cwd /."""
    code = ("import json,sys\n"
            "sys.path.insert(0, %r)\n"
            "from tests.safety.test_safety import CASES, decide\n"
            "print(json.dumps([None if (d := decide(c)) is None else d.to_json() for c in CASES]))\n" % REPO)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONHASHSEED": "4242", "HOME": "/nonexistent",
           "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd="/", env=env, capture_output=True, text=True, check=True)
    return [None if x is None else x.encode() for x in json.loads(out.stdout)]


reflex_states = st.fixed_dictionaries({
    "densified": st.lists(st.text(max_size=12), max_size=4),
    "starvations": st.dictionaries(st.text(max_size=8), st.integers(0, 9), max_size=4),
    "stand_down": st.booleans(),
    "breaker_open": st.booleans(),
    "reflexes_off": st.booleans(),
    "epoch": st.text(max_size=12),
    "env": st.dictionaries(st.sampled_from(["HOME", "TMPDIR", "PWD", "CTX_REFLEX_OFF", "CTX_POLICY_EPOCH",
                                            "CTX_SAFETY_ALLOW", "OLDPWD"]),
                           st.text(alphabet="/abc.~-", max_size=12), max_size=4),
    "noise": st.lists(st.tuples(anything, cwds, policies), max_size=4),
    "unmatched_allow": st.lists(st.sampled_from(["/nonexistent-zz/**", "zz-never-*.txt", "~/zz-none/**",
                                                 "zz/never/*"]), max_size=3),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.integers(0, len(CASES) - 1), min_size=1, max_size=6), state=reflex_states)
def test_decisions_depend_only_on_command_cwd_and_policy(picks, state, clean_process_baseline, tmp_path):
    """Byte-identical decisions under any reflex/policy state around the call.

    The state a reflex layer might hold (densified signatures, starvation counts, a stood-down
    signature, an open breaker, reflexes switched off, a policy epoch), environment variables
    (HOME/TMPDIR/PWD included: the policy, not the environment, says where home is), the process
    cwd, interleaved checks of other commands under other policies, and allow patterns that match
    nothing: none of it may change a single byte of a decision.
    """
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    try:
        os.environ.update({k: v for k, v in state["env"].items()})
        os.environ["CTX_REFLEX_STATE"] = json.dumps({k: state[k] for k in (
            "densified", "starvations", "stand_down", "breaker_open", "reflexes_off", "epoch")})
        os.chdir(tmp_path)
        for i in picks:
            for cmd, cwd, pol in state["noise"]:
                check_command(cmd, cwd, pol)
            case = CASES[i]
            policy = POLICIES[case.get("policy", "default")]
            widened = policy.replace(allow=policy.allow + tuple(state["unmatched_allow"]))
            assert as_bytes(decide(case)) == clean_process_baseline[i]
            assert as_bytes(decide(case, widened)) == clean_process_baseline[i]
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def test_baseline_matches_this_process(clean_process_baseline):
    assert [as_bytes(decide(c)) for c in CASES] == clean_process_baseline


# -- the hot-path contract ------------------------------------------------------------

def test_stdlib_only_and_no_heavy_imports():
    code = ("import sys\n"
            "before = set(sys.modules)\n"
            "import reflex.safety.plane\n"
            "new = sorted(set(sys.modules) - before)\n"
            "print('\\n'.join(new))\n")
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    loaded = out.stdout.split()
    foreign = [m for m in loaded if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "reflex"]
    assert foreign == []
    ours = {m for m in loaded if m.startswith("reflex")}
    assert ours <= {"reflex", "reflex.errors", "reflex.safety", "reflex.safety.model", "reflex.safety.plane",
                    "reflex.safety.lex", "reflex.safety.paths", "reflex.safety.shell", "reflex.safety.argv",
                    "reflex.safety.cmds", "reflex.safety.nested", "reflex.safety.files", "reflex.safety.readers",
                    "reflex.safety.words", "reflex.safety.disk"}
    # dataclasses pulls in inspect (~6 ms); the safety plane keeps both off the hook's path.
    assert "inspect" not in loaded and "dataclasses" not in loaded and "json" not in loaded
    # Its annotations import nothing at run time (typing alone costs several ms).
    assert "typing" not in loaded and "collections.abc" not in loaded
