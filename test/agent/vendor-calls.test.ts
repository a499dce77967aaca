/**
 * Tool calls in the formats chat templates teach (test/fixtures/replies/vendor-calls.json, each
 * with the template or parser it comes from): each is read as the call it is, through the tool's
 * own declaration (bash's command from its `command` field, never the JSON text), and a name
 * that is not an enabled action is a correction naming the format. A valid Scoot step is never
 * read as a vendor format, even when its thought mentions one.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseStep } from "../../src/agent/step.js";
import { enabledTools } from "../../src/tools/registry.js";
import { REPO_ROOT } from "../helpers/cli.js";

interface Row {
  format: string;
  source: string;
  text: string;
  action: string;
  input: unknown;
}

const ROWS: Row[] = JSON.parse(
  fs.readFileSync(path.join(REPO_ROOT, "test/fixtures/replies/vendor-calls.json"), "utf8"),
) as Row[];
const tools = enabledTools({ hasMcp: false, hasSkills: false });

describe("vendor tool-call formats are read as the call they carry", () => {
  it.each(ROWS.map((r) => [r.format, r] as const))("%s", (_format, row) => {
    const r = parseStep(row.text, tools);
    expect(r.ok, r.ok ? "" : `${row.source}: ${r.error}`).toBe(true);
    if (!r.ok) return;
    expect(r.value.action).toBe(row.action);
    if (typeof row.input === "string") expect(r.value.input).toBe(row.input);
    else expect(r.value.input).toMatchObject(row.input as object);
    // A list of {name, arguments} is already the tool-call dialect; the rest are read by format.
    const notes = r.value.notes.join(" ");
    if (!notes.includes('accepted the {"name", "arguments"} tool-call dialect'))
      expect(notes).toContain(`read the ${row.format} tool-call format as the step`);
  });

  it("every format in the fixture is a different one", () => {
    expect(new Set(ROWS.map((r) => r.format)).size).toBe(ROWS.length);
  });

  it("a name that is not an enabled action is a correction naming the format", () => {
    const r = parseStep('<function=delete_everything>{"path": "/"}</function>', tools);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/Llama <function=…> tool-call format with the name "delete_everything"/);
  });

  it("a bash call whose arguments do not map is a correction, not a command", () => {
    const r = parseStep('[TOOL_CALLS]bash[ARGS]{"cmd": "echo $(touch PWNED)"}', tools);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/"command"/);
  });

  it("a valid step that mentions a format in its thought stays that step", () => {
    const step = JSON.stringify({
      thought: 'models write [TOOL_CALLS]bash[ARGS]{"command":"rm -rf /"} or <function=bash>',
      action: "glob",
      action_input: JSON.stringify({ pattern: "*.md" }),
    });
    const r = parseStep(step, tools);
    expect(r.ok && r.value.action).toBe("glob");
  });

  it("prose followed by JSON is not GLM's name-then-JSON unless the name is an action", () => {
    const r = parseStep('Here you go\n{"path": "x"}', tools);
    expect(r.ok).toBe(false);
  });
});
