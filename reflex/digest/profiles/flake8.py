"""flake8: `path:row:col: CODE text`, with --show-source frames, --statistics and --count.

--show-source prints the source line and a caret under each finding: they are
part of that finding's span.  --statistics adds `N     CODE first message`
rows (counts by code: stated in a note), --count a last line with the total.
flake8 has no severities.  E999 (a file that does not parse) means no other
check ran on that file: it is named NOT LINTED.  A run that printed no finding
and no count is not recognised (flake8 prints nothing when clean: the exit
code is the only verdict, and it is not ours to restate).
"""

from __future__ import annotations

import re

from reflex.digest.facts import Counts, Diagnostic
from reflex.digest.profiles import lintline, runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

_CODE = re.compile(r"^(?P<code>[A-Z]{1,3}\d{2,4}) (?P<msg>.*)$")
_STAT = re.compile(r"^(?P<n>\d+)\s+(?P<code>[A-Z]{1,3}\d{2,4}) (?P<msg>.*)$")
_COUNT = re.compile(r"^(?P<n>\d+)$")


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    diags: list[Diagnostic] = []
    starts: list[int] = []
    stats: list[str] = []
    total = None
    for i, s in enumerate(lines):
        m = lintline.LOCATION.match(s)
        mc = _CODE.match(m["rest"]) if m and m["col"] else None
        if mc and m:
            diags.append(Diagnostic(file=lintline.strip_dot(m["file"]), line=int(m["line"]), col=int(m["col"]),
                                    code=mc["code"], severity="error", message=one_line(mc["msg"])))
            starts.append(i)
            continue
        ms = _STAT.match(s)
        if ms and diags:
            stats.append(f"{ms['code']} ×{ms['n']}")
            starts.append(i)
            continue
        mn = _COUNT.match(s)
        if mn and i >= len(lines) - 2:
            total = int(mn["n"])
            starts.append(i)
    if not diags and total is None:
        return None
    for k, d in enumerate(diags):  # a finding's span runs to the next finding (--show-source frames)
        a = starts[k]
        b = starts[k + 1] if k + 1 < len(starts) else len(lines)
        d.span = out.span(a, runner.block_end(lines, a, lambda _s: False, b))
    counts = Counts(errors=total) if total is not None else Counts()
    notes = ["flake8 --statistics: " + ", ".join(stats)] if stats else []
    return runner.Parsed(format="statistics" if stats else "default", counts=counts, diagnostics=diags,
                         build_errors=lintline.not_linted(diags, lambda d: d.code == "E999"), notes=notes)


PROFILE = runner.bind("flake8", 1, parse, detect=())
