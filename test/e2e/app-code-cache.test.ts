/**
 * The app's compiled code kept between runs (src/app-code-cache.ts), through the real built CLI:
 * written once by a run in a home that had none (or by `scoot acp` once an editor's prompt ran),
 * read (not rewritten) by the runs after it, and replaced whole when it is damaged or made by
 * another build of the app.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { agentStream, closeAgent } from "../helpers/acp-agent.js";
import { cleanEnv, collect, needsBuiltCli, REPO_ROOT, runCli, spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({ model: true, project: "scoot-code-cache-project-" });

const PROBE = path.join(REPO_ROOT, "test", "helpers", "module-probe.cjs");
/** The prefix of the vendored ACP SDK's cache files (src/app-code-cache.ts). */
const VENDOR_ACP = "scoot-vendor-acp-";

/** How this Node's cache files end (src/app-code-cache.ts `nodeTail`). */
const NODE_TAIL = `-${process.version}-${process.arch}.v8`;

function cacheDir(): string {
  return path.join(scene.home, "state", "compile-cache");
}

/** The app's cache files in the home (or those of another prefix): name → [inode, size]. */
function appCaches(prefix = "scoot-app-"): Map<string, [number, number]> {
  const dir = cacheDir();
  const out = new Map<string, [number, number]>();
  if (!fs.existsSync(dir)) return out;
  for (const name of fs.readdirSync(dir).filter((n) => n.startsWith(prefix))) {
    const st = fs.statSync(path.join(dir, name));
    out.set(name, [st.ino, st.size]);
  }
  return out;
}

/** A trivial run (one request, a final answer): it also sets the heap flag a cache must survive. */
async function trivialRun(): Promise<void> {
  scene.model.push(step("final", "done"));
  const r = await runCli(["-e", "say done"], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_COMPILE_CACHE: undefined },
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain("done");
}

