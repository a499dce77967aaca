/**
 * Calls in the shapes models send, read through each tool's own input declaration: the
 * `{name, arguments}` / `{name, parameters}` tool-call shapes (arguments as an object or as its
 * JSON text) and a step whose action_input is an object. A text-input tool takes its text from
 * its named field (bash ← `command`, final ← `answer` or `text`); a JSON text is never run as a
 * shell command, and an object that does not map is a correction naming the field.
 *
 * Attack first: before this mapping, every bash row below ran the JSON text itself, so the shell
 * executed `$(…)` inside the quoted values (`{"cmd": "echo $(touch PWNED)"}` created PWNED).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseStep } from "../../src/agent/step.js";
import { enabledTools } from "../../src/tools/registry.js";
import { loopHarness } from "../helpers/loop.js";
import { step } from "../helpers/scripted-server.js";

const tools = enabledTools({ hasMcp: false, hasSkills: false });
const reply = (v: unknown) => JSON.stringify(v);

type Row = [what: string, text: string, action: string, input: unknown];

const MAPPED: Row[] = [
  [
    "Hermes/Qwen {name, arguments} object",
    reply({ name: "bash", arguments: { command: "ls -la" } }),
    "bash",
    "ls -la",
  ],
  [
    "{name, arguments} as JSON text",
    reply({ name: "bash", arguments: JSON.stringify({ command: "git status" }) }),
    "bash",
    "git status",
  ],
  [
    "Llama {name, parameters}",
    reply({ name: "bash", parameters: { command: "echo hi" } }),
    "bash",
    "echo hi",
  ],
  [
    "inside <tool_call> tags",
    `<tool_call>\n${reply({ name: "bash", arguments: { command: "pwd" } })}\n</tool_call>`,
    "bash",
    "pwd",
  ],
  [
    "a step whose action_input is an object",
    reply({ thought: "t", action: "bash", action_input: { command: "npm test" } }),
    "bash",
    "npm test",
  ],
  [
    "a step whose action_input is the object's JSON text",
    reply({ thought: "t", action: "bash", action_input: JSON.stringify({ command: "make" }) }),
    "bash",
    "make",
  ],
  [
    "a brace group is a command, not JSON",
    reply({ thought: "t", action: "bash", action_input: "{ ls; pwd; }" }),
    "bash",
    "{ ls; pwd; }",
  ],
  ["final {answer}", reply({ name: "final", arguments: { answer: "done" } }), "final", "done"],
  ["final {text}", reply({ thought: "t", action: "final", action_input: { text: "ok" } }), "final", "ok"],
  [
    "final with another object is an answer in JSON, kept",
    reply({ thought: "t", action: "final", action_input: { result: 42 } }),
    "final",
    '{"result":42}',
  ],
  [
    "a JSON tool's arguments are its fields",
    reply({ name: "file_read", arguments: { path: "README.md" } }),
    "file_read",
    { path: "README.md" },
  ],
];

const CORRECTED: [what: string, text: string, says: RegExp][] = [
  ["an unknown field", reply({ name: "bash", arguments: { cmd: "echo $(touch PWNED)" } }), /"command"/],
  [
    "an extra field beside the command",
    reply({ thought: "t", action: "bash", action_input: { command: "ls", timeout: 5 } }),
    /got a JSON object with the keys "command", "timeout"/,
  ],
  [
    "a command that is not a string",
    reply({ name: "bash", arguments: { command: ["rm", "-rf", "/"] } }),
    /"command"/,
  ],
  ["an empty object", reply({ name: "bash", parameters: {} }), /no keys/],
  [
    "arguments as JSON text with the wrong field",
    reply({ name: "bash", arguments: '{"script":"id"}' }),
    /"script"/,
  ],
];

describe("a call is mapped to the tool's declared input, never run as text", () => {
  it.each(MAPPED)("%s", (_what, text, action, input) => {
    const r = parseStep(text, tools);
    expect(r.ok, r.ok ? "" : r.error).toBe(true);
    if (!r.ok) return;
    expect(r.value.action).toBe(action);
    expect(r.value.input).toEqual(input);
  });

  it.each(CORRECTED)("%s is a correction naming the field", (_what, text, says) => {
    const r = parseStep(text, tools);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(says);
    expect(r.error).toContain("bash");
  });
});

describe("through the real loop and a real shell", () => {
  const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-call-shapes-")));
  afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

  it("the command the model meant runs; an object that does not map runs nothing and is corrected", async () => {
    const h = loopHarness(
      [
        { reply: { name: "bash", arguments: { cmd: "echo $(touch PWNED)" } } },
        { reply: { name: "bash", arguments: { command: "printf mapped-%s ok" } } },
        step("final", "done"),
      ],
      { cwd: project, mode: "unrestricted" },
    );
    const r = await h.run("list");
    expect(r.stop).toBe("final");
    // Nothing ran the JSON text: its substitution never executed.
    expect(fs.existsSync(path.join(project, "PWNED"))).toBe(false);
    const malformed = h.events.find((e) => e.type === "malformed");
    expect(malformed?.type === "malformed" && malformed.error).toMatch(/"command"/);
    const observation = h.events.find((e) => e.type === "observation");
    expect(observation?.type === "observation" && observation.call.shown).toContain("mapped-ok");
    expect(observation?.type === "observation" && observation.call.shown).not.toContain("not found");
  });
});
