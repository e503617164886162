"""`ctx doctor`: every check a user needs, each with what to do about a failure."""

import os
import stat

from reflex import config as config_mod, install as inst
from reflex.daemon.http import listening_uid
from reflex.daemon import control as daemon_control
from reflex.shim import launcher as launcher_mod
from reflex.shim import spool


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
    from reflex.harness import doctor as harness_doctor  # Codex, Gemini, Copilot: each one found here
    checks.extend(Check(*c) for c in harness_doctor.checks(paths))
    checks.append(_permission_check(paths))
    backlog = len(spool.pending(paths.spool))
    checks.append(Check("spool", backlog == 0 or st["running"],
                        "%d event(s) waiting in %s" % (backlog, paths.spool),
                        None if backlog == 0 else "start the daemon; it ingests the spool on start"))
    checks.append(quarantine_check(paths))
    if not config_mod.trusted(paths.config):
        checks.append(Check("config", False, "%s is not yours or is writable by others; it is ignored"
                            % paths.config, "check its content, then `chown $USER` and `chmod 600` it"))
    port = st.get("http_port") or config_mod.load(paths.config).get("http_port")
    if port:
        checks.append(_http_port_check(int(port)))
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


def _owner(path):
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def quarantine_check(paths):
    """Spooled events the daemon could not ingest: each with its reason (also in `ctx ledger verify`)."""
    bad = spool.quarantined(paths.spool)
    if not bad:
        return Check("quarantine", True, "no spooled event was quarantined")
    shown = "; ".join("%s: %s" % (os.path.basename(p), why) for p, why in bad[:3])
    more = " (and %d more)" % (len(bad) - 3) if len(bad) > 3 else ""
    return Check("quarantine", False, "%d spooled event(s) could not be ingested and are not in the ledger: "
                 "%s%s" % (len(bad), shown, more),
                 "inspect them in %s (each .why says why); move one back into %s to retry it, or "
                 "delete it" % (os.path.join(paths.spool, spool.QUARANTINE), paths.spool))


def _http_port_check(port):
    """Who listens on the HTTP transport's port: a listener of another user receives every
    hook payload and the token, and can answer for ctx (Claude Code cannot tell)."""
    owner = listening_uid(port)
    if owner is None:
        return Check("http port", True, "127.0.0.1:%d has no listener (the daemon binds it on start)" % port)
    if owner == os.geteuid():
        return Check("http port", True, "127.0.0.1:%d is served by you (uid %d)" % (port, owner))
    return Check("http port", False, "127.0.0.1:%d is held by uid %d, not by you: it receives your hook "
                 "payloads and token" % (port, owner),
                 "choose another port (`ctx install --transport http --port N`) or use the command "
                 "transport (`ctx install`), then rotate the token by deleting its file")


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
    from reflex.ledger.verify import verify
    rep = verify(paths.ledger, paths.blobs)
    if rep.ok:
        return Check("ledger", True, "%s events, chain verified" % rep.counts.get("events"))
    first = rep.problems[0]
    return Check("ledger", False, "%d problem(s), first: [%s] %s" % (len(rep.problems), *first),
                 "run `ctx ledger verify` for the list; keep the file as evidence, do not edit it")


def _tokenizer_check():
    try:
        from reflex.tokens import tokenizer_status
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
    if not files and cfg.get("installed_harnesses"):
        return out  # ctx serves another harness here; its checks follow
    if not files:
        out.append(Check("hooks", False, "ctx hooks are not installed in any settings file",
                         "run `ctx install` (or `ctx install --scope project`)"))
        return out
    launcher = cfg.get("launcher") or launcher_mod.launcher_path(paths)
    owner = _owner(launcher)
    if owner is not None and owner not in (os.geteuid(), 0):
        # Claude Code runs it on every hook: another user's launcher runs their code as you.
        out.append(Check("launcher", False, "%s belongs to uid %d, not to you" % (launcher, owner),
                         "delete it and re-run `ctx install` to rewrite it"))
    else:
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
    from reflex import project
    from reflex.harness.claude import permissions
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
