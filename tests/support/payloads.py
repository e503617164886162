"""Hook payloads for the invariance campaign: a tool call the safety plane judges, wrapped in
every way the fields around it can be wrong.

Shared by tests/adversarial/test_payload_invariance.py (CI-sized) and
evals/bench_invariance.py (the 100,000-payload campaign).  A payload is built as
an object with placeholders, serialized, and then mutated at the byte level
(things json.dumps cannot produce: 50,000-deep arrays, invalid UTF-8, a BOM,
trailing garbage, a size past the shim's cap).
"""

import json

from hypothesis import strategies as st

from reflex.harness.claude.payload import MAX_PAYLOAD

# Tool calls the safety plane has an opinion on (and a few it has none on).
CALLS = (
    ("Bash", {"command": "cat .env"}),
    ("Bash", {"command": "cat ./.env | head -5"}),
    ("Bash", {"command": "grep -r KEY ~/.ssh"}),
    ("Bash", {"command": "rm -rf /"}),
    ("Bash", {"command": "ls -la"}),
    ("Bash", {"command": "pytest -q"}),
    ("Bash", {"command": "echo \ud800 > .env"}),
    ("Bash", {"command": "python -c 'print(open(\".env\").read())'"}),
    ("Read", {"file_path": ".env"}),
    ("Read", {"file_path": "/root/.ssh/id_ed25519"}),
    ("Read", {"file_path": "README.md"}),
    ("Write", {"file_path": ".env", "content": "X=1\n"}),
    ("Write", {"file_path": "/etc/passwd", "content": "x"}),
    ("Edit", {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}),
    ("Grep", {"pattern": "KEY", "glob": ".env*"}),
    ("Glob", {"pattern": "**/*.py"}),
    ("NotebookEdit", {"notebook_path": "secrets.json", "new_source": ""}),
    ("WebFetch", {"url": "http://example.com", "prompt": "p"}),
)

MISSING = object()
DEEP_DEPTHS = (10, 63, 64, 65, 200, 1000, 50_000)

_scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
            | st.text(max_size=12) | st.sampled_from(["\ud800", "\udfff", "x\udc80y", "", " ", "/", "../.."]))
junk = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def _deep_marker(depth):
    return "\x00DEEP%d\x00" % depth


def _maybe(draw, value, wrong_p):
    """The field as Claude Code sends it, or missing, or a value of the wrong shape."""
    roll = draw(st.integers(0, 99))
    if roll < wrong_p // 2:
        return MISSING
    if roll < wrong_p:
        return draw(junk | st.sampled_from([_deep_marker(d) for d in DEEP_DEPTHS]))
    return value


@st.composite
def payloads(draw, cwds=("/tmp",), huge=False):
    """-> (bytes, truncated): one hook payload as the shim would read it from stdin."""
    tool, tool_input = draw(st.sampled_from(CALLS))
    tool_input = dict(tool_input)
    if draw(st.booleans()):
        tool_input["description"] = _maybe(draw, "does a thing", 40)
    if draw(st.booleans()):
        tool_input[draw(st.sampled_from(["timeout", "x", "extra"]))] = draw(
            junk | st.sampled_from([_deep_marker(d) for d in DEEP_DEPTHS]))
    tool_input = {k: v for k, v in tool_input.items() if v is not MISSING}
    obj = {
        "session_id": _maybe(draw, "sess-inv", 30),
        "transcript_path": _maybe(draw, "/tmp/t.jsonl", 20),
        "cwd": _maybe(draw, draw(st.sampled_from(list(cwds) + ["sub", ""])), 30),
        "permission_mode": _maybe(draw, "default", 30),
        "hook_event_name": draw(st.sampled_from(["PreToolUse"] * 8 + ["PostToolUse", "SessionStart", 7])),
        "tool_name": _maybe(draw, tool, 5),
        "tool_input": tool_input if draw(st.integers(0, 99)) >= 3 else draw(junk),
        "tool_use_id": _maybe(draw, "toolu_inv", 20),
    }
    for _ in range(draw(st.integers(0, 2))):
        obj[draw(st.text(min_size=1, max_size=8))] = draw(junk)
    obj = {k: v for k, v in obj.items() if v is not MISSING}
    keys = list(obj)
    if draw(st.booleans()):
        keys = draw(st.permutations(keys))
    obj = {k: obj[k] for k in keys}
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()),
                      separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
    for depth in DEEP_DEPTHS:
        text = text.replace(json.dumps(_deep_marker(depth), ensure_ascii=False), "[" * depth + "]" * depth)
        text = text.replace(json.dumps(_deep_marker(depth)), "[" * depth + "]" * depth)
    data = text.encode("utf-8", "surrogatepass")   # a lone surrogate becomes invalid UTF-8 here
    mutation = draw(st.sampled_from(["none"] * 10 + ["bom", "garbage", "bad_byte", "cut"] + (["huge"] if huge else [])))
    if mutation == "bom":
        data = b"\xef\xbb\xbf" + data
    elif mutation == "garbage":
        data = data + b" }{ trailing"
    elif mutation == "bad_byte" and b'"does a thing"' in data:
        data = data.replace(b'"does a thing"', b'"does \xff thing"')
    elif mutation == "cut":
        data = data[:draw(st.integers(0, max(0, len(data) - 1)))]
    elif mutation == "huge":
        data = huge_unrelated(data, draw(st.booleans()))
    return data[:MAX_PAYLOAD], len(data) > MAX_PAYLOAD


def huge_unrelated(data, before):
    """The payload with an unrelated top-level field of 9 MiB, before or after the rest."""
    pad = b'"padding":"' + b"a" * (9 << 20) + b'"'
    if before:
        return b"{" + pad + b"," + data.lstrip()[1:]
    return data.rstrip()[:-1] + b"," + pad + b"}"


def outcome(out):
    """The safety-relevant part of a hook's stdout: ("deny", reason) or ("not deny",)."""
    if not out:
        return ("not deny",)
    try:
        answer = json.loads(out).get("hookSpecificOutput") or {}
    except (ValueError, AttributeError):
        return ("unparseable", out[:200])
    if answer.get("permissionDecision") == "deny":
        return ("deny", answer.get("permissionDecisionReason"))
    return ("not deny",)
