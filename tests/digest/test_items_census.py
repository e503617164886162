"""The census of Items (issue 29): the entries of tools that are not test runners (a status's
paths, a diff's files, a search's matches) are all named, or counted with an address over their
bytes, before any body; a clipped line carries the address of its whole line; a body cut by the
budget says which entries are behind which address.  Every address verifies against the bytes."""

import re

import pytest
from blake3 import blake3

from reflex import tokens
from reflex.digest.facts import Counts, Facts, Item
from reflex.digest.render import render

HANDLE = "r:0123456789ab"


def _diff_like(n_files, lines_per_file, n_untracked, long_line=0):
    out, items = [], []

    def pos():
        return sum(len(x) + 1 for x in out)

    for f in range(n_files):
        start = pos()
        out.append(f"diff --git a/src/mod_{f}.py b/src/mod_{f}.py")
        out += [f"+    value_{k} = compute(alpha_{k}, beta_{k})  # file {f}" for k in range(lines_per_file)]
        items.append(Item(group="files", noun="files", text=f"src/mod_{f}.py +{lines_per_file} -0",
                          span=(start, pos()), body=True))
    for k in range(n_untracked):
        start = pos()
        out.append(f"?? notes/untracked_{k}.txt")
        items.append(Item(group="untracked", noun="paths", text=f"notes/untracked_{k}.txt", span=(start, pos())))
    if long_line:
        start = pos()
        out.append("bundle.min.js:1:" + "var a=function(){return 1};" * long_line)
        items.append(Item(group="bundle.min.js", noun="matches", text=out[-1], span=(start, pos())))
    raw = ("\n".join(out) + "\n").encode()
    facts = Facts(profile="itemtest", profile_version=1, recognized=True, exit_code=0, items=items,
                  total_lines=len(out), counts=Counts(other={"files changed": n_files}))
    return raw, facts


def _verify_hints(d, raw):
    for h in d.hints:
        a, b = h.span
        assert blake3(raw[a:b]).hexdigest().startswith(h.b3), h


@pytest.mark.parametrize("density", ["lean", "normal", "dense", "inline"])
@pytest.mark.parametrize("shape", [(3, 5, 4, 0), (30, 40, 50, 0), (2, 300, 0, 0), (0, 0, 400, 0), (1, 3, 2, 400)])
def test_every_item_is_named_or_behind_an_address(density, shape):
    raw, facts = _diff_like(*shape)
    d = render(facts, raw, density=density, budget=None, handle=HANDLE)
    assert d.tokens == tokens.count(d.text) <= d.budget
    assert d.tokens < d.raw_tokens or d.passthrough
    _verify_hints(d, raw)
    if d.passthrough:
        return
    addressed = [h.span for h in d.hints]
    for it in facts.items:
        # named whole, clipped, or (the tightest census) by its reference: the first word of its text
        named = it.text in d.text or it.text[:100] in d.text or f" {it.text.split()[0]}" in d.text
        covered = any(a <= it.span[0] and it.span[1] <= b for a, b in addressed)
        assert named or covered, (density, shape, it.text[:60])


def test_a_clipped_line_carries_the_address_of_its_whole_line():
    raw, facts = _diff_like(1, 3, 2, long_line=400)
    d = render(facts, raw, density="normal", budget=None, handle=HANDLE)
    m = re.search(r"… whole line: ctx get (r:[0-9a-f]{12}:L(\d+)-(\d+)) b3=([0-9a-f]+)$", d.text, re.M)
    assert m, d.text[-400:]
    first, last = int(m.group(2)), int(m.group(3))
    assert first == last
    line = raw.split(b"\n")[first - 1]
    assert line.startswith(b"bundle.min.js:1:") and len(line) > 10_000
    assert blake3(line + b"\n").hexdigest().startswith(m.group(4))


def test_a_budget_cut_names_the_files_whose_bodies_are_behind_the_address():
    raw, facts = _diff_like(30, 40, 0)
    d = render(facts, raw, density="normal", budget=None, handle=HANDLE)
    note = next(s for s in d.text.splitlines() if s.startswith("[ctx] not shown: the bodies of"))
    # the census names all 30 files before any body
    census_end = d.text.index("== ") if "== " in d.text else len(d.text)
    for f in range(30):
        assert f"src/mod_{f}.py +40 -0" in d.text[:census_end]
    shown = {int(x) for x in re.findall(r"^== src/mod_(\d+)\.py", d.text, re.M)}
    hidden = set(range(30)) - shown
    named = {int(x) for x in re.findall(r"src/mod_(\d+)\.py", note)}
    assert named and named <= hidden
    assert f"and {len(hidden) - len(named)} more" in note
    hint = next(h for h in d.hints if h.command in note)
    lines = raw[hint.span[0]:hint.span[1]].decode()
    for f in hidden:
        assert f"# file {f}" in lines


def test_items_of_one_output_render_identically():
    raw, facts = _diff_like(12, 20, 30, long_line=50)
    texts = {render(facts, raw, density="normal", budget=None, handle=HANDLE).text for _ in range(3)}
    assert len(texts) == 1


def test_the_header_counts_items_when_the_tool_printed_no_counts():
    raw, facts = _diff_like(0, 0, 400)
    facts = facts.model_copy(update={"counts": Counts()})
    d = render(facts, raw, density="normal", budget=None, handle=HANDLE)
    assert d.text.splitlines()[0].split(" | ")[3] == "400 paths"
