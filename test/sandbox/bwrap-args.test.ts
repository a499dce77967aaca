/** The bwrap command line and the scrubbed environment, without running bwrap. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapOptions, MAX_PLAN_DIR_ENTRIES, type SandboxLayout } from "../../src/sandbox/bwrap.js";
import { scrubEnv } from "../../src/sandbox/env.js";
import { findOnPath } from "../../src/sandbox/probe.js";

let base: string;
let layout: SandboxLayout;
beforeAll(() => {
  // Not under /tmp: places there are skipped (the private /tmp hides them anyway).
  base = fs.realpathSync(fs.mkdtempSync(path.join("/var/tmp", "scoot-args-")));
  for (const d of ["proj/secrets", "home/.ssh", "home/.aws", "scoot"])
    fs.mkdirSync(path.join(base, d), { recursive: true });
  fs.writeFileSync(path.join(base, "home/.netrc"), "machine x\n");
  fs.writeFileSync(path.join(base, "scoot/token"), "t\n");
  fs.writeFileSync(path.join(base, "proj/secrets/prod.key"), "k\n");
  fs.writeFileSync(path.join(base, "elsewhere.txt"), "s\n");
  fs.symlinkSync(path.join(base, "elsewhere.txt"), path.join(base, "link-to-secret"));
  layout = {
    projectRoot: path.join(base, "proj"),
    cwd: path.join(base, "proj"),
    userHome: path.join(base, "home"),
    scootHome: path.join(base, "scoot"),
    tokenFile: path.join(base, "scoot/token"),
    secretPaths: [
      path.join(base, "proj/secrets/prod.key"),
      path.join(base, "link-to-secret"),
      path.join(base, "missing"),
    ],
    network: false,
  };
});
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

/** [flag, arg...] groups as one string each, for order checks. */
function mounts(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--ro-bind" || a === "--bind") out.push(`${a} ${args[++i]} ${args[++i]}`);
    else if (a === "--tmpfs" || a === "--dev" || a === "--proc" || a === "--chdir")
      out.push(`${a} ${args[++i]}`);
    else out.push(a);
  }
  return out;
}

