"""eslint: stylish output (file header + `line:col severity message rule` rows) and -f json.

The problem count comes from eslint's own `✖ N problems (E errors, W
warnings)` line (or the JSON's per-file counts); a run that printed neither
and no findings is not recognised (it is not "no problems").
"""

from __future__ import annotations

import json
import re

from reflex.digest.facts import Counts, Diagnostic, Facts
from reflex.digest.jsonspan import find_document, object_spans
from reflex.digest.profiles.base import handover, one_line
from reflex.digest.text import Output

NAME = "eslint"
VERSION = 1

_ROW = re.compile(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<sev>error|warning)\s+(?P<rest>.+?)\s*$")
_RULE = re.compile(r"^(?P<msg>.*\S)\s{2,}(?P<rule>[@\w/.\-]+)$")
_PROBLEMS = re.compile(r"^✖ (?P<n>\d+) problems? \((?P<e>\d+) errors?, (?P<w>\d+) warnings?\)")
_FILE = re.compile(r"^(?P<file>[^\s].*\S)$")


class EslintProfile:
    name = NAME
    version = VERSION

    def detect(self, out: Output) -> bool:
        return any(_PROBLEMS.match(s) for s in out.lines[-10:]) or out.raw.startswith(b'[{"filePath"')

    def extract(self, raw: bytes, exit_code: int | None, command: str) -> Facts:
        out = Output.of(raw)
        facts = _json(out, exit_code)
        if facts is not None:
            return facts
        lines = out.lines
        diags: list[Diagnostic] = []
        counts = Counts()
        file = None
        summary = False
        for i, s in enumerate(lines):
            m = _ROW.match(s)
            if m and file is not None:
                rest = m["rest"]
                mr = _RULE.match(rest)
                msg, rule = (mr["msg"], mr["rule"]) if mr else (rest, None)
                diags.append(Diagnostic(file=file, line=int(m["line"]), col=int(m["col"]), code=rule,
                                        severity=m["sev"], message=one_line(msg), span=out.span(i, i + 1)))
                continue
            mp = _PROBLEMS.match(s)
            if mp:
                counts = Counts(errors=int(mp["e"]), warnings=int(mp["w"]), total=int(mp["n"]))
                summary = True
                continue
            if s and not s.startswith(" ") and _FILE.match(s):
                file = s.strip()
        if not summary and not diags:
            return handover(raw, exit_code, command, NAME)
        return Facts(profile=NAME, profile_version=VERSION, format="stylish", recognized=True, exit_code=exit_code,
                     counts=counts, diagnostics=diags, total_lines=len(lines))


def _json(out: Output, exit_code: int | None) -> Facts | None:
    where = find_document(out.raw, (b'[{"filePath"', b'[\n  {\n    "filePath"'))
    if where is None:
        return None
    try:
        doc = json.loads(out.raw[where[0] : where[1]].decode("utf-8", errors="replace"))
    except ValueError:
        return None
    spans = object_spans(out.raw, where[0], where[1], 3)
    k = 0
    diags: list[Diagnostic] = []
    errors = warnings = 0
    for f in doc:
        errors += int(f.get("errorCount", 0))
        warnings += int(f.get("warningCount", 0))
        for key, value in f.items():  # arrays of objects at depth 3, in printed order
            if not isinstance(value, list):
                continue
            for item in value:
                if not isinstance(item, dict):
                    continue
                span = spans[k] if k < len(spans) else where
                k += 1
                if key != "messages":
                    continue
                diags.append(Diagnostic(file=f.get("filePath"), line=item.get("line"), col=item.get("column"),
                                        code=item.get("ruleId"), severity="error" if item.get("severity") == 2 else "warning",
                                        message=one_line(str(item.get("message", ""))), span=span))
    if k != len(spans):
        for d in diags:
            d.span = where
    return Facts(profile=NAME, profile_version=VERSION, format="json", recognized=True, exit_code=exit_code,
                 counts=Counts(errors=errors, warnings=warnings, total=errors + warnings), diagnostics=diags,
                 total_lines=len(out.lines))


PROFILE = EslintProfile()
