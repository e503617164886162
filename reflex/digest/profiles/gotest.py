"""go test: failing tests per package, panics, build failures — text, -v and -json.

Ids are `<package> <Test>` (subtests `<package> <Test>/<sub>`), the pair go
itself uses in -json events.  Plain output names a failing test's package
only on the package result line that follows it (`FAIL\\t<pkg>\\t0.01s`), so
failures are attached to the next result line.  Compiler errors (`# pkg`
followed by `file:line:col: msg`) become diagnostics and the package a
build error.  A package that fails with no failing test of its own (a
`TestMain` or an `init` that exits non-zero, a crashed test binary) is a
build error labelled PACKAGE FAIL, so that it is named.  go prints no totals: in text mode only failures are counted
(every failing test is printed, passing ones are not unless -v), and passes
are counted only when -v or -json printed each of them.
"""

from __future__ import annotations

import json
import re

from reflex.digest import ids
from reflex.digest.facts import BuildError, Counts, Diagnostic, Failure
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_RESULT = re.compile(r"^(?P<st>ok|FAIL|\?)\s+(?P<pkg>\S+)(?:\s+(?P<rest>.*))?$")
_TEST_LINE = re.compile(r"^(?P<ind>\s*)--- (?P<st>FAIL|PASS|SKIP): (?P<name>\S+) \((?P<t>[0-9.]+s)\)$")
_RUN = re.compile(r"^=== (?:RUN|CONT|PAUSE|NAME)\s+(?P<name>\S+)$")
_BUILD_HEADER = re.compile(r"^# (?P<pkg>\S+)(?: \[.*\])?$")
_COMPILE = re.compile(r"^(?P<file>[^\s:][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$")
_LOG = re.compile(r"^\s+(?P<file>[\w./-]+\.go):(?P<line>\d+): (?P<msg>.*)$")
_PANIC = re.compile(r"^panic: (?P<msg>.+)$")


def _looks_json(out: Output) -> bool:
    for s in out.lines[:50]:
        if s.startswith('{"Time"') or s.startswith('{"Action"'):
            return True
    return False


def _looks_text(out: Output) -> bool:
    # A package result line is tab-separated; `ok  something` printed by a test is not.
    return any(_TEST_LINE.match(s) or (_RESULT.match(s) and "\t" in s) for s in out.lines[:400])


def parse(out: Output) -> runner.Parsed | None:
    return _parse_json(out) if _looks_json(out) else _parse_text(out)


def _compile_errors(out: Output, i: int, diags: list[Diagnostic]) -> int:
    """Parse the compiler lines after a `# pkg` header at i; returns the index after them."""
    j = i + 1
    while j < len(out.lines):
        m = _COMPILE.match(out.lines[j])
        if m:
            diags.append(Diagnostic(file=m["file"], line=int(m["line"]), col=int(m["col"]) if m["col"] else None,
                                    message=one_line(m["msg"]), span=out.span(j, j + 1)))
            j += 1
        elif out.lines[j].startswith("\t") or out.lines[j].startswith("note:"):
            j += 1  # continuation of the previous message
        else:
            break
    return j


def _build_message(diags: list[Diagnostic], first: int, end: int, fallback: str) -> str:
    """One line for a package's compile errors that does not pass one error off as all of them."""
    own = diags[first:end]
    if not own:
        return fallback
    messages = {d.message for d in own}
    if len(own) == 1:
        return own[0].message
    if len(messages) == 1:
        return f"{own[0].message} (×{len(own)})"
    return f"{len(own)} compile errors, listed below"


def _silent_failure(out: Output, pkg: str, a: int, b: int) -> BuildError:
    """A package that failed with no failing test: what it printed before its result line, if anything."""
    said = next((t.strip() for t in out.lines[a:b] if t.strip() and not _RESULT.match(t) and t.strip() != "FAIL"), "")
    message = f"failed with no failing test (TestMain/init exit or crash){': ' + said if said else ''}"
    return BuildError(where=pkg, label="PACKAGE FAIL", message=one_line(message), span=out.span(a, b + 1))


