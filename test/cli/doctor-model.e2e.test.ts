/**
 * `scoot doctor --model`: a few fixed goals through the real loop against the configured
 * server (here the scripted one), reporting each goal's answer, valid steps at the first try,
 * corrections, the structured-output mode the server honoured and seconds per turn. The user's
 * home gets no session of it, and the project is a throwaway one.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import {
  type RecordedRequest,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-doctor-model-" });

interface Sent {
  messages?: { role: string; content: string }[];
}

/** A model that answers each of doctor's goals; `sloppy` makes the list goal need one correction. */
function model(sloppy: boolean): (req: RecordedRequest) => ScriptItem {
  return (req) => {
    const messages = (req.body as Sent).messages ?? [];
    const goal = messages.find((m) => m.role === "user")?.content ?? "";
    const turn = messages.filter((m) => m.role === "assistant").length;
    if (goal.includes("the single word ready")) return step("final", "ready", "t");
    if (goal.includes("notes.txt"))
      return turn === 0 ? step("file_read", { path: "notes.txt" }, "read it") : step("final", "apple", "t");
    if (goal.includes(".txt files")) {
      if (sloppy && turn === 0) return { reply: "I will use glob now." };
      const done = messages.some((m) => m.role === "user" && m.content.includes("todo.txt"));
      return done ? step("final", "2", "t") : { reply: { name: "glob", arguments: { pattern: "*.txt" } } };
    }
    return step("final", "ok", "t");
  };
}

async function doctor(sloppy: boolean) {
  const responder = model(sloppy);
  scene.server = await startScriptedServer(Array.from({ length: 40 }, () => responder));
  return runCli(["doctor", "--model"], {
    home: scene.home,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
  });
}

const line = (out: string, name: string) =>
  out.split("\n").find((l) => new RegExp(`^\\w+\\s+${name}\\s`).test(l)) ?? "";

describe("scoot doctor --model", () => {
  it("a model that answers every goal at the first try: OK lines and the summary", async () => {
    const r = await doctor(false);
    expect(line(r.stdout, "model answer")).toMatch(
      /^OK\s+model answer\s+answered "ready" \(1 reply, 0 corrections\)/,
    );
    expect(line(r.stdout, "model read")).toMatch(
      /^OK\s+model read\s+answered "apple" \(2 replies, 0 corrections\)/,
    );
    expect(line(r.stdout, "model list")).toMatch(/^OK\s+model list\s+answered "2"/);
    expect(r.stdout).toMatch(
      /^OK\s+model\s+qwen2\.5: 5 of 5 replies were valid steps at the first try, 0 needed a correction; structured output honoured: json_schema; \d+\.\d s per turn/m,
    );
    // Nothing of the check is left in the user's home.
    const sessions = path.join(scene.home, "state", "sessions");
    const left = fs.existsSync(sessions) ? fs.readdirSync(sessions).filter((f) => f.includes("doctor-")) : [];
    expect(left).toEqual([]);
  });

  it("a model that needed a correction: WARN, counted", async () => {
    const r = await doctor(true);
    expect(line(r.stdout, "model list")).toMatch(
      /^WARN\s+model list\s+answered "2" \(3 replies, 1 correction\)/,
    );
    expect(r.stdout).toMatch(
      /^WARN\s+model\s+qwen2\.5: 5 of 6 replies were valid steps at the first try, 1 needed a correction/m,
    );
  });

  it("--model alone anywhere else still needs its model name (exit 2)", async () => {
    const r = await runCli(["-e", "hi", "--model"], { home: scene.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--model needs a model name");
  });
});
