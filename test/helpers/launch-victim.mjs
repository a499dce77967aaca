/**
 * A Scoot process killed while it launches a sandboxed command (test/sandbox/launch-kill.test.ts):
 * loads the built bash tool, warms the sandbox probe with one command, prints `launching` and
 * starts `argv[3]` under bubblewrap in `argv[2]`. The test SIGKILLs it a few ms later.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "dist");
const { runShell } = await import(path.join(dist, "tools", "bash.js"));
const { defaultConfig } = await import(path.join(dist, "config", "schema.js"));

const [cwd, command] = process.argv.slice(2);
const config = defaultConfig();
config.tools.sandbox = "bwrap";
const ctx = {
  cwd,
  config,
  mode: "guarded",
  signal: new AbortController().signal,
  timeoutMs: 60_000,
  gate: () => ({ allow: true }),
  call: async () => "",
  childEnv: { ...process.env },
  services: {},
};
const warm = await runShell("true", ctx);
if (warm.failed) process.stderr.write(`${JSON.stringify(warm)}\n`);
process.stdout.write("launching\n");
await runShell(command, ctx);
