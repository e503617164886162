"""shellcheck: tty (the default), gcc, checkstyle and json1 formats.

tty: `In FILE line N:`, the source line, then one caret line per finding,
`^--^ SCnnnn (level): message`, whose caret gives the column; `Did you mean:`
blocks and the closing wiki links are not findings.  gcc: `file:line:col:
level: message [SCnnnn]`.  checkstyle: `<error line column severity message
source='ShellCheck.SCnnnn'>` under `<file name>`.  Levels: error, warning,
info/style (gcc prints both as note); info and style are notes here.
shellcheck prints no counts.  A parse error (an SC1xxx finding at error
level) means no other check ran on that file: named NOT LINTED.
"""

from __future__ import annotations

import html
import json
import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.profiles import lintline, runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_TTY_HEAD = re.compile(r"^In (?P<file>.+) line (?P<line>\d+):$")
_CARET = re.compile(r"^(?P<pad> *)\^[-^]*\s+SC(?P<code>\d{4}) \((?P<level>error|warning|info|style)\): (?P<msg>.*)$")
_GCC = re.compile(r"^(?P<level>error|warning|note|info|style): (?P<msg>.*) \[SC(?P<code>\d{4})\]$")
_GCC_LINE = re.compile(r":\d+:\d+: (?:error|warning|note): .* \[SC\d{4}\]$")
_CS_FILE = re.compile(r"^<file name='(?P<file>[^']*)' ?>$")
_CS_ERROR = re.compile(r"^<error line='(?P<line>\d+)' column='(?P<col>\d+)' severity='(?P<level>\w+)' "
                       r"message='(?P<msg>[^']*)' source='ShellCheck\.SC(?P<code>\d{4})' ?/>$")
_MORE_INFO = "For more information:"
_SEVERITY = {"error": "error", "warning": "warning", "info": "note", "style": "note", "note": "note"}


def _diag(file: str | None, line: int | str, col: int | str | None, code: int | str, level: str, msg: str,
          span: tuple[int, int] | None) -> Diagnostic:
    return Diagnostic(file=file, line=int(line), col=int(col) if col is not None else None, code=f"SC{code}",
                      severity=_SEVERITY[level], message=one_line(msg), span=span)


def parse(out: Output) -> runner.Parsed | None:
    parsed = _json(out)
    if parsed is None:
        lines = out.lines
        diags: list[Diagnostic] = []
        fmt = None
        head = None  # (file, line, first line index) of the tty block being read
        block: list[Diagnostic] = []
        cs_file = None

        def close(end: int) -> None:
            if head is not None:
                for d in block:
                    d.span = out.span(head[2], runner.block_end(lines, head[2], lambda _s: False, end))

        for i, s in enumerate(lines):
            mh = _TTY_HEAD.match(s)
            if mh:
                close(i)
                head, block, fmt = (mh["file"], mh["line"], i), [], "tty"
                continue
            mc = _CARET.match(s) if head is not None else None
            if mc and head is not None:
                d = _diag(head[0], head[1], len(mc["pad"]) + 1, mc["code"], mc["level"], mc["msg"], None)
                block.append(d)
                diags.append(d)
                continue
            if s.startswith(_MORE_INFO):
                close(i)
                head = None
                continue
            m = lintline.LOCATION.match(s)
            mg = _GCC.match(m["rest"]) if m and m["col"] else None
            if mg and m:
                fmt = "gcc"
                diags.append(_diag(m["file"], m["line"], m["col"], mg["code"], mg["level"], mg["msg"],
                                   out.span(i, i + 1)))
                continue
            mf = _CS_FILE.match(s)
            if mf:
                cs_file = html.unescape(mf["file"])
                continue
            me = _CS_ERROR.match(s) if cs_file is not None else None
            if me:
                fmt = "checkstyle"
                diags.append(_diag(cs_file, me["line"], me["col"], me["code"], me["level"], html.unescape(me["msg"]),
                                   out.span(i, i + 1)))
        close(len(lines))
        if not diags:
            return None
        parsed = runner.Parsed(format=fmt, counts=Counts(), diagnostics=diags)
    parsed.build_errors = lintline.not_linted(
        parsed.diagnostics, lambda d: d.severity == "error" and (d.code or "").startswith("SC1"))
    return parsed


def _json(out: Output) -> runner.Parsed | None:
    if not out.raw.lstrip().startswith(b'{"comments":'):
        return None
    try:
        doc = json.loads(out.raw)
    except ValueError:
        return None
    span = out.span(0, len(out.lines))
    diags = [_diag(c.get("file"), c.get("line"), c.get("column"), c.get("code"), c.get("level", "error"),
                   str(c.get("message", "")), span) for c in doc.get("comments", [])]
    return runner.Parsed(format="json1", counts=Counts(), diagnostics=diags)


def _shellcheck_output(out: Output) -> bool:
    return out.raw.lstrip().startswith(b'{"comments":')


PROFILE = runner.bind("shellcheck", 1, parse,
                      detect=(runner.head(3, _TTY_HEAD), runner.head(5, _GCC_LINE), runner.head(5, _CS_FILE),
                              _shellcheck_output))
