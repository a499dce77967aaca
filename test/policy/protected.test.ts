/**
 * Scoot's own places and the credential stores in the gate (reads and writes, readonly and
 * guarded), the loaded-skill exception, identities of protected files, and the dangerous
 * project roots, against real files in a temporary tree.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { identityKey, isProtectedIdentity } from "../../src/policy/identity.js";
import { judgeReadPath, judgeWritePath } from "../../src/policy/paths.js";
import { refuseProjectRoot } from "../../src/policy/project-root.js";
import { buildGateSettings } from "../../src/policy/settings.js";

let tmp: string;
let scootHome: string;
let project: string;
const userHome = os.homedir();

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-protected-")));
  scootHome = path.join(tmp, "elsewhere-home");
  project = path.join(tmp, "project");
  fs.mkdirSync(path.join(scootHome, "logs"), { recursive: true });
  fs.mkdirSync(path.join(scootHome, "skills", "greeter"), { recursive: true });
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(scootHome, "config.toml"), "x\n");
  fs.writeFileSync(path.join(scootHome, "skills", "greeter", "SKILL.md"), "x\n");
  fs.writeFileSync(path.join(tmp, "audit-chain.bin"), "k\n");
  fs.writeFileSync(path.join(tmp, "llm-access.gpg"), "t\n");
  fs.writeFileSync(path.join(project, "ordinary.txt"), "o\n");
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function settings(mode: "readonly" | "guarded" | "unrestricted", env: NodeJS.ProcessEnv = process.env) {
  const config = defaultConfig();
  config.audit.hmac_key_file = path.join(tmp, "audit-chain.bin");
  config.backend.api_key_cmd = `gpg --decrypt ${path.join(tmp, "llm-access.gpg")}`;
  return buildGateSettings(config, project, {
    mode,
    tokenFile: path.join(scootHome, "token"),
    scootHome,
    skillDirs: [path.join(scootHome, "skills", "greeter")],
    env,
  });
}

describe("Scoot's own places in the gate", () => {
  const places = () => [
    path.join(scootHome, "config.toml"),
    path.join(scootHome, "logs", "audit.jsonl"),
    path.join(userHome, ".scoot", "config.toml"),
    path.join(tmp, "audit-chain.bin"),
    path.join(tmp, "llm-access.gpg"),
    path.join(userHome, ".codex", "auth.json"),
  ];
  it("guarded refuses reads and writes of each, by absolute path", () => {
    const s = settings("guarded");
    for (const p of places()) {
      const r = judgeReadPath(p, s);
      expect(r.allow, p).toBe(false);
      expect(!r.allow && r.reason).toMatch(/Scoot's own/);
      expect(judgeWritePath(p, { ...s, confineWrites: false }).allow, p).toBe(false);
    }
  });
  it("a symlink in the project that leads into the home is refused too", () => {
    const link = path.join(project, "cfg-link");
    fs.symlinkSync(path.join(scootHome, "config.toml"), link);
    expect(judgeReadPath("cfg-link", settings("guarded")).allow).toBe(false);
    expect(judgeReadPath("cfg-link", settings("readonly")).allow).toBe(false);
    fs.rmSync(link);
  });
  it("unrestricted allows them; an ordinary project file is allowed everywhere", () => {
    expect(judgeReadPath(path.join(scootHome, "config.toml"), settings("unrestricted")).allow).toBe(true);
    for (const mode of ["readonly", "guarded"] as const)
      expect(judgeReadPath("ordinary.txt", settings(mode)).allow).toBe(true);
  });
  it("a loaded skill's folder stays readable (not writable) inside the home", () => {
    const skill = path.join(scootHome, "skills", "greeter", "SKILL.md");
    expect(judgeReadPath(skill, settings("guarded")).allow).toBe(true);
    expect(judgeWritePath(skill, { ...settings("guarded"), confineWrites: false }).allow).toBe(false);
  });
  it("identities: the config, the HMAC key and the command's file are protected under any name", () => {
    const s = settings("guarded");
    for (const f of [
      path.join(scootHome, "config.toml"),
      path.join(tmp, "audit-chain.bin"),
      path.join(tmp, "llm-access.gpg"),
    ]) {
      const linked = path.join(project, `hard-${path.basename(f)}`);
      fs.linkSync(f, linked);
      expect(isProtectedIdentity(s, fs.statSync(linked)), f).toBe(true);
      fs.rmSync(linked);
    }
    expect(isProtectedIdentity(s, fs.statSync(path.join(project, "ordinary.txt")))).toBe(false);
    expect(
      isProtectedIdentity(settings("unrestricted"), fs.statSync(path.join(tmp, "audit-chain.bin"))),
    ).toBe(false);
    expect(identityKey({ dev: 1n, ino: 2n })).toBe(identityKey({ dev: 1, ino: 2 }));
  });
});

/**
 * A guarded write to a kept compiled-code file (`cacheFile`, run as Scoot's own code by the next
 * run) under every name an attacker would try first, with a control; a hard link to it is a
 * protected identity.
 */
