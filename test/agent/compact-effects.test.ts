/** The compactor learns what an old call read or wrote from its declared effects. */
import { expect, it } from "vitest";
import { extractiveSummary } from "../../src/agent/compact.js";
import type { Message } from "../../src/store/session.js";
import { stepText } from "../helpers/scripted-server.js";

const step = (action: string, input: unknown): Message => ({
  role: "assistant",
  content: stepText(action, input),
});
const obs = (text: string): Message => ({ role: "user", content: `Observation from x:\n${text}` });

it("reads, writes and commands come from effects; invalid old steps add nothing", () => {
  const summary = extractiveSummary([
    step("file_read", { path: "src/a.ts" }),
    obs("..."),
    step("grep", { pattern: "x", path: "src/b.ts" }),
    obs("..."),
    step("glob", { pattern: "*.md", root: "docs" }),
    obs("..."),
    step("file_edit", { path: "src/c.ts", old: "a", new: "b" }),
    obs("edited"),
    step("file_write", { path: "out.txt", content: "x" }),
    obs("wrote"),
    step("bash", "make test"),
    obs("exit code: 2"),
    step("file_read", { path: 7 }),
    obs("..."),
  ]);
  expect(summary).toContain("Files read: src/a.ts; src/b.ts; docs\n");
  expect(summary).toContain("Files changed: src/c.ts; out.txt\n");
  expect(summary).toContain("Commands: make test → exit code: 2");
  expect(summary).not.toContain("7");
});
