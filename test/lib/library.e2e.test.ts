/**
 * The library API from outside: `npm pack` the built package, install the tarball
 * into a separate ESM project in a temp dir, and drive it there — a run against the scripted
 * model server, a cancel through an AbortSignal, the audit written, nothing on stdout — and
 * type-check a TypeScript consumer against the shipped declarations. The same tarball ships the
 * license (one `npm pack` for both: each npm process costs seconds of CPU).
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { needsBuiltCli, REPO_ROOT, removeDir, tempDir } from "../helpers/cli.js";
import { processesWith, uniqueSleepArg } from "../helpers/procs.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

let consumer: string;
/** The tarball `npm pack` made, in the consumer's directory. */
let packed: string;
let home: string;
let server: ScriptedServer;

beforeAll(async () => {
  needsBuiltCli("lib/index.js");
  consumer = tempDir("scoot-lib-consumer-");
  home = tempDir("scoot-lib-home-");
  packed = execFileSync("npm", ["pack", "--silent", "--pack-destination", consumer], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .at(-1)!;
  fs.writeFileSync(
    path.join(consumer, "package.json"),
    JSON.stringify({ name: "scoot-consumer", private: true, type: "module" }),
  );
  // The dependencies come from the npm cache when it has them (the registry otherwise).
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", `./${packed}`], {
    cwd: consumer,
    stdio: "ignore",
  });
  server = await startScriptedServer();
}, 180_000);
afterAll(async () => {
  await server?.close();
  removeDir(consumer);
  removeDir(home);
});

