import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import type { SandboxService } from "../../src/sandbox/launch.js";
import { bashTool } from "../../src/tools/bash.js";
import type { ToolContext } from "../../src/tools/types.js";
import { bwrapWorks } from "../helpers/procs.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

const BWRAP = bwrapWorks();
if (!BWRAP) console.log("bash sandbox tests: skipped, bwrap cannot run here (apt-get install bubblewrap)");

let project: string;
let outside: string;
beforeAll(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bsb-"));
  outside = fs.mkdtempSync(path.join("/var/tmp", "scoot-bsb-out-"));
});
afterAll(() => {
  fs.rmSync(project, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

type Tools = ReturnType<typeof defaultConfig>["tools"];
function ctx(tools: Partial<Tools> = {}, over: Partial<ToolContext> = {}, service?: Partial<SandboxService>) {
  const config = defaultConfig();
  Object.assign(config.tools, tools);
  return makeToolContext({
    cwd: project,
    config,
    timeoutMs: 20_000,
    services: {
      sandbox: {
        scootHome: path.join(outside, "scoot-home"),
        tokenFile: path.join(outside, "scoot-home", "token"),
        unattended: false,
        ...service,
      },
    },
    ...over,
  });
}

/** Live (not zombie) processes whose command line contains `needle`. */
function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, "latin1").replace(/\0/g, " ");
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "latin1");
      if (cmd.includes(needle) && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z") found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}
let tagCounter = 0;
const tag = () => `${process.pid}${++tagCounter}${Date.now() % 1000}`;

describe("tools.sandbox when bwrap is missing (tools.sandbox_bwrap_path names nothing)", () => {
  const noBwrap = {};
  const missing = { sandbox_bwrap_path: "/nonexistent-scoot-bin/bwrap" };
  it('"bwrap" denies the call with a clear observation and does not run the command', async () => {
    const marker = path.join(project, "ran-bwrap-mode");
    const obs = await runTool(bashTool, `echo x > ${marker}`, ctx({ sandbox: "bwrap", ...missing }, noBwrap));
    expect(obs).toMatch(
      /^bash: denied: tools.sandbox = "bwrap" but the sandbox cannot start: tools.sandbox_bwrap_path = \/nonexistent-scoot-bin\/bwrap is not an executable file/,
    );
    expect(obs).toContain("apt-get install bubblewrap");
    expect(obs).toContain("The command was not run");
    expect(fs.existsSync(marker)).toBe(false);
  });
  it('"auto" runs the command unsandboxed and says so once per session', async () => {
    const notes: string[] = [];
    const c = ctx({ sandbox: "auto", ...missing }, noBwrap, { notify: (m) => notes.push(m) });
    const marker = path.join(outside, "ran-auto-mode");
    expect(await runTool(bashTool, `echo x > ${marker}`, c)).toContain("exit code: 0");
    expect(await runTool(bashTool, "true", c)).toContain("exit code: 0");
    expect(fs.existsSync(marker)).toBe(true);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/sandbox unavailable.*apt-get install bubblewrap/);
  });
});

describe.skipIf(!BWRAP)("which runs are sandboxed", () => {
  const probe = () => `echo x > ${path.join(outside, `w-${tag()}`)} && echo WROTE`;
  it("guarded: sandboxed", async () => {
    expect(await runTool(bashTool, probe(), ctx())).toMatch(/Read-only file system/);
  });
  it('"off": not sandboxed', async () => {
    expect(await runTool(bashTool, probe(), ctx({ sandbox: "off" }))).toContain("WROTE");
  });
  it("unrestricted at the keyboard: not sandboxed", async () => {
    expect(await runTool(bashTool, probe(), ctx({}, { mode: "unrestricted" }))).toContain("WROTE");
  });
  it("unrestricted but unattended (a job): sandboxed", async () => {
    const obs = await runTool(bashTool, probe(), ctx({}, { mode: "unrestricted" }, { unattended: true }));
    expect(obs).toMatch(/Read-only file system/);
  });
});

describe.skipIf(!BWRAP)("inside the sandbox", () => {
  it("secret-looking variables are gone unless passed through; ordinary ones stay", async () => {
    const c = ctx(
      { env_passthrough: ["KEEP_TOKEN"] },
      { childEnv: { ...process.env, DEPLOY_TOKEN: "dtok", KEEP_TOKEN: "ktok", PLAIN_VAR: "plain" } },
    );
    const obs = await runTool(bashTool, 'echo "[$DEPLOY_TOKEN][$KEEP_TOKEN][$PLAIN_VAR]"', c);
    expect(obs).toContain("[][ktok][plain]");
  });
  it("a secret file inside the project reads as empty and cannot be written", async () => {
    fs.writeFileSync(path.join(project, "prod.pem"), "PRIVATE\n");
    const obs = await runTool(
      bashTool,
      "cat prod.pem; echo again > prod.pem",
      ctx({ secret_paths: ["prod.pem"] }),
    );
    expect(obs).not.toContain("PRIVATE");
    expect(fs.readFileSync(path.join(project, "prod.pem"), "utf8")).toBe("PRIVATE\n");
  });
  it("a symlink in the project pointing at a secret outside does not reveal it", async () => {
    fs.writeFileSync(path.join(outside, "db.secret"), "HUNTER2\n");
    fs.symlinkSync(path.join(outside, "db.secret"), path.join(project, "innocent.txt"));
    const obs = await runTool(
      bashTool,
      "cat innocent.txt",
      ctx({ secret_paths: [path.join(outside, "db.secret")] }),
    );
    expect(obs).not.toContain("HUNTER2");
  });
  it("tools.sandbox_network = true reaches a 127.0.0.1 listener; the default does not", async () => {
    const listener = net.createServer((s) => s.end("pong\n"));
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as net.AddressInfo).port;
    const js = `require('net').connect(${port},'127.0.0.1').on('data',d=>{process.stdout.write('GOT '+d);process.exit(0)}).on('error',e=>{console.log('ERR '+e.code);process.exit(3)})`;
    try {
      expect(
        await runTool(bashTool, `${process.execPath} -e "${js}"`, ctx({ sandbox_network: true })),
      ).toContain("GOT pong");
      expect(await runTool(bashTool, `${process.execPath} -e "${js}"`, ctx())).toContain("ERR ");
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });
  it("a background child (even one that called setsid) is gone when the call returns", async () => {
    const t = tag();
    const obs = await runTool(bashTool, `sleep 400.${t} & setsid sleep 401.${t} & echo started`, ctx());
    expect(obs).toContain("started");
    const left = [...processesWith(`sleep 400.${t}`), ...processesWith(`sleep 401.${t}`)];
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
  });
  it("the deadline kills the whole tree, a grandchild that ignores SIGTERM included", async () => {
    const t = tag();
    const obs = await runTool(
      bashTool,
      `sh -c 'trap "" TERM; setsid sleep 402.${t} & sleep 403.${t}' & wait`,
      ctx({}, { timeoutMs: 800 }),
    );
    expect(obs).toContain("timed out after 800 ms (process group terminated)");
    const left = [...processesWith(`sleep 402.${t}`), ...processesWith(`sleep 403.${t}`)];
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
  });
});

describe("a bwrap rewritten in place after its trial", () => {
  it.skipIf(!BWRAP)("the next sandboxed call is refused, in bwrap and in auto", async () => {
    const copy = path.join(outside, "bwrap-inplace");
    fs.copyFileSync("/usr/bin/bwrap", copy);
    fs.chmodSync(copy, 0o755);
    const first = await runTool(
      bashTool,
      "echo contained",
      ctx({ sandbox: "bwrap", sandbox_bwrap_path: copy }),
    );
    expect(first).toMatch(/^exit code: 0/);
    const st = fs.statSync(copy);
    const fd = fs.openSync(copy, "r+");
    fs.writeSync(fd, Buffer.from('#!/bin/sh\nshift $(($#-1)); exec /bin/sh -c "$1"\n'), 0, undefined, 0);
    fs.closeSync(fd);
    fs.utimesSync(copy, st.atime, st.mtime);
    for (const sandbox of ["bwrap", "auto"] as const) {
      const out = await runTool(bashTool, "echo ran", ctx({ sandbox, sandbox_bwrap_path: copy }));
      expect(out).toMatch(
        /^bash: denied: the sandbox binary is not trusted: .*bwrap-inplace was rewritten in place since it was checked .*Fix: reinstall bubblewrap/,
      );
      expect(out).not.toMatch(/^ran/m);
    }
  });
});
