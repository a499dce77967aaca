/**
 * The in-process scripted backend (test/helpers/scripted-backend.ts) stands in for the
 * loopback server and the real client: the same script drives the same run either way — the
 * same result, the same audit kinds, the same messages in every request. If the two drift
 * apart, a loop test in process would no longer say what the end-to-end run does.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBackend } from "../../src/backend/client.js";
import { removeDir, tempDir } from "../helpers/cli.js";
import { loopHarness } from "../helpers/loop.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

let project: string;
beforeEach(() => {
  project = tempDir("scoot-switch-");
  fs.writeFileSync(path.join(project, "notes.txt"), "alpha\nbeta\n");
});
afterEach(() => removeDir(project));

const script = (): ScriptItem[] => [
  step("glob", { pattern: "*.txt" }),
  step("file_read", { path: ".env" }),
  { reply: "no step here" },
  step("file_read", { path: "notes.txt" }),
  step("final", "two lines"),
];

describe("in process or over the loopback server", () => {
  it("one script gives the same run: result, audit kinds and request messages", async () => {
    const inProcess = loopHarness(script(), { cwd: project, auditLevel: "info" });
    const a = await inProcess.run("read the notes");

    const server = await startScriptedServer(script());
    try {
      const wired = loopHarness([], {
        cwd: project,
        auditLevel: "info",
        configure: (c) => {
          c.backend.base_url = server.url;
          c.backend.max_retries = 0;
        },
      });
      wired.deps.backend = createBackend(wired.deps.config.backend, {});
      const b = await wired.run("read the notes");

      const shape = (r: typeof a) => ({ ...r, wallMs: 0, usage: undefined });
      expect(shape(a)).toEqual(shape(b));
      expect(a).toMatchObject({ status: "final", answer: "two lines", toolCalls: 2, denials: 1 });
      expect(inProcess.audit.kinds()).toEqual(wired.audit.kinds());
      const messages = (reqs: { body: unknown }[]) =>
        reqs.map((q) => (q.body as { messages: { role: string; content: string }[] }).messages);
      expect(messages(inProcess.backend.completions())).toEqual(messages(server.completions()));
      expect(inProcess.backend.completions()).toHaveLength(5);
    } finally {
      await server.close();
    }
  });
});
