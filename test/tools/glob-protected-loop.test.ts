/**
 * Through the built CLI and a scripted model: a project that is the user's home holds `.ssh`
 * and `.aws`; glob does not list the names inside them, and says how many places it skipped.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

let userHome: string;
let scootHome: string;
let server: ScriptedServer | undefined;

beforeEach(() => {
  userHome = tempDir("scoot-globcli-");
  scootHome = tempDir("scoot-globcli-home-");
  for (const f of [".ssh/id_ed25519", ".aws/credentials", "notes.md"]) {
    fs.mkdirSync(path.dirname(path.join(userHome, f)), { recursive: true });
    fs.writeFileSync(path.join(userHome, f), "x\n");
  }
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(userHome);
  removeDir(scootHome);
});

describe("glob through the loop in a project that holds credential stores", () => {
  it("lists notes.md but no name inside .ssh or .aws", async () => {
    server = await startScriptedServer([
      { reply: { thought: "list", action: "glob", action_input: JSON.stringify({ pattern: "**" }) } },
      { reply: { thought: "done", action: "final", action_input: "ok" } },
    ]);
    const r = await runCli(["-e", "list", "--policy", "readonly"], {
      home: scootHome,
      cwd: userHome,
      env: { HOME: userHome, SCOOT_BACKEND_BASE_URL: server.url },
    });
    expect(r.code).toBe(0);
    const last = server.completions().at(-1)!.body as { messages: { content: string }[] };
    const obs = last.messages.map((m) => m.content).find((c) => c.startsWith("Observation from glob"));
    expect(obs).toContain("notes.md");
    expect(obs).not.toMatch(/id_ed25519|credentials/);
    expect(obs).toMatch(/\[2 protected places were skipped/);
  });
});
