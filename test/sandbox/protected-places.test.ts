/**
 * The protected-places and env-scrub tables, the docs/safety.md lists generated from them (run
 * with UPDATE_README=1 to rewrite the lists), the scrub rules as an adversarial table, and the
 * seccomp program's shape.
 */

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tokenCommandFiles } from "../../src/config/token-command-files.js";
import { CREDENTIAL_POINTERS, CREDENTIAL_STORES } from "../../src/policy/protected-places.js";
import { ENV_SCRUB_RULES, scrubEnv } from "../../src/sandbox/env.js";
import { SECCOMP_ABIS, seccompProgram } from "../../src/sandbox/seccomp.js";
import { REPO_ROOT } from "../helpers/cli.js";

/** The page that lists them (docs/safety.md "What is protected"). */
const README = path.join(REPO_ROOT, "docs", "safety.md");

function block(name: string, rows: string[]): { re: RegExp; text: string } {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  return {
    re: new RegExp(`${start}\\n[^]*?${end}`),
    text: `${start}\n${rows.join("\n")}\n${end}`,
  };
}

const esc = (s: string) => s.replace(/\|/g, "\\|");
const blocks = [
  block("credential-stores", [
    "| path under `~` | what |",
    "|---|---|",
    ...CREDENTIAL_STORES.map((e) => `| \`${e.path}\` | ${esc(e.what)} |`),
  ]),
  block("credential-pointers", [
    "| variable | names | what |",
    "|---|---|---|",
    ...CREDENTIAL_POINTERS.map(
      (p) =>
        `| \`${p.variable}\` | ${p.kind === "list" ? "files, `:`-separated" : p.kind === "dir" ? "a directory" : "a file"} | ${esc(p.what)} |`,
    ),
  ]),
  block("env-rules", [
    "| rule | why |",
    "|---|---|",
    ...ENV_SCRUB_RULES.map((r) => `| ${esc(r.shown)} | ${esc(r.why)} |`),
  ]),
];

describe("docs/safety.md lists kept in step with the code's tables", () => {
  it("the credential stores, the credential-pointing variables and the env rules are listed exactly", () => {
    let text = fs.readFileSync(README, "utf8");
    if (process.env.UPDATE_README === "1") {
      for (const b of blocks) text = text.replace(b.re, b.text);
      fs.writeFileSync(README, text);
    }
    for (const b of blocks) {
      const found = b.re.exec(text)?.[0];
      expect(
        found,
        "docs/safety.md block missing; run UPDATE_README=1 npx vitest run test/sandbox/protected-places.test.ts",
      ).toBe(b.text);
    }
  });
  it("keeps the entries the issue names (and the ones hidden before)", () => {
    const paths = CREDENTIAL_STORES.map((e) => e.path);
    for (const p of [
      ".config/git/credentials",
      ".terraformrc",
      ".my.cnf",
      ".codex",
      ".claude",
      ".mozilla",
      ".pgpass",
      ".config/gh",
      ".vault-token",
      ".cargo/credentials.toml",
      ".ssh",
      ".aws",
    ])
      expect(paths).toContain(p);
    expect(new Set(paths).size).toBe(paths.length);
  });
});

