"""User configuration: one small JSON file under CTX_HOME, written atomically.

Keys (all optional):
  launcher            absolute path of the `ctx` executable used in rewrites
  rewrite_permission  "auto" (default: rewrite only what the harness would run unasked, and allow it;
                      docs/permissions.md), "allow" (rewrite and allow every digestible command),
                      "off" (never rewrite).  Obsolete "ask"/"omit" mean "auto".
  http_port           loopback port for the `type: "http"` hook transport (0 = off)
  idle_seconds        daemon exits after this long without requests (default 1800)
  installed_settings  settings files `ctx install` wrote to (doctor checks their hooks)
  installed_harnesses {harness: [config files]} `ctx install --harness` wrote to (codex, gemini, copilot)
  safety_allow        glob patterns the safety plane must not deny
  blob_max_bytes      blob store size limit; least-recently-used blobs beyond it are evicted (1 GiB)
  blob_max_age_days   blobs unused for longer are evicted (30)
  search_time_limit_s how long `ctx search` may take, answer included (1.0); what it could not
                      search in that time is said in the answer
  search_warm         redact new outputs for search ahead of time, in the background (true)
  session_facts       store ended sessions' compile facts beside the ledger, for fast team
                      dataset exports (true; reflex.daemon.session_facts)
  session_facts_after_s  seconds the daemon collects ended sessions before storing their facts (30)

stdlib-only.
"""

import json
import os

DEFAULTS = {
    "launcher": None,
    "rewrite_permission": "auto",
    "http_port": 0,
    "idle_seconds": 1800,
    "installed_settings": [],
    "installed_harnesses": {},
    "safety_allow": [],
    "blob_max_bytes": 1 << 30,
    "blob_max_age_days": 30,
    "search_time_limit_s": 1.0,
    "search_warm": True,
    "session_facts": True,
    "session_facts_after_s": 30.0,
}


REWRITE_PERMISSIONS = ("auto", "allow", "off", "ask", "omit")

# What each key must hold: the hot path's cheap check (no pydantic there).  The daemon and
# `ctx doctor` check the file with reflex.config_model (pydantic) instead; tests/test_config.py
# holds the two to the same verdicts.
_INT, _NUM = "an integer", "a number"


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v):
    return _is_int(v) or isinstance(v, float)


def _str_list(v):
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


_CHECKS = {
    "launcher": (lambda v: v is None or isinstance(v, str), "a path (string) or null"),
    "rewrite_permission": (lambda v: v in REWRITE_PERMISSIONS, "one of " + ", ".join(REWRITE_PERMISSIONS)),
    "http_port": (lambda v: _is_int(v) and 0 <= v <= 65535, "an integer port, 0 to 65535"),
    "idle_seconds": (lambda v: _is_num(v) and v >= 0, "a number of seconds >= 0"),
    "installed_settings": (_str_list, "a list of paths"),
    "installed_harnesses": (lambda v: isinstance(v, dict) and all(_str_list(x) for x in v.values()),
                            "an object of {harness: [paths]}"),
    "safety_allow": (_str_list, "a list of glob patterns"),
    "blob_max_bytes": (lambda v: _is_int(v) and v >= 0, "an integer number of bytes >= 0"),
    "blob_max_age_days": (lambda v: _is_num(v) and v >= 0, "a number of days >= 0"),
    "search_time_limit_s": (lambda v: _is_num(v) and v > 0, "a number of seconds > 0"),
    "search_warm": (lambda v: isinstance(v, bool), "true or false"),
    "session_facts": (lambda v: isinstance(v, bool), "true or false"),
    "session_facts_after_s": (lambda v: _is_num(v) and v >= 0, "a number of seconds >= 0"),
}


def parse(raw):
    """(the file's valid values, what is wrong with it) for the bytes of a config file.

    Never raises: each problem names the key (or the place in the JSON) and what it must be;
    a key that is wrong is left out, so its default applies."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        return {}, ["not UTF-8 (%s)" % e]
    except ValueError as e:
        return {}, ["not valid JSON (%s)" % e]
    if not isinstance(data, dict):
        return {}, ["not a JSON object"]
    good, found = {}, []
    for k, v in data.items():
        check = _CHECKS.get(k)
        if check is None and k not in DEFAULTS:
            found.append("unknown key %r" % k)
        elif check is None:   # a key newer than its check (tests/test_config.py says so)
            good[k] = v
        elif not check[0](v):
            found.append("key %r must be %s, not %s" % (k, check[1], json.dumps(v)[:80]))
        else:
            good[k] = v
    return good, found


_told = set()


def load(path, warn=True):
    """The config at `path` over the defaults.  A file that is not ours (or is
    writable by anyone) is ignored: it names the launcher every rewrite runs and
    the paths the safety plane allows, so only its owner may decide them.

    A broken file fails open (defaults for what is wrong) but never silently: with `warn`,
    what is wrong is said on stderr once per process (the daemon refuses such a file)."""
    from reflex.paths import read_private_file
    cfg = dict(DEFAULTS)
    raw = read_private_file(path)
    if raw is None:
        return cfg
    good, problems = parse(raw)
    cfg.update(good)
    if problems and warn:
        tell(complaint(path, problems))
    return cfg


def problems(path):
    """What is wrong with the config file at `path` ([] when it is fine, absent or ignored)."""
    from reflex.paths import read_private_file
    raw = read_private_file(path)
    return [] if raw is None else parse(raw)[1]


def tell_if_invalid(path):
    """Say on stderr (once) what is wrong with the config at `path`: for a client that got no
    answer from the daemon, which refuses a broken file."""
    found = problems(path)
    if found:
        tell(complaint(path, found))


def complaint(path, found):
    """One line for the agent and the user: the file, each problem, what ctx does about it."""
    return ("ctx: %s is invalid: %s; ctx uses the defaults for it and the daemon will not start until it is "
            "fixed (`ctx doctor`)" % (path, "; ".join(found)))


def tell(line):
    """Write `line` to stderr, once per process."""
    if line in _told:
        return
    _told.add(line)
    import sys
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def trusted(path):
    """False when `path` exists but load() ignores it (another user's, or world-writable)."""
    from reflex.paths import read_private_file
    return not os.path.lexists(path) or read_private_file(path) is not None


def save(path, cfg):
    write_json_atomic(path, {k: cfg[k] for k in DEFAULTS if k in cfg})


def write_text_atomic(path, text, mode=0o600):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json_atomic(path, obj, mode=0o600):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.unlink(tmp)  # a leftover (or a planted link): never written through
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def default_launcher():
    """The ctx executable next to this interpreter (venv bin), else PATH's."""
    import shutil
    import sys
    candidate = os.path.join(os.path.dirname(sys.executable), "ctx")
    if os.access(candidate, os.X_OK):
        return candidate
    return shutil.which("ctx") or "ctx"