def _parse_text(out: Output) -> runner.Parsed | None:
    lines = out.lines
    n = len(lines)
    failures: list[Failure] = []
    pending: list[Failure] = []
    build_errors: list[BuildError] = []
    diags: list[Diagnostic] = []
    build_blocks: dict[str, tuple[int, int, int]] = {}  # pkg -> (start, end, first diag index)
    pkg_status: dict[str, str] = {}
    run_at: dict[str, int] = {}
    passed = skipped = 0
    verbose = False
    open_fail: list[tuple[int, int, Failure]] = []  # (indent, start, failure) awaiting its end
    saw_any = False
    after_result = 0  # first line after the previous package result line

    def close_open(upto: int, indent: int | None = None) -> None:
        # A failure's block runs from its RUN line (-v) or FAIL line to the next structural line.
        while open_fail and (indent is None or open_fail[-1][0] >= indent):
            _ind, start, f = open_fail.pop()
            f.span = out.span(start, max(upto, start + 1))
            if not f.message:
                _fill_message(out, f, start + 1, upto)

    i = 0
    while i < n:
        s = lines[i]
        mb = _BUILD_HEADER.match(s)
        if mb:
            first = len(diags)
            j = _compile_errors(out, i, diags)
            if j > i + 1:
                build_blocks[mb["pkg"]] = (i, j, first)
                saw_any = True
                i = j
                continue
        mr = _RUN.match(s)
        if mr:
            verbose = True
            saw_any = True
            close_open(i)
            run_at.setdefault(mr["name"], i)
            i += 1
            continue
        mt = _TEST_LINE.match(s)
        if mt and not ids.go_test(mt["name"]):
            mt = None  # go names tests Test…/Example…/Fuzz…/Benchmark…: this line was printed by a test
        if mt:
            saw_any = True
            ind = len(mt["ind"])
            close_open(i, ind)
            st = mt["st"]
            if st == "FAIL":
                f = Failure(id=mt["name"], span=out.span(i, i + 1))
                start = i
                if verbose and mt["name"] in run_at:
                    start = run_at[mt["name"]]
                    end = _next_run(lines, start + 1, i + 1)
                    _fill_message(out, f, start + 1, end)
                pending.append(f)
                open_fail.append((ind, start, f))
            elif st == "PASS":
                passed += 1
            else:
                skipped += 1
            i += 1
            continue
        mp = _PANIC.match(s)
        if mp and pending:
            # The panic belongs to the last test that started failing; its block runs to the result line.
            f = pending[-1]
            j = i
            while j < n and not (_RESULT.match(lines[j]) and "\t" in lines[j]):
                j += 1
            start = f.span[0] if f.span else out.span(i, i + 1)[0]
            f.span = (start, out.span(i, j)[1])
            f.message = one_line("panic: " + mp["msg"])
            open_fail.clear()
            i = j
            continue
        mres = _RESULT.match(s)
        if mres and ("\t" in s or mres["st"] == "?"):
            saw_any = True
            close_open(i)
            pkg = mres["pkg"]
            rest = mres["rest"] or ""
            status = "build failed" if "[build failed]" in rest or "[setup failed]" in rest else (
                "fail" if mres["st"] == "FAIL" else "pass" if mres["st"] == "ok" else "no tests")
            pkg_status[pkg] = status
            for f in pending:
                f.id = f"{pkg} {f.id}"
            if status == "fail" and not pending:
                build_errors.append(_silent_failure(out, pkg, after_result, i))
            failures.extend(pending)
            pending = []
            if status == "build failed":
                block = build_blocks.get(pkg)
                msg = _build_message(diags, block[2], _block_end(build_blocks, block, diags), rest) if block else rest
                span = out.span(block[0], block[1]) if block else out.span(i, i + 1)
                build_errors.append(BuildError(where=pkg, message=one_line(msg), span=span))
            after_result = i + 1
            i += 1
            continue
        i += 1
    close_open(n)
    # Compile errors of a package that never printed a result line (e.g. `go vet`, `go build`).
    for pkg, (a, b, first) in build_blocks.items():
        if pkg not in pkg_status and not any(be.where == pkg for be in build_errors):
            pkg_status[pkg] = "build failed"
            end = _block_end(build_blocks, (a, b, first), diags)
            build_errors.append(BuildError(where=pkg, message=_build_message(diags, first, end, ""),
                                           span=out.span(a, b)))
    if pending:  # killed before the result line: the package is unknown
        failures.extend(pending)
    if not saw_any:
        return None
    counts = Counts(failed=len(failures), passed=passed if verbose else None, skipped=skipped if verbose else None)
    notes = _package_note(pkg_status)
    return runner.Parsed(format="verbose" if verbose else "text", counts=counts, failures=failures,
                         diagnostics=diags, build_errors=build_errors, notes=notes)


