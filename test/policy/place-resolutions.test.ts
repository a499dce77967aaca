/**
 * The gate keeps its secret and protected places resolved for a stretch of reads
 * (src/policy/realpath.ts "Kept place resolutions"). Each case is the attack a kept resolution would let
 * through if it were kept too long: a place moved by a call that can move it, a place inside
 * the project moved by anyone, a place reached through a link in the project. Each must still
 * be refused; and a stretch of reads must really resolve the places once.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { denialReason } from "../../src/agent/events.js";
import { defaultConfig } from "../../src/config/schema.js";
import { judgeReadPath } from "../../src/policy/paths.js";
import { placeResolutions, resolvePhysical } from "../../src/policy/realpath.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import type { GateSettings } from "../../src/policy/types.js";
import { declareInput, str } from "../../src/tools/declare.js";
import { enabledTools } from "../../src/tools/registry.js";
import { done } from "../../src/tools/result.js";
import type { AnyTool, Tool } from "../../src/tools/types.js";
import { loopHarness } from "../helpers/loop.js";
import { step } from "../helpers/scripted-server.js";

let tmp: string;
let project: string;
let ext: string;
beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-places-")));
  project = path.join(tmp, "project");
  ext = path.join(tmp, "ext");
  for (const d of [project, path.join(ext, "real"), path.join(ext, "other")])
    fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(ext, "real", "data.txt"), "the secret\n");
  fs.writeFileSync(path.join(ext, "other", "data.txt"), "becomes the secret\n");
  fs.writeFileSync(path.join(project, "a.txt"), "plain\n");
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Guarded settings as a run builds them (with the kept resolutions), the given secret places. */
function runSettings(secretPaths: string[]): GateSettings {
  const config = defaultConfig();
  config.tools.secret_paths = secretPaths;
  return buildGateSettings(config, project, { mode: "guarded", env: {} });
}

function read(p: string, settings: GateSettings): string {
  const v = judgeReadPath(p, settings);
  return v.allow ? "allowed" : `refused: ${v.reason}`;
}

