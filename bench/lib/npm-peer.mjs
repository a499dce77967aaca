/**
 * A peer agent from the npm registry, installed at bench time into a directory under the OS temp
 * dir (never into this repository, kept between runs so a second run installs nothing); the
 * path of its CLI and its version, or why not.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export function installNpmPeer(pkgName, bin, dirName) {
  const dir = path.join(os.tmpdir(), dirName);
  fs.mkdirSync(dir, { recursive: true });
  const args = [
    "install",
    "--prefix",
    dir,
    "--no-audit",
    "--no-fund",
    "--ignore-scripts",
    "--loglevel=error",
    pkgName,
  ];
  const r = spawnSync("npm", args, { encoding: "utf8", timeout: 600_000 });
  if (r.error) return { error: `npm install ${pkgName}: ${r.error.message}` };
  if (r.status !== 0)
    return { error: `npm install ${pkgName} exited ${r.status}: ${r.stderr.trim().split("\n").at(-1)}` };
  const pkgDir = path.join(dir, "node_modules", ...pkgName.split("/"));
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    const rel = typeof pkg.bin === "string" ? pkg.bin : pkg.bin[bin];
    return { cli: path.join(pkgDir, rel), version: pkg.version, dir };
  } catch (e) {
    return { error: `${pkgName} installed without a readable package.json: ${e.message}` };
  }
}

/** pi, the peer both the loop and the prefix benches run. */
const PI_PACKAGE = "@mariozechner/pi-coding-agent";

/** pi installed (or reused) under the OS temp dir: its CLI and version, or why not. */
export function installPi() {
  return installNpmPeer(PI_PACKAGE, "pi", "scoot-bench-peer-pi");
}

/**
 * pi pointed at the bench server as provider "bench" with a window of `contextWindow` tokens:
 * writes its models.json under `piHome` and gives the environment and arguments of one
 * scripted run (read and ls only: its grep and find would download ripgrep and fd).
 */
export function piLaunch({ piHome, work, baseUrl, contextWindow }) {
  fs.mkdirSync(piHome, { recursive: true });
  const models = {
    providers: {
      bench: {
        baseUrl,
        api: "openai-completions",
        apiKey: "bench",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: "bench", contextWindow, maxTokens: 4096 }],
      },
    },
  };
  fs.writeFileSync(path.join(piHome, "models.json"), JSON.stringify(models));
  const env = {
    ...process.env,
    PI_CODING_AGENT_DIR: piHome,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    HOME: work,
  };
  const args = [
    "-p",
    "--no-session",
    "--provider",
    "bench",
    "--model",
    "bench",
    "--tools",
    "read,ls",
    "benchmark goal",
  ];
  return { env, args };
}

/** Runs an agent (Scoot or a peer) in `cwd` with stdout ignored: its stderr, or why it failed. */
export function runAgent(cwd, cmd, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) =>
      code === 0
        ? resolve(err)
        : reject(new Error(`${path.basename(args[0] ?? cmd)} exited ${code}: ${err.slice(-400)}`)),
    );
  });
}
