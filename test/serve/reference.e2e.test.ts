/**
 * `scoot serve` speaks the reference's protocol (Scoot v0.9.1, cli.md `serve`): its
 * request examples round-trip in the shapes it defines, its clients' habits (no id, extra
 * params keys) keep working, and `run.stream` sends trace events before the answer.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { collect, spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-serve-ref-", model: true });

/** Feeds all lines at once (serve answers them in order) and returns the parsed output lines. */
async function serve(lines: string[]) {
  const r = await collect(
    spawnCli(["serve"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_BACKEND_MAX_RETRIES: "0" },
    }),
    { input: `${lines.join("\n")}\n` },
  );
  expect(r.code, r.stderr).toBe(0);
  return {
    out: r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>),
    stderr: r.stderr,
  };
}

describe("the reference's serve examples", () => {
  it("run, session.list, session.get and audit.query answer in the reference's shapes", async () => {
    scene.model.push(step("final", "hello from scoot"));
    const first = await serve([
      '{"id":"1","method":"run","params":{"goal":"say hello to the reference client"}}',
    ]);
    const run = first.out[0]!;
    expect(run).toMatchObject({ id: "1", ok: true, result: { reply: "hello from scoot" } });
    const sessionId = (run.result as { session_id: string }).session_id;
    expect(typeof sessionId).toBe("string");
    expect(Object.keys(run).sort()).toEqual(["id", "ok", "result"]);

    const { out } = await serve([
      // The example from cli.md, byte for byte.
      '{"id":"1","method":"session.list","params":{}}',
      `{"id":"2","method":"session.get","params":{"id":"${sessionId}"}}`,
      `{"id":"3","method":"audit.query","params":{"session_id":"${sessionId}"}}`,
    ]);
    const list = out[0]!;
    expect(list).toMatchObject({ id: "1", ok: true });
    const items = (list.result as { sessions: Record<string, unknown>[] }).sessions;
    expect(items).toHaveLength(1);
    const item = items[0]!;
    expect(item.id).toBe(sessionId);
    expect(typeof item.mtime_ms).toBe("number");
    expect(Number.isInteger(item.mtime_ms)).toBe(true);
    const mtime = fs.statSync(path.join(scene.home, "state", "sessions", `${sessionId}.jsonl`)).mtimeMs;
    expect(Math.abs((item.mtime_ms as number) - mtime)).toBeLessThan(1);
    expect(item.message_count).toBe(3);
    expect(item.first_user_summary).toBe("say hello to the reference client");

    expect(out[1]).toMatchObject({ id: "2", ok: true, result: { id: sessionId } });
    expect((out[1]!.result as { messages: unknown[] }).messages).toHaveLength(3);
    expect(out[2]).toMatchObject({ id: "3", ok: true, result: { session_id: sessionId } });
    expect((out[2]!.result as { events: { kind: string }[] }).events.map((e) => e.kind)).toEqual([
      "run",
      "thought",
      "final",
    ]);
  });

  it("a long first message is summarised on one line", async () => {
    scene.model.push(step("final", "ok"));
    const goal = `line one\n${"word ".repeat(40)}`;
    await serve([JSON.stringify({ id: 1, method: "run", params: { goal } })]);
    const { out } = await serve(['{"id":"1","method":"session.list","params":{}}']);
    const summary = (out[0]!.result as { sessions: { first_user_summary: string }[] }).sessions[0]!
      .first_user_summary;
    expect(summary).not.toContain("\n");
    expect(summary.startsWith("line one word word")).toBe(true);
    expect(summary.endsWith("…")).toBe(true);
    expect([...summary].length).toBe(80);
  });

  it("bad_json, a missing id answered as null, unknown params keys ignored with a warning", async () => {
    scene.model.push(step("final", "still ran"));
    const { out, stderr } = await serve([
      "{not json",
      '{"method":"session.list","params":{}}',
      '{"id":7,"method":"run","params":{"goal":"hi","model":"x","temperature":0.2}}',
    ]);
    expect(out[0]).toMatchObject({ id: null, ok: false, error: { code: "bad_json" } });
    expect(out[1]).toEqual({ id: null, ok: true, result: { sessions: [] } });
    expect(out[2]).toMatchObject({ id: 7, ok: true, result: { reply: "still ran" } });
    expect(stderr).toMatch(/run: ignoring unknown param "model", "temperature"/);
  });

  it("run.stream sends one {id, event} line per trace event, in order, before the answer", async () => {
    scene.model.push(
      step("glob", JSON.stringify({ pattern: "*" }), "look first"),
      step("final", "streamed done"),
    );
    const { out } = await serve(['{"id":"s","method":"run.stream","params":{"goal":"stream it"}}']);
    const last = out.at(-1)!;
    expect(last).toMatchObject({ id: "s", ok: true, result: { reply: "streamed done" } });
    const events = out.slice(0, -1);
    expect(events.length).toBeGreaterThan(4);
    for (const e of events) expect(Object.keys(e).sort()).toEqual(["event", "id"]);
    const types = events.map((e) => (e.event as { type: string }).type);
    const order = ["run", "thinking", "step", "running", "observation", "thinking", "step", "final"];
    const seen = types.filter((t) => order.includes(t));
    expect(seen).toEqual(order);
    const step1 = events.find((e) => (e.event as { type: string }).type === "step")!.event;
    expect(step1).toMatchObject({ action: "glob", thought: "look first" });
  });
});
