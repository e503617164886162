"""`ctx doctor`: every check a user needs, each with what to do about a failure."""

import os
import stat
import time

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
    # Counted before the hook probes below, whose event a daemon they start ingests soon after.
    backlog = len(spool.pending(paths.spool))
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
    checks.append(_tokenizer_check(paths, st["running"]))
    probe_started = time.time()
    checks.extend(_hook_checks(paths))
    if not st["running"]:
        _stop_the_probes_daemon(paths, probe_started)
    from reflex.harness import doctor as harness_doctor  # Codex, Gemini, Copilot: each one found here
    checks.extend(Check(*c) for c in harness_doctor.checks(paths))
    checks.append(_permission_check(paths))
    checks.append(token_exposure_check(paths))
    checks.append(Check("spool", backlog == 0 or st["running"],
                        "%d event(s) waiting in %s" % (backlog, paths.spool),
                        None if backlog == 0 else "start the daemon; it ingests the spool on start"))
    checks.append(quarantine_check(paths))
    if not config_mod.trusted(paths.config):
        checks.append(Check("config", False, "%s is not yours or is writable by others; it is ignored"
                            % paths.config, "check its content, then `chown $USER` and `chmod 600` it"))
    else:
        checks.append(config_check(paths))
    port = st.get("http_port") or config_mod.load(paths.config).get("http_port")
    if port:
        checks.append(_http_port_check(int(port)))
    return checks


def _stop_the_probes_daemon(paths, since, wait_s=10.0):
    """A hook probe that found no daemon started one, as every hook does; doctor found none
    running, so it leaves none running (a daemon outliving a throwaway CTX_HOME holds it open)."""
    try:
        spawned = os.stat(paths.spawn_lock).st_mtime >= since - 1.0
    except OSError:
        return
    if not spawned:
        return
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if daemon_control.status(paths)["running"]:
            try:
                daemon_control.stop(paths)
            except Exception:  # noqa: BLE001 - best effort: doctor's report matters more
                pass
            return
        time.sleep(0.05)


def config_check(paths):
    """ctx's config.json as the daemon reads it (pydantic, reflex.config_model): a broken file is
    named with each bad key, since the daemon refuses to start on it."""
    from reflex import config_model
    found = config_model.check(paths.config)
    if not found:
        return Check("config", True, "%s is valid" % paths.config if os.path.exists(paths.config)
                     else "no %s (the defaults apply)" % paths.config)
    return Check("config", False, "%s is invalid: %s; the daemon will not start until it is fixed (hooks "
                 "fall back to the safety plane alone, `ctx run` prints raw output)" % (paths.config, "; ".join(found)),
                 "fix the key(s) named, or move the file away to use the defaults")


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


def token_exposure_check(paths, project_dir=None):
    """Files holding ctx's HTTP token where it does not belong: tracked by git (committed, or
    about to be), or readable by others. Looks at every settings file ctx installed into, the
    installer's backups of them, and the project's .claude/ settings."""
    from reflex.paths import read_private_file
    data = read_private_file(paths.http_token, 4096)
    token = data.decode("utf-8", "replace").strip() if data else ""
    if not token:
        return Check("token files", True, "no http token (the command transport needs none)")
    candidates = []
    for f in config_mod.load(paths.config).get("installed_settings") or ():
        if isinstance(f, str):
            candidates.append(f)
    claude_dir = os.path.join(project_dir or os.getcwd(), ".claude")
    candidates += [os.path.join(claude_dir, n) for n in ("settings.json", "settings.local.json")]
    seen, problems = set(), []
    for f in candidates:
        d, base = os.path.split(f)
        try:
            names = [n for n in os.listdir(d) if n == base or n.startswith(base + ".ctx-")]
        except OSError:
            continue
        for n in sorted(names):
            path = os.path.join(d, n)
            if path in seen:
                continue
            seen.add(path)
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    if token not in fh.read(1 << 20):
                        continue
                mode = stat.S_IMODE(os.stat(path).st_mode)
            except OSError:
                continue
            if _git_tracked(path):
                problems.append("%s is tracked by git" % path)
            elif mode & 0o077:
                problems.append("%s has mode %o" % (path, mode))
    if not problems:
        return Check("token files", True, "the http token is only in private, untracked files")
    return Check("token files", False, "ctx's http token is exposed: " + "; ".join(problems[:4]),
                 "`git rm --cached` the tracked file(s) (and purge them from history if pushed), `chmod 600` "
                 "the others, reinstall with `ctx install --transport http --scope user` (or --scope project, "
                 "which writes .claude/settings.local.json), then rotate the token: delete %s, install again "
                 "and `ctx daemon stop`" % paths.http_token)


def _git_tracked(path):
    """Whether git tracks `path` (False when it is not in a work tree or git is missing)."""
    import subprocess
    try:
        p = subprocess.run(["git", "-C", os.path.dirname(path), "ls-files", "--error-unmatch", "--",
                            os.path.basename(path)], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return p.returncode == 0


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


def _tokenizer_check(paths, daemon_running):
    """The tokenizer where digests are made: the daemon's, asked over its socket (a daemon
    started in another environment may lack what this process has).  With no daemon running,
    this process's, loaded the way a daemon would load it."""
    fix = ("reinstall ctx (its o200k_base file is missing or altered), or set TIKTOKEN_CACHE_DIR to a "
           "directory holding tiktoken's cached o200k_base; then `ctx daemon stop` so the next hook starts "
           "a daemon that has it")
    if daemon_running:
        from reflex.shim import client
        try:
            reply, _ = client.request_json(paths, "status", connect_timeout=0.5, reply_timeout=30)
        except client.Unavailable as e:
            return Check("tokenizer", False, "the daemon did not answer a status request: %s" % e, fix)
        tok = reply.get("tokenizer") if isinstance(reply.get("tokenizer"), dict) else None
        if tok is None:
            return Check("tokenizer", False, "the daemon (pid %s) does not report its tokenizer: it runs an "
                         "older ctx" % reply.get("pid"), "`ctx daemon stop`; the next hook starts the new one")
        ok = tok.get("ok") is True
        return Check("tokenizer", ok, "in the daemon (pid %s): %s" % (reply.get("pid"), tok.get("detail")),
                     None if ok else fix)
    try:
        from reflex.tokens import tokenizer_status
        ok, detail = tokenizer_status()
    except Exception as e:  # import problems are exactly what doctor must report
        ok, detail = False, "%s: %s" % (type(e).__name__, e)
    return Check("tokenizer", ok, "%s (in doctor's process: no daemon is running)" % detail, None if ok else fix)


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
        out.extend(_probe_check(f, data))
    return out


def _probe_check(settings_file, data):
    """Run the installed PreToolUse command as the harness would and say what it answered: hooks
    that are all present can still all be no-ops (ctx not found from the harness's PATH)."""
    command = inst.probe_command(data)
    if command is None:
        return []
    d = os.path.dirname(os.path.abspath(settings_file))
    home_claude = os.path.join(os.path.expanduser("~"), ".claude")
    cwd = os.path.dirname(d) if os.path.basename(d) == ".claude" and d != home_claude else os.getcwd()
    ok, detail = inst.probe_hook(command, cwd)
    return [Check("hook answers", ok, "%s: %s" % (settings_file, detail), None if ok else
                  "re-run `ctx install` for this file (the project form finds your launcher), or put ctx on the "
                  "PATH your harness starts with (pipx install, or a link in ~/.local/bin)")]


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
