"""The jest-style JSON report (jest --json, vitest --reporter=json): shared by both profiles.

Ids are `<test file> > <describe> > … > <test>`, the form vitest prints and
the same one jest's tree stands for.  A test file's path is made relative to
the project when the report's other lines name it relatively (the human
summary jest writes to stderr), otherwise kept as printed.  Each failing
test's span is the exact bytes of its assertion object in the JSON, and its
detail is the decoded failure message.
"""

from __future__ import annotations

from reflex.digest.facts import BuildError, Counts, Failure
from reflex.digest.jsonspan import find_document, load_document, object_spans
from reflex.digest.profiles.base import one_line
from reflex.digest.text import strip_ansi

_PREFIXES = (b'{"numFailedTestSuites"', b'{"numTotalTestSuites"', b'{"numFailedTests"', b'{\n  "numFailedTestSuites"',
             b'{\n  "numTotalTestSuites"')


class Report:
    def __init__(self, counts: Counts, failures: list[Failure], build_errors: list[BuildError], span: tuple[int, int]):
        self.counts, self.failures, self.build_errors, self.span = counts, failures, build_errors, span


def locate(raw: bytes) -> tuple[int, int] | None:
    return find_document(raw, _PREFIXES)


def _relative(path: str, known: list[str]) -> str:
    for k in known:
        if path.endswith("/" + k) or path == k:
            return k
    return path


def parse(raw: bytes, known_files: list[str]) -> Report | None:
    found = load_document(raw, _PREFIXES)
    if found is None:
        return None
    where, doc = found
    start, end = where
    results = doc.get("testResults")
    if not isinstance(results, list):
        return None
    # Pretty-printed or compact, assertion objects sit at depth 5: { testResults [ { assertionResults [ {
    spans = object_spans(raw, start, end, 5)
    flat = [a for r in results for a in (r.get("assertionResults") or [])]
    use_spans = len(spans) == len(flat)
    failures: list[Failure] = []
    build_errors: list[BuildError] = []
    k = 0
    for r in results:
        file = _relative(str(r.get("name", "")), known_files)
        for a in r.get("assertionResults") or []:
            span = spans[k] if use_spans else where
            k += 1
            if a.get("status") != "failed":
                continue
            titles = [str(t) for t in (a.get("ancestorTitles") or [])] + [str(a.get("title", ""))]
            messages = [strip_ansi(str(m)) for m in (a.get("failureMessages") or [])]
            detail = "\n".join(messages).rstrip("\n")
            first = next((s.strip() for s in detail.split("\n") if s.strip()), "")
            loc = a.get("location") or {}
            failures.append(Failure(id=" > ".join([file] + titles), file=file, line=loc.get("line"),
                                    message=one_line(first), span=span, detail=detail))
        if r.get("status") == "failed" and not any(a.get("status") == "failed" for a in r.get("assertionResults") or []):
            msg = strip_ansi(str(r.get("message") or r.get("failureMessage") or "test file failed to run"))
            first = next((s.strip() for s in msg.split("\n") if s.strip() and not s.strip().startswith("●")), msg)
            build_errors.append(BuildError(where=file, message=one_line(first), span=where, detail=msg.strip()))
    counts = Counts(
        failed=doc.get("numFailedTests"), passed=doc.get("numPassedTests"), skipped=doc.get("numPendingTests"),
        todo=doc.get("numTodoTests") or None, total=doc.get("numTotalTests"),
    )
    return Report(counts, failures, build_errors, where)