describe("env scrub rules (word of the name split at _, userinfo URLs, socket variables)", () => {
  const dropped: [string, string][] = [
    ["DATABASE_URL", "postgres://app:hunter2@db/app"],
    ["REDIS", "redis://:pw@cache:6379"],
    ["DB_PASS", "x"],
    ["DB_PWD", "x"],
    ["MYSQL_PWD", "x"],
    ["CI_JOB_JWT", "x"],
    ["GH_PAT", "x"],
    ["gh_pat", "x"],
    ["DOCKER_AUTH_CONFIG", "x"],
    ["SENTRY_DSN", "https://k@o1.ingest.sentry.io/1"],
    ["SLACK_WEBHOOK_URL", "https://hooks.slack.com/x"],
    ["SESSION_COOKIE", "x"],
    ["GPG_PRIVATE", "x"],
    ["OPENAI_API_KEY", "x"],
    ["SSH_AUTH_SOCK", "/run/user/0/agent"],
    ["DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"],
    ["TMUX", "/tmp/tmux-0/default,1,0"],
    ["STY", "1.pts-0"],
    ["GPG_AGENT_INFO", "x"],
    ["WAYLAND_DISPLAY", "wayland-0"],
    ["DISPLAY", ":0"],
    ["DOCKER_HOST", "unix:///var/run/docker.sock"],
    ["XDG_RUNTIME_DIR", "/run/user/0"],
  ];
  const kept: [string, string][] = [
    ["PATH", "/usr/bin"],
    ["PWD", "/p"],
    ["OLDPWD", "/q"],
    ["LANG", "C.UTF-8"],
    ["HOME", "/root"],
    ["PATCH_LEVEL", "1"],
    ["PASSAGE", "x"],
    ["COMPASS_DIR", "x"],
    ["AUTHOR_NAME", "x"],
    ["HOMEPAGE_URL", "https://example.com/x@y"],
    ["MAIL_TO", "user@example.com"],
  ];
  it.each(dropped)("drops %s", (name, value) => {
    const r = scrubEnv({ [name]: value }, { passthrough: [] });
    expect(r.env[name]).toBeUndefined();
    expect(r.dropped).toEqual([name]);
  });
  it.each(kept)("keeps %s", (name, value) => {
    expect(scrubEnv({ [name]: value }, { passthrough: [] }).env[name]).toBe(value);
  });
  it("tools.env_passthrough still wins (never for the backend token)", () => {
    const r = scrubEnv(
      { GH_PAT: "p", DATABASE_URL: "postgres://u:p@h/d", OPENAI_API_KEY: "t" },
      { tokenVar: "OPENAI_API_KEY", passthrough: ["GH_PAT", "DATABASE_URL", "OPENAI_API_KEY"] },
    );
    expect(r.env).toEqual({ GH_PAT: "p", DATABASE_URL: "postgres://u:p@h/d" });
  });
});

describe("the file behind backend.api_key_cmd", () => {
  it("names the words that are existing absolute or ~ files", () => {
    const file = path.join(REPO_ROOT, "package.json");
    expect(tokenCommandFiles(`cat ${file}`, "/nonexistent")).toEqual([file]);
    expect(tokenCommandFiles(`sh -c "cat '${file}'" | tr -d x`, "/nonexistent")).toEqual([file]);
    expect(tokenCommandFiles("pass show openai", "/nonexistent")).toEqual([]);
    expect(tokenCommandFiles(`gpg --decrypt ~/package.json`, REPO_ROOT)).toEqual([file]);
    expect(tokenCommandFiles(undefined, "/")).toEqual([]);
  });
});

describe("seccomp program", () => {
  function decode(buf: Buffer): [number, number, number, number][] {
    const out: [number, number, number, number][] = [];
    for (let o = 0; o < buf.length; o += 8)
      out.push([buf.readUInt16LE(o), buf[o + 2]!, buf[o + 3]!, buf.readUInt32LE(o + 4)]);
    return out;
  }
  it.each(Object.entries(SECCOMP_ABIS))(
    "%s: checks the architecture first, then the number, then AF_UNIX",
    (arch, abi) => {
      const p = seccompProgram(arch);
      if (!p.ok) throw new Error(p.reason);
      const insns = decode(p.program);
      expect(insns[0]).toEqual([0x20, 0, 0, 4]); // load seccomp_data.arch
      expect(insns[1]).toMatchObject([0x15, 0, expect.any(Number), abi.auditArch]);
      expect(insns[2 + insns[1]![2]]).toEqual([0x06, 0, 0, 0x00050001]); // another ABI: EPERM
      expect(insns.some(([c, , , k]) => c === 0x15 && k === abi.socket)).toBe(true);
      expect(insns.some(([c, , , k]) => c === 0x35 && k === 0x40000000)).toBe(abi.x32Bit);
      expect(insns.some(([c, , , k]) => c === 0x06 && k === 0x7fff0000)).toBe(true);
      expect(insns.some(([c, , , k]) => c === 0x06 && k === 0x0005000d)).toBe(true); // EACCES
      // Every jump lands inside the program.
      insns.forEach(([c, jt, jf], i) => {
        if ((c & 0x07) === 0x05) expect(i + 1 + Math.max(jt, jf)).toBeLessThan(insns.length);
      });
    },
  );
  it("another architecture has no filter, with the reason doctor shows", () => {
    expect(seccompProgram("riscv64")).toEqual({
      ok: false,
      reason: "no seccomp filter for the riscv64 architecture (Scoot builds one for x64 and arm64)",
    });
  });
});
