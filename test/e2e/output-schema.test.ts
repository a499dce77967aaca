/**
 * Answers in a schema (docs/commands.md "Answers in a schema"), through the built CLI and the
 * scripted model, and through the library's run():
 * - a final answer that does not fit gets a correction naming the JSON path; the valid one
 *   that follows is printed as JSON, and with --json `answer` is the object itself;
 * - the final step's structured-output format carries the schema, and the goal names it;
 * - a schema file that is missing, not JSON, or not a valid schema exits 2 naming the file;
 * - the flag stands before -e or after its goal;
 * - the REPL refuses it.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createScoot } from "../../src/lib/index.js";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-home-" });
let work: string;

const SCHEMA = {
  type: "object",
  properties: {
    items: {
      type: "array",
      items: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    },
  },
  required: ["items"],
  additionalProperties: false,
};

beforeEach(() => {
  work = fs.realpathSync(tempDir("scoot-work-"));
  fs.writeFileSync(path.join(work, "schema.json"), JSON.stringify(SCHEMA));
});
afterEach(() => {
  removeDir(work);
});

async function run(args: string[], script: ScriptItem[] = []) {
  scene.server = await startScriptedServer(script);
  return runCli(args, {
    home: scene.home,
    cwd: work,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_STREAM: "false" },
    timeoutMs: 60_000,
  });
}

type Sent = {
  messages: { role: string; content: string }[];
  response_format?: { json_schema?: { schema: unknown } };
};
const sent = (n: number) => scene.server!.completions()[n]!.body as Sent;

describe("--output-schema: the answer is JSON valid against the schema", () => {
  it("a final that violates it is corrected naming the path; the valid one is printed as JSON", async () => {
    const r = await run(
      ["--output-schema", "schema.json", "-e", "list the names"],
      [step("final", { items: [{ name: 7 }] }), step("final", { items: [{ name: "alpha" }] })],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ items: [{ name: "alpha" }] });
    expect(r.stdout).toBe('{"items":[{"name":"alpha"}]}\n');
    // The correction went to the model, naming the JSON path and what was wrong.
    const correction = sent(1).messages.at(-1)!.content;
    expect(correction).toContain("/items/0/name: must be string, got integer");
    expect(correction).toContain("the final answer does not fit the output schema schema.json");
    // The goal told the model the schema; the final step's format carries it.
    expect(sent(0).messages.find((m) => m.role === "user")!.content).toContain('"required":["items"]');
    const format = JSON.stringify(sent(0).response_format?.json_schema?.schema);
    expect(format).toContain('"enum":["final"]');
    expect(format).toContain('"required":["items"]');
  });

  it("an answer that is not JSON is corrected too", async () => {
    const r = await run(
      ["-e", "list the names", "--output-schema", "schema.json"],
      [step("final", "alpha and beta"), step("final", { items: [] })],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('{"items":[]}\n');
    expect(sent(1).messages.at(-1)!.content).toContain("it is not JSON");
  });

  it("with --json the answer is the parsed object, not a string (flag after the goal)", async () => {
    const r = await run(
      ["-e", "list the names", "--json", "--output-schema", "schema.json"],
      [step("final", { items: [{ name: "alpha" }] })],
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { answer: unknown; status: string };
    expect(out.status).toBe("final");
    expect(out.answer).toEqual({ items: [{ name: "alpha" }] });
  });

  it("answers that never fit end the run at the malformed limit", async () => {
    const bad = step("final", { items: "none" });
    const r = await run(["--output-schema", "schema.json", "-e", "list"], [bad, bad, bad, bad, bad, bad]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("/items: must be array, got string");
  });
});

describe("--output-schema: a schema that cannot be used exits 2 naming the file", () => {
  it("a missing file", async () => {
    const r = await run(["--output-schema", "nope.json", "-e", "goal"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("nope.json: no such file");
    expect(scene.server!.completions()).toHaveLength(0);
  });

  it("a file that is not JSON", async () => {
    fs.writeFileSync(path.join(work, "bad.json"), "{ type: object");
    const r = await run(["-e", "goal", "--output-schema", "bad.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("output schema bad.json is not JSON");
  });

  it("JSON that is not a valid schema", async () => {
    fs.writeFileSync(path.join(work, "wrong.json"), JSON.stringify({ type: "strnig" }));
    const r = await run(["--output-schema", "wrong.json", "-e", "goal"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("output schema wrong.json is not a valid JSON Schema: /type");
    expect(scene.server!.completions()).toHaveLength(0);
  });

  it("the REPL refuses it as a usage error saying why", async () => {
    const r = await run(["--output-schema", "schema.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("use it with -e");
  });
});

describe("the library's run() takes outputSchema", () => {
  it("as an object: corrected, then data is the checked value; as a bad path it throws", async () => {
    scene.server = await startScriptedServer([
      step("final", { items: [{}] }),
      step("final", { items: [{ name: "beta" }] }),
    ]);
    const scoot = createScoot({
      home: scene.home,
      env: { ...process.env, SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_STREAM: "false" },
      cwd: work,
      onWarning: () => {},
    });
    try {
      const r = await scoot.run("list the names", { outputSchema: SCHEMA });
      expect(r.status).toBe("final");
      expect(r.data).toEqual({ items: [{ name: "beta" }] });
      expect(r.answer).toBe('{"items":[{"name":"beta"}]}');
      expect(sent(1).messages.at(-1)!.content).toContain("/items/0/name: is required (string)");
      scene.server.push(step("final", { items: [] }));
      expect((await scoot.run("again", { outputSchema: "schema.json" })).data).toEqual({ items: [] });
      await expect(scoot.run("goal", { outputSchema: "missing.json" })).rejects.toThrow(
        /outputSchema: cannot read the output schema missing\.json: no such file/,
      );
    } finally {
      await scoot.close();
    }
  });
});