describe("bwrap options", () => {
  it("read-only root, minimal /dev, own /proc, private /tmp, writable project, no caps, dies with Scoot", () => {
    const m = mounts(bwrapOptions(layout));
    expect(m.slice(0, 4)).toEqual([
      "--ro-bind / /",
      "--dev /dev",
      "--proc /proc",
      "--ro-bind /proc/sys /proc/sys",
    ]);
    expect(m).toContain("--tmpfs /tmp");
    expect(m).toContain(`--bind ${layout.projectRoot} ${layout.projectRoot}`);
    expect(m).toContain(`--chdir ${layout.projectRoot}`);
    for (const f of ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop"])
      expect(m).toContain(f);
    expect(m).not.toContain("--share-net");
    expect(mounts(bwrapOptions({ ...layout, network: true }))).toContain("--share-net");
  });
  it("forbids nested user namespaces with --unshare-user --disable-userns when the probe found them", () => {
    expect(bwrapOptions(layout)).not.toContain("--disable-userns");
    const args = bwrapOptions({ ...layout, disableUserns: true });
    const at = args.indexOf("--disable-userns");
    expect(args.slice(at - 1, at + 1)).toEqual(["--unshare-user", "--disable-userns"]);
    expect(args.indexOf("--unshare-all")).toBeLessThan(at);
  });
  it("hides Scoot's home, the credential stores and the secret paths (the real path of a symlink)", () => {
    const m = mounts(bwrapOptions(layout));
    expect(m).toContain(`--tmpfs ${base}/scoot`);
    expect(m).toContain(`--tmpfs ${base}/home/.ssh`);
    expect(m).toContain(`--tmpfs ${base}/home/.aws`);
    expect(m).toContain(`--ro-bind /dev/null ${base}/home/.netrc`);
    expect(m).toContain(`--ro-bind /dev/null ${base}/elsewhere.txt`);
    // A path that does not exist has nothing to hide (and no mount point).
    expect(m.some((x) => x.includes("missing"))).toBe(false);
  });
  it("a secret inside the project is hidden after the project is bound (later mounts cover earlier ones)", () => {
    const m = mounts(bwrapOptions(layout));
    const bind = m.indexOf(`--bind ${layout.projectRoot} ${layout.projectRoot}`);
    const secret = m.indexOf(`--ro-bind /dev/null ${base}/proj/secrets/prod.key`);
    const home = m.indexOf(`--tmpfs ${base}/scoot`);
    expect(secret).toBeGreaterThan(bind);
    expect(home).toBeLessThan(bind);
  });
  it("a project under /tmp is bound after the private /tmp; places elsewhere under /tmp are skipped", () => {
    const proj = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-args-proj-")));
    try {
      const m = mounts(bwrapOptions({ ...layout, projectRoot: proj, cwd: proj, scootHome: os.tmpdir() }));
      expect(m.indexOf(`--bind ${proj} ${proj}`)).toBeGreaterThan(m.indexOf("--tmpfs /tmp"));
      expect(m.filter((x) => x.startsWith("--tmpfs"))).not.toContain(
        `--tmpfs ${fs.realpathSync(os.tmpdir())}/`,
      );
    } finally {
      fs.rmSync(proj, { recursive: true, force: true });
    }
  });
  it("a protected place that is the project or inside it is hidden after the bind; its parents are pinned", () => {
    const scoot = path.join(base, "scoot");
    const m = mounts(bwrapOptions({ ...layout, projectRoot: scoot, cwd: scoot }));
    const bind = m.indexOf(`--bind ${scoot} ${scoot}`);
    expect(m.indexOf(`--tmpfs ${scoot}`)).toBeGreaterThan(bind);
    // Secrets in the project: each directory between the root and the secret bound onto itself first.
    const p = mounts(bwrapOptions(layout));
    const pin = p.indexOf(`--bind ${base}/proj/secrets ${base}/proj/secrets`);
    expect(pin).toBeGreaterThan(p.indexOf(`--bind ${layout.projectRoot} ${layout.projectRoot}`));
    expect(pin).toBeLessThan(p.indexOf(`--ro-bind /dev/null ${base}/proj/secrets/prod.key`));
  });
  it("/proc/sys and /proc/sysrq-trigger read-only, runtime directories hidden, the seccomp fd passed", () => {
    const xdg = path.join(base, "xdg");
    fs.mkdirSync(xdg, { recursive: true });
    const m = mounts(bwrapOptions({ ...layout, runtimeDir: xdg, seccompFd: 3 }));
    expect(m.indexOf("--ro-bind /proc/sys /proc/sys")).toBeGreaterThan(m.indexOf("--proc /proc"));
    if (fs.existsSync("/proc/sysrq-trigger"))
      expect(m).toContain("--ro-bind /proc/sysrq-trigger /proc/sysrq-trigger");
    expect(m).toContain(`--tmpfs ${fs.realpathSync("/run")}`);
    expect(m).toContain(`--tmpfs ${xdg}`);
    expect(m.at(-1)).toBe("3");
    expect(m.at(-2)).toBe("--seccomp");
  });
  it("a loaded skill's folder inside a hidden place is shown read-only after the hiding", () => {
    const skill = path.join(base, "scoot", "skills", "greeter");
    fs.mkdirSync(skill, { recursive: true });
    const m = mounts(bwrapOptions({ ...layout, skillDirs: [skill] }));
    expect(m.indexOf(`--ro-bind ${skill} ${skill}`)).toBeGreaterThan(m.indexOf(`--tmpfs ${base}/scoot`));
    // Outside any hidden place a skill is visible already: no extra mount.
    const visible = path.join(base, "proj");
    expect(mounts(bwrapOptions({ ...layout, skillDirs: [visible] }))).not.toContain(
      `--ro-bind ${visible} ${visible}`,
    );
  });
  it("never hides / itself (a secret_paths entry of / would blank the whole sandbox)", () => {
    const m = mounts(bwrapOptions({ ...layout, secretPaths: ["/"] }));
    expect(m.filter((x) => x === "--tmpfs /")).toEqual([]);
  });
});

describe("scrubbed environment", () => {
  const env = {
    PATH: "/usr/bin",
    HOME: "/root",
    LANG: "C.UTF-8",
    OPENAI_API_KEY: "sk-1",
    AWS_SECRET_ACCESS_KEY: "a",
    GITHUB_TOKEN: "g",
    NPM_TOKEN: "n",
    DB_PASSWORD: "p",
    MYSQL_PASSWD: "m",
    GOOGLE_APPLICATION_CREDENTIALS: "/k.json",
    ssh_auth_sock_key: "lower",
    KEYBOARD_LAYOUT: "us",
  };
  it.each([
    ["AWS_SECRET_ACCESS_KEY"],
    ["GITHUB_TOKEN"],
    ["DB_PASSWORD"],
    ["MYSQL_PASSWD"],
    ["GOOGLE_APPLICATION_CREDENTIALS"],
    ["ssh_auth_sock_key"],
    ["OPENAI_API_KEY"],
  ])("drops %s", (name) => {
    const r = scrubEnv(env, { tokenVar: "OPENAI_API_KEY", passthrough: [] });
    expect(r.env[name]).toBeUndefined();
    expect(r.dropped).toContain(name);
  });
  it("keeps ordinary variables", () => {
    const r = scrubEnv(env, { tokenVar: "OPENAI_API_KEY", passthrough: [] });
    expect(r.env).toMatchObject({ PATH: "/usr/bin", HOME: "/root", LANG: "C.UTF-8" });
  });
  it("tools.env_passthrough keeps a named one, but never the backend token variable", () => {
    const r = scrubEnv(env, { tokenVar: "OPENAI_API_KEY", passthrough: ["NPM_TOKEN", "OPENAI_API_KEY"] });
    expect(r.env.NPM_TOKEN).toBe("n");
    expect(r.env.OPENAI_API_KEY).toBeUndefined();
    expect(r.env.GITHUB_TOKEN).toBeUndefined();
  });
});

describe("finding helpers on PATH (never bwrap: see probe.test.ts)", () => {
  it("looks only in absolute PATH entries", () => {
    expect(findOnPath("sh", "/bin")).toBe("/bin/sh");
    expect(findOnPath("sh", "bin:relative")).toBeUndefined();
    expect(findOnPath("sh", undefined)).toBeUndefined();
  });
});

describe("while a plan binds: the project read-only but the plan's files", () => {
  let proj: string;
  beforeAll(() => {
    proj = path.join(base, "planproj");
    for (const d of ["src/deep", "docs", "big"]) fs.mkdirSync(path.join(proj, d), { recursive: true });
    for (const f of ["README.md", "notes.md", "src/a.ts", "src/b.ts", "src/deep/c.ts", "docs/x.md"])
      fs.writeFileSync(path.join(proj, f), "x\n");
    fs.symlinkSync("/etc/passwd", path.join(proj, "src", "link"));
    for (let i = 0; i < MAX_PLAN_DIR_ENTRIES + 1; i++)
      fs.writeFileSync(path.join(proj, "big", `f${i}`), "x\n");
  });
  const bound = (files: string[]) =>
    mounts(
      bwrapOptions({
        ...layout,
        projectRoot: proj,
        cwd: proj,
        secretPaths: [],
        planFiles: files.map((f) => path.resolve(proj, f)),
      }),
    );

  it.each<[string, string[], { rw: string[]; ro: string[]; never: string[] }]>([
    [
      "a named file in src: src writable, its other entries pinned read-only, the rest of the project read-only",
      ["src/a.ts"],
      { rw: ["src"], ro: ["", "src/b.ts", "src/deep"], never: ["", "docs", "src/a.ts"] },
    ],
    [
      "a named file at the root: the root writable, every other entry pinned (.git-like dirs too)",
      ["notes.md"],
      { rw: [""], ro: ["README.md", "src", "docs", "big"], never: ["notes.md"] },
    ],
    [
      "a named file that does not exist yet is creatable: its directory writable",
      ["docs/new.md"],
      { rw: ["docs"], ro: ["docs/x.md"], never: ["src"] },
    ],
    [
      "nested named directories: the inner one is bound writable after the outer, not pinned",
      ["src/a.ts", "src/deep/c.ts"],
      { rw: ["src", "src/deep"], ro: ["src/b.ts"], never: ["src/deep/c.ts"] },
    ],
    [
      "a file outside the project (lexically, by ..) opens nothing",
      ["../elsewhere.txt"],
      { rw: [], ro: [""], never: ["..", "src"] },
    ],
    [
      "a directory too large to pin entry by entry stays read-only but for its named file",
      ["big/f3"],
      { rw: ["big/f3"], ro: [""], never: ["big"] },
    ],
  ])("%s", (_name, files, want) => {
    const m = bound(files);
    const at = (rel: string) => (rel === "" ? proj : path.join(proj, rel));
    const rw = (rel: string) => `--bind ${at(rel)} ${at(rel)}`;
    const ro = (rel: string) => `--ro-bind ${at(rel)} ${at(rel)}`;
    // The project is never bound writable whole before the plan's binds.
    expect(m.indexOf(ro(""))).toBeGreaterThan(-1);
    for (const r of want.rw) expect(m).toContain(rw(r));
    for (const r of want.ro) expect(m).toContain(ro(r));
    for (const r of want.never) {
      // `never` lists what must not be writable (a bind of it, rw) — or for "", not writable whole.
      if (want.rw.includes(r)) continue;
      expect(m).not.toContain(rw(r));
    }
    // A symbolic link is never bound (a bind would follow it out of the project).
    expect(m.some((x) => x.includes(path.join(proj, "src", "link")))).toBe(false);
    // Each writable directory comes after the project's read-only bind, and its pins after it.
    for (const r of want.rw) expect(m.indexOf(rw(r))).toBeGreaterThan(m.indexOf(ro("")));
  });
});
