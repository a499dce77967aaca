/**
 * Persistence places in the gate: every row refused to the file tools' writes in guarded
 * (readonly refuses all writes), reached directly, with case and width tricks, through
 * `./` and `a/../`, and through symlinks; reads stay allowed. The docs/safety.md list is
 * generated from the table (UPDATE_README=1 rewrites it).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { judgeReadPath, judgeWritePath } from "../../src/policy/paths.js";
import { PERSISTENCE_PLACES, persistencePlaceOf } from "../../src/policy/persistence-places.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import { REPO_ROOT } from "../helpers/cli.js";

let tmp: string;
let project: string;

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-persist-")));
  project = path.join(tmp, "project");
  fs.mkdirSync(path.join(project, ".git", "hooks"), { recursive: true });
  fs.writeFileSync(path.join(project, ".git", "config"), "[core]\n");
  fs.writeFileSync(path.join(project, "ordinary.txt"), "o\n");
  fs.symlinkSync(".git/hooks", path.join(project, "hooks-link"));
  fs.symlinkSync(".git/config", path.join(project, "cfg-link"));
  fs.symlinkSync(".git", path.join(project, "g"));
  fs.mkdirSync(path.join(project, "home", ".config"), { recursive: true });
  fs.symlinkSync("home/.config", path.join(project, "conf"));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function settings(mode: "readonly" | "guarded" | "unrestricted", confine = true) {
  const config = defaultConfig();
  config.tools.confine_writes = confine;
  return buildGateSettings(config, project, { mode });
}

/** A path inside the row, relative to the project (system rows: absolute). */
function inside(row: (typeof PERSISTENCE_PLACES)[number]): string {
  if (row.scope === "system") return `${row.path}/x`;
  if (row.path.endsWith("hooks") || row.path.endsWith("fish") || row.path.includes("/"))
    return row.scope === "repository" && !row.path.endsWith("hooks") ? row.path : `${row.path}/x`;
  return row.path;
}

describe("every persistence place is refused to guarded writes", () => {
  const rows = PERSISTENCE_PLACES.filter((r) => r.scope !== "system");
  it.each(rows.map((r) => [r.path, r] as const))("%s", (_, row) => {
    const s = settings("guarded");
    const p = inside(row);
    for (const spelled of [p, `./${p}`, `a/../${p}`, p.toUpperCase(), `sub/${p}`]) {
      const r = judgeWritePath(spelled, s);
      expect(r.allow, spelled).toBe(false);
      // .ssh/rc is refused first as a secret-like name.
      if (!r.allow)
        expect(r.reason).toMatch(/persistence place .*Fix: make this change yourself|secret-like/);
    }
    expect(judgeWritePath(p, settings("readonly")).allow).toBe(false);
    expect(judgeWritePath(p, settings("unrestricted")).allow).toBe(true);
  });
  it.each(PERSISTENCE_PLACES.filter((r) => r.scope === "system").map((r) => [r.path] as const))(
    "%s (absolute, even with confine_writes off)",
    (p) => {
      const r = judgeWritePath(`${p}/x`, settings("guarded", false));
      expect(r.allow).toBe(false);
    },
  );
  it("in the user's home, by absolute path, with confine_writes off", () => {
    const s = settings("guarded", false);
    for (const p of [".bashrc", ".profile", ".config/fish/config.fish", ".local/bin/ls", ".ssh/rc"]) {
      expect(judgeWritePath(path.join(os.homedir(), p), s).allow, p).toBe(false);
    }
  });
});

describe("tricks", () => {
  it("fullwidth and trailing dots fold like secret names", () => {
    const s = settings("guarded");
    for (const p of [".ＢＡＳＨＲＣ", ".bashrc.", ".git/HOOKS/pre-commit", ".GIT/Config"]) {
      expect(judgeWritePath(p, s).allow, p).toBe(false);
    }
  });
  it("symlinks to a persistence place are judged where they lead", () => {
    const s = settings("guarded");
    for (const p of [
      "hooks-link/pre-commit",
      "cfg-link",
      "g/config",
      "g/hooks/post-checkout",
      "conf/fish/x",
    ]) {
      const r = judgeWritePath(p, s);
      expect(r.allow, p).toBe(false);
    }
  });
  it("submodule and worktree git dirs count; reads stay allowed; ordinary files stay writable", () => {
    const s = settings("guarded");
    expect(judgeWritePath(".git/modules/lib/hooks/pre-commit", s).allow).toBe(false);
    expect(judgeWritePath(".git/worktrees/w/commondir", s).allow).toBe(false);
    expect(judgeReadPath(".git/config", s).allow).toBe(true);
    expect(judgeReadPath(".bashrc", s).allow).toBe(true);
    for (const p of ["ordinary.txt", "src/config.ts", "docs/hooks.md", "git/config", "bashrc", "bin/x"]) {
      expect(judgeWritePath(p, s).allow, p).toBe(true);
    }
    expect(persistencePlaceOf("/srv/app/.git/objects/ab/cd")).toBeUndefined();
  });
});

describe("docs/safety.md lists the table", () => {
  const README = path.join(REPO_ROOT, "docs", "safety.md");
  const start = "<!-- persistence-places:start -->";
  const end = "<!-- persistence-places:end -->";
  const where = { home: "anywhere (home, project)", repository: "inside any `.git`", system: "absolute" };
  const text = [
    start,
    "| place | matched | why |",
    "|---|---|---|",
    ...PERSISTENCE_PLACES.map(
      (r) => `| \`${r.path}\` | ${where[r.scope]} | ${r.why.replace(/\|/g, "\\|")} |`,
    ),
    end,
  ].join("\n");
  it("exactly", () => {
    const re = new RegExp(`${start}\\n[^]*?${end}`);
    let doc = fs.readFileSync(README, "utf8");
    if (process.env.UPDATE_README === "1") {
      doc = doc.replace(re, text);
      fs.writeFileSync(README, doc);
    }
    expect(
      re.exec(doc)?.[0],
      "docs/safety.md block missing; run UPDATE_README=1 npx vitest run test/policy/persistence-places.test.ts",
    ).toBe(text);
  });
});