def _block_end(build_blocks: dict[str, tuple[int, int, int]], block: tuple[int, int, int],
               diags: list[Diagnostic]) -> int:
    """Index after the last diagnostic of one `# pkg` block (the next block's first, or the end)."""
    later = [first for (_a, _b, first) in build_blocks.values() if first > block[2]]
    return min(later) if later else len(diags)


def _next_run(lines: list[str], start: int, limit: int) -> int:
    for k in range(start, limit):
        if _RUN.match(lines[k]):
            return k
    return limit


def _fill_message(out: Output, f: Failure, a: int, b: int) -> None:
    """First thing the test said: a `file.go:N: msg` log line, a nested failing subtest, or got/want."""
    end = min(b, len(out.lines))
    for k in range(a, end):
        s = out.lines[k]
        if _TEST_LINE.match(s):
            if "--- FAIL" in s:
                f.message = "subtests failed"
                return
            continue
        if _RUN.match(s):
            continue
        m = _LOG.match(s)
        if m:
            f.file, f.line = m["file"], int(m["line"])
            f.message = one_line(m["msg"])
            return
        t = s.strip()
        if t == "got:":  # an Example's output mismatch: got/want blocks follow
            body = []
            for x in out.lines[k:end]:
                if _RESULT.match(x) or x.strip() in ("FAIL", "PASS"):
                    break
                if x.strip():
                    body.append(x.strip())
            f.message = one_line(" ".join(body), 160)
            return
        if t:
            f.message = one_line(t)
            return


def _package_note(pkg_status: dict[str, str]) -> list[str]:
    if not pkg_status:
        return []
    tally: dict[str, int] = {}
    for st in pkg_status.values():
        tally[st] = tally.get(st, 0) + 1
    order = ("fail", "build failed", "pass", "no tests")
    return ["packages: " + ", ".join(f"{tally[k]} {k}" for k in order if k in tally)]


