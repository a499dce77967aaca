/**
 * Issue 10: the gate judges exactly the file the tool opens.
 *
 * A table of path shapes × link layouts × modes × every file tool, run against a real tree
 * in a temp dir. For each call the pipeline prepares (validate → effects → gate); when it
 * is allowed the tool runs, and the file it actually opened (found by the unique marker each
 * file holds, or by which file changed on disk) must be the gate's resolved target, and must
 * satisfy the mode's rule (readonly: inside the project; guarded: never the token; confined
 * writes: inside the project). When it is refused, nothing on disk changes.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CallEnv, prepareCall } from "../../src/agent/call-prepare.js";
import type { Ready } from "../../src/agent/call-record.js";
import { createCallPipeline } from "../../src/agent/calls.js";
import type { PolicyMode } from "../../src/config/schema.js";
import { defaultConfig } from "../../src/config/schema.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import { TOOLS_BY_NAME } from "../../src/tools/registry.js";
import { makeToolContext } from "../helpers/tool-context.js";

let tmp: string;
let project: string;
let home: string;
let tokenFile: string;
let savedHome: string | undefined;
/** Marker id → real path of the file that holds it. */
const markerFile = new Map<string, string>();
/** Dir marker id → real path of the directory that holds it. */
const dirMarker = new Map<string, string>();
let nextId = 0;

function markFile(p: string): void {
  const id = `m${nextId++}`;
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, `export function ${id}() {}\n`);
  markerFile.set(id, fs.realpathSync(p));
}
function markDir(d: string): void {
  const id = `d${nextId++}`;
  fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(d, `dirmark_${id}`), "");
  dirMarker.set(id, fs.realpathSync(d));
}

/**
 *   home/.scoot/token                    the token file (a secret path)
 *   outside/f.txt, outside/deep/f.txt    ordinary files outside the project
 *   project/f.txt, project/sub/f.txt     the project
 *   project/inlink  -> sub               dir inside
 *   project/outlink -> ../outside        dir outside
 *   project/docs    -> /                 the filesystem root
 *   project/notes   -> the token file
 *   project/dangling -> ../outside/new.txt
 *   project/chain -> chain2 -> outlink   a chain leaving the project
 *   project/updir -> ../outside/deep     `updir/../f.txt` is lexically project/f.txt
 */
// Built at load time: the table below is generated from these paths when the file is collected.
setUp();
function setUp(): void {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-eq-")));
  project = path.join(tmp, "project");
  home = path.join(tmp, "home");
  tokenFile = path.join(home, ".scoot", "token");
  markFile(tokenFile);
  markFile(path.join(tmp, "outside", "f.txt"));
  markFile(path.join(tmp, "outside", "deep", "f.txt"));
  markFile(path.join(project, "f.txt"));
  markFile(path.join(project, "sub", "f.txt"));
  markDir(project);
  markDir(path.join(project, "sub"));
  markDir(path.join(tmp, "outside"));
  markDir(path.join(tmp, "outside", "deep"));
  const link = (target: string, name: string) => fs.symlinkSync(target, path.join(project, name));
  link("sub", "inlink");
  link("../outside", "outlink");
  link("/", "docs");
  link(tokenFile, "notes");
  link("../outside/new.txt", "dangling");
  link("chain2", "chain");
  link("outlink", "chain2");
  link("../outside/deep", "updir");
  savedHome = process.env.HOME;
  process.env.HOME = home;
}

afterAll(() => {
  if (savedHome === undefined) delete process.env.HOME;
  else process.env.HOME = savedHome;
  fs.rmSync(tmp, { recursive: true, force: true });
});

function env(mode: PolicyMode): CallEnv {
  const settings = buildGateSettings(defaultConfig(), project, { mode, tokenFile });
  return { settings, tools: TOOLS_BY_NAME };
}

/** Every regular file under tmp with its bytes, for "what changed". */
function snapshot(): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(p, fs.readFileSync(p, "utf8"));
    }
  };
  walk(tmp);
  return out;
}
function changed(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [p, v] of after) if (before.get(p) !== v) out.push(p);
  for (const p of before.keys()) if (!after.has(p)) out.push(p);
  return out.sort();
}

/** Puts the tree back as it was, so every row starts from the same files. */
function restore(before: Map<string, string>, diff: string[]): void {
  for (const p of diff) {
    const old = before.get(p);
    if (old === undefined) fs.rmSync(p, { force: true });
    else fs.writeFileSync(p, old);
  }
}

function inside(p: string, dir: string): boolean {
  return p === dir || p.startsWith(`${dir}/`);
}

