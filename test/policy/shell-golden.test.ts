// biome-ignore-all lint/suspicious/noTemplateCurlyInString: rows are shell text, where ${VAR} is literal
/**
 * Golden snapshot of the guarded shell classifier: every command of the shell rule tables
 * (test/fixtures/shell-golden-inputs.json, taken from shell.test.ts, shell-disks-signals-downloads.test.ts and
 * the `scoot policy check` e2e rows) plus generated variants of each — wrapper prefixes,
 * env assignments, quoting, case, pipes, separators, substitutions and `sh -c` bodies — with
 * the decision and the exact reason recorded in test/fixtures/shell-golden.json. Any change
 * to a decision or to one byte of a reason shows up here as a named row.
 *
 * To record the fixture again (only after a deliberate rule change):
 *   SCOOT_WRITE_SHELL_GOLDEN=1 npx vitest run test/policy/shell-golden.test.ts
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PolicyMode } from "../../src/config/schema.js";
import { checkShell } from "../../src/policy/shell.js";

const FIXTURES = path.join(import.meta.dirname, "..", "fixtures");
const INPUTS_FILE = path.join(FIXTURES, "shell-golden-inputs.json");
const GOLDEN_FILE = path.join(FIXTURES, "shell-golden.json");
/** Commands judged in readonly and unrestricted as well (those modes ignore the text). */
const OTHER_MODE_SAMPLE = 30;

interface GoldenRow {
  mode: PolicyMode;
  command: string;
  allow: boolean;
  reason?: string;
}

/** Single-quotes a text for a shell (`'` becomes `'\''`). */
function sq(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** Double-quotes a text for a shell. */
function dq(text: string): string {
  return `"${text.replace(/[\\"$`]/g, (c) => `\\${c}`)}"`;
}

function splitFirst(c: string): [string, string] {
  const m = /^(\S+)(.*)$/s.exec(c);
  return m ? [m[1]!, m[2]!] : [c, ""];
}

/** Each turns one table command into a spelling the lexer must see through. */
const VARIANTS: ReadonlyArray<(c: string) => string> = [
  (c) => `sudo ${c}`,
  (c) => `env A=1 ${c}`,
  (c) => `FOO=bar ${c}`,
  (c) => `nohup ${c}`,
  (c) => `timeout 5 ${c}`,
  (c) => `sh -c ${sq(c)}`,
  (c) => `bash -c ${dq(c)}`,
  (c) => `echo x | ${c}`,
  (c) => `${c} | cat`,
  (c) => `true && ${c}`,
  (c) => `echo $(${c})`,
  (c) => c.toUpperCase(),
  (c) => {
    const [w, rest] = splitFirst(c);
    return `${sq(w)}${rest}`;
  },
  (c) => `\\${c}`,
  (c) => `sudo -u root env -i ${c}`,
  (c) => `xargs ${c}`,
  (c) => `${c} ; ls`,
  (c) => `{ ${c}; }`,
  (c) => `eval ${sq(c)}`,
  (c) => `find . -name x -exec ${c} \\;`,
  (c) => `command ${c}`,
  (c) => c.replace(" ", "${IFS}"),
  (c) => `if true; then ${c}; fi`,
  (c) => {
    const [w, rest] = splitFirst(c);
    return `${w} -v${rest}`;
  },
  (c) => `nice -n 5 ${c}`,
  (c) => `(${c})`,
  (c) => `watch ${c}`,
  (c) => `${c} 2>/dev/null`,
  (c) => `a=1; ${c} || true`,
  (c) => `sudo env -S ${sq(c)}`,
  (c) => `su -c ${sq(c)}`,
  (c) => `X=/; ${c}`,
];

/** Commands built by code in the tables (repeats, nesting), kept small enough to store. */
function builtCommands(): string[] {
  let nest = "true";
  for (let i = 0; i < 20; i++) nest = `echo $(${nest})`;
  return [
    nest,
    "sudo ".repeat(600) + "rm -rf /",
    "sudo " + "-E ".repeat(600) + "rm -rf /",
    "sudo " + "-h ".repeat(40) + "rm -rf /",
    `${"sudo ".repeat(20)}rm -rf /`,
    `${"nice ".repeat(20)}ls -la`,
    Array.from({ length: 200 }, (_, i) => `echo line${i} >> out.txt`).join("\n"),
  ];
}

/** The rows to judge, in a fixed order: table commands, built ones, then variants. */
function goldenInputs(): Array<{ mode: PolicyMode; command: string }> {
  const base = JSON.parse(fs.readFileSync(INPUTS_FILE, "utf8")) as string[];
  const rows: Array<{ mode: PolicyMode; command: string }> = [];
  for (const command of [...base, ...builtCommands()]) rows.push({ mode: "guarded", command });
  const n = VARIANTS.length;
  base.forEach((c, i) => {
    const picks = new Set([i % n, (i * 7 + 3) % n, (i * 13 + 5) % n]);
    for (const k of picks) rows.push({ mode: "guarded", command: VARIANTS[k]!(c) });
  });
  for (const command of base.slice(0, OTHER_MODE_SAMPLE)) {
    rows.push({ mode: "readonly", command }, { mode: "unrestricted", command });
  }
  return rows;
}

function judge(rows: Array<{ mode: PolicyMode; command: string }>): GoldenRow[] {
  return rows.map(({ mode, command }) => {
    const d = checkShell(command, mode);
    return d.allow ? { mode, command, allow: true } : { mode, command, allow: false, reason: d.reason };
  });
}

describe("shell classifier golden snapshot", () => {
  const actual = judge(goldenInputs());
  if (process.env.SCOOT_WRITE_SHELL_GOLDEN === "1") {
    fs.writeFileSync(GOLDEN_FILE, `${JSON.stringify(actual, null, 1)}\n`);
  }
  const golden = JSON.parse(fs.readFileSync(GOLDEN_FILE, "utf8")) as GoldenRow[];

  it("judges the same commands, in the same order, as the recorded fixture", () => {
    expect(actual.map((r) => `${r.mode} ${r.command}`)).toEqual(golden.map((r) => `${r.mode} ${r.command}`));
  });

  it("gives every command the recorded decision and byte-identical reason", () => {
    const changed = actual.flatMap((now, i) =>
      JSON.stringify(now) === JSON.stringify(golden[i]) ? [] : [{ now, recorded: golden[i] }],
    );
    expect(changed).toEqual([]);
  });

  it("covers both outcomes and many distinct reasons", () => {
    const denied = golden.filter((r) => !r.allow);
    expect(golden.length).toBeGreaterThan(2000);
    expect(denied.length).toBeGreaterThan(500);
    expect(golden.length - denied.length).toBeGreaterThan(300);
    expect(new Set(denied.map((r) => r.reason)).size).toBeGreaterThan(100);
  });
});