def _parse_json(out: Output) -> runner.Parsed | None:
    events: dict[tuple[str, str], dict] = {}
    pkg_status: dict[str, str] = {}
    pkg_lines: dict[str, list[int]] = {}
    pkg_output: dict[str, list[str]] = {}
    counts = {"pass": 0, "fail": 0, "skip": 0}
    failures: list[Failure] = []
    diags: list[Diagnostic] = []
    build_errors: list[BuildError] = []
    build_blocks: dict[str, tuple[int, int, int]] = {}
    parsed = 0
    i = 0
    n = len(out.lines)
    while i < n:
        s = out.lines[i]
        if not s.startswith("{"):
            mb = _BUILD_HEADER.match(s)
            if mb:
                first = len(diags)
                j = _compile_errors(out, i, diags)
                if j > i + 1:
                    build_blocks[mb["pkg"]] = (i, j, first)
                    i = j
                    continue
            i += 1
            continue
        try:
            ev = json.loads(s)
        except ValueError:
            i += 1
            continue
        if not isinstance(ev, dict) or not isinstance(ev.get("Package", ""), str) \
                or (ev.get("Test") and not (isinstance(ev["Test"], str) and ids.go_test(ev["Test"]))):
            i += 1  # not an event go test wrote (a test can print JSON lines too)
            continue
        parsed += 1
        pkg = ev.get("Package", "")
        test = ev.get("Test")
        action = ev.get("Action")
        if test:
            rec = events.setdefault((pkg, test), {"first": i, "output": []})
            rec["last"] = i
            if action == "output":
                rec["output"].append(ev.get("Output", ""))
            elif action in counts:
                counts[action] += 1
                if action == "fail":
                    failures.append(_json_failure(out, pkg, test, rec, i))
        else:
            pkg_lines.setdefault(pkg, []).append(i)
            if action == "output":
                pkg_output.setdefault(pkg, []).append(ev.get("Output", ""))
            elif action in ("pass", "fail", "skip"):
                text = "".join(pkg_output.get(pkg, []))
                pkg_status[pkg] = ("build failed" if "[build failed]" in text or "[setup failed]" in text
                                   else {"pass": "pass", "fail": "fail", "skip": "no tests"}[action])
        i += 1
    if parsed == 0:
        return None
    failed_pkgs = {f.id.split(" ", 1)[0] for f in failures if f.id}
    for pkg, st in pkg_status.items():
        if st == "fail" and pkg not in failed_pkgs:
            idx = pkg_lines[pkg]
            said = next((t.strip() for t in pkg_output.get(pkg, []) if t.strip() and not _RESULT.match(t.strip())
                         and t.strip() != "FAIL"), "")
            build_errors.append(BuildError(
                where=pkg, label="PACKAGE FAIL", span=out.span(idx[0], idx[-1] + 1),
                message=one_line(f"failed with no failing test (TestMain/init exit or crash){': ' + said if said else ''}")))
        if st != "build failed":
            continue
        block = build_blocks.get(pkg)
        if block:
            span = out.span(block[0], block[1])
            msg = _build_message(diags, block[2], _block_end(build_blocks, block, diags), "build failed")
        else:
            idx = pkg_lines[pkg]
            span = out.span(idx[0], idx[-1] + 1)
            msg = "build failed"
        build_errors.append(BuildError(where=pkg, message=one_line(msg), span=span))
    return runner.Parsed(format="json",
                         counts=Counts(failed=counts["fail"], passed=counts["pass"], skipped=counts["skip"]),
                         failures=failures, diagnostics=diags, build_errors=build_errors,
                         notes=_package_note(pkg_status))


def _json_failure(out: Output, pkg: str, test: str, rec: dict, fail_line: int) -> Failure:
    text = "".join(rec["output"])
    f = Failure(id=f"{pkg} {test}", span=out.span(rec["first"], fail_line + 1), detail=text.rstrip("\n"))
    for s in text.split("\n"):
        if _TEST_LINE.match(s) and "--- FAIL" in s and not s.strip().endswith(f"{test} " + s.rsplit(" ", 1)[-1]):
            f.message = "subtests failed"
            break
        m = _LOG.match(s)
        if m:
            f.file, f.line = m["file"], int(m["line"])
            f.message = one_line(m["msg"])
            break
        mp = _PANIC.match(s.strip())
        if mp:
            f.message = one_line("panic: " + mp["msg"])
            break
    if not f.message:
        body = [s.strip() for s in text.split("\n") if s.strip() and not _RUN.match(s) and not _TEST_LINE.match(s)]
        if body and body[0] == "got:":  # an Example's output mismatch
            f.message = one_line(" ".join(body), 160)
        else:
            f.message = one_line(body[0]) if body else ("subtests failed" if "--- FAIL" in text else "")
    return f


PROFILE = runner.bind("gotest", 2, parse, detect=(_looks_json, _looks_text))