/** Runs a script in the consumer project; returns its stdout, stderr and exit code. */
function runConsumer(file: string, source: string, env: Record<string, string>) {
  fs.writeFileSync(path.join(consumer, file), source);
  const child = spawn(process.execPath, [file], {
    cwd: consumer,
    env: { ...process.env, ...env, SCOOT_HOME: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
}

describe("the packed package", () => {
  it("ships LICENSE with the text of package.json's license, and the vendored packages' licenses", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
      license: string;
      files: string[];
    };
    expect(pkg.license).toBe("MIT");
    expect(pkg.files).toContain("LICENSE");
    // `tar -tvzf`: mode, owner, size, date, time, path.
    const listed = new Map(
      execFileSync("tar", ["-tvzf", path.join(consumer, packed)], { encoding: "utf8" })
        .trim()
        .split("\n")
        .map((line) => line.trim().split(/\s+/))
        .map((f) => [f.slice(5).join(" "), Number(f[2])] as const),
    );
    const text = fs.readFileSync(path.join(REPO_ROOT, "LICENSE"), "utf8");
    expect(listed.get("package/LICENSE"), "LICENSE is not in the tarball").toBe(Buffer.byteLength(text));
    expect(text.split("\n")[0]).toBe("MIT License");
    expect(text).toMatch(/^Copyright \(c\) \d{4} .+$/m);
    expect(text.replace(/\s+/g, " ")).toContain(
      'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED',
    );
    expect(listed.get("package/dist/vendor/LICENSES.txt")).toBe(
      fs.statSync(path.join(REPO_ROOT, "dist", "vendor", "LICENSES.txt")).size,
    );
    expect(listed.has("package/dist/vendor/acp.cjs")).toBe(true);
  });
});

describe("the packed library in a separate ESM project", () => {
  it("runs a goal against the scripted server: answer, ids, usage, audit; nothing on stdout", async () => {
    fs.writeFileSync(path.join(consumer, "data.txt"), "forty-two\n");
    server.push(
      {
        reply: {
          thought: "read it",
          action: "file_read",
          action_input: JSON.stringify({ path: "data.txt" }),
        },
      },
      { reply: { thought: "done", action: "final", action_input: "the file says forty-two" } },
    );
    const r = await runConsumer(
      "run.mjs",
      `import fs from "node:fs";
import { createScoot } from "scoot";
const events = [];
const scoot = createScoot({ home: process.env.T_HOME, env: { ...process.env, SCOOT_BACKEND_BASE_URL: process.env.T_URL } });
const out = await scoot.run("what does data.txt say?", { onEvent: (e) => events.push(e.type) });
await scoot.close();
fs.writeFileSync("run-result.json", JSON.stringify({ out, events, policy: scoot.policy }));
`,
      { T_HOME: home, T_URL: server.url },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    const { out, events, policy } = JSON.parse(
      fs.readFileSync(path.join(consumer, "run-result.json"), "utf8"),
    );
    expect(policy).toBe("guarded");
    expect(out).toMatchObject({
      answer: "the file says forty-two",
      status: "final",
      stop: "final",
      turns: 2,
    });
    expect(out.sessionId).toMatch(/^lib-/);
    expect(out.runId).toMatch(/^run-/);
    expect(out.usage.total_tokens).toBeGreaterThan(0);
    expect(events).toEqual(expect.arrayContaining(["run", "step", "running", "observation", "final"]));
    const audit = auditEvents(home).filter((e) => e.session_id === out.sessionId);
    // `backend` lines are debug level: not in the default audit.
    expect(audit.map((e) => e.kind)).toEqual([
      "run",
      "thought",
      "tool_call",
      "observation",
      "thought",
      "final",
    ]);
    expect(audit.every((e) => e.run_id === out.runId)).toBe(true);
    expect(fs.existsSync(path.join(home, "state", "sessions", `${out.sessionId}.jsonl`))).toBe(true);
  });

  it("an AbortSignal cancels like Ctrl-C: the tool's process is gone, the run audited as interrupted", async () => {
    const sleepS = 30;
    const tag = uniqueSleepArg(sleepS);
    server.push({ reply: { thought: "wait", action: "bash", action_input: `sleep ${tag}` } });
    const r = await runConsumer(
      "cancel.mjs",
      `import fs from "node:fs";
import { createScoot } from "scoot";
const scoot = createScoot({ home: process.env.T_HOME, policy: "unrestricted", env: { ...process.env, SCOOT_BACKEND_BASE_URL: process.env.T_URL } });
const controller = new AbortController();
const started = Date.now();
const out = await scoot.run("wait a while", {
  signal: controller.signal,
  onEvent: (e) => { if (e.type === "running") setTimeout(() => controller.abort(), 500); },
});
const tookMs = Date.now() - started;
await scoot.close();
fs.writeFileSync("cancel-result.json", JSON.stringify({ out, tookMs }));
`,
      { T_HOME: home, T_URL: server.url },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    const { out, tookMs } = JSON.parse(fs.readFileSync(path.join(consumer, "cancel-result.json"), "utf8"));
    expect(out.status).toBe("interrupted");
    expect(out.stop).toBe("interrupted");
    expect(out.answer).toBeUndefined();
    // Relative to the sleep it cuts short: waiting for it would take its whole 30 s.
    expect(tookMs).toBeLessThan((sleepS * 1000 * 2) / 3);
    expect(processesWith(tag)).toEqual([]);
    const audit = auditEvents(home).filter((e) => e.session_id === out.sessionId);
    expect(audit.some((e) => e.kind === "tool_call" && e.msg.includes(tag))).toBe(true);
    expect(audit.at(-1)).toMatchObject({ kind: "system_error", msg: "interrupted" });
  });

  it("close() during a run cancels it and waits until the tool is gone; later runs are refused", async () => {
    const tag = uniqueSleepArg(30);
    server.push({ reply: { thought: "wait", action: "bash", action_input: `sleep ${tag}` } });
    const r = await runConsumer(
      "close.mjs",
      `import fs from "node:fs";
import { createScoot } from "scoot";
const scoot = createScoot({ home: process.env.T_HOME, policy: "unrestricted", env: { ...process.env, SCOOT_BACKEND_BASE_URL: process.env.T_URL } });
let closing;
const out = await scoot.run("wait", { onEvent: (e) => { if (e.type === "running") closing = new Promise((r) => setTimeout(r, 300)).then(() => scoot.close()); } });
await closing;
let refused = "";
await scoot.run("again").catch((e) => { refused = e.message; });
fs.writeFileSync("close-result.json", JSON.stringify({ out, refused }));
`,
      { T_HOME: home, T_URL: server.url },
    );
    expect(r.code, r.stderr).toBe(0);
    const { out, refused } = JSON.parse(fs.readFileSync(path.join(consumer, "close-result.json"), "utf8"));
    expect(out.status).toBe("interrupted");
    expect(out.stop).toBe("interrupted");
    expect(refused).toMatch(/closed/);
    expect(processesWith(tag)).toEqual([]);
  });

  it("bad options are clear errors; the shipped types check in a TypeScript consumer", async () => {
    const r = await runConsumer(
      "bad.mjs",
      `import { createScoot, version } from "scoot";
console.error(\`version=\${version}\`);
try { createScoot({ home: process.env.T_HOME, policy: "root" }); } catch (e) { console.error(e.message); }
try { createScoot({ home: process.env.T_HOME, configFile: "/nonexistent/scoot.toml" }); } catch (e) { console.error(e.message); }
`,
      { T_HOME: home, T_URL: server.url },
    );
    expect(r.stderr).toContain('unknown policy "root"');
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    expect(r.stderr).toContain(`version=${pkg.version}`);
    expect(r.stderr).toContain("config file /nonexistent/scoot.toml does not exist");
    const { output } = await consumerTypes();
    expect(diagnosticsOf(output, "typed.ts")).toEqual([]);
    expect(diagnosticsBesides(output, "policy-typo.ts")).toEqual([]);
  }, 60_000);

  it("policy is a closed set in the shipped types: a typo fails tsc, the right value compiles", async () => {
    const { code, output } = await consumerTypes();
    expect(code).not.toBe(0);
    expect(output).toMatch(
      /policy-typo\.ts\(2,\d+\): error TS2\d+: Type '"unrestriced"' is not assignable to type 'PolicyChoice \| undefined'/,
    );
    expect(diagnosticsOf(output, "policy-right.ts")).toEqual([]);
    expect(diagnosticsBesides(output, "policy-typo.ts")).toEqual([]);
  }, 60_000);
});

/** The TypeScript consumer files: closed sets that must not compile, and right values that must. */
const CONSUMER_TYPES: Record<string, string> = {
  "typed.ts": `import { createScoot, type RunOutcome, type RunStop } from "scoot";
const scoot = createScoot({ policy: "readonly" });
const out: RunOutcome = await scoot.run("x", { sessionId: "s1", signal: new AbortController().signal });
const answer: string | undefined = out.answer;
// @ts-expect-error the status is a closed set
const wrong: "done" = out.status;
const stop: RunStop = out.stop;
// @ts-expect-error the stop reason is a closed set too
const wrongStop: "stopped" = out.stop;
export { answer, wrong, stop, wrongStop };
`,
  "policy-typo.ts": `import { createScoot, type PolicyChoice } from "scoot";
const scoot = createScoot({ policy: "unrestriced" });
const chosen: PolicyChoice = "yolo";
export { scoot, chosen };
`,
  // The four right values in one file.
  "policy-right.ts": `import { createScoot, type PolicyChoice } from "scoot";\n${[
    "readonly",
    "guarded",
    "unrestricted",
    "yolo",
  ]
    .map((policy, i) => `export const s${i} = createScoot({ policy: "${policy}" });\n`)
    .join("")}export const chosen: PolicyChoice = "yolo";\n`,
};

/**
 * One tsc run over every consumer file, shared by the tests that read it: each run takes seconds on
 * a busy machine. tsc names the file of each diagnostic, so each test reads its own files' lines.
 */
let consumerTypesRun: Promise<{ code: unknown; output: string }> | undefined;
function consumerTypes(): Promise<{ code: unknown; output: string }> {
  if (consumerTypesRun === undefined) {
    for (const [file, source] of Object.entries(CONSUMER_TYPES)) {
      fs.writeFileSync(path.join(consumer, file), source);
    }
    consumerTypesRun = typeCheck(...Object.keys(CONSUMER_TYPES));
  }
  return consumerTypesRun;
}

/** The first lines of tsc's diagnostics (a diagnostic's further lines are indented). */
function diagnostics(output: string): string[] {
  return output.split("\n").filter((line) => line !== "" && !/^\s/.test(line));
}

/** The diagnostics about one file (each starts with its file name). */
function diagnosticsOf(output: string, file: string): string[] {
  return diagnostics(output).filter((line) => line.startsWith(`${file}(`));
}

/** Every diagnostic not about this file: any, in any file, is a failure of the test that asks. */
function diagnosticsBesides(output: string, file: string): string[] {
  return diagnostics(output).filter((line) => !line.startsWith(`${file}(`));
}

/** `tsc --noEmit --strict` on files of the consumer project, against the installed tarball's types. */
async function typeCheck(...files: string[]): Promise<{ code: unknown; output: string }> {
  const tsc = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
  const args = [
    "--noEmit",
    "--strict",
    "--module",
    "nodenext",
    "--moduleResolution",
    "nodenext",
    "--target",
    "es2022",
  ];
  const typeRoots = ["--typeRoots", path.join(REPO_ROOT, "node_modules", "@types"), "--types", "node"];
  const checked = spawn(process.execPath, [tsc, ...args, ...typeRoots, ...files], { cwd: consumer });
  let output = "";
  checked.stdout.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const code = await new Promise((resolve) => checked.on("close", resolve));
  return { code, output };
}
