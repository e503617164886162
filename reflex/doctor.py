"""`ctx doctor`: every check a user needs, each with what to do about a failure."""

import os
import stat

from . import config as config_mod, daemon_control, install as inst, launcher as launcher_mod, spool


class Check:
    __slots__ = ("name", "ok", "detail", "fix")

    def __init__(self, name, ok, detail, fix=None):
        self.name, self.ok, self.detail, self.fix = name, ok, detail, fix

    def as_dict(self):
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def run_checks(paths):
    checks = []
    st = daemon_control.status(paths)
    if st["running"]:
        checks.append(Check("daemon", True, "running, pid %s, protocol %s" % (st.get("pid"), st.get("protocol"))))
    else:
        # Not running is the normal idle state: every hook starts it on demand.  Only a daemon
        # that should answer and does not (a live pid behind a dead socket) is a fault.
        stuck = str(st.get("reason", "")).startswith("handshake refused") or _alive(
            (st.get("stale_status") or {}).get("pid"))
        checks.append(Check("daemon", not stuck,
                            "not running (%s): hooks start it on demand" % st.get("reason"),
                            "see the log %s; `ctx daemon stop` then `ctx daemon start`" % paths.log))
    checks.append(_perm_check("run dir", paths.run_dir, 0o700, want_dir=True))
    if os.path.exists(paths.socket):
        checks.append(_perm_check("socket", paths.socket, 0o600))
    checks.append(_ledger_check(paths))
    checks.append(_tokenizer_check())
    checks.extend(_hook_checks(paths))
    checks.append(_permission_check(paths))
    backlog = len(spool.pending(paths.spool))
    checks.append(Check("spool", backlog == 0 or st["running"],
                        "%d event(s) waiting in %s" % (backlog, paths.spool),
                        None if backlog == 0 else "start the daemon; it ingests the spool on start"))
    return checks


def _alive(pid):
    """A process with this pid exists (a daemon that wrote a status file and no longer answers)."""
    if not isinstance(pid, int) or pid <= 1 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _perm_check(name, path, want, want_dir=False):
    try:
        s = os.lstat(path)
    except FileNotFoundError:
        return Check(name, True, "%s not created yet" % path)
    mode = stat.S_IMODE(s.st_mode)
    problems = []
    if s.st_uid != os.getuid():
        problems.append("owned by uid %d" % s.st_uid)
    if mode & ~want:
        problems.append("mode %o (want %o)" % (mode, want))
    if want_dir and not stat.S_ISDIR(s.st_mode):
        problems.append("not a directory")
    if problems:
        return Check(name, False, "%s: %s" % (path, ", ".join(problems)),
                     "chmod %o %s (and make sure it belongs to you)" % (want, path))
    return Check(name, True, "%s mode %o" % (path, mode))


def _ledger_check(paths):
    if not os.path.exists(paths.ledger):
        return Check("ledger", True, "no ledger yet at %s (created on first event)" % paths.ledger)
    from .ledger.verify import verify
    rep = verify(paths.ledger, paths.blobs)
    if rep.ok:
        return Check("ledger", True, "%s events, chain verified" % rep.counts.get("events"))
    first = rep.problems[0]
    return Check("ledger", False, "%d problem(s), first: [%s] %s" % (len(rep.problems), *first),
                 "run `ctx ledger verify` for the list; keep the file as evidence, do not edit it")


def _tokenizer_check():
    try:
        from .tokens import tokenizer_status
        ok, detail = tokenizer_status()
    except Exception as e:  # import problems are exactly what doctor must report
        ok, detail = False, "%s: %s" % (type(e).__name__, e)
    return Check("tokenizer", ok, detail, None if ok else
                 "tiktoken needs o200k_base: allow it to download once, or set TIKTOKEN_CACHE_DIR "
                 "to a directory holding the cached file")


def _hook_checks(paths):
    cfg = config_mod.load(paths.config)
    files = cfg.get("installed_settings") or []
    out = []
    if not files:
        out.append(Check("hooks", False, "ctx hooks are not installed in any settings file",
                         "run `ctx install` (or `ctx install --scope project`)"))
        return out
    launcher = cfg.get("launcher") or launcher_mod.launcher_path(paths)
    out.append(Check("launcher", os.access(launcher, os.X_OK), launcher,
                     None if os.access(launcher, os.X_OK) else "re-run `ctx install` to rewrite it"))
    for f in files:
        try:
            data, _ = inst.load_settings(f)
        except inst.InstallError as e:
            out.append(Check("hooks", False, str(e), "fix the JSON in %s" % f))
            continue
        events = {ev for ev, groups in (data.get("hooks") or {}).items() if isinstance(groups, list)
                  and any(inst.is_ours(h) for g in groups if isinstance(g, dict)
                          for h in (g.get("hooks") or []))}
        missing = [e for e in inst.EVENTS if e not in events]
        if missing:
            out.append(Check("hooks", False, "%s lacks ctx hooks for %s" % (f, ", ".join(missing)),
                             "re-run `ctx install --settings %s`" % f))
        else:
            out.append(Check("hooks", True, "%s: all %d events hooked" % (f, len(inst.EVENTS))))
    return out


def _permission_check(paths, cwd=None, home=None):
    """Which permission path rewrites follow, and what it means for a test run here.

    Informational: every path keeps ctx permission-neutral; this says where digests will come from."""
    from . import permissions, project
    cfg = config_mod.load(paths.config)
    mode = cfg.get("rewrite_permission") or "auto"
    cwd = cwd or os.getcwd()
    home = home or os.path.expanduser("~")
    pdir = os.environ.get("CLAUDE_PROJECT_DIR") or project.project_root(cwd, {"HOME": home}) or cwd
    pctx = permissions.gather(project_dir=pdir, home=home, config_dir=os.environ.get("CLAUDE_CONFIG_DIR"))
    v = permissions.verdict("python -m pytest", pctx)
    rules = "%d allow / %d ask / %d deny Bash rule(s) in %s" % (
        len(pctx.rules.allow), len(pctx.rules.ask), len(pctx.rules.deny), ", ".join(pctx.sources) or "no settings file")
    if mode in ("ask", "omit"):
        return Check("permissions", True, "rewrite_permission=%r is obsolete and now means \"auto\"; %s" % (mode, rules),
                     "set rewrite_permission to auto, allow or off in %s" % paths.config)
    if mode == "off":
        return Check("permissions", True, "rewrite_permission=off: ctx never rewrites; digests come only from the "
                     "post hook", None)
    if mode == "allow":
        return Check("permissions", True, "rewrite_permission=allow: every digestible command is rewritten AND "
                     "allowed, whatever your rules say (you chose to let ctx decide); %s" % rules, None)
    if v.kind == "allow":
        what = "rewritten to `ctx run` and allowed (%s)" % v.reason
    else:
        what = ("passed through untouched unless the session itself grants it (%s). Sessions that grant Bash on "
                "their command line (--allowedTools, the Agent SDK's allowed_tools, bypassPermissions) are read "
                "from the harness process at each call; otherwise the harness decides and ctx digests the output "
                "in the post hook" % v.reason)
    return Check("permissions", True, "auto: a rewrite only where the harness would run the command unasked. "
                 "`python -m pytest` here: %s. %s" % (what, rules), None)
