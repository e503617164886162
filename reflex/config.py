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


def load(path):
    """The config at `path` over the defaults.  A file that is not ours (or is
    writable by anyone) is ignored: it names the launcher every rewrite runs and
    the paths the safety plane allows, so only its owner may decide them."""
    from reflex.paths import read_private_file
    cfg = dict(DEFAULTS)
    raw = read_private_file(path)
    if raw is None:
        return cfg
    try:
        data = json.loads(raw.decode("utf-8"))
        if isinstance(data, dict):
            cfg.update({k: v for k, v in data.items() if k in DEFAULTS})
    except ValueError:
        pass
    return cfg


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
