/**
 * Writes through the editor cannot be redirected (docs/editors.md "Writes through the editor").
 * Two `scoot acp` agents on one project, each with its own editor client offering `fs`: in B,
 * the model's sandboxed bash waits for A's editor to be asked to write and then swaps the
 * target's directory and the target itself for symlinks, back and forth; A's approved
 * file_write goes through A's editor, which writes the moment it sees a link. That is the worst
 * timing a racer can get, made certain: before the effect lock the editor wrote outside the
 * project (or into `.git/config`, for a client that follows links only inside its root) on
 * every try. Now no command of any session runs in the project while an editor write is in
 * flight (B's command ends, unanswered, before A's editor is asked), and the write is verified
 * by identity.
 */
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { removeDir, spawnCli } from "../helpers/cli.js";
import { bwrapWorks } from "../helpers/procs.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";

const BWRAP = bwrapWorks();
if (!BWRAP) console.log("editor-write-race: skipped, bwrap cannot run here (apt-get install bubblewrap)");
const TRIES = 20;
/** How long B's command waits, at most, for A's editor to be asked to write (s). */
const WAIT_S = 10;
/** How long it then swaps (s), and how long each link stays in place (s). */
const RACE_S = 0.3;
const LINK_PAUSE_S = 0.002;

type WriteStyle = "plain path" | "links inside its root";

let base: string;
let home: string;
let project: string;
let outside: string;
const agents: { child: ChildProcess; conn: acp.ClientConnection; server: ScriptedServer }[] = [];

beforeEach(() => {
  // Under /var/tmp: the sandbox's private /tmp would hide a project under /tmp.
  base = fs.realpathSync(fs.mkdtempSync("/var/tmp/scoot-race-"));
  home = path.join(base, "home");
  project = path.join(base, "project");
  outside = path.join(base, "outside");
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(path.join(project, "sub"), { recursive: true });
  fs.mkdirSync(outside);
  execFileSync("git", ["init", "-q"], { cwd: project });
  fs.writeFileSync(path.join(project, "sub", "notes.md"), "inside\n");
  fs.writeFileSync(path.join(outside, "notes.md"), "outside\n");
});
afterEach(async () => {
  for (const a of agents.splice(0)) {
    await closeAgent(a.conn, a.child).catch(() => {});
    if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill("SIGKILL");
    await a.server.close();
  }
  removeDir(base);
});

/** How long the editor lets a racer have its window before it writes (no racer runs: it then writes). */
const RACER_WINDOW_MS = 100;
/** What A's editor creates when it is asked to write: B's racer starts on it. */
const TRIGGER = "write-requested";
/** What the test creates once A's write waits for the effect lock: B's racer then ends unanswered. */
const STOP = "racer-stop";

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The editor's write: by plain path (links followed anywhere), or acpx's way (links followed
 * inside its root only). It writes at the worst moment a racer can arrange, deterministically:
 * as soon as the file or its directory is a link (or after RACER_WINDOW_MS when none appears).
 */
function editorWrite(style: WriteStyle, file: string, content: string): void {
  const trigger = path.join(project, TRIGGER);
  fs.writeFileSync(trigger, "");
  try {
    writeAtWorst(style, file, content);
  } finally {
    fs.rmSync(trigger, { force: true });
  }
}

function writeAtWorst(style: WriteStyle, file: string, content: string): void {
  const end = Date.now() + RACER_WINDOW_MS;
  while (Date.now() < end && !isLink(path.dirname(file)) && !isLink(file)) {
    // busy: the racer flips every few tens of microseconds
  }
  if (style === "links inside its root") {
    const real = fs.realpathSync(path.dirname(file));
    const target = path.join(real, path.basename(file));
    let resolved = target;
    try {
      resolved = fs.realpathSync(target);
    } catch {
      // a new file
    }
    if (!resolved.startsWith(`${fs.realpathSync(project)}/`)) throw new Error(`${file} is outside the root`);
    fs.writeFileSync(resolved, content);
    return;
  }
  fs.writeFileSync(file, content);
}

async function agent(
  style: WriteStyle,
): Promise<{ conn: acp.ClientConnection; server: ScriptedServer; sessionId: string }> {
  const server = await startScriptedServer([]);
  const child = spawnCli(["acp", "--approval", "never"], {
    home,
    cwd: project,
    env: { SCOOT_BACKEND_BASE_URL: server.url, SCOOT_BACKEND_MAX_RETRIES: "0" },
  });
  const conn = acp
    .client({ name: "scoot-race-test" })
    .onRequest(acp.methods.client.session.requestPermission, () => ({
      outcome: { outcome: "selected", optionId: "allow_once" },
    }))
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => ({
      content: fs.readFileSync(params.path, "utf8"),
    }))
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      editorWrite(style, params.path, params.content);
      return {};
    })
    .connect(agentStream(child));
  agents.push({ child, conn, server });
  await conn.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  });
  const { sessionId } = await conn.agent.request(acp.methods.agent.session.new, {
    cwd: project,
    mcpServers: [],
  });
  return { conn, server, sessionId };
}

