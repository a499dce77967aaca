/**
 * A tool is known by its declaration, not by its name spelled elsewhere: outside src/tools/ no
 * code compares an action with a tool's name or keys a table by it (a tool that shows well is
 * one file and one registry line). The scan reads string literals with the TypeScript parser,
 * so comments and prose inside longer strings do not count.
 *
 * `final` is also the word for a finished run (its status, its stop, its event and audit kind),
 * and so is `plan` for a planning run (SPEC §15: `"status": "plan"`, the `--plan` flag, the
 * `plan` audit kind); only their use as an action counts: compared with an `action`, or given
 * as an `action` field.
 */
import fs from "node:fs";
import path from "node:path";
// TypeScript 5.9's parser API: TypeScript 7, the compiler, has no stable one (docs/architecture.md "Development").
import ts from "typescript-5-api";
import { describe, expect, it } from "vitest";
import { TOOLS } from "../../src/tools/registry.js";
import { sourceFiles } from "../helpers/source-files.js";

/** The places that may spell a tool's name, and why (at most two). */
const ALLOWED: Record<string, string> = {
  // The shells a piped download runs in: `bash` the program, not the tool.
  "src/policy/shell-actions.ts": "bash",
  // The programs whose extra words are files, code or hosts: `bash` the shell, not the tool.
  "src/policy/command-options.ts": "bash",
};

const NAMES = new Set(TOOLS.map((t) => t.name));
const AMBIGUOUS: ReadonlySet<string> = new Set(["final", "plan"]);

interface Hit {
  file: string;
  line: number;
  name: string;
}

/** Whether a `final` or `plan` literal stands for the action (not the run's status or an event type). */
function usedAsAction(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isBinaryExpression(parent)) {
    const other = parent.left === node ? parent.right : parent.left;
    return /(^|\.)action$/.test(other.getText());
  }
  if (ts.isPropertyAssignment(parent)) return parent.name.getText() === "action";
  return false;
}

function toolNameLiterals(file: string, text: string): Hit[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const hits: Hit[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const name = node.text;
      if (NAMES.has(name) && (!AMBIGUOUS.has(name) || usedAsAction(node))) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        hits.push({ file, line, name });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return hits;
}

describe("tool names are spelled only in src/tools/", () => {
  it("the detector finds a comparison, a table key and an action field, and skips comments and statuses", () => {
    const sample = [
      'if (action === "bash") run();',
      'const t = tools.get("file_read");',
      '// a comment about `grep` and "glob"',
      'const s = { action: "final", status: "final" };',
      'if (r.status === "final") done();',
      'if (step.action === "final") answer();',
      'if (r.stop === "plan") show(); if (s.action === "plan") plan();',
      'const prose = "use the skill action";',
    ].join("\n");
    expect(toolNameLiterals("sample.ts", sample).map((h) => `${h.line}:${h.name}`)).toEqual([
      "1:bash",
      "2:file_read",
      "4:final",
      "6:final",
      "7:plan",
    ]);
  });

  it("outside src/tools/, only the named places spell one", () => {
    expect(Object.keys(ALLOWED).length).toBeLessThanOrEqual(2);
    const root = path.resolve("src");
    const hits: Hit[] = [];
    for (const file of sourceFiles(root)) {
      const rel = path.relative(process.cwd(), file);
      if (rel.startsWith(`src${path.sep}tools${path.sep}`)) continue;
      for (const hit of toolNameLiterals(rel, fs.readFileSync(file, "utf8"))) {
        if (ALLOWED[rel] !== hit.name) hits.push(hit);
      }
    }
    expect(hits.map((h) => `${h.file}:${h.line} "${h.name}"`)).toEqual([]);
    // Each allowed place still needs its exception, or it should leave the list.
    for (const [rel, name] of Object.entries(ALLOWED)) {
      const own = toolNameLiterals(rel, fs.readFileSync(rel, "utf8"));
      expect(
        own.some((h) => h.name === name),
        rel,
      ).toBe(true);
    }
  });
});
