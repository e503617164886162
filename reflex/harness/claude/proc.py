"""The harness process behind a hook call, and its command line.

Headless runs and the Agent SDK grant permissions on Claude Code's command
line (`--allowedTools Bash`, `--permission-mode …`), which no settings file
holds.  Claude Code exports its own pid to hooks as CLAUDE_PID; the shim
forwards it with its own pid.  The command line is believed only when that
process really is an ancestor of the hook process and belongs to our uid, so a
stale or forged pid (a reused number, an exported variable in some other
shell) cannot lend its flags to an unrelated call.

Linux reads /proc (results cached by pid and start time, which also defeats
pid reuse); elsewhere the flags count as unknown, see below.
"""

import os
import sys

MAX_DEPTH = 8
_cache = {}


def harness_argv(harness_pid, hook_pid):
    """-> argv list of the harness process, or None when it cannot be established."""
    try:
        harness_pid, hook_pid = int(harness_pid), int(hook_pid)
    except (TypeError, ValueError):
        return None
    if harness_pid <= 1 or hook_pid <= 1:
        return None
    start = _start_time(harness_pid)
    if start is None:
        return None
    key = (harness_pid, start)
    cached = _cache.get(key)
    if cached is not None and hook_pid in cached[1]:
        return cached[0]
    if not _is_ancestor(harness_pid, hook_pid) or not _same_uid(harness_pid):
        return None
    argv = _cmdline(harness_pid)
    if argv is None:
        return None
    if len(_cache) > 256:
        _cache.clear()
    entry = _cache.setdefault(key, (argv, set()))
    entry[1].add(hook_pid)
    return argv


def _is_ancestor(ancestor, pid):
    for _ in range(MAX_DEPTH):
        pid = _parent(pid)
        if pid is None or pid <= 1:
            return False
        if pid == ancestor:
            return True
    return False


if sys.platform.startswith("linux"):
    def _stat_fields(pid):
        try:
            with open("/proc/%d/stat" % pid, "rb") as f:
                raw = f.read()
        except OSError:
            return None
        # The command name may hold spaces and parentheses: fields start after the last ')'.
        return raw.rsplit(b")", 1)[-1].split()

    def _parent(pid):
        fields = _stat_fields(pid)
        return int(fields[1]) if fields and len(fields) > 1 else None

    def _start_time(pid):
        fields = _stat_fields(pid)
        return int(fields[19]) if fields and len(fields) > 19 else None

    def _same_uid(pid):
        try:
            return os.stat("/proc/%d" % pid).st_uid == os.getuid()
        except OSError:
            return False

    def _cmdline(pid):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                raw = f.read(1 << 20)
        except OSError:
            return None
        if not raw:
            return None
        return [a.decode("utf-8", "surrogateescape") for a in raw.rstrip(b"\0").split(b"\0")]
else:
    # Without /proc the argv would come from `ps`, which joins arguments with spaces: a
    # `--disallowedTools "Bash(rm -rf:*)"` could not be read back reliably, and a deny rule
    # misread would widen what runs.  So elsewhere the flags count as unknown (settings only).
    def _parent(pid):
        return None

    def _start_time(pid):
        return None

    def _same_uid(pid):
        return False

    def _cmdline(pid):
        return None
