/**
 * AGENTS.md by the convention (docs/context.md "Project instructions"), through the built CLI and
 * the scripted model, in real temporary repositories:
 * - the budget is spent nearest first: a 14 KB root file (openai/codex's is that long) no longer
 *   pushes out the package's own file, it is clipped instead, with a note;
 * - an AGENTS.md below the project root reaches the model when a call the gate allowed first
 *   touches a path under it: once, recorded in the transcript and the audit, and not again
 *   after `--resume`;
 * - a denied call pulls nothing in, and an AGENTS.md in a secret place is never read;
 * - `--trace` and the REPL's `/status` say what was read, clipped and added.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-home-" });
let work: string;
beforeEach(() => {
  work = fs.realpathSync(tempDir("scoot-agents-"));
});
afterEach(() => {
  removeDir(work);
});

/** git without the machine's or the user's configuration. */
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
const WEB_TEXT = "WEB-GUIDANCE: components go in src/ui.\n";
const WEB_BYTES = Buffer.byteLength(WEB_TEXT);
/** openai/codex's root AGENTS.md is about this long. */
const ROOT_BYTES = 14 * 1024;

/** Numbered lines of `bytes` bytes in all, each naming `tag`: any part of it can be looked for. */
function guidance(tag: string, bytes: number): string {
  const lines: string[] = [];
  let n = 0;
  let size = 0;
  while (size < bytes) {
    const line = `${tag} rule ${String(n++).padStart(4, "0")}: keep it tidy.\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join("").slice(0, bytes);
}

function write(file: string, text: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/**
 * A git repository: a 14 KB root AGENTS.md and the packages' own files, staged (a file below
 * the project root is guidance only when git's index holds it as the session starts).
 */
function repo(): string {
  const root = path.join(work, "repo");
  fs.mkdirSync(root, { recursive: true });
  execFileSync("git", ["init", "-q"], { cwd: root, env: GIT_ENV });
  write(path.join(root, "AGENTS.md"), guidance("ROOT-GUIDANCE", ROOT_BYTES));
  write(path.join(root, "packages", "api", "AGENTS.md"), guidance("API-GUIDANCE", 2000));
  write(path.join(root, "packages", "api", "src", "server.ts"), "export const port = 1;\n");
  write(path.join(root, "packages", "web", "AGENTS.md"), WEB_TEXT);
  write(path.join(root, "packages", "web", "src", "app.ts"), "export const app = 1;\n");
  execFileSync("git", ["add", "-A"], { cwd: root, env: GIT_ENV });
  return root;
}

/**
 * These tests spend a budget of 8192 bytes (agent.project_instructions_max_bytes; its default is
 * 32 KiB), so the 14 KB root file is clipped; a test that wants the default passes `{}`.
 */
let BUDGET_ENV: Record<string, string | undefined> = { SCOOT_AGENT_PROJECT_INSTRUCTIONS_MAX_BYTES: "8192" };

async function run(cwd: string, script: ScriptItem[], args: string[] = [], configText = "") {
  fs.writeFileSync(path.join(scene.home, "config.toml"), configText);
  scene.server = await startScriptedServer(script);
  return runCli(["-e", "do the work", "--trace", ...args], {
    home: scene.home,
    cwd,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_STREAM: "false", ...BUDGET_ENV },
    timeoutMs: 60_000,
  });
}

type Msg = { role: string; content: string };
function requests(): Msg[][] {
  return scene.server!.completions().map((c) => (c.body as { messages: Msg[] }).messages);
}

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

function transcript(): Msg[] {
  const dir = path.join(scene.home, "state", "sessions");
  const file = fs.readdirSync(dir).find((f) => f.endsWith(".jsonl"))!;
  return fs
    .readFileSync(path.join(dir, file), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Msg);
}

describe("the budget is spent nearest first", () => {
  it("with the default budget of 32 KiB the 14 KB root file and packages/api/AGENTS.md both reach the model whole", async () => {
    const root = repo();
    const api = path.join(root, "packages", "api");
    BUDGET_ENV = { SCOOT_AGENT_PROJECT_INSTRUCTIONS_MAX_BYTES: undefined };
    try {
      const r = await run(api, [step("final", "ok")]);
      expect(r.code, r.stderr).toBe(0);
      const prompt = requests()[0]![0]!.content;
      expect(prompt).toContain(fs.readFileSync(path.join(root, "AGENTS.md"), "utf8").trimEnd());
      expect(prompt).toContain(fs.readFileSync(path.join(api, "AGENTS.md"), "utf8").trimEnd());
      expect(prompt).not.toContain("[AGENTS.md clipped");
      expect(r.stderr).toMatch(
        /\[trace\] project instructions: read .* budget 32768 bytes, nearest first, \d+ used/,
      );
    } finally {
      BUDGET_ENV = { SCOOT_AGENT_PROJECT_INSTRUCTIONS_MAX_BYTES: "8192" };
    }
  });

  it("from packages/api a 14 KB root file is clipped and packages/api/AGENTS.md reaches the model whole", async () => {
    const root = repo();
    const api = path.join(root, "packages", "api");
    const r = await run(api, [step("final", "ok")]);
    expect(r.code, r.stderr).toBe(0);
    const prompt = requests()[0]![0]!.content;
    // All of the nested file, in one piece, nearest last.
    const nested = fs.readFileSync(path.join(api, "AGENTS.md"), "utf8");
    expect(prompt).toContain(nested.trimEnd());
    expect(prompt.indexOf("ROOT-GUIDANCE")).toBeLessThan(prompt.indexOf("API-GUIDANCE"));
    // The root file got what was left of 8192 bytes, and says how much was left out.
    const rootShown = 8192 - 2000;
    expect(prompt).toContain(
      `[AGENTS.md clipped: ${rootShown} of ${ROOT_BYTES} bytes shown, ${ROOT_BYTES - rootShown} left out`,
    );
    expect(prompt).not.toContain("ROOT-GUIDANCE rule 0300");
    expect(r.stderr).toContain(
      `[trace] project instructions: read ${path.join(root, "AGENTS.md")}, ${path.join(api, "AGENTS.md")} (nearest last); budget 8192 bytes, nearest first, 8192 used; ${path.join(root, "AGENTS.md")} clipped: ${rootShown} of ${ROOT_BYTES} bytes shown, ${ROOT_BYTES - rootShown} left out`,
    );
    // packages/web's file is not the session's: it stays out until a path under it is touched.
    expect(prompt).not.toContain("WEB-GUIDANCE");
  });
});

describe("files below the root come when a path under them is first touched", () => {
  it("an edit under packages/web/ brings packages/web/AGENTS.md into the next request, once; --resume keeps it once", async () => {
    const root = repo();
    const webFile = path.join(root, "packages", "web", "AGENTS.md");
    const r = await run(root, [
      step("file_read", { path: "packages/api/src/server.ts" }),
      step("file_write", { path: "packages/web/src/ui/button.ts", content: "export const b = 1;\n" }),
      step("file_edit", { path: "packages/web/src/app.ts", old: "app = 1", new: "app = 2" }),
      step("final", "done"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const sent = requests().map((m) => JSON.stringify(m));
    // Not in the prompt, nor after the read under packages/api (its file came as a touch too).
    expect(sent[0]).not.toContain("WEB-GUIDANCE");
    expect(sent[1]).not.toContain("WEB-GUIDANCE");
    expect(count(sent[1]!, "API-GUIDANCE rule 0000")).toBe(1);
    // The write under packages/web/ brings it, fenced, after that call's observation.
    expect(count(sent[2]!, "WEB-GUIDANCE")).toBe(1);
    const last = requests()[2]!.at(-1)!;
    expect(last.role).toBe("user");
    expect(last.content.indexOf("Observation from file_write")).toBeLessThan(
      last.content.indexOf(`[scoot: project instructions from ${JSON.stringify(webFile)}`),
    );
    expect(last.content).toContain(`<<<REPOSITORY_CONTENT ${webFile}\nWEB-GUIDANCE`);
    // The edit touches packages/web/ again: not a second copy.
    expect(count(sent[3]!, "WEB-GUIDANCE")).toBe(1);
    expect(r.stderr).toContain(
      `[trace] project instructions: added ${webFile} (${WEB_BYTES} bytes, whole), first touched: packages/web/src/ui/button.ts`,
    );
    // Recorded: its own transcript line, and an audit record.
    const notes = transcript().filter((m) => m.content.startsWith("[scoot: project instructions from "));
    expect(notes.map((m) => m.role)).toEqual(["user", "user"]);
    expect(notes[1]!.content).toContain("WEB-GUIDANCE");
    expect(
      auditEvents(scene.home)
        .filter((e) => e.msg.startsWith("project instructions added:"))
        .map((e) => e.msg),
    ).toEqual([
      `project instructions added: ${path.join(root, "packages", "api", "AGENTS.md")} (2000 bytes), first touched: packages/api/src/server.ts`,
      `project instructions added: ${webFile} (${WEB_BYTES} bytes), first touched: packages/web/src/ui/button.ts`,
    ]);

    // Resumed: the transcript already holds the note, so a touch under packages/web/ adds nothing.
    const sessionId = fs
      .readdirSync(path.join(scene.home, "state", "sessions"))
      .find((f) => f.endsWith(".jsonl"))!
      .replace(/\.jsonl$/, "");
    await scene.server!.close();
    scene.server = await startScriptedServer([
      step("file_read", { path: "packages/web/src/app.ts" }),
      step("final", "again"),
    ]);
    const again = await runCli(["-e", "more", "--trace", "--resume", sessionId], {
      home: scene.home,
      cwd: root,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_STREAM: "false", ...BUDGET_ENV },
      timeoutMs: 60_000,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(count(JSON.stringify(requests()[1]), "WEB-GUIDANCE")).toBe(1);
    expect(again.stderr).not.toContain("project instructions: added");
  });

  it("a glob in a directory and a parallel child's read count as touches", async () => {
    const root = repo();
    const r = await run(root, [
      step("glob", { pattern: "**/*.ts", root: "packages/web" }),
      step("parallel", { calls: [{ action: "file_read", input: { path: "packages/api/src/server.ts" } }] }),
      step("final", "done"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const sent = requests().map((m) => JSON.stringify(m));
    expect(count(sent[1]!, "WEB-GUIDANCE")).toBe(1);
    expect(sent[1]).not.toContain("API-GUIDANCE");
    expect(count(sent[2]!, "API-GUIDANCE rule 0000")).toBe(1);
  });

  it("a denied call pulls nothing in, and an AGENTS.md in a secret place is never read", async () => {
    const root = repo();
    write(path.join(root, "private", "AGENTS.md"), "PRIVATE-GUIDANCE: read me.\n");
    write(path.join(root, "private", "notes.txt"), "notes\n");
    const config = '[tools]\nsecret_paths = ["private"]\n';
    const denied = await run(
      root,
      [step("file_read", { path: "private/notes.txt" }), step("final", "no")],
      [],
      config,
    );
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stderr).toMatch(/\[trace\] denied: file_read: .*tools\.secret_paths/);
    expect(JSON.stringify(requests())).not.toContain("PRIVATE-GUIDANCE");
    expect(denied.stderr).not.toContain("project instructions: added");

    // Unrestricted lets the read run; the AGENTS.md beside it is still judged as guarded judges it.
    await scene.server!.close();
    const allowed = await run(
      root,
      [step("file_read", { path: "private/notes.txt" }), step("final", "read")],
      ["--policy", "unrestricted"],
      config,
    );
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.stringify(requests()[1])).toContain("notes");
    expect(JSON.stringify(requests())).not.toContain("PRIVATE-GUIDANCE");
    expect(allowed.stderr).toMatch(
      /\[trace\] project instructions: .*private\/AGENTS\.md not read: read: path is a configured secret/,
    );
  });
});

describe("/status says what the model was given", () => {
  it("the budget, the clipped root file, and a file added on first touch", async () => {
    const root = repo();
    scene.server = await startScriptedServer([
      step("file_write", { path: "packages/web/src/ui/button.ts", content: "export const b = 1;\n" }),
      step("final", "written"),
    ]);
    const r = await runCli(["repl"], {
      home: scene.home,
      cwd: root,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_STREAM: "false", ...BUDGET_ENV },
      input: "/status\nwrite the button\n/status\n/exit\n",
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n").filter((l) => l.startsWith("instructions  "));
    const atStart = `instructions  budget 8192 bytes, nearest first, in ${root}: AGENTS.md clipped to 8192 of ${ROOT_BYTES} bytes`;
    expect(lines).toEqual([
      atStart,
      `${atStart}; added on first touch: packages/web/AGENTS.md ${WEB_BYTES} bytes`,
    ]);
  });
});
