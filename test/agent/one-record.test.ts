/**
 * One call, one record, driven in process through the real loop: the record the pipeline
 * prepares is what the live view, the keyboard's question, the editor's tool call and
 * permission request, the transcript and undo show and act on.
 *
 * - A new tool is one file and one registry line: the fixture tool (test/fixtures/tools/stamp.ts)
 *   shows its own title and key argument in every front end, and no other file knows its name.
 * - A file_edit whose text is not in the file is never offered as a change (it failed before
 *   anyone was asked); the diff an editor approves is the bytes the tool then writes.
 * - The keyboard's question shows a script with a NUL byte as the text it is.
 * - Undo puts back what the record's checkpoint kept.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { PermissionOption, SessionUpdate, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AcpApprover } from "../../src/acp/approver.js";
import type { EditorLink } from "../../src/acp/editor-link.js";
import { UpdateTranslator } from "../../src/acp/updates.js";
import type { Ready } from "../../src/agent/call-record.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { type KeyboardIo, keyboardApprover } from "../../src/cli/approve-keyboard.js";
import { liveView } from "../../src/cli/view/live.js";
import type { Screen } from "../../src/cli/view/screen.js";
import { readCheckpoints } from "../../src/store/checkpoints.js";
import { applyUndo, planUndo } from "../../src/store/undo.js";
import { enabledTools } from "../../src/tools/registry.js";
import { stampTool } from "../fixtures/tools/stamp.js";
import { loopHarness } from "../helpers/loop.js";
import { step } from "../helpers/scripted-server.js";

let project: string;
let state: string;
beforeEach(() => {
  project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-one-record-")));
  state = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-one-record-state-"));
  fs.mkdirSync(path.join(state, "sessions"));
});
afterEach(() => {
  fs.rmSync(project, { recursive: true, force: true });
  fs.rmSync(state, { recursive: true, force: true });
});

/** A terminal that answers the keyboard approver's questions from a list. */
function terminal(answers: string[]): KeyboardIo & { shown: string } {
  const t = {
    shown: "",
    color: false,
    write(text: string) {
      t.shown += text;
    },
    async key() {
      return answers.shift();
    },
    size: () => ({ rows: 40, columns: 120 }),
  };
  return t;
}

/** The live view on a screen that keeps what it was given. */
function screenView() {
  const pieces: string[] = [];
  const keep = (t: string) => {
    pieces.push(t);
  };
  const screen: Screen = {
    out: keep,
    err: keep,
    styled: keep,
    status: () => {},
    footer: () => {},
    suspend: () => {},
    resume: () => {},
    live: false,
    columns: () => 80,
  };
  return { view: liveView(screen, { color: false, cwd: project }), shown: () => pieces.join("") };
}

/** An editor that answers every permission request with `optionId` and keeps what it was asked. */
function editor(optionId: string): EditorLink & { asked: ToolCallUpdate[]; options: PermissionOption[][] } {
  const asked: ToolCallUpdate[] = [];
  const options: PermissionOption[][] = [];
  return {
    asked,
    options,
    async requestPermission(toolCall, opts) {
      asked.push(toolCall);
      options.push(opts);
      return { outcome: "selected", optionId };
    },
  };
}

function acpSide(link: EditorLink) {
  const updates: SessionUpdate[] = [];
  const translator = new UpdateTranslator(project, (u) => updates.push(u), "t");
  const approver = new AcpApprover({
    link: () => link,
    toolCallFor: (r) => translator.toolCallFor(r),
    cwd: project,
  });
  return { updates, translator, approver };
}

const finalStep = step("final", "done");

describe("a new tool is one file and one registry line", () => {
  it("the fixture tool shows its own title in the live view, the keyboard's question and the editor", async () => {
    // The registry line: the built-in tools, and the new one.
    const tools = new Map(enabledTools({ hasMcp: false, hasSkills: false }));
    tools.set(stampTool.name, stampTool);
    const call = step("stamp", { path: "STAMP", label: "v1" });

    const keys = terminal(["y"]);
    const live = screenView();
    const h = loopHarness([call, finalStep], { cwd: project, tools, approver: keyboardApprover(keys) });
    const seen = h.deps.onEvent!;
    h.deps.onEvent = (e) => {
      seen(e);
      live.view.listener(e);
    };
    expect((await h.run("stamp it")).stop).toBe("final");
    expect(fs.readFileSync(path.join(project, "STAMP"), "utf8")).toBe("v1\n");
    expect(keys.shown).toContain("approve stamp STAMP ← v1? [y/a/n]");
    // Approved at the keyboard, the call is named by the question's ✓ line...
    expect(keys.shown).toContain("✓ stamp STAMP ← v1 · run once");
    expect(live.shown()).not.toContain("● stamp");
    // ...and where nobody is asked, by the live view's own line.
    const unasked = screenView();
    const h0 = loopHarness([call, finalStep], { cwd: project, tools });
    const seen0 = h0.deps.onEvent!;
    h0.deps.onEvent = (e) => {
      seen0(e);
      unasked.view.listener(e);
    };
    expect((await h0.run("stamp it unasked")).stop).toBe("final");
    expect(unasked.shown()).toContain("● stamp  STAMP ← v1");
    // The system prompt offers it from its declaration.
    expect(h.deps.history[0]!.content).toContain("Write a one-line stamp file.");

    const link = editor("allow_once");
    const acp = acpSide(link);
    const h2 = loopHarness([call, finalStep], { cwd: project, tools, approver: acp.approver });
    h2.deps.onEvent = (e) => acp.translator.handle(e);
    await h2.run("stamp it again");
    const toolCall = acp.updates.find((u) => u.sessionUpdate === "tool_call");
    expect(toolCall).toMatchObject({
      title: "Stamp STAMP with v1",
      kind: "edit",
      locations: [{ path: path.join(project, "STAMP") }],
      rawInput: { path: "STAMP", label: "v1" },
    });
    expect(link.asked[0]).toMatchObject({ title: "Stamp STAMP with v1", kind: "edit" });
  });
});