/** Path shapes that reach `rest` (a path relative to the project) in different spellings. */
function shapes(rest: string): [string, string][] {
  const out: [string, string][] = [
    ["plain", rest],
    ["dotdot after existing", `sub/../${rest}`],
    ["dotdot after missing", `nope/../${rest}`],
    ["dot and doubled slash", `./${rest.replace("/", "//./")}`],
    ["absolute", `${project}/${rest}`],
    ["tilde", `~/../project/${rest}`],
  ];
  if (!rest.includes("/")) out.push(["trailing slash", `${rest}/`]);
  return out;
}

/** Link layouts: the path (relative to the project) that goes through each. */
const FILE_LAYOUTS: [string, string][] = [
  ["no link", "f.txt"],
  ["link to a dir inside", "inlink/f.txt"],
  ["link to a dir outside", "outlink/f.txt"],
  ["link to /", "docs/TMP/outside/f.txt"],
  ["link to the token file", "notes"],
  ["dangling link", "dangling"],
  ["link chain", "chain/f.txt"],
  ["updir then ..", "updir/../f.txt"],
];
const DIR_LAYOUTS: [string, string][] = [
  ["no link", "sub"],
  ["link to a dir inside", "inlink"],
  ["link to a dir outside", "outlink"],
  ["link chain", "chain"],
  ["link to /", "docs/TMP/outside"],
];
const MODES: PolicyMode[] = ["readonly", "guarded", "unrestricted"];

function fill(p: string): string {
  return p.replace("TMP", tmp.slice(1));
}

interface Row {
  name: string;
  action: string;
  input: string;
  mode: PolicyMode;
  kind: "read" | "dir" | "write";
}

function rows(): Row[] {
  const out: Row[] = [];
  for (const mode of MODES) {
    for (const [layout, rel] of FILE_LAYOUTS) {
      for (const [shape, p0] of shapes(rel)) {
        const p = fill(p0);
        const name = `${mode} ${layout} ${shape} ${p0}`;
        out.push({
          name: `file_read ${name}`,
          action: "file_read",
          input: JSON.stringify({ path: p }),
          mode,
          kind: "read",
        });
        out.push({
          name: `grep ${name}`,
          action: "grep",
          input: JSON.stringify({ pattern: "function", path: p }),
          mode,
          kind: "read",
        });
        out.push({
          name: `outline ${name}`,
          action: "outline",
          input: JSON.stringify({ path: p }),
          mode,
          kind: "read",
        });
        out.push({
          name: `file_write ${name}`,
          action: "file_write",
          input: JSON.stringify({ path: p, content: "WRITTEN\n" }),
          mode,
          kind: "write",
        });
        out.push({
          name: `file_edit ${name}`,
          action: "file_edit",
          input: JSON.stringify({ path: p, old: "export function", new: "export const EDITED =" }),
          mode,
          kind: "write",
        });
      }
    }
    for (const [layout, rel] of DIR_LAYOUTS) {
      for (const [shape, p0] of shapes(rel)) {
        const p = fill(p0);
        out.push({
          name: `glob ${mode} ${layout} ${shape} ${p0}`,
          action: "glob",
          input: JSON.stringify({ pattern: "dirmark_*", root: p }),
          mode,
          kind: "dir",
        });
      }
    }
  }
  return out;
}

/** Runs an allowed call through the pipeline's run half (audit into an array, deadline, clip). */
async function run(ready: Ready, mode: PolicyMode): Promise<string> {
  const audited: string[] = [];
  const { call: _c, gate: _g, signal: _s, timeoutMs: _t, ...base } = makeToolContext({ cwd: project, mode });
  const pipeline = createCallPipeline({
    env: env(mode),
    audit: (kind, msg) => {
      audited.push(`${kind} ${msg}`);
      return { ok: true, value: undefined };
    },
    base,
    timeoutMs: 10_000,
  });
  const signal = new AbortController().signal;
  const approval = await pipeline.approve(ready, signal);
  if (approval.kind !== "approved") throw new Error("nothing asks without an approver");
  const out = await pipeline.run(approval, signal);
  // The call was audited before it ran.
  expect(audited[0]).toBe(`tool_call ${ready.action} ${ready.raw}`);
  if (out.kind !== "ran") throw new Error(`not recorded: ${out.error}`);
  return out.text;
}

async function attempt(row: Row) {
  const prepared = prepareCall(row.action, row.input, env(row.mode));
  if (prepared.kind !== "ready") return { allowed: false as const, prepared };
  const output = await run(prepared, row.mode);
  return { allowed: true as const, prepared, output };
}