function refusedUnderEveryName(cacheFile: string, s: ReturnType<typeof settings>): void {
  const writable = (p: string) => judgeWritePath(p, { ...s, confineWrites: false }).allow;
  const dir = path.dirname(cacheFile);
  const name = path.basename(cacheFile);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(cacheFile, "kept code\n");
  const dirLink = path.join(project, "cc");
  fs.symlinkSync(dir, dirLink);
  const fileLink = path.join(project, "kept.v8");
  fs.symlinkSync(cacheFile, fileLink);
  try {
    for (const p of [
      cacheFile, // as it is
      path.join(dir, "new-file.v8"), // a file not there yet
      path.join(dir, ".", name), // a dot segment
      path.join(dir, "..", path.basename(dir), name), // traversal
      `${dir}//${name}`, // a doubled separator
      path.join(dirLink, name), // through a symlinked directory in the project
      fileLink, // a symlink to the file
      path.relative(project, cacheFile), // relative, from the project
    ])
      expect(writable(p), p).toBe(false);
    // The control: the same check allows an ordinary project file.
    expect(writable(path.join(project, "ordinary.txt"))).toBe(true);
    // A hard link is the same file under a name outside the home: refused by its identity.
    const hard = path.join(project, "hard-kept.v8");
    fs.linkSync(cacheFile, hard);
    expect(isProtectedIdentity(s, fs.statSync(hard))).toBe(true);
    fs.rmSync(hard);
  } finally {
    fs.rmSync(dirLink);
    fs.rmSync(fileLink);
  }
}

describe("the app's kept compiled code (run as Scoot's own code by the next run)", () => {
  const cacheName = `scoot-app-1-2-3-${process.version}-${process.arch}.v8`;

  it("in the home's state/compile-cache: a guarded write is refused under every name an attacker would try first", () => {
    refusedUnderEveryName(path.join(scootHome, "state", "compile-cache", cacheName), settings("guarded"));
  });

  it("SCOOT_COMPILE_CACHE naming /, the user's home or the project protects none of them (Scoot does not use it)", () => {
    for (const value of ["/", userHome, project, tmp]) {
      const s = settings("guarded", { ...process.env, SCOOT_COMPILE_CACHE: value });
      const v = judgeWritePath(path.join(project, "ordinary.txt"), { ...s, confineWrites: false });
      expect(v.allow ? "allowed" : v.reason, value).toBe("allowed");
    }
  });

  it("in the directory SCOOT_COMPILE_CACHE names, outside the home: the same", () => {
    const named = path.join(tmp, "ci-cache", "compiled");
    const env = { ...process.env, SCOOT_COMPILE_CACHE: named };
    refusedUnderEveryName(path.join(named, cacheName), settings("guarded", env));
    // The control: without the variable, that directory is nobody's.
    expect(
      judgeWritePath(path.join(named, cacheName), { ...settings("guarded"), confineWrites: false }).allow,
    ).toBe(true);
  });
});

describe("dangerous project roots", () => {
  const opts = (mode: "readonly" | "guarded" | "unrestricted") => ({ mode, scootHome, userHome });
  it.each([
    ["/", "the filesystem root"],
    ["scootHome", "Scoot's home"],
    ["scootHome/logs", "Scoot's home"],
    ["defaultHome", "Scoot's home"],
  ])("%s is refused in readonly and guarded, with the directory and the fix", (which, what) => {
    const dir =
      which === "/"
        ? "/"
        : which === "defaultHome"
          ? path.join(userHome, ".scoot")
          : path.join(scootHome, which.replace(/^scootHome\/?/, ""));
    for (const mode of ["readonly", "guarded"] as const) {
      const r = refuseProjectRoot(dir, opts(mode));
      expect(r).toContain(`refusing to run in ${dir === "/" ? "/" : path.resolve(dir)}`);
      expect(r).toContain(what);
      expect(r).toContain("Fix:");
    }
    expect(refuseProjectRoot(dir, opts("unrestricted"))).toBeUndefined();
  });
  it("a project that contains the home, or one beside it, is fine", () => {
    expect(refuseProjectRoot(tmp, opts("guarded"))).toBeUndefined();
    expect(refuseProjectRoot(project, opts("guarded"))).toBeUndefined();
    expect(refuseProjectRoot(`${scootHome}-sibling`, opts("guarded"))).toBeUndefined();
  });
});
