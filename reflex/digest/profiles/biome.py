"""Biome (`biome lint`, `check`, `ci`, `format` without --write): the default reporter, concise,
github and summary reporters, and --reporter=json.

Default: a `path:line:col category  TAGS ━━━` header, then the diagnostic
block (its first marker line says the severity: × error, ! warning, i info)
up to the next header.  A header without a line (`src/a.js format ━━━`) is
about the whole file (the formatter would change it, or could not run): such
findings are stated as notes, by category and message, with their files.
concise: `× path:line:col: category: message`; github: `::error title=category,
file=…,line=…,col=…::message`; summary: counts by rule and the files with
violations, parse errors or formatting to do, no locations (stated as notes).
Counts are Biome's own `Found N errors.` / `warnings` / `infos` lines and
`Checked N files`; the JSON's summary in -reporter=json.
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.jsonspan import report_items
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_HEADER = re.compile(r"^(?P<file>\S+?)(?::(?P<line>\d+):(?P<col>\d+))? (?P<cat>[a-z][A-Za-z0-9_/]*)(?:  (?P<tags>[A-Z][A-Z ]*?))?\s*━+$")
_MARKER = re.compile(r"^\s+(?P<mark>[×✖!⚠iℹ]) (?P<msg>\S.*)$")
_CONCISE = re.compile(r"^(?P<mark>[×✖!⚠iℹ]) (?P<file>\S+?)(?::(?P<line>\d+):(?P<col>\d+))?: "
                      r"(?P<cat>[a-z][A-Za-z0-9_/]*): (?P<msg>.*)$")
_GITHUB = re.compile(r"^::(?P<sev>error|warning|notice) title=(?P<cat>[^,]+),file=(?P<file>[^,]+),line=(?P<line>\d+),"
                     r"(?:endLine=\d+,)?col=(?P<col>\d+)(?:,endColumn=\d+)?::(?P<msg>.*)$")
_FOUND = re.compile(r"^Found (?P<n>\d+) (?P<what>errors?|warnings?|infos?)\.$")
_CHECKED = re.compile(r"^(?P<verb>Checked|Formatted|Fixed) (?P<n>\d+) files? in ")
_NOT_SHOWN = re.compile(r"Diagnostics not shown: (?P<n>\d+)")
_RULE_ROW = re.compile(r"^\s+(?P<rule>[a-z]+/[A-Za-z0-9_/]+)\s{2,}(?P<n>\d+) \((?P<detail>[^)]*(?:\([^)]*\)[^)]*)*)\)\s*$")
_LIST_ROW = re.compile(r"^\s+- (?P<file>\S+)(?: \((?P<detail>[^)]*)\))?\s*$")
_SECTION = re.compile(r"^\s+i The following (?P<what>.+?)[.:]?\s*$")
_SEVERITY = {"×": "error", "✖": "error", "!": "warning", "⚠": "warning", "i": "note", "ℹ": "note",
             "error": "error", "warning": "warning", "notice": "note", "information": "note", "info": "note",
             "fatal": "error", "hint": "note"}
_JSON_PREFIXES = (b'{"summary":', b'{\n  "summary"')


def parse(out: Output) -> runner.Parsed | None:
    parsed = _json(out)
    if parsed is not None:
        return parsed
    lines = out.lines
    n = len(lines)
    diags: list[Diagnostic] = []
    whole_file: dict[tuple[str, str], list[str]] = {}
    counts: dict[str, int] = {}
    rules: list[str] = []
    listed: dict[str, list[str]] = {}
    section = None
    fmt = None
    i = 0
    while i < n:
        s = lines[i]
        mh = _HEADER.match(s)
        if mh:
            j = runner.block_end(lines, i, lambda t: _HEADER.match(t) is not None or _FOUND.match(t) is not None
                                 or _CHECKED.match(t) is not None)
            mark = next((m for m in map(_MARKER.match, lines[i + 1:j]) if m), None)
            sev = _SEVERITY[mark["mark"]] if mark else "error"
            msg = mark["msg"] if mark else ""
            fmt = fmt or "default"
            if mh["line"]:
                diags.append(Diagnostic(file=mh["file"], line=int(mh["line"]), col=int(mh["col"]), code=mh["cat"],
                                        severity=sev, message=one_line(msg), span=out.span(i, j)))
            elif not mh["file"].startswith("reporter/"):
                whole_file.setdefault((mh["cat"], one_line(msg, 120)), []).append(mh["file"])
            i = max(j, i + 1)
            continue
        if (m := _CONCISE.match(s)) or (m := _GITHUB.match(s)):
            is_github = "sev" in m.groupdict()
            fmt = fmt or ("github" if is_github else "concise")
            sev = _SEVERITY[m["sev"] if is_github else m["mark"]]
            if m["line"]:
                diags.append(Diagnostic(file=m["file"], line=int(m["line"]), col=int(m["col"]), code=m["cat"],
                                        severity=sev, message=one_line(m["msg"]), span=out.span(i, i + 1)))
            else:
                whole_file.setdefault((m["cat"], one_line(m["msg"], 120)), []).append(m["file"])
        elif mf := _FOUND.match(s):
            key = {"e": "errors", "w": "warnings", "i": "infos"}[mf["what"][0]]
            counts[key] = int(mf["n"])
        elif mc := _CHECKED.match(s):
            counts[f"files {mc['verb'].lower()}"] = int(mc["n"])
        elif mn := _NOT_SHOWN.search(s):
            counts["diagnostics not shown"] = int(mn["n"])
        elif ms := _SECTION.match(s):
            section = ms["what"]
        elif mr := _RULE_ROW.match(s):
            fmt = "summary"
            rules.append(f"{mr['rule']} ×{mr['n']} ({mr['detail']})")
        elif (ml := _LIST_ROW.match(s)) and section:
            listed.setdefault(section, []).append(ml["file"] + (f" ({ml['detail']})" if ml["detail"] else ""))
        i += 1
    if not diags and not rules and not whole_file and (not counts or counts.get("errors") or counts.get("warnings")):
        return None  # findings counted but none read: a reporter we do not know (gitlab, junit, sarif…)
    notes = []
    for (cat, msg), files in whole_file.items():
        notes.append(f"{cat} (whole file): {msg} {', '.join(files)}")
    chunk: list[str] = []
    for r in rules:  # notes are shown up to 200 characters: several rules a note, none cut
        if chunk and len("; ".join(chunk + [r])) > 170:
            notes.append("by rule (no locations printed): " + "; ".join(chunk))
            chunk = []
        chunk.append(r)
    if chunk:
        notes.append("by rule (no locations printed): " + "; ".join(chunk))
    for what, files in listed.items():
        tag = "parse (files with parsing errors)" if "parsing" in what else what
        notes.append(f"{tag}: {', '.join(files)} ({len(files)} file{'s' if len(files) != 1 else ''})")
    c = Counts(errors=counts.pop("errors", None), warnings=counts.pop("warnings", None), other=counts)
    return runner.Parsed(format=fmt or "default", counts=c, diagnostics=diags, notes=notes)


def _json(out: Output) -> runner.Parsed | None:
    found = report_items(out.raw, _JSON_PREFIXES, "diagnostics")
    if found is None:
        return None
    doc, items, spans = found
    diags = []
    notes = []
    for k, d in enumerate(items):
        loc = d.get("location") or {}
        start = loc.get("start") or {}
        sev = _SEVERITY.get(str(d.get("severity")), "error")
        if not start.get("line"):
            notes.append(f"{d.get('category')} (whole file): {one_line(str(d.get('message', '')), 120)} {loc.get('path')}")
            continue
        diags.append(Diagnostic(file=loc.get("path"), line=start.get("line"), col=start.get("column"),
                                code=d.get("category"), severity=sev, message=one_line(str(d.get("message", ""))),
                                span=spans[k]))
    summary = doc.get("summary") or {}
    other = {k: v for k, v in (("infos", summary.get("infos")), ("files unchanged", summary.get("unchanged")),
                               ("files changed", summary.get("changed"))) if isinstance(v, int)}
    return runner.Parsed(format="json", counts=Counts(errors=summary.get("errors"), warnings=summary.get("warnings"),
                                                      other=other),
                         diagnostics=diags, notes=notes)


def _json_report(out: Output) -> bool:
    return any(p in out.raw[:64] for p in _JSON_PREFIXES)


PROFILE = runner.bind("biome", 1, parse, detect=(runner.anywhere(_HEADER), runner.head(3, _GITHUB), _json_report))