describe("the editor approves the change the tool makes", () => {
  it("a file_edit whose old text is not found is never offered, and fails with the tool's own words", async () => {
    fs.writeFileSync(path.join(project, "app.txt"), "one\ntwo\n");
    const link = editor("allow_once");
    const acp = acpSide(link);
    const h = loopHarness([step("file_edit", { path: "app.txt", old: "three", new: "3" }), finalStep], {
      cwd: project,
      approver: acp.approver,
    });
    h.deps.onEvent = (e) => {
      h.events.push(e);
      acp.translator.handle(e);
    };
    await h.run("edit");
    expect(link.asked).toEqual([]);
    expect(fs.readFileSync(path.join(project, "app.txt"), "utf8")).toBe("one\ntwo\n");
    const observation = h.events.find((e) => e.type === "observation");
    expect(observation?.type === "observation" && observation.call.shown).toMatch(
      /^file_edit: "old" was not found in "app.txt" \(0 occurrences\)/,
    );
    expect(observation?.type === "observation" && observation.call?.result?.failed).toBe(true);
    const json = JSON.stringify(acp.updates);
    expect(json).not.toContain('"type":"diff"');
    const last = acp.updates.filter((u) => u.sessionUpdate === "tool_call_update").at(-1);
    expect(last).toMatchObject({ status: "failed" });
  });

  it("the diff in the permission request is the text the file then holds, its NUL shown escaped, 600 lines included", async () => {
    fs.writeFileSync(path.join(project, "run.sh"), "echo old\n");
    const content = `#!/bin/sh\n${Array.from({ length: 600 }, (_, i) => `echo ${i}`).join("\n")}\nprintf 'a\u0000b'\n`;
    const link = editor("allow_once");
    const acp = acpSide(link);
    const h = loopHarness([step("file_write", { path: "run.sh", content }), finalStep], {
      cwd: project,
      approver: acp.approver,
    });
    h.deps.onEvent = (e) => acp.translator.handle(e);
    await h.run("write");
    const written = fs.readFileSync(path.join(project, "run.sh"), "utf8");
    expect(written).toBe(content);
    // The NUL is shown as the keyboard shows it (escaped, with a warning line); nothing else differs.
    const asked = link.asked[0]?.content ?? [];
    const diffs = asked.filter((c) => c.type === "diff");
    expect(diffs).toHaveLength(1);
    expect(diffs[0]!.type === "diff" && diffs[0]!.newText).toBe(written.replace("\u0000", "\\x00"));
    expect(JSON.stringify(asked)).toContain("1 NUL byte");
  });

  it("a text change: the permission diff, the completed update's diff and the file are the same text", async () => {
    fs.writeFileSync(path.join(project, "notes.md"), "# Notes\nold line\n");
    const link = editor("allow_once");
    const acp = acpSide(link);
    const h = loopHarness(
      [step("file_edit", { path: "notes.md", old: "old line", new: "new line" }), finalStep],
      {
        cwd: project,
        approver: acp.approver,
      },
    );
    h.deps.onEvent = (e) => acp.translator.handle(e);
    await h.run("edit");
    const written = fs.readFileSync(path.join(project, "notes.md"), "utf8");
    expect(written).toBe("# Notes\nnew line\n");
    const asked = link.asked[0]!.content!.find((c) => c.type === "diff");
    expect(asked).toEqual({
      type: "diff",
      path: path.join(project, "notes.md"),
      oldText: "# Notes\nold line\n",
      newText: written,
    });
    const done = acp.updates.filter(
      (u) => u.sessionUpdate === "tool_call_update" && u.status === "completed",
    );
    expect(JSON.stringify(done)).toContain(JSON.stringify(written));
  });
});

describe("the keyboard's question shows what will be written", () => {
  it("a script with a NUL byte is diffed as its text, not summed up as binary", async () => {
    const keys = terminal(["n", "\r"]);
    const h = loopHarness(
      [step("file_write", { path: "x.sh", content: "rm -rf ~/.ssh\nprintf 'a\u0000b'\n" }), finalStep],
      { cwd: project, approver: keyboardApprover(keys) },
    );
    await h.run("write");
    expect(keys.shown).not.toContain("binary content");
    expect(keys.shown).toContain("+rm -rf ~/.ssh");
    expect(fs.existsSync(path.join(project, "x.sh"))).toBe(false);
  });
});

describe("undo acts on what the record kept", () => {
  it("the checkpoint in the call's record is the one undo restores from", async () => {
    fs.writeFileSync(path.join(project, "a.txt"), "before\n");
    const h = loopHarness([step("file_write", { path: "a.txt", content: "after\n" }), finalStep], {
      cwd: project,
      checkpointsIn: state,
    });
    await h.run("change");
    const ran = h.events.find((e): e is AgentEvent & { type: "observation" } => e.type === "observation");
    const record = ran?.call as Ready;
    expect(record.checkpoint?.path).toBe(path.join(project, "a.txt"));
    expect(record.change?.before?.toString()).toBe("before\n");
    const entries = readCheckpoints(state, "s").entries;
    expect(entries.map((e) => e.seq)).toEqual([record.checkpoint!.seq]);
    const out = applyUndo(state, "s", planUndo(entries)!, project);
    expect(out.restored).toEqual([path.join(project, "a.txt")]);
    expect(fs.readFileSync(path.join(project, "a.txt"), "utf8")).toBe("before\n");
  });
});
