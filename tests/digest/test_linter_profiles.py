"""The issue-13 linter profiles (flake8, pylint, shellcheck, pyright, biome) on shapes the corpus does
not hold: a format they do not read goes to the generic profile (no verdict invented), a clean run
states only what the tool printed."""

import pytest

from reflex.digest import extract_facts


@pytest.mark.parametrize("family, raw", [
    # flake8 --format=pylint: no column, `[CODE]` in brackets
    ("flake8", b"billing/tax.py:3: [F401] 'os' imported but unused\n"),
    # flake8 prints nothing when clean: the exit code is the only verdict
    ("flake8", b""),
    # pylint --output-format=msvs: module headers, then lines we do not read
    ("pylint", (b"************* Module billing.tax\nbilling/tax.py(3): [W0611(unused-import)] Unused import os\n\n"
                b"-----------------------------------\nYour code has been rated at 9.50/10\n\n")),
    # shellcheck -f diff
    ("shellcheck", b"--- a/deploy.sh\n+++ b/deploy.sh\n@@ -3,1 +3,1 @@\n-cd $DIR\n+cd \"$DIR\"\n"),
    # biome --reporter=gitlab: counts nothing we can locate
    ("biome", (b'[\n  {\n    "description": "This import is unused.",\n    "check_name": "lint/x",\n'
               b'    "location": {"path": "a.js", "lines": {"begin": 3}}\n  }\n]\n')),
])
def test_unknown_format_goes_to_generic(family, raw):
    facts = extract_facts(raw, family=family, exit_code=1, command=family)
    assert facts.profile == "generic" and not facts.recognized
    assert not facts.counts.reported()


def test_clean_runs_state_what_the_tool_printed():
    pyright = extract_facts(b"0 errors, 0 warnings, 0 informations \n", family="pyright", exit_code=0, command="pyright")
    assert pyright.recognized and pyright.counts.errors == 0 and not pyright.diagnostics
    pylint = extract_facts(b"\n--------------------------------------------------------------------\n"
                           b"Your code has been rated at 10.00/10 (previous run: 9.50/10, +0.50)\n\n",
                           family="pylint", exit_code=0, command="pylint pkg")
    assert pylint.recognized and not pylint.diagnostics and not pylint.counts.reported()
    assert any("10.00/10" in n for n in pylint.notes)
    biome = extract_facts(b"Checked 5 files in 3ms. No fixes applied.\n", family="biome", exit_code=0,
                          command="biome lint .")
    assert biome.recognized and biome.counts.reported() == {"files checked": 5}


def test_a_file_that_does_not_parse_is_named_apart():
    raw = (b"./ok.py:1:1: F401 'os' imported but unused\n"
           b"./old.py:3:7: E999 SyntaxError: invalid syntax\n")
    facts = extract_facts(raw, family="flake8", exit_code=1, command="flake8 .")
    assert [(b.where, b.label) for b in facts.build_errors] == [("old.py", "NOT LINTED")]
    gcc = b"ci/r.sh:6:1: error: Couldn't find 'fi' for this 'if'. [SC1046]\nci/t.sh:5:6: warning: x [SC2124]\n"
    facts = extract_facts(gcc, family="shellcheck", exit_code=1, command="shellcheck -f gcc ci/*.sh")
    assert [(b.where, b.label) for b in facts.build_errors] == [("ci/r.sh", "NOT LINTED")]
    assert [d.severity for d in facts.diagnostics] == ["error", "warning"]