/** The real path a marker in the output names, or undefined. */
function openedBy(output: string, kind: "read" | "dir"): string | undefined {
  if (kind === "dir") {
    const m = /dirmark_(d\d+)/.exec(output);
    return m ? dirMarker.get(m[1]!) : undefined;
  }
  const m = /\b(m\d+)\b/.exec(output);
  return m ? markerFile.get(m[1]!) : undefined;
}

describe("the gate judges exactly what the tool opens", () => {
  const table = rows();
  it.each(table.map((r) => [r.name, r] as const))("%s", async (_name, row) => {
    const realRoot = fs.realpathSync(project);
    const before = snapshot();
    const r = await attempt(row);
    const after = snapshot();
    const diff = changed(before, after);
    restore(before, diff);
    if (!r.allowed) {
      // A refused call touches nothing.
      expect(diff).toEqual([]);
      return;
    }
    const target = r.prepared.target;
    if (row.kind === "write") {
      // Written: exactly the judged file changed (or nothing, when the tool itself refused).
      if (diff.length > 0) {
        expect(diff).toEqual([target.write[0]]);
        if (row.mode === "guarded") expect(inside(diff[0]!, realRoot), `${row.name}: ${diff[0]}`).toBe(true);
        if (row.mode !== "unrestricted") expect(diff[0]).not.toBe(tokenFile);
      }
      return;
    }
    expect(diff).toEqual([]);
    const opened = openedBy(r.output, row.kind);
    const judged = target.read[0]!;
    const known = row.kind === "dir" ? [...dirMarker.values()] : [...markerFile.values()];
    if (!known.includes(judged)) {
      // The judged path holds no marked file (missing, dangling): the tool found nothing else either.
      expect(opened, `${row.name}: output ${r.output.slice(0, 200)}`).toBeUndefined();
      return;
    }
    expect(opened, `${row.name}: output ${r.output.slice(0, 200)}`).toBe(judged);
    if (row.mode === "readonly") expect(inside(judged, realRoot), `${row.name} opened ${judged}`).toBe(true);
    if (row.mode !== "unrestricted") expect(judged, row.name).not.toBe(tokenFile);
  });
});

describe("the cases the issue reproduced", () => {
  const cases: [string, PolicyMode, string, "allow" | "deny"][] = [
    ["readonly x/../docs/etc/hostname (docs -> /)", "readonly", "x/../docs/etc/hostname", "deny"],
    ["readonly docs/etc/hostname", "readonly", "docs/etc/hostname", "deny"],
    ["guarded x/../notes (notes -> the token)", "guarded", "x/../notes", "deny"],
    ["readonly updir/../f.txt opens project/f.txt", "readonly", "updir/../f.txt", "allow"],
  ];
  it.each(cases)("%s", (_n, mode, p, want) => {
    const prepared = prepareCall("file_read", JSON.stringify({ path: p }), env(mode));
    expect(prepared.kind).toBe(want === "allow" ? "ready" : "denied");
  });

  it("guarded nope/../outlink/f writes nothing outside the project", async () => {
    const before = snapshot();
    const prepared = prepareCall(
      "file_write",
      JSON.stringify({ path: "nope/../outlink/new.txt", content: "x" }),
      env("guarded"),
    );
    expect(prepared.kind).toBe("denied");
    if (prepared.kind === "ready") await run(prepared, "guarded");
    expect(changed(before, snapshot())).toEqual([]);
  });
});

describe("a symlink put at the judged path after the decision is refused (the race Node lets us close)", () => {
  const tools: [string, (p: string) => object][] = [
    ["file_read", (p) => ({ path: p })],
    ["grep", (p) => ({ pattern: "function", path: p })],
    ["outline", (p) => ({ path: p })],
    ["file_edit", (p) => ({ path: p, old: "export function", new: "export const EDITED =" })],
    ["file_write", (p) => ({ path: p, content: "WRITTEN\n" })],
  ];
  it.each(tools)("%s", async (action, input) => {
    const victim = path.join(project, "swap.txt");
    fs.writeFileSync(victim, "export function swapped() {}\n");
    try {
      const prepared = prepareCall(action, JSON.stringify(input("swap.txt")), env("guarded"));
      expect(prepared.kind).toBe("ready");
      if (prepared.kind !== "ready") return;
      // Between the decision and the open, the judged file becomes a link to the token.
      fs.rmSync(victim);
      fs.symlinkSync(tokenFile, victim);
      const before = snapshot();
      const out = await run(prepared, "guarded");
      expect(out).toContain("replaced by a symlink after the policy check");
      expect(out).not.toMatch(/\bm\d+\b/);
      expect(changed(before, snapshot())).toEqual([]);
    } finally {
      fs.rmSync(victim, { force: true });
    }
  });
});
