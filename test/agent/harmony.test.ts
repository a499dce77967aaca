/**
 * gpt-oss Harmony replies (the format of openai/harmony, as llama.cpp returns it without its
 * parser): only the final channel is the reply; the analysis channel is thinking, kept out of the
 * history, and a draft step inside it is never run; a commentary message addressed
 * `to=functions.<tool>` is read as that call; no special token is ever sent back.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readHarmony } from "../../src/agent/think.js";
import { loopHarness } from "../helpers/loop.js";
import { step } from "../helpers/scripted-server.js";

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-harmony-")));
fs.writeFileSync(path.join(project, "notes.txt"), "harmony read this\n");
afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

const SPECIAL = /<\|(start|end|message|channel|constrain|return|call)\|>/;
const ANALYSIS = "I should read the notes first. Draft: ";
const draft = JSON.stringify({ thought: "draft", action: "bash", action_input: "touch DRAFT" });
const finalStep = JSON.stringify({
  thought: "read the notes",
  action: "file_read",
  action_input: JSON.stringify({ path: "notes.txt" }),
});
const HARMONY_REPLY = `<|channel|>analysis<|message|>${ANALYSIS}${draft}<|end|><|start|>assistant<|channel|>final<|message|>${finalStep}<|return|>`;

describe("reading Harmony", () => {
  it("splits analysis from final and drops every special token", () => {
    const h = readHarmony(HARMONY_REPLY)!;
    expect(h.text).toBe(finalStep);
    expect(h.reasoning).toBe(`${ANALYSIS}${draft}`);
    expect(SPECIAL.test(h.text)).toBe(false);
  });

  it("a commentary call to a function is that call", () => {
    const h = readHarmony(
      '<|channel|>analysis<|message|>list it<|end|><|start|>assistant<|channel|>commentary to=functions.bash <|constrain|>json<|message|>{"command":"ls"}<|call|>',
    )!;
    expect(h.text).toBe("");
    expect(h.call).toEqual({ name: "bash", arguments: '{"command":"ls"}' });
  });

  it("text without Harmony markup is left alone", () => {
    expect(readHarmony('{"thought":"t","action":"final","action_input":"x"}')).toBeUndefined();
  });
});

describe("a Harmony run", () => {
  it("the next request carries no special token and no analysis; the draft step never ran", async () => {
    const h = loopHarness([{ reply: HARMONY_REPLY }, step("final", "done")], {
      cwd: project,
      mode: "unrestricted",
    });
    const r = await h.run("read the notes");
    expect(r.stop, r.error).toBe("final");
    const second = JSON.stringify(h.backend.calls[1]!.messages);
    expect(second).not.toMatch(SPECIAL);
    expect(second).not.toContain("I should read the notes first");
    expect(second).toContain("harmony read this");
    expect(fs.existsSync(path.join(project, "DRAFT"))).toBe(false);
    // The analysis is shown and audited as thinking.
    expect(
      h.events.some((e) => e.type === "thought_delta" && e.text.includes("I should read the notes first")),
    ).toBe(true);
  });

  it("streamed, the draft in the analysis is never shown as the step; the final step's thought is", async () => {
    const pieces = [HARMONY_REPLY.slice(0, 30), HARMONY_REPLY.slice(30, 110), HARMONY_REPLY.slice(110)];
    const h = loopHarness([{ stream: pieces }, step("final", "done")], {
      cwd: project,
      mode: "unrestricted",
    });
    const r = await h.run("read the notes");
    expect(r.stop, r.error).toBe("final");
    const shown = h.events.flatMap((e) =>
      e.type === "thought_delta" && e.source !== "reasoning" ? [e.text] : [],
    );
    expect(shown.join("")).toContain("read the notes");
    expect(shown.join("")).not.toContain("draft");
    expect(fs.existsSync(path.join(project, "DRAFT"))).toBe(false);
  });

  it("a commentary call runs as the tool call it is", async () => {
    const h = loopHarness(
      [
        {
          reply:
            '<|start|>assistant<|channel|>commentary to=functions.bash <|constrain|>json<|message|>{"command":"printf harmony-%s ok"}<|call|>',
        },
        step("final", "done"),
      ],
      { cwd: project, mode: "unrestricted" },
    );
    const r = await h.run("go");
    expect(r.stop, r.error).toBe("final");
    const obs = h.events.find((e) => e.type === "observation");
    expect(obs?.type === "observation" && obs.call.shown).toContain("harmony-ok");
    expect(JSON.stringify(h.backend.calls[1]!.messages)).not.toMatch(SPECIAL);
  });
});
