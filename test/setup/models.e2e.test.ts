/** `scoot setup` on a terminal offers the models the server lists, by name or number. */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, cleanEnv, removeDir, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

let root: string;
let server: ScriptedServer | undefined;
beforeEach(() => {
  root = tempDir("scoot-setup-models-");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs setup under `script`; each answer is typed once its question is on screen. */
function dialogue(
  home: string,
  answers: [RegExp, string][],
): Promise<{ code: number | null; screen: string }> {
  const cmd = [process.execPath, CLI, "--scoot-home", home, "setup"].map(quote).join(" ");
  const child = spawn("script", ["-qec", cmd, "/dev/null"], { cwd: root, env: cleanEnv(), stdio: "pipe" });
  let screen = "";
  let next = 0;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`setup did not finish\n${screen}`));
    }, 30_000);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      screen += d;
      while (
        next < answers.length &&
        answers[next]![0].test(screen.slice(screen.lastIndexOf("\n", screen.length - 2)))
      ) {
        child.stdin.write(`${answers[next]![1]}\r`);
        next += 1;
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}

describe.skipIf(!hasScript)("setup offers the server's model list", () => {
  it("lists the models and takes one by its number", async () => {
    server = await startScriptedServer([], { models: ["m-one", "m-two"] });
    const home = path.join(root, "home");
    const r = await dialogue(home, [
      [/base URL.*: $/, server.url],
      [/Wire API.*: $/, ""],
      [/Model name \(or its number above\) \[m-one\]: $/, "2"],
      [/Token source.*: $/, "none"],
      [/[Pp]olicy.*: $/, ""],
      [/\[Y\/n\]: $/, "y"],
    ]);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).toContain("The server lists 2 models:");
    expect(r.screen).toMatch(/1\) m-one\s+2\) m-two/);
    expect(fs.readFileSync(path.join(home, "config.toml"), "utf8")).toContain('model = "m-two"');
  });
});
