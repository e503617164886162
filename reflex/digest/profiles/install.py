"""install: package installs, `pip install` (and `uv pip install`, which prints pip's words),
`npm install|ci|add` and `apt-get install`: errors and warnings verbatim, the result line kept
whole, the rest only counted.

Which tool printed the output is read from the output itself (pip's `Collecting`/`ERROR:`, npm's
`npm error`/`added N packages`, apt's `Reading package lists...`), one sub-parser each; a line of
another tool in the same output (a chain) is parsed by that tool's rules.

- errors: each error block is a build error labelled ERROR, its message the tool's own line:
  pip's `ERROR: …` up to the next pip message (a resolver conflict's explanation is its body);
  pip's `error: subprocess-exited-with-error` block with its `×` line and the last line the failed
  subprocess printed (the exception); npm's run of `npm error` lines (its `code`, then its first
  sentence); apt's `E: …`.  A block printed twice (pip repeats the subprocess error as a summary)
  is one error whose span covers both.
- warnings: pip's `WARNING:`, npm's `npm warn` (deprecations grouped apart, by package), apt's
  `W: …`: one item each, verbatim.
- result: `Successfully installed a-1 b-2` (one entry per package under that heading), `added 72
  packages in 3s`, `up to date, audited …`,
  `found 0 vulnerabilities`, `N packages are looking for funding`, apt's `N upgraded, N newly
  installed…`: items kept whole.
- counted only: pip's `Collecting`, `Downloading`, progress bars, `Requirement already
  satisfied`, `[notice]` lines; apt's `Get:`/`Setting up`; how many packages pip installed.
"""

from __future__ import annotations

import re

from reflex.digest.facts import BuildError, Counts, Item
from reflex.digest.profiles import runner
from reflex.digest.profiles.base import one_line
from reflex.digest.text import Output

# pip
_PIP_ERROR = re.compile(r"^ERROR: (?P<msg>.*)$")
_PIP_WARNING = re.compile(r"^WARNING: (?P<msg>.*)$")
_PIP_MESSAGE = re.compile(r"^(?:ERROR|WARNING|INFO|DEPRECATION): |^\[notice\] ")
_PIP_SUBPROCESS = re.compile(r"^\s*error: (?P<what>[a-z][a-z-]+-error)$")
_PIP_CROSS = re.compile(r"^\s*× (?P<msg>.*)$")
_PIP_END_OUTPUT = re.compile(r"^\s*\[end of output\]$")
_PIP_NOTE = re.compile(r"^\s*note: This error originates from a subprocess")
_PIP_SUCCESS = re.compile(r"^Successfully installed (?P<pkgs>.+)$")
_PIP_COUNTED = (("collected", re.compile(r"^Collecting \S")), ("downloaded", re.compile(r"^\s*Downloading \S")),
                ("already satisfied", re.compile(r"^Requirement already satisfied: ")),
                ("cached", re.compile(r"^\s*Using cached \S")), ("notices", re.compile(r"^\[notice\] ")))
# npm (npm 7+ lower case; npm 6 `npm ERR!` / `npm WARN`)
_NPM_ERROR = re.compile(r"^npm (?:error|ERR!)(?: (?P<msg>.*))?$")
_NPM_WARN = re.compile(r"^npm (?:warn|WARN) (?P<msg>.*)$")
_NPM_DEPRECATED = re.compile(r"^deprecated (?P<pkg>\S+?):? (?P<msg>.*)$")
_NPM_CODE = re.compile(r"^code (?P<code>E[A-Z0-9]+)$")
_NPM_RESULT = re.compile(r"^(?:added|removed|changed) \d+ packages?|^up to date\b|^audited \d+ packages?|"
                         r"^found \d+ vulnerabilit|^\d+ (?:\w+ severity )?vulnerabilit|"
                         r"^\d+ packages? (?:is|are) looking for funding")
_NPM_ADDED = re.compile(r"^added (?P<n>\d+) packages?")
# apt
_APT_ERROR = re.compile(r"^E: (?P<msg>.*)$")
_APT_WARNING = re.compile(r"^W: (?P<msg>.*)$")
_APT_RESULT = re.compile(r"^\d+ upgraded, \d+ newly installed, \d+ to remove and \d+ not upgraded\.$")
_APT_COUNTED = (("fetched", re.compile(r"^Get:\d+ ")), ("set up", re.compile(r"^Setting up \S")))
_APT_OPENER = re.compile(r"^Reading package lists\.\.\.")

_DETECT = (re.compile(r"^Collecting \S|^Successfully installed \S|^ERROR: (?:Could not find a version|No matching "
                      r"distribution)"), re.compile(r"^npm (?:error|ERR!|warn|WARN) |^added \d+ packages? "),
           _APT_OPENER)


def _block_end(lines: list[str], start: int, stop: re.Pattern[str]) -> int:
    """First line after `start` that opens another message, trailing blank lines left out."""
    return runner.block_end(lines, start, lambda s: bool(stop.match(s)))


