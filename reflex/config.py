"""User configuration: one small JSON file under CTX_HOME, written atomically.

Keys (all optional):
  launcher            absolute path of the `ctx` executable used in rewrites
  rewrite_permission  "auto" (default: rewrite only what the harness would run unasked, and allow it;
                      docs/permissions.md), "allow" (rewrite and allow every digestible command),
                      "off" (never rewrite).  Obsolete "ask"/"omit" mean "auto".
  http_port           loopback port for the `type: "http"` hook transport (0 = off)
  idle_seconds        daemon exits after this long without requests (default 1800)
  installed_settings  settings files `ctx install` wrote to (doctor checks their hooks)
  safety_allow        glob patterns the safety plane must not deny
  blob_max_bytes      blob store size limit; least-recently-used blobs beyond it are evicted (1 GiB)
  blob_max_age_days   blobs unused for longer are evicted (30)
  search_time_limit_s how long `ctx search` may take, answer included (1.0); what it could not
                      search in that time is said in the answer
  search_warm         redact new outputs for search ahead of time, in the background (true)

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
    "safety_allow": [],
    "blob_max_bytes": 1 << 30,
    "blob_max_age_days": 30,
    "search_time_limit_s": 1.0,
    "search_warm": True,
}


def load(path):
    cfg = dict(DEFAULTS)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict):
            cfg.update({k: v for k, v in data.items() if k in DEFAULTS})
    except (OSError, ValueError):
        pass
    return cfg


def save(path, cfg):
    write_json_atomic(path, {k: cfg[k] for k in DEFAULTS if k in cfg})


def write_json_atomic(path, obj, mode=0o600):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
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
