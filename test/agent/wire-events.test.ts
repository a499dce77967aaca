/**
 * Events carry the call's record, not its name and text beside it (src/agent/events.ts); the
 * wire (serve's `run.stream`, docs/editors.md) keeps the fields it always had, read from the
 * record: these are their exact shapes.
 */
import { describe, expect, it } from "vitest";
import type { Prepared, Ready } from "../../src/agent/call-record.js";
import { type AgentEvent, wireEvent } from "../../src/agent/events.js";
import { preparedCall } from "../helpers/calls.js";

const ready = preparedCall("bash", "echo hi") as Ready;
const denied = preparedCall("bash", "rm -rf x", { mode: "readonly" });
const invalid = preparedCall("no_such_tool", "{}");

function asDenial(p: Prepared): Prepared & { kind: "denied" | "invalid" } {
  if (p.kind === "ready") throw new Error("expected a denial");
  return p;
}

describe("wire events", () => {
  it.each<[string, AgentEvent, Record<string, unknown>]>([
    [
      "a call's step",
      { type: "step", turn: 2, thought: "look", call: ready },
      { type: "step", turn: 2, thought: "look", action: "bash", input: "echo hi" },
    ],
    [
      "a final step",
      { type: "step", turn: 3, thought: "done", action: "final", input: "the answer" },
      { type: "step", turn: 3, thought: "done", action: "final", input: "the answer" },
    ],
    [
      "a denial",
      { type: "deny", call: asDenial(denied) },
      {
        type: "deny",
        action: "bash",
        input: "rm -rf x",
        reason: (denied as { reason: string }).reason,
      },
    ],
    [
      "an invalid call",
      { type: "deny", call: asDenial(invalid) },
      { type: "deny", action: "no_such_tool", input: "{}", reason: (invalid as { error: string }).error },
    ],
    ["running", { type: "running", call: ready }, { type: "running", action: "bash", input: "echo hi" }],
    [
      "output lines",
      { type: "tool_output", lines: ["a"], call: ready },
      { type: "tool_output", action: "bash", lines: ["a"] },
    ],
    [
      "a refusal with a reason",
      { type: "refused", call: { ...ready, approval: { answer: "refuse", reason: "not now" } } },
      { type: "refused", action: "bash", input: "echo hi", reason: "not now" },
    ],
    [
      "a refusal without one",
      { type: "refused", call: { ...ready, approval: { answer: "refuse" } } },
      { type: "refused", action: "bash", input: "echo hi" },
    ],
    [
      "an observation",
      { type: "observation", bytes: 9, clippedTo: 5, call: { ...ready, shown: "hi" } },
      { type: "observation", action: "bash", bytes: 9, clippedTo: 5, text: "hi" },
    ],
    [
      "a file change",
      { type: "file_changed", path: "a.txt", before: null, after: "x", call: ready },
      { type: "file_changed", path: "a.txt", before: null, after: "x" },
    ],
  ])("%s", (_name, event, wire) => {
    const sent = wireEvent(event);
    expect(sent).toStrictEqual(wire);
    // Nothing of the record leaves the process.
    expect(JSON.stringify(sent)).not.toContain("presentation");
  });
});
