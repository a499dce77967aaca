/**
 * Hostile inputs round two, configuration through the CLI (the first command of a kind on the
 * built binary, the rest in this process): item 8 (deep JSON
 * nesting is refused at load, naming the key), item 9 (every duration and size key has a
 * maximum) and item 14 (extra_body's protected keys warn on stderr and in doctor; `store`
 * cannot be overridden).
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_MAX_DEPTH } from "../../src/config/load.js";
import { LIMITS, SCHEMA } from "../../src/config/schema.js";
import { runCli, runInProcess } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-h2-cfg-" });

function deep(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
}

describe("item 8: nesting is bounded at load", () => {
  it("a 100k-deep extra_body in config.json is exit 2 naming the key, for config and -e", async () => {
    fs.writeFileSync(path.join(scene.home, "config.json"), `{"backend":{"extra_body":${deep(100_000)}}}`);
    for (const args of [["config"], ["-e", "goal"], ["doctor"]]) {
      // The first on the built CLI, the rest in this process (the same routing).
      const r = await (args[0] === "config" ? runCli : runInProcess)(args, { home: scene.home });
      expect(r.stderr).not.toMatch(/Maximum call stack|internal error/);
      if (args[0] !== "doctor") expect(r.code).toBe(2);
      expect(r.stderr + r.stdout).toMatch(
        new RegExp(`backend\\.extra_body: nested deeper than ${CONFIG_MAX_DEPTH} levels`),
      );
    }
  });

  it("nesting just inside the bound loads; one more level is refused", async () => {
    // extra_body itself is the first level.
    fs.writeFileSync(
      path.join(scene.home, "config.json"),
      `{"backend":{"extra_body":${deep(CONFIG_MAX_DEPTH)}}}`,
    );
    expect((await runCli(["config"], { home: scene.home })).code).toBe(0);
    fs.writeFileSync(
      path.join(scene.home, "config.json"),
      `{"backend":{"extra_body":${deep(CONFIG_MAX_DEPTH + 1)}}}`,
    );
    expect((await runInProcess(["config"], { home: scene.home })).code).toBe(2);
  });

  it("a deep SCOOT_BACKEND_EXTRA_BODY is ignored with a warning", async () => {
    const r = await runInProcess(["config"], {
      home: scene.home,
      env: { SCOOT_BACKEND_EXTRA_BODY: deep(10_000) },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/SCOOT_BACKEND_EXTRA_BODY ignored: .*nested deeper/);
  });
});

describe("item 9: every duration and size key has a maximum", () => {
  const ints = Object.entries(SCHEMA).flatMap(([section, keys]) =>
    Object.entries(keys)
      .filter(([, spec]) => spec.kind.type === "int")
      .map(([key, spec]) => [`${section}.${key}`, (spec.kind as { max: number }).max] as const),
  );

  it("every integer key has a finite maximum below Node's timer limit for durations", () => {
    expect(ints.length).toBeGreaterThan(8);
    for (const [key, max] of ints) {
      expect(Number.isSafeInteger(max), key).toBe(true);
      if (/_ms$/.test(key)) expect(max, key).toBeLessThan(2 ** 31);
    }
  });

  it.each([
    ["backend", "timeout_ms", 3_000_000_000],
    ["schedule", "poll_ms", 3_000_000_000],
    ["tools", "timeout_ms", LIMITS.TIMEOUT_MS_MAX + 1],
    ["audit", "max_file_bytes", 2 ** 40],
    ["agent", "context_budget_bytes", 2 ** 40],
  ])("%s.%s = %d is exit 2 naming the key and the range", async (section, key, value) => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), `[${section}]\n${key} = ${value}\n`);
    const r = await runInProcess(["config"], { home: scene.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`${section}\\.${key}: must be in \\d+\\.\\.\\d+, got ${value}`));
  });

  it("the config table in docs/configuration.md documents each maximum", () => {
    const readme = fs.readFileSync(path.join(__dirname, "../../docs/configuration.md"), "utf8");
    for (const [key, max] of ints) {
      const row = readme.split("\n").find((l) => l.startsWith(`| ${key} |`));
      expect(row, key).toBeDefined();
      expect(row, key).toContain(`max ${max}`);
    }
  });

  it("a huge every_sec skips the job with the range; schedule list still works", async () => {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      '[schedule]\nenabled = true\n[[schedule.jobs]]\nid = "big"\ngoal = "g"\nevery_sec = 9007199254740991\n' +
        '[[schedule.jobs]]\nid = "ok"\ngoal = "g"\nevery_sec = 60\n',
    );
    const r = await runInProcess(["schedule", "list"], { home: scene.home });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/Invalid time value|internal error/);
    expect(r.stderr).toContain(
      `job big skipped: every_sec must be a whole number in 1..${LIMITS.EVERY_SEC_MAX}`,
    );
    expect(r.stdout).toContain("ok");
  });
});

describe("item 14: extra_body cannot silently change protected keys", () => {
  it("store = true in extra_body is dropped, warned on stderr once and shown by doctor", async () => {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      '[backend]\napi = "responses"\nstore = false\nextra_body = { store = true, seed = 7, model = "other" }\n',
    );
    scene.server = await startScriptedServer([
      { reply: { thought: "t", action: "final", action_input: "ok" } },
    ]);
    const r = await runCli(["-e", "goal"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code).toBe(0);
    const warnings = r.stderr.split("\n").filter((l) => l.includes("backend.extra_body keys"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /store, model are ignored: Scoot sets them itself \(use backend.store for store\)/,
    );
    const body = scene.server.completions()[0]!.body as Record<string, unknown>;
    expect(body.store).toBe(false);
    expect(body.seed).toBe(7);
    expect(body.model).not.toBe("other");

    const doctor = await runCli(["doctor"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(doctor.stdout + doctor.stderr).toMatch(/WARN.*backend\.extra_body keys store, model are ignored/);
  });
});