describe("the app's compiled code is kept in the home between runs", () => {
  it("a run in a made home writes it once; later runs read it and leave it as it is", async () => {
    needsBuiltCli();
    await trivialRun(); // makes the home: no cache yet (only a made home gets one)
    expect(appCaches().size).toBe(0);
    await trivialRun();
    const written = appCaches();
    expect([...written.keys()]).toHaveLength(1);
    const [name] = [...written.keys()];
    expect(name!.endsWith(NODE_TAIL), name).toBe(true);
    expect(written.get(name!)![1]).toBeGreaterThan(10_000);
    expect(fs.statSync(path.join(cacheDir(), name!)).mode & 0o777).toBe(0o600);
    // V8 accepted it: a refused cache would be written again (a new inode, by the rename).
    await trivialRun();
    await trivialRun();
    expect(appCaches()).toEqual(written);
    expect(fs.readdirSync(cacheDir()).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("only a run of a goal writes it: a report that comes first leaves it to the next run", async () => {
    needsBuiltCli();
    await trivialRun();
    for (const words of [["config"], ["sessions", "list"], ["doctor"]]) {
      const r = await runCli(words, {
        home: scene.home,
        cwd: scene.project,
        env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_COMPILE_CACHE: undefined },
      });
      expect(r.code === 0 || words[0] === "doctor", r.stderr).toBe(true);
      expect(appCaches().size, words.join(" ")).toBe(0);
    }
    await trivialRun();
    expect(appCaches().size).toBe(1);
  });

  /** An editor's session of `scoot acp`: initialize, then `prompts` prompts, each answered; then it leaves. */
  async function editorSession(prompts: number): Promise<void> {
    const child = spawnCli(["acp", "--approval", "never"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_COMPILE_CACHE: undefined },
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const connection = acp.client({ name: "scoot-cache-test" }).connect(agentStream(child));
    try {
      await connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      if (prompts > 0) {
        const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, {
          cwd: scene.project,
          mcpServers: [],
        });
        for (let i = 0; i < prompts; i++) {
          scene.model.push(step("final", `answer ${i}`));
          const r = await connection.agent.request(acp.methods.agent.session.prompt, {
            sessionId,
            prompt: [{ type: "text", text: `question ${i}` }],
          });
          expect(r.stopReason, stderr).toBe("end_turn");
        }
      }
    } finally {
      await closeAgent(connection, child);
    }
    expect(child.exitCode, stderr).toBe(0);
  }

  it("`scoot acp` writes it once an editor's prompt has run, not before; a run then reads it as it is", async () => {
    needsBuiltCli();
    await editorSession(0); // makes the home: no cache yet (only a made home gets one)
    await editorSession(0);
    // Initialize alone compiled little of a run: kept, it would leave every later run compiling.
    expect(appCaches().size).toBe(0);
    await editorSession(1);
    const written = appCaches();
    expect([...written.keys()]).toHaveLength(1);
    const [name] = [...written.keys()];
    expect(name!.endsWith(NODE_TAIL), name).toBe(true);
    expect(fs.statSync(path.join(cacheDir(), name!)).mode & 0o777).toBe(0o600);
    // V8 accepts it in a run of a goal and in the next editor session (it would be written again).
    await trivialRun();
    await editorSession(2);
    expect(appCaches()).toEqual(written);
  });

  it("`scoot serve` writes it once a `run` request has run, not for other requests", async () => {
    needsBuiltCli();
    const serve = async (lines: object[]) => {
      const r = await runCli(["serve"], {
        home: scene.home,
        cwd: scene.project,
        input: lines.map((l) => `${JSON.stringify(l)}\n`).join(""),
        env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_COMPILE_CACHE: undefined },
      });
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    await serve([{ id: 1, method: "session.list" }]); // makes the home
    await serve([{ id: 1, method: "session.list" }]);
    expect(appCaches().size).toBe(0);
    scene.model.push(step("final", "served"));
    expect(await serve([{ id: 1, method: "run", params: { goal: "say served" } }])).toContain("served");
    const written = appCaches();
    expect([...written.keys()]).toHaveLength(1);
    await trivialRun();
    expect(appCaches()).toEqual(written);
  });

  it("an npm package imported by code read from the cache loads (`scoot acp` and its SDK)", async () => {
    needsBuiltCli();
    await trivialRun();
    await trivialRun();
    expect(appCaches().size).toBe(1);
    const initialize = `${JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: 1, clientCapabilities: {} },
    })}\n`;
    const r = await runCli(["acp"], {
      home: scene.home,
      cwd: scene.project,
      input: initialize,
      env: { SCOOT_COMPILE_CACHE: undefined },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.split("\n")[0]!)).toMatchObject({ id: 1, result: { protocolVersion: 1 } });
    // Nothing about how it was loaded reaches the person (vm's own import() loader would warn).
    expect(r.stderr).not.toMatch(/Warning|import/i);
  });

  it("a vendored package (`scoot acp`'s SDK) keeps its own code: written once, then read as it is under the run's heap flag", async () => {
    needsBuiltCli();
    await trivialRun(); // makes the home
    const probe = path.join(scene.project, "module-probe.txt");
    const acp = async () => {
      const r = await runCli(["acp"], {
        home: scene.home,
        cwd: scene.project,
        input: `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`,
        env: {
          SCOOT_COMPILE_CACHE: undefined,
          NODE_OPTIONS: `--require ${PROBE}`,
          SCOOT_TEST_MODULE_PROBE: probe,
        },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout.split("\n")[0]!)).toMatchObject({ id: 1, result: { protocolVersion: 1 } });
      return fs.readFileSync(probe, "utf8").split("\n");
    };
    const loaded = await acp();
    // The SDK came from the build's vendored file, compiled by Scoot, not through Node's loader.
    expect(loaded.filter((m) => /[\\/]dist[\\/]vendor[\\/]acp\.cjs$/.test(m))).toHaveLength(1);
    const written = appCaches(VENDOR_ACP);
    expect([...written.keys()]).toHaveLength(1);
    const [name] = [...written.keys()];
    expect(name!.endsWith(NODE_TAIL), name).toBe(true);
    expect(fs.statSync(path.join(cacheDir(), name!)).mode & 0o777).toBe(0o600);
    // `acp` is no run of a goal: the app's own cache is left to one.
    expect(appCaches().size).toBe(0);
    // V8 accepted it under the young-generation flag the run holds (src/main.ts): a refused cache
    // would be written again, under a new inode.
    await acp();
    await acp();
    expect(appCaches(VENDOR_ACP)).toEqual(written);
    // Damaged, it is refused, the editor is answered all the same, and it is written whole again.
    const damage = Buffer.alloc(4096, 0x5a);
    fs.writeFileSync(path.join(cacheDir(), name!), damage);
    await acp();
    const again = fs.readFileSync(path.join(cacheDir(), name!));
    expect(again.length).toBeGreaterThan(10_000);
    expect(again.subarray(0, damage.length).equals(damage)).toBe(false);
  });

  /** `scoot acp` from a copy of the build under the repository (its packages resolve from there), changed by `alter`. */
  async function acpFromCopy(alter: (dist: string) => void) {
    fs.mkdirSync(path.join(REPO_ROOT, ".tmp"), { recursive: true });
    const copy = fs.mkdtempSync(path.join(REPO_ROOT, ".tmp", "vendor-copy-"));
    try {
      const dist = path.join(copy, "dist");
      fs.cpSync(path.join(REPO_ROOT, "dist"), dist, { recursive: true });
      alter(dist);
      const r = await collect(
        spawn(process.execPath, [path.join(dist, "scoot.cjs"), "acp"], {
          cwd: scene.project,
          env: cleanEnv({ SCOOT_HOME: scene.home, SCOOT_COMPILE_CACHE: undefined }),
        }),
        { input: "" },
      );
      return { ...r, dist };
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  }

  it("a vendored file missing from the install is named, with the fix", async () => {
    needsBuiltCli();
    const r = await acpFromCopy((dist) => fs.rmSync(path.join(dist, "vendor", "acp.cjs")));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${path.join(r.dist, "vendor", "acp.cjs")} is missing (the build bundles @agentclientprotocol/sdk there): reinstall Scoot, or run npm run build in its checkout`,
    );
  });

  it.each(["../../planted.cjs", "/tmp/planted.cjs", "acp.cjs/../../planted.cjs", "ACP.CJS", "acp.js"])(
    "a vendor map naming %j, not a file of the build, is refused before anything loads",
    async (name) => {
      needsBuiltCli();
      const planted = path.join(REPO_ROOT, ".tmp", `planted-${process.pid}`);
      const r = await acpFromCopy((dist) => {
        // Code outside the vendor directory that would leave a mark if it ran.
        const code = `require("node:fs").writeFileSync(${JSON.stringify(planted)}, "ran");`;
        fs.writeFileSync(path.join(dist, "planted.cjs"), code);
        fs.writeFileSync("/tmp/planted.cjs", code);
        const map = path.join(dist, "vendor", "map.json");
        const entries = JSON.parse(fs.readFileSync(map, "utf8")) as Record<string, string>;
        entries["@agentclientprotocol/sdk"] = name;
        fs.writeFileSync(map, JSON.stringify(entries));
      });
      try {
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(
          `${path.join(r.dist, "vendor", "map.json")}: "@agentclientprotocol/sdk" maps to ${JSON.stringify(name)}, not a file of the build`,
        );
        expect(fs.existsSync(planted)).toBe(false);
      } finally {
        fs.rmSync(planted, { force: true });
        fs.rmSync("/tmp/planted.cjs", { force: true });
      }
    },
  );

  it("a damaged cache is refused by V8 and written whole again; the run is unharmed", async () => {
    needsBuiltCli();
    await trivialRun();
    await trivialRun();
    const [name] = [...appCaches().keys()];
    const file = path.join(cacheDir(), name!);
    const damage = Buffer.alloc(4096, 0x5a);
    fs.writeFileSync(file, damage);
    await trivialRun();
    const again = fs.readFileSync(file);
    expect(again.length).toBeGreaterThan(10_000);
    expect(again.subarray(0, damage.length).equals(damage)).toBe(false);
    const rewritten = appCaches();
    await trivialRun();
    expect(appCaches()).toEqual(rewritten);
  });

  it("another build's file of this Node is removed when this build's is written; another Node's stays", async () => {
    needsBuiltCli();
    await trivialRun();
    const dir = cacheDir();
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const olderBuild = `scoot-app-1-2-3${NODE_TAIL}`;
    const otherNode = `scoot-app-1-2-3-v0.0.1-${process.arch}.v8`;
    fs.writeFileSync(path.join(dir, olderBuild), "old");
    fs.writeFileSync(path.join(dir, otherNode), "other");
    await trivialRun();
    const names = [...appCaches().keys()];
    expect(names).not.toContain(olderBuild);
    expect(names).toContain(otherNode);
    expect(names.filter((n) => n !== otherNode)).toHaveLength(1);
  });
});
