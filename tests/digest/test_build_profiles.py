"""Build-tool shapes the corpus has no case for: the cc profile on a recursive make's failure chain,
a missing rule, a library the linker cannot find, clang's -Werror flags; the census of compiler
errors without a code (never one heading for different messages)."""

from reflex.digest import extract_facts
from reflex.digest.facts import Diagnostic, Facts
from reflex.digest.census import _by_code
from reflex.digest.source import Source


def facts(text: str, command: str = "make") -> Facts:
    return extract_facts(text.encode(), family="make", exit_code=2, command=command)


def test_recursive_make_names_the_innermost_failed_target_once():
    f = facts("src/a.c:3:5: error: unknown type name 'foo'\n"
              "    3 | foo x;\n      |     ^~~\n"
              "gmake[2]: *** [CMakeFiles/app.dir/build.make:76: CMakeFiles/app.dir/src/a.c.o] Error 1\n"
              "gmake[1]: *** [CMakeFiles/Makefile2:83: CMakeFiles/app.dir/all] Error 2\n"
              "gmake: *** [Makefile:91: all] Error 2\n")
    assert f.profile == "cc" and f.recognized
    assert [(b.label, b.where) for b in f.build_errors] == [("FAILED", "CMakeFiles/app.dir/src/a.c.o")]
    assert [(d.file, d.line, d.col, d.code) for d in f.diagnostics] == [("src/a.c", 3, 5, None)]


def test_missing_library_and_rule_are_build_errors_and_clang_werror_flag_is_the_code():
    f = facts("a.c:9:7: error: unused variable 'n' [-Werror,-Wunused-variable]\n"
              "/usr/bin/ld: cannot find -lcsv: No such file or directory\n"
              "clang: error: linker command failed with exit code 1 (use -v to see invocation)\n"
              "make: *** No rule to make target 'src/missing.c', needed by 'build/missing.o'.  Stop.\n")
    assert [(d.code, d.severity) for d in f.diagnostics] == [("-Wunused-variable", "error")]
    assert ("LINK ERROR", None) in [(b.label, b.where) for b in f.build_errors]
    assert ("NO RULE", "src/missing.c") in [(b.label, b.where) for b in f.build_errors]
    assert any("linker command failed" in n for n in f.notes)


def test_make_output_without_compiler_lines_is_not_claimed():
    f = facts("./deploy.sh\nerror: host unreachable\nmake: *** [Makefile:3: deploy] Error 1\n", "make deploy")
    assert f.profile == "generic" and not f.recognized


def test_undefined_reference_without_debug_info_has_no_line():
    f = facts("/usr/bin/ld: build/main.o: in function `main':\n"
              "main.c:(.text+0x8a): undefined reference to `table_free'\n"
              "collect2: error: ld returned 1 exit status\n")
    assert [(d.file, d.line, d.message) for d in f.diagnostics] == [("main.c", None, "undefined reference to `table_free'")]


def test_codeless_diagnostics_with_different_messages_get_headings_of_their_own():
    raw = b"a.go:1:1: x\nb.go:2:2: y\n"
    f = Facts(profile="govet", profile_version=1, recognized=True,
              diagnostics=[Diagnostic(file="a.go", line=1, col=1, message="result of fmt.Sprintf call not used"),
                           Diagnostic(file="b.go", line=2, col=2, message="unreachable code")])
    heads = [g.lines[0] for g in _by_code(f, Source(raw, "r:000000000000")) if not g.lines[0].startswith("  ")]
    assert heads == ["error ×1: result of fmt.Sprintf call not used", "error ×1: unreachable code"]
