/**
 * Comments in src/ say why, and point at what a reader can open: a README or docs/ section
 * (which must exist) or a test. They never cite a tracker's issue number or a contract
 * document the repository does not hold.
 */
import fs from "node:fs";
import path from "node:path";
// TypeScript 5.9's parser API: TypeScript 7, the compiler, has no stable one (docs/architecture.md "Development").
import ts from "typescript-5-api";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/cli.js";
import { sourceFiles } from "../helpers/source-files.js";

const SRC = path.join(REPO_ROOT, "src");

/** A citation of the tracker or of an outside contract: "issue 12", "issues 3 and 4", "#12", "SPEC 7". */
const CITATION = {
  test: (line: string) =>
    /\bissues?\s+#?\d+/i.test(line) || /(^|[\s(])#\d+\b/.test(line) || /\bSPEC\b/.test(line),
};

/** `README "Section"` or `docs/page.md "Section"`: a pointer a reader can follow. */
const POINTER = /\b(README|docs\/[a-z0-9-]+\.md)\s+"([^"]+)"/g;

/** Every comment of a TypeScript source: the comment ranges around each node of its syntax tree. */
function comments(text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile("x.ts", text, ts.ScriptTarget.Latest, true);
  const seen = new Map<number, string>();
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(text, node.getEnd()));
    node.getChildren(source).forEach(visit);
  };
  visit(source);
  return [...seen]
    .sort(([a], [b]) => a - b)
    .map(([pos, body]) => ({ line: source.getLineAndCharacterOfPosition(pos).line + 1, text: body }));
}

/**
 * The Markdown headings of a page, as a pointer may name them: without backticks, whole or up
 * to a colon (`### The daemon: \`scoot daemon run\`` is "The daemon").
 */
function headings(file: string): Set<string> {
  const text = fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
  const names = new Set<string>();
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    const plain = (m[1] ?? "").replaceAll("`", "");
    names.add(plain);
    if (plain.includes(":")) names.add(plain.slice(0, plain.indexOf(":")));
  }
  return names;
}

function docPages(): string[] {
  const dir = path.join(REPO_ROOT, "docs");
  const pages = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".md")) : [];
  return ["README.md", ...pages.map((p) => `docs/${p}`)];
}

describe("comments in src/", () => {
  const all = sourceFiles(SRC).flatMap((file) =>
    comments(fs.readFileSync(file, "utf8")).map((c) => ({ ...c, file: path.relative(REPO_ROOT, file) })),
  );

  it("are found by the scanner, and the citation rule catches what it should", () => {
    expect(all.length).toBeGreaterThan(1000);
    const sample = comments('const a = "// issue 3"; /* issue 12 */ const r = /#1/; // SPEC 7\n');
    expect(sample.map((c) => c.text)).toEqual(["/* issue 12 */", "// SPEC 7"]);
    for (const bad of ["(issue 12)", "issue 17 item 7", "Issues 3 and 4", "see #42", "SPEC 8", "(SPEC: x)"])
      expect(CITATION.test(bad), bad).toBe(true);
    for (const fine of ["an issue with the 30 s deadline", "spec-compliant servers", "C#", "item 7"])
      expect(CITATION.test(fine), fine).toBe(false);
  });

  it("cite no issue number and no SPEC", () => {
    const cited = all
      .filter((c) => c.text.split("\n").some((l) => CITATION.test(l)))
      .map(
        (c) =>
          `${c.file}:${c.line}: ${c.text
            .split("\n")
            .find((l) => CITATION.test(l))
            ?.trim()}`,
      );
    expect(cited).toEqual([]);
  });

  it("point only at README and docs/ sections that exist", () => {
    const pages = new Map(docPages().map((p) => [p === "README.md" ? "README" : p, headings(p)]));
    const broken: string[] = [];
    for (const c of all) {
      const text = c.text.replace(/\n\s*(\*|\/\/)\s*/g, " ");
      for (const m of text.matchAll(POINTER)) {
        const [page, section] = [m[1] ?? "", (m[2] ?? "").replace(/\s+/g, " ")];
        if (!pages.get(page)?.has(section)) broken.push(`${c.file}:${c.line}: ${page} "${section}"`);
      }
    }
    expect(broken).toEqual([]);
  });
});
