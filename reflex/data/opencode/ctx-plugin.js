// ctx for OpenCode (installed by `ctx install --harness opencode`; ctx-plugin marker: do not edit).
//
// Every bash call (and every file read, for the safety plane) goes through `ctx hook opencode`,
// the same stdlib-only shim every other harness runs: it asks the ctx daemon, and when the
// daemon is down or slow it decides locally, so secret reads are denied either way.  A throw
// from a plugin blocks the tool, so anything that goes wrong inside ctx (not installed, crashed,
// slower than TIMEOUT_MS) lets the call through unchanged: only ctx's own "deny" throws.
import { spawn } from "node:child_process";

const CTX = "__CTX_LAUNCHER__";
const TIMEOUT_MS = Number(process.env.CTX_OPENCODE_TIMEOUT_MS || 4000);
const WATCHED = new Set(["bash", "read", "write", "edit"]);

function ask(payload, event) {
  return new Promise((resolve) => {
    let child;
    try {
      // Its own process group, so a hung ctx is killed with whatever it started.
      child = spawn(CTX, ["hook", "opencode", ...(event ? [event] : [])],
                    { stdio: ["pipe", "pipe", "pipe"], detached: true });
    } catch (e) {
      return resolve(null);
    }
    let out = "";
    const timer = setTimeout(() => {
      try { process.kill(-child.pid, "SIGKILL"); } catch (e) {}
      for (const s of [child.stdin, child.stdout, child.stderr]) { try { s.destroy(); } catch (e) {} }
      resolve(null);
    }, TIMEOUT_MS);
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", () => {});
    child.on("error", () => { clearTimeout(timer); resolve(null); });
    child.on("close", () => {
      clearTimeout(timer);
      try { resolve(out.trim() ? JSON.parse(out) : null); } catch (e) { resolve(null); }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

// OpenCode judges the command that runs, a rewrite's too: ctx rewrites only where OpenCode's
// permission config allows the rewrite as it allows the original, so it needs that config.
// Asked on the first call, not at load (the server is not up while plugins load), and kept.
let permissionConfig = null;
async function loadPermissionConfig(client) {
  if (permissionConfig || !client?.config?.get) return permissionConfig;
  try {
    const reply = await Promise.race([client.config.get(),
                                      new Promise((resolve) => setTimeout(() => resolve(null), 2000))]);
    const cfg = reply?.data ?? null;
    if (cfg && typeof cfg === "object") {
      const agents = {};
      for (const [name, agent] of Object.entries(cfg.agent || {})) if (agent?.permission) agents[name] = agent.permission;
      permissionConfig = { permission: cfg.permission ?? null, agents };
    }
  } catch (e) {}
  return permissionConfig;
}

export const CtxPlugin = async ({ directory, client }) => ({
  event: async ({ event }) => {
    if (event?.type === "session.created" && event.properties?.info?.id) {
      await ask({ hook_event_name: "session.created", session_id: event.properties.info.id, cwd: directory },
                "sessionStart");
    }
  },
  "tool.execute.before": async (input, output) => {
    if (!WATCHED.has(input.tool)) return;
    const permission_config = input.tool === "bash" ? await loadPermissionConfig(client) : null;
    const answer = await ask({ hook_event_name: "tool.execute.before", session_id: input.sessionID,
                               call_id: input.callID, tool: input.tool, args: output.args, cwd: directory,
                               ...(permission_config ? { permission_config } : {}) });
    if (answer && typeof answer.deny === "string") throw new Error(answer.deny);
    if (answer && answer.args && typeof answer.args === "object") Object.assign(output.args, answer.args);
  },
  "tool.execute.after": async (input, output) => {
    if (input.tool !== "bash") return;
    const answer = await ask({ hook_event_name: "tool.execute.after", session_id: input.sessionID,
                               call_id: input.callID, tool: input.tool, args: input.args, cwd: directory,
                               output: output.output, exit: output.metadata?.exit });
    if (answer && typeof answer.output === "string") output.output = answer.output;
  },
});
