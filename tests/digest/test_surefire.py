"""Maven's log beyond the corpus: a failed goal nothing else explains, and what is not Maven's.

The corpus (evals/corpus/maven/) holds real `mvn test` outputs; these cases are the shapes it
cannot produce offline (a dependency that does not resolve needs a repository that refuses it),
written as Maven 3.8 prints them.
"""

from reflex.digest import build_digest, census, extract_facts
from reflex.digest.facts import Diagnostic, Facts
from reflex.digest.source import Source

UNRESOLVED = b"""[INFO] Scanning for projects...
[INFO] ------------------------------------------------------------------------
[INFO] BUILD FAILURE
[INFO] ------------------------------------------------------------------------
[INFO] Total time:  0.412 s
[ERROR] Failed to execute goal on project cart: Could not resolve dependencies for project example:cart:jar:1.0
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.22.3:test (default-test) on project cart: Execution default-test of goal org.apache.maven.plugins:maven-surefire-plugin:2.22.3:test failed: The forked VM terminated without properly saying goodbye. VM crash or System.exit called?
"""


def test_a_failed_goal_that_no_test_explains_is_named_with_maven_s_reason():
    facts = extract_facts(UNRESOLVED, family="maven", exit_code=1, command="mvn test")
    assert facts.profile == "surefire" and facts.recognized
    deps, vm = facts.build_errors
    assert {deps.label, vm.label} == {"GOAL FAILED"} and deps.where == vm.where == "cart"
    assert deps.message == "the build: Could not resolve dependencies for project example:cart:jar:1.0"
    assert "forked VM terminated" in vm.message and "(default-test)" in vm.message
    dg = build_digest(UNRESOLVED * 30, family="maven", exit_code=1, command="mvn test", handle="r:0123456789ab")
    assert "GOAL FAILED cart" in dg.text


def test_output_that_is_not_maven_s_goes_to_the_generic_profile():
    facts = extract_facts(b"hello\nworld\n", family="maven", exit_code=0, command="mvn -v")
    assert facts.profile == "generic" and not facts.recognized


def test_code_less_diagnostics_share_a_heading_only_with_the_same_message_shape():
    diags = [Diagnostic(file="/p/A.java", line=10, col=9, message="cannot find symbol"),
             Diagnostic(file="/p/A.java", line=10, col=58, message="cannot find symbol"),
             Diagnostic(file="/p/A.java", line=16, col=35, message="incompatible types: int cannot be converted to String")]
    facts = Facts(profile="surefire", profile_version=1, recognized=True, diagnostics=diags)
    text = "\n".join(line for g in census._by_code(facts, Source(b"x\n", "r:0123456789ab")) for line in g.lines)
    assert "error ×2: cannot find symbol" in text
    assert "error ×1: incompatible types" in text
