/**
 * `scoot setup` on a real terminal: util-linux `script` gives the built CLI a pseudo-terminal.
 * The whole dialogue is pasted at once, token included, to show that a line typed ahead of
 * the hidden question is never echoed.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, cleanEnv, removeDir, tempDir } from "../helpers/cli.js";

const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;
const TOKEN = "sk-ttypasted0123456789abcdef";

let root: string;
beforeEach(() => {
  root = tempDir("scoot-setup-tty-");
});
afterEach(() => removeDir(root));

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs setup under a pseudo-terminal; sends `paste` once the first question is on screen. */
function onTerminal(home: string, paste: string): Promise<{ code: number | null; screen: string }> {
  const cmd = [process.execPath, CLI, "--scoot-home", home, "setup"].map(quote).join(" ");
  const child = spawn("script", ["-qec", cmd, "/dev/null"], {
    cwd: root,
    env: cleanEnv(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  let sent = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`setup on a terminal did not finish\n${screen}`));
    }, 30_000);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      screen += d;
      if (!sent && screen.includes("Model server base URL")) {
        sent = true;
        child.stdin.write(paste);
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}

describe.skipIf(!hasScript)("setup on a terminal", () => {
  it("asks, hides the token even when pasted ahead, and writes it only to the 0600 file", async () => {
    const home = path.join(root, "home");
    const answers = ["https://api.example.com/v1", "", "gpt-tty", "file", TOKEN, "readonly", "y"];
    const r = await onTerminal(home, answers.map((a) => `${a}\r`).join(""));
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).toContain("Paste the token (hidden");
    expect(r.screen).toContain("Model name [qwen2.5]: gpt-tty");
    expect(r.screen).not.toContain(TOKEN);
    expect(fs.readFileSync(path.join(home, "token"), "utf8").trim()).toBe(TOKEN);
    expect(fs.statSync(path.join(home, "token")).mode & 0o777).toBe(0o600);
    const config = fs.readFileSync(path.join(home, "config.toml"), "utf8");
    expect(config).toContain('model = "gpt-tty"');
    expect(config).toContain('policy = "readonly"');
    expect(config).not.toContain(TOKEN);
  });
});