def _pip_subprocess(out: Output, i: int) -> tuple[BuildError, int] | None:
    """pip's `error: subprocess-exited-with-error` block from line i: its `×` line and the last line
    the subprocess printed before `[end of output]` (the exception that says why)."""
    lines = out.lines
    cross = None
    last_words = None
    j = i + 1
    while j < len(lines):
        s = lines[j]
        mc = _PIP_CROSS.match(s)
        if mc and cross is None:
            cross = mc["msg"]
        if _PIP_END_OUTPUT.match(s):
            printed = [t for t in lines[i + 1:j] if t.strip()]
            last_words = printed[-1].strip() if printed else None
        if _PIP_NOTE.match(s) or (j > i + 1 and _PIP_SUBPROCESS.match(s)) or _PIP_MESSAGE.match(s):
            if _PIP_NOTE.match(s):
                j += 1
            break
        j += 1
    if cross is None:
        return None
    message = cross + (f" — {last_words}" if last_words else "")
    return BuildError(where=None, label="ERROR", message=one_line(message), span=out.span(i, j)), j


def parse(out: Output) -> runner.Parsed | None:
    lines = out.lines
    errors: list[BuildError] = []
    items: list[Item] = []
    counted: dict[str, int] = {}
    tools: list[str] = []
    installed = 0
    added = 0
    seen_subprocess: dict[str, int] = {}  # an error's message -> its index in `errors`
    i = 0

    def saw(tool: str) -> None:
        if tool not in tools:
            tools.append(tool)

    while i < len(lines):
        s = lines[i]
        m = _PIP_ERROR.match(s)
        if m:
            saw("pip")
            end = _block_end(lines, i, _PIP_MESSAGE)
            errors.append(BuildError(where=None, label="ERROR", message=one_line(m["msg"]), span=out.span(i, end)))
            i = end
            continue
        if _PIP_SUBPROCESS.match(s):
            saw("pip")
            got = _pip_subprocess(out, i)
            if got is not None:
                be, end = got
                k = seen_subprocess.get(be.message.split(" — ")[0])
                first = errors[k].span if k is not None else None
                if k is not None and first is not None and be.span is not None:
                    # pip's summary repeats the error it already printed: one error, both places.
                    errors[k].span = (first[0], be.span[1])
                else:
                    seen_subprocess[be.message.split(" — ")[0]] = len(errors)
                    errors.append(be)
                i = end
                continue
        if m := _PIP_WARNING.match(s):
            saw("pip")
            items.append(Item(group="warnings", noun="warnings", severity="warning", text=s, span=out.span(i, i + 1)))
        elif m := _PIP_SUCCESS.match(s):
            saw("pip")
            # One entry per package under pip's own words: the census names every one of them
            # (a single line of 30 packages would be clipped).
            for pkg in m["pkgs"].split():
                installed += 1
                items.append(Item(group="Successfully installed", noun="packages", text=pkg,
                                  span=out.span(i, i + 1)))
        elif m := _NPM_ERROR.match(s):
            saw("npm")
            j = i
            while j < len(lines) and _NPM_ERROR.match(lines[j]):
                j += 1
            errors.append(_npm_error(out, i, j))
            i = j
            continue
        elif m := _NPM_WARN.match(s):
            saw("npm")
            md = _NPM_DEPRECATED.match(m["msg"])
            if md:
                items.append(Item(group="deprecated", noun="packages", severity="warning",
                                  text=f"{md['pkg']}: {md['msg']}", span=out.span(i, i + 1)))
            else:
                items.append(Item(group="warnings", noun="warnings", severity="warning", text=s,
                                  span=out.span(i, i + 1)))
        elif _NPM_RESULT.match(s):
            saw("npm")
            ma = _NPM_ADDED.match(s)
            added += int(ma["n"]) if ma else 0
            items.append(Item(group="result", noun="lines", text=s, span=out.span(i, i + 1)))
        elif m := _APT_ERROR.match(s):
            saw("apt")
            errors.append(BuildError(where=None, label="ERROR", message=one_line(s), span=out.span(i, i + 1)))
        elif m := _APT_WARNING.match(s):
            saw("apt")
            items.append(Item(group="warnings", noun="warnings", severity="warning", text=s, span=out.span(i, i + 1)))
        elif _APT_RESULT.match(s):
            saw("apt")
            items.append(Item(group="result", noun="lines", text=s, span=out.span(i, i + 1)))
        elif _APT_OPENER.match(s):
            saw("apt")
        else:
            for name, pattern in _PIP_COUNTED + _APT_COUNTED:
                if pattern.match(s):
                    saw("apt" if (name, pattern) in _APT_COUNTED else "pip")
                    counted[name] = counted.get(name, 0) + 1
                    break
        i += 1
    if not tools:
        return None
    other = dict(counted)
    if installed:
        other["installed"] = installed
    if added:
        other["packages added"] = added
    if errors:
        other["errors" if len(errors) > 1 else "error"] = len(errors)
    return runner.Parsed(format="+".join(tools), counts=Counts(other=other), build_errors=errors, items=items)


def _npm_error(out: Output, i: int, j: int) -> BuildError:
    """npm's run of `npm error` lines i..j-1: its code and its first sentence (up to a blank line)."""
    texts = [(_NPM_ERROR.match(out.lines[k]) or {"msg": ""})["msg"] or "" for k in range(i, j)]
    code = None
    words: list[str] = []
    for t in texts:
        mc = _NPM_CODE.match(t.strip())
        if mc and code is None:
            code = mc["code"]
            continue
        if not t.strip():
            if words:
                break
            continue
        if t.startswith("A complete log of this run"):
            break
        words.append(t.strip())
    message = " ".join(words) or (texts[0] if texts else "")
    return BuildError(where=code, label="ERROR", message=one_line(message), span=out.span(i, j))


PROFILE = runner.bind("install", 1, parse, detect=_DETECT)
