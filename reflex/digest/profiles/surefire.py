"""Maven: Surefire's test report and javac's errors, in Maven's log (`mvn test`, `-B`, `-q`, colour).

Surefire prints one block per test class, `Tests run: 7, Failures: 4, Errors: 1, Skipped: 1, …
<<< FAILURE! - in cart.CartTest`, then each failing test as `<name>  Time elapsed: 0.01 s  <<<
FAILURE!` (or `ERROR!` for a test that threw) followed by the exception and its stack.  The id is
`<class>#<name>`: what `-Dtest=Class#method` selects; a parameterized invocation keeps Surefire's
`{int, int}[1]` suffix, so its cases group like pytest's.  A testcase named after its class is a
class-level callback (@BeforeAll) that failed: its tests never ran, and the census names the class
(CLASS FAIL).  `Results:` repeats every failure in a shorter form and is not read again.  Totals are
the last `Tests run: 8, Failures: 4, Errors: 2, Skipped: 1` (Surefire prints no pass count).

When a source does not compile, javac's `[ERROR] /path/File.java:[line,col] message` lines are the
diagnostics; Maven prints each twice (the COMPILATION ERROR block and the goal's failure), so a
location is kept once.  A failed goal that neither tests nor javac explain (a dependency that does
not resolve, a plugin error) is named as a build error with Maven's own reason.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Diagnostic, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_LEVEL = r"^\[(?:ERROR|WARNING|INFO)\] "
_CLASS = re.compile(_LEVEL + r"Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+.*? - in (?P<cls>\S+)$")
_TOTALS = re.compile(_LEVEL + r"Tests run: (?P<run>\d+), Failures: (?P<failed>\d+), Errors: (?P<errors>\d+), "
                              r"Skipped: (?P<skipped>\d+)$")
_TEST = re.compile(r"^\[ERROR\] (?P<name>\S.*?)  Time elapsed: [\d.,]+ s  <<< (?P<kind>FAILURE|ERROR)!$")
_JAVAC = re.compile(r"^\[(?P<sev>ERROR|WARNING)\] (?P<file>\S+\.java):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.+)$")
_JAVAC_COUNT = re.compile(r"^\[INFO\] (?P<n>\d+) (?P<what>errors?|warnings?) ?$")
_GOAL = re.compile(r"^\[ERROR\] Failed to execute goal (?:(?P<goal>\S+) \((?P<execution>[^)]*)\) )?on project "
                   r"(?P<project>[^:]+): (?P<why>.*)$")
_BUILD = re.compile(r"^\[INFO\] BUILD (?P<result>SUCCESS|FAILURE)$")
_FRAME = re.compile(r"^\s*at (?P<where>[\w.$]+)\((?P<file>\w+\.java):(?P<line>\d+)\)$")


def _block_end(s: str) -> bool:
    return s.startswith("[") or not s.strip()


def _frame(lines: list[str], cls: str) -> tuple[str | None, int | None]:
    """The first stack frame in the test's own class: where to open the failing line."""
    for s in lines:
        m = _FRAME.match(s)
        if m and (m["where"].startswith(cls + ".") or m["where"].startswith(cls + "$")):
            return m["file"], int(m["line"])
    return None, None


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    parsed = runner.Parsed(format="surefire")
    cls = ""
    build = None
    goals: list[tuple[int, re.Match[str]]] = []
    javac_seen: set[tuple[str, int, int]] = set()
    javac_counts: dict[str, int] = {}
    for i, s in enumerate(lines):
        mc = _CLASS.match(s)
        if mc:
            cls = mc["cls"]
            continue
        mt = _TOTALS.match(s)
        if mt:  # the last one is the run's (a multi-module build prints one per module, then none)
            parsed.counts = Counts(failed=int(mt["failed"]), errors=int(mt["errors"]),
                                   skipped=int(mt["skipped"]), total=int(mt["run"]))
            parsed.summary = out.span(i, i + 1)
            continue
        ms = _TEST.match(s)
        if ms:
            end = runner.block_end(lines, i, _block_end)
            thrown = next((x.strip() for x in lines[i + 1:end] if x.strip() and not _FRAME.match(x)), "")
            message = one_line(runner.unqualified(thrown))
            name = ms["name"]
            if name == cls or (cls == "" and "." in name and " " not in name):
                parsed.build_errors.append(BuildError(where=name, label="CLASS FAIL", message=message,
                                                      span=out.span(i, end)))
                continue
            file, line = _frame(lines[i + 1:end], cls)
            parsed.failures.append(Failure(id=f"{cls}#{name}" if cls else name,
                                           kind="error" if ms["kind"] == "ERROR" else "failed",
                                           message=message, file=file, line=line, span=out.span(i, end)))
            continue
        mj = _JAVAC.match(s)
        if mj:
            key = (mj["file"], int(mj["line"]), int(mj["col"]))
            if key not in javac_seen:
                javac_seen.add(key)
                end = runner.block_end(lines, i, lambda x: x.startswith("[") and not x.startswith("[ERROR]   ")
                                       or not x.strip())
                parsed.diagnostics.append(Diagnostic(file=mj["file"], line=key[1], col=key[2], code=None,
                                                     severity="error" if mj["sev"] == "ERROR" else "warning",
                                                     message=one_line(mj["msg"]), span=out.span(i, end)))
            continue
        mn = _JAVAC_COUNT.match(s)
        if mn:
            word = "errors" if mn["what"].startswith("error") else "warnings"
            javac_counts[word] = javac_counts.get(word, 0) + int(mn["n"])
            continue
        mg = _GOAL.match(s)
        if mg:
            goals.append((i, mg))
            continue
        mb = _BUILD.match(s)
        if mb:
            build = mb["result"]
    if build is None and not (parsed.failures or parsed.build_errors or parsed.diagnostics or parsed.summary):
        return None
    if javac_counts and parsed.summary is None:
        parsed.counts = Counts(errors=javac_counts.get("errors"), warnings=javac_counts.get("warnings"))
    explained = parsed.failures or parsed.build_errors or parsed.diagnostics
    for i, mg in goals:
        what = f"{mg['goal']} ({mg['execution']})" if mg["goal"] else "the build"
        if explained:
            parsed.notes.append(f"{mg['execution'] or 'the build'} failed on project {mg['project']}")
        else:  # e.g. dependencies that do not resolve, a forked VM that crashed
            parsed.build_errors.append(BuildError(where=mg["project"], label="GOAL FAILED",
                                                  message=one_line(f"{what}: {mg['why']}"), span=out.span(i, i + 1)))
    if build is None and not goals and parsed.summary is None:  # (-q prints no BUILD line, but a failed goal)
        parsed.notes.append("no BUILD SUCCESS/FAILURE line: the build did not finish")
    return parsed


PROFILE = runner.bind("surefire", 1, parse, detect=(_TOTALS, _BUILD))
