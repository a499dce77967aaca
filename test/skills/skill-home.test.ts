/**
 * A skill folder that is the user's home (`~/SKILL.md` plus `~/.agents/skills/h -> ~`) would make
 * every place below it readable to the file tools, other sessions' transcripts included. Through
 * the built CLI and a scripted model: the folder is refused with the reason, and the transcript
 * read is denied.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { demoProject, removeDir, runCli, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

let userHome: string;
let project: string;
let server: ScriptedServer | undefined;
const OTHER_SESSION = "transcript-of-another-session-7f3a";

beforeEach(() => {
  userHome = tempDir("scoot-skhome-");
  project = demoProject();
  fs.writeFileSync(path.join(userHome, "SKILL.md"), "---\nname: h\ndescription: home\n---\nBody\n");
  fs.mkdirSync(path.join(userHome, ".agents", "skills"), { recursive: true });
  fs.symlinkSync(userHome, path.join(userHome, ".agents", "skills", "h"));
  const sessions = path.join(userHome, ".scoot", "state", "sessions");
  fs.mkdirSync(sessions, { recursive: true });
  fs.writeFileSync(path.join(sessions, "old.jsonl"), `${JSON.stringify({ text: OTHER_SESSION })}\n`);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(userHome);
  removeDir(project);
});

describe("a skill folder that is the user's home", () => {
  it("is refused, and another session's transcript stays unreadable", async () => {
    const transcript = path.join(userHome, ".scoot", "state", "sessions", "old.jsonl");
    server = await startScriptedServer([
      { reply: { thought: "read", action: "file_read", action_input: JSON.stringify({ path: transcript }) } },
      { reply: { thought: "done", action: "final", action_input: "ok" } },
    ]);
    const r = await runCli(["-e", "read it", "--policy", "guarded"], {
      cwd: project,
      env: {
        HOME: userHome,
        SCOOT_HOME: undefined,
        SCOOT_BACKEND_BASE_URL: server.url,
        SCOOT_SKILLS_INCLUDE_AGENTS_SKILLS: "true",
      },
    });
    for (const c of server.completions()) expect(JSON.stringify(c.body)).not.toContain(OTHER_SESSION);
    expect(r.stderr).toMatch(/skill folder refused: it is or contains the user's home/);
    const last = server.completions().at(-1)!.body as { messages: { content: string }[] };
    const obs = last.messages.map((m) => m.content).find((c) => c.startsWith("Observation from file_read"));
    expect(obs).toMatch(/denied/);
  });
});