describe("kept place resolutions", () => {
  it("a place moved by a call that can move it is resolved again (through the real loop)", async () => {
    // The secret place is a link outside the project; a project link points where it will lead.
    const keys = path.join(tmp, "keys");
    fs.symlinkSync(path.join(ext, "real"), keys);
    fs.symlinkSync(path.join(ext, "other", "data.txt"), path.join(project, "peek"));
    // A command-like tool (the model's bash, an MCP server) re-points the place.
    const relinkInput = declareInput("relink", { to: str('"..."', { example: '"other"' }) });
    const relink: Tool<{ to: string }> = {
      name: "relink",
      describe: "Point the keys link elsewhere.",
      inputShape: relinkInput.inputShape,
      parse: relinkInput.parse,
      clipBytes: 1024,
      effects: () => ({ capability: "exec", command: "relink" }),
      present: (input) => ({ title: `Relink ${input.to}`, keyArgument: input.to, locations: [] }),
      async run(input) {
        fs.rmSync(keys);
        fs.symlinkSync(path.join(ext, input.to), keys);
        return done("relinked");
      },
    };
    const tools = new Map<string, AnyTool>([
      ...enabledTools({ hasMcp: false, hasSkills: false }),
      ["relink", relink as AnyTool],
    ]);
    const h = loopHarness(
      [
        step("file_read", { path: "a.txt" }),
        step("file_read", { path: "peek" }),
        step("relink", { to: "other" }),
        step("file_read", { path: "peek" }),
        step("final", "done"),
      ],
      {
        cwd: project,
        tools,
        configure: (c) => {
          c.tools.secret_paths = [keys];
        },
      },
    );
    expect(h.deps.gateSettings.places).toBeDefined();
    const judged: string[] = [];
    const seen = h.deps.onEvent!;
    h.deps.onEvent = (e) => {
      seen(e);
      if (e.type === "running") judged.push(`${e.call.action} ${e.call.raw}`);
    };
    const r = await h.run("peek at the keys");
    expect(r.stop).toBe("final");
    const denies = h.events.filter((e) => e.type === "deny");
    // Before the relink, peek leads to ext/other: not a secret yet, read.
    expect(judged).toEqual([
      `file_read ${JSON.stringify({ path: "a.txt" })}`,
      `file_read ${JSON.stringify({ path: "peek" })}`,
      `relink ${JSON.stringify({ to: "other" })}`,
    ]);
    // After it, ext/other is where the secret place leads: refused.
    expect(denies).toHaveLength(1);
    expect(denies[0]!.type === "deny" && denialReason(denies[0]!.call)).toMatch(/configured secret/);
  });

  it("a place inside the project is resolved at every decision, whoever moves it", () => {
    // secrets/ is a configured secret place inside the project.
    fs.mkdirSync(path.join(project, "secrets"));
    fs.writeFileSync(path.join(project, "secrets", "key.pem"), "k\n");
    const settings = runSettings([path.join(project, "secrets")]);
    expect(read("a.txt", settings)).toBe("allowed");
    // Another process (a second Scoot in this project) moves it and leaves a link behind,
    // with no call of this run in between: the place now really is s2/.
    fs.renameSync(path.join(project, "secrets"), path.join(project, "s2"));
    fs.symlinkSync("s2", path.join(project, "secrets"));
    expect(read("s2/key.pem", settings)).toMatch(/^refused: .*configured secret/);
  });

  it("nothing is kept when a link on the way to a place lies in the project", () => {
    // The place outside the project leads through a link in the project to ext/real.
    fs.symlinkSync(path.join(ext, "real"), path.join(project, "via"));
    const keys = path.join(tmp, "keys");
    fs.symlinkSync(path.join(project, "via"), keys);
    fs.symlinkSync(path.join(ext, "other", "data.txt"), path.join(project, "peek"));
    const settings = runSettings([keys]);
    expect(read("peek", settings)).toBe("allowed");
    // The project's link is re-pointed (by anyone): the place now leads to ext/other.
    fs.rmSync(path.join(project, "via"));
    fs.symlinkSync(path.join(ext, "other"), path.join(project, "via"));
    expect(read("peek", settings)).toMatch(/^refused: .*configured secret/);
  });

  it("while a call that may move places runs, nothing is kept; after it, they are resolved again", () => {
    const keys = path.join(tmp, "keys");
    fs.symlinkSync(path.join(ext, "real"), keys);
    fs.symlinkSync(path.join(ext, "other", "data.txt"), path.join(project, "peek"));
    const settings = runSettings([keys]);
    expect(read("peek", settings)).toBe("allowed");
    settings.places!.effectStarted();
    fs.rmSync(keys);
    fs.symlinkSync(path.join(ext, "other"), keys);
    // Another session's decision while the command runs.
    expect(read("peek", settings)).toMatch(/^refused/);
    settings.places!.effectEnded();
    expect(read("peek", settings)).toMatch(/^refused/);
  });

  it("a stretch of reads resolves the places outside the project once", () => {
    const places = [path.join(tmp, "keys"), path.join(ext, "real"), path.join(project, "inside")];
    const asked: string[] = [];
    const counting = (p: string, seen?: Parameters<typeof resolvePhysical>[1]) => {
      asked.push(p);
      return resolvePhysical(p, seen);
    };
    const kept = placeResolutions(project);
    for (let i = 0; i < 5; i++) kept.of(places, counting);
    // The two outside once; the one inside the project at each of the five decisions.
    expect(asked.filter((p) => !p.startsWith(project))).toHaveLength(2);
    expect(asked.filter((p) => p.startsWith(project))).toHaveLength(5);
    kept.effectStarted();
    kept.effectEnded();
    kept.of(places, counting);
    expect(asked.filter((p) => !p.startsWith(project))).toHaveLength(4);
  });

  it("what is derived from the places (glob's hidden set) is kept and dropped with them", () => {
    const kept = placeResolutions(project);
    let computed = 0;
    const compute = () => ++computed;
    expect([kept.memo("k", compute), kept.memo("k", compute)]).toEqual([1, 1]);
    kept.effectStarted();
    // While a call that may move places runs, nothing kept is used.
    expect([kept.memo("k", compute), kept.memo("k", compute)]).toEqual([2, 3]);
    kept.effectEnded();
    expect([kept.memo("k", compute), kept.memo("k", compute)]).toEqual([4, 4]);
  });
});