/**
 * B's command: waits (at most WAIT_S, or until told to stop) for A's editor to be asked to write, then for RACE_S
 * swaps sub/ for a link to `away` and sub/notes.md for a link to `awayFile`, LINK_PAUSE_S
 * each, back and forth.
 */
function racer(marker: string, away: string, awayFile: string): string {
  const script = [
    `open(my $m, ">", "${marker}"); close $m;`,
    "use Time::HiRes qw(time sleep);",
    `my $until = time + ${WAIT_S};`,
    `while (!-e "${TRIGGER}" && !-e "${STOP}" && time < $until) { sleep(0.0005); }`,
    `if (-e "${TRIGGER}") { my $end = time + ${RACE_S}; while (time < $end) {`,
    `  rename("sub", "sub.real"); symlink("${away}", "sub"); sleep(${LINK_PAUSE_S}); unlink("sub"); rename("sub.real", "sub");`,
    `  rename("sub/notes.md", "sub/notes.keep"); symlink("${awayFile}", "sub/notes.md"); sleep(${LINK_PAUSE_S});`,
    '  unlink("sub/notes.md"); rename("sub/notes.keep", "sub/notes.md");',
    "} }",
    'print "done\\n";',
  ].join(" ");
  return `perl -e '${script}'`;
}

const prompt = (conn: acp.ClientConnection, sessionId: string, text: string) =>
  conn.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

/** Whether an editor write holds the project's writer lock (and so waits for B's command). */
function writerWaits(): boolean {
  const locks = path.join(home, "state", "locks");
  if (!fs.existsSync(locks)) return false;
  return fs.readdirSync(locks).some((d) => fs.existsSync(path.join(locks, d, "write")));
}

async function until(what: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

describe.skipIf(!BWRAP)("an editor write while another session's command swaps links", () => {
  it.each<[WriteStyle, () => { away: string; awayFile: string; watched: string }]>([
    [
      "plain path",
      () => ({
        away: outside,
        awayFile: path.join(outside, "notes.md"),
        watched: path.join(outside, "notes.md"),
      }),
    ],
    [
      "links inside its root",
      () => ({
        away: path.join(project, ".git"),
        awayFile: path.join(project, ".git", "config"),
        watched: path.join(project, ".git", "config"),
      }),
    ],
  ])(
    `a client writing by %s: 0 writes outside the judged file in ${TRIES} tries`,
    async (style, places) => {
      const { away, awayFile, watched } = places();
      const before = fs.readFileSync(watched, "utf8");
      const a = await agent(style);
      const b = await agent(style);
      let raced = 0;
      for (let i = 0; i < TRIES; i++) {
        const marker = path.join(project, `racing-${i}`);
        b.server.push(step("bash", racer(marker, away, awayFile)), step("final", "raced"));
        a.server.push(
          step("file_write", { path: "sub/notes.md", content: `written by A, try ${i}\n` }),
          step("final", "ok"),
        );
        const racing = prompt(b.conn, b.sessionId, "race");
        if (await until(() => fs.existsSync(marker), 10_000)) raced++;
        const writing = prompt(a.conn, a.sessionId, "write the notes");
        // A's editor is asked to write (the racer goes), or A's write waits for B's command.
        await until(() => fs.existsSync(path.join(project, TRIGGER)) || writerWaits(), 10_000);
        if (writerWaits()) fs.writeFileSync(path.join(project, STOP), "");
        await Promise.all([writing, racing]);
        fs.rmSync(path.join(project, STOP), { force: true });
        expect(fs.readFileSync(watched, "utf8"), `try ${i}`).toBe(before);
      }
      expect(raced).toBe(TRIES);
      expect(fs.readdirSync(outside)).toEqual(["notes.md"]);
      // Every write went where it was judged to go, and the last one is what the file holds.
      expect(fs.lstatSync(path.join(project, "sub", "notes.md")).isFile()).toBe(true);
      expect(fs.readFileSync(path.join(project, "sub", "notes.md"), "utf8")).toBe(
        `written by A, try ${TRIES - 1}\n`,
      );
    },
    120_000,
  );
});
