/**
 * V8's compile cache (docs/configuration.md "Runtime home"): the real CLI keeps it in the home's
 * state/compile-cache, from the second run on (the first makes the home), on every Node: the
 * app's own code (src/app-code-cache.ts; test/e2e/app-code-cache.test.ts) and, on a Node that
 * has `module.enableCompileCache` (22.8+; CI runs the suite on Node 24 too), Node's for the
 * npm packages. A cache that cannot be made costs the run nothing but time.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-cc-", nested: true, project: "scoot-cc-project-" });

/** Every file under dir (none when it is missing). */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => fs.statSync(path.join(dir, f)).isFile());
}

async function trivialRun(env: Record<string, string | undefined> = {}, args: string[] = []) {
  return runCli([...args, "-e", "say done"], {
    home: scene.home,
    cwd: scene.project,
    // The home's own cache: not the suite's shared one.
    env: { SCOOT_BACKEND_BASE_URL: scene.server!.url, SCOOT_COMPILE_CACHE: undefined, ...env },
    timeoutMs: 60_000,
  });
}

describe("the compile cache", () => {
  it("is kept in the home's state/ from the second run on", async () => {
    scene.server = await startScriptedServer([step("final", "one"), step("final", "two")]);
    const cache = path.join(scene.home, "state", "compile-cache");

    const first = await trivialRun();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("one");
    // The first run made the home; the cache waits for a home an earlier run made.
    expect(fs.existsSync(path.join(scene.home, "state"))).toBe(true);
    expect(filesUnder(cache)).toEqual([]);

    const second = await trivialRun();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("two");
    expect(filesUnder(cache).filter((f) => f.startsWith("scoot-app-"))).toHaveLength(1);
    // Owner-only, as the rest of the home.
    expect(fs.statSync(cache).mode & 0o077).toBe(0);
    // Nowhere else: not beside the installed bundle, not in the project.
    expect(fs.readdirSync(scene.project)).not.toContain("compile-cache");
  });

  it("follows --scoot-home", async () => {
    scene.server = await startScriptedServer([step("final", "one"), step("final", "two")]);
    const other = path.join(scene.base, "other-home");
    const env = { SCOOT_HOME: path.join(scene.base, "not-this-one") };
    for (const _ of [1, 2]) {
      const r = await trivialRun(env, ["--scoot-home", other]);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(filesUnder(path.join(other, "state", "compile-cache")).length).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(scene.base, "not-this-one", "state", "compile-cache"))).toBe(false);
  });

  it("a cache that cannot be made (a file where its directory goes) costs the run nothing", async () => {
    scene.server = await startScriptedServer([step("final", "one"), step("final", "two")]);
    const first = await trivialRun();
    expect(first.code, first.stderr).toBe(0);
    const blocker = path.join(scene.home, "state", "compile-cache");
    fs.writeFileSync(blocker, "not a directory\n");

    const second = await trivialRun();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("two");
    expect(second.stderr).not.toMatch(/compile|cache|ENOTDIR|EEXIST/i);
    expect(fs.readFileSync(blocker, "utf8")).toBe("not a directory\n");
  });

  it("SCOOT_COMPILE_CACHE: homes made afresh share the directory it names, from their first run", async () => {
    scene.server = await startScriptedServer([step("final", "one"), step("final", "two")]);
    const shared = path.join(scene.base, "ci-cache");
    const env = { SCOOT_COMPILE_CACHE: shared };
    const homes = [path.join(scene.base, "job-1"), path.join(scene.base, "job-2")];
    const first = await trivialRun({ ...env, SCOOT_HOME: homes[0] });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toBe("");
    const kept = filesUnder(shared).filter((f) => f.startsWith("scoot-app-"));
    expect(kept).toHaveLength(1);
    expect(fs.statSync(shared).mode & 0o777).toBe(0o700);
    const before = fs.statSync(path.join(shared, kept[0]!));
    const second = await trivialRun({ ...env, SCOOT_HOME: homes[1] });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("two");
    // Read, not written again: V8 accepted the first job's code in the second job's fresh home.
    const after = fs.statSync(path.join(shared, kept[0]!));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    for (const h of homes) expect(fs.existsSync(path.join(h, "state", "compile-cache"))).toBe(false);
  });

  it("a SCOOT_COMPILE_CACHE others can write is not used: one warning naming the fix, the home's is", async () => {
    scene.server = await startScriptedServer([
      step("final", "one"),
      step("final", "two"),
      step("final", "three"),
    ]);
    const open = path.join(scene.base, "open-cache");
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o777);
    for (const answer of ["one", "two", "three"]) {
      const r = await trivialRun({ SCOOT_COMPILE_CACHE: open });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(answer);
      const warnings = r.stderr.split("\n").filter((l) => l.includes("SCOOT_COMPILE_CACHE"));
      expect(warnings).toEqual([
        `scoot: warning: SCOOT_COMPILE_CACHE ignored: ${JSON.stringify(open)} can be written by other users; fix: chmod go-w ${open} (the home's state/compile-cache is used meanwhile)`,
      ]);
    }
    expect(fs.readdirSync(open)).toEqual([]);
    expect(
      filesUnder(path.join(scene.home, "state", "compile-cache")).filter((f) => f.startsWith("scoot-app-")),
    ).toHaveLength(1);
  });

  it("doctor says whether the SCOOT_COMPILE_CACHE directory is used, or why not; without it, nothing", async () => {
    const good = path.join(scene.base, "doctor-cache");
    const open = path.join(scene.base, "doctor-open");
    fs.mkdirSync(open, { mode: 0o777 });
    fs.chmodSync(open, 0o777);
    const doctor = (value: string | undefined) =>
      runCli(["doctor", "--json"], {
        home: scene.home,
        cwd: scene.project,
        env: { SCOOT_BACKEND_BASE_URL: "http://127.0.0.1:9/v1", SCOOT_COMPILE_CACHE: value },
      });
    const check = (stdout: string) =>
      (JSON.parse(stdout) as { checks: { name: string; status: string; detail: string }[] }).checks.filter(
        (c) => c.name === "compile_cache",
      );
    expect(check((await doctor(good)).stdout)).toEqual([
      { name: "compile_cache", status: "OK", detail: `${good} (SCOOT_COMPILE_CACHE)` },
    ]);
    const refused = check((await doctor(open)).stdout);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ status: "WARN" });
    expect(refused[0]!.detail).toContain("can be written by other users; fix: chmod go-w");
    expect(check((await doctor(undefined)).stdout)).toEqual([]);
  });
});
