/**
 * The shape of src/: the import graph computed from the sources (static imports, re-exports,
 * type imports and dynamic `import()`), with no circle between files or between folders, and
 * every folder importing only folders below it in LAYERS (docs/architecture.md "Layers").
 */
import fs from "node:fs";
import path from "node:path";
// TypeScript 5.9's parser API: TypeScript 7, the compiler, has no stable one (docs/architecture.md "Development").
import ts from "typescript-5-api";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/cli.js";
import { sourceFiles } from "../helpers/source-files.js";

const SRC = path.join(REPO_ROOT, "src");

/**
 * Bottom to top. A folder may import its own files and any folder before it; `(root)` is
 * src/main.ts, src/entry.ts and src/app.ts, the entry points.
 */
const LAYERS = [
  "core",
  "config",
  "store",
  "policy",
  "net",
  "backend",
  "sandbox",
  "mcp",
  "skills",
  "tools",
  "agent",
  "schedule",
  "telemetry",
  "serve",
  "acp",
  "lib",
  "cli",
  "(root)",
] as const;

/** Folder entry points whose job is to re-export (the library's public surface, folder facades). */
const REEXPORT_ALLOWED = new Set(["lib/index.ts", "lib/scoot.ts", "skills/index.ts", "backend/index.ts"]);

type Graph = Map<string, Set<string>>;

/** `./x.js` from `from` → the .ts file it names, relative to src/; undefined for a package. */
function resolveSpecifier(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = path.resolve(path.dirname(from), spec).replace(/\.js$/, "");
  for (const candidate of [`${base}.ts`, path.join(base, "index.ts")]) {
    if (fs.existsSync(candidate)) return path.relative(SRC, candidate);
  }
  throw new Error(`${path.relative(SRC, from)} imports "${spec}", which names no file in src/`);
}

function fileGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(SRC)) {
    const info = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
    const targets = new Set<string>();
    for (const ref of info.importedFiles) {
      const target = resolveSpecifier(file, ref.fileName);
      if (target) targets.add(target);
    }
    graph.set(path.relative(SRC, file), targets);
  }
  return graph;
}

function folderOf(file: string): string {
  const parts = file.split(path.sep);
  return parts.length > 1 ? (parts[0] ?? "(root)") : "(root)";
}

function folderGraph(files: Graph): Graph {
  const graph: Graph = new Map();
  for (const [from, targets] of files) {
    const a = folderOf(from);
    if (!graph.has(a)) graph.set(a, new Set());
    for (const to of targets) {
      const b = folderOf(to);
      if (a !== b) graph.get(a)?.add(b);
    }
  }
  return graph;
}

/** The strongly connected components with more than one member (Tarjan): every circle. */
function circles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("the import graph of src/", () => {
  const files = fileGraph();
  const folders = folderGraph(files);

  it("finds a circle when there is one (the check can fail)", () => {
    const g: Graph = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a"])],
      ["d", new Set(["a"])],
    ]);
    expect(circles(g)).toEqual([["a", "b", "c"]]);
    expect(circles(new Map([["x", new Set(["x"])]]))).toEqual([["x"]]);
    expect(circles(new Map([["a", new Set(["b"])]]))).toEqual([]);
  });

  it("reads every kind of import, dynamic and type-only included", () => {
    expect(files.size).toBeGreaterThan(100);
    // app.ts loads every command with import(); entry.ts (main.ts's routing) imports app.ts the same way.
    expect(files.get("app.ts")).toContain("cli/run.ts");
    expect(files.get("main.ts")).toContain("entry.ts");
    expect(files.get("entry.ts")).toContain("cli/args.ts");
    expect(files.get("entry.ts")).toContain("app.ts");
    // A type-only import is an edge too.
    expect(files.get("tools/types.ts")).toContain("sandbox/launch.ts");
  });

  it("has no circle between files", () => {
    expect(circles(files)).toEqual([]);
  });

  it("has no circle between folders", () => {
    expect(circles(folders)).toEqual([]);
  });

  it("has every folder in the layer list, and each imports only folders below it", () => {
    const rank = new Map<string, number>(LAYERS.map((name, i) => [name, i]));
    const unlisted = [...folders.keys()].filter((f) => !rank.has(f));
    expect(unlisted, "a new folder in src/: add it to LAYERS where it belongs").toEqual([]);
    const upward: string[] = [];
    for (const [from, targets] of files) {
      for (const to of targets) {
        const a = folderOf(from);
        const b = folderOf(to);
        if (a !== b && (rank.get(b) ?? 0) > (rank.get(a) ?? 0)) upward.push(`${from} -> ${to}`);
      }
    }
    expect(upward, "a lower layer imports a higher one").toEqual([]);
  });

  it("has no re-export shims outside the library surface and folder facades", () => {
    const shims: string[] = [];
    for (const file of files.keys()) {
      if (REEXPORT_ALLOWED.has(file)) continue;
      for (const found of reexports(fs.readFileSync(path.join(SRC, file), "utf8")))
        shims.push(`${file}: ${found}`);
    }
    expect(shims).toEqual([]);
  });
});

/**
 * Every way a module hands on a name it did not define: `export … from`, and a name imported and
 * exported again (`export { x }`, `export default x`, `export const y = x` or `= ns.x`,
 * `export type T = U` for an imported U). Each is a second address for one thing, which hides
 * where it lives and lets an import skip a layer. Returns the offending statements, whitespace
 * collapsed.
 */
function reexports(text: string): string[] {
  const source = ts.createSourceFile("x.ts", text, ts.ScriptTarget.Latest, true);
  const imported = new Set<string>();
  for (const st of source.statements) {
    if (!ts.isImportDeclaration(st) || !st.importClause) continue;
    const clause = st.importClause;
    if (clause.name) imported.add(clause.name.text);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) imported.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings))
      for (const el of bindings.elements) imported.add(el.name.text);
  }
  /** The identifier an expression starts from: `x`, `x.y.z`, `(x)`, `x as T`. */
  const root = (e: ts.Expression): string | undefined => {
    if (ts.isIdentifier(e)) return e.text;
    if (ts.isPropertyAccessExpression(e)) return root(e.expression);
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e))
      return root(e.expression);
    return undefined;
  };
  const isImported = (e: ts.Expression | undefined) => {
    const name = e && root(e);
    return name !== undefined && imported.has(name);
  };
  const exported = (st: ts.Statement) =>
    ts.canHaveModifiers(st) &&
    (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const found: ts.Statement[] = [];
  for (const st of source.statements) {
    if (ts.isExportDeclaration(st)) {
      if (st.moduleSpecifier) found.push(st);
      else if (
        st.exportClause &&
        ts.isNamedExports(st.exportClause) &&
        st.exportClause.elements.some((el) => imported.has((el.propertyName ?? el.name).getText(source)))
      )
        found.push(st);
    } else if (ts.isExportAssignment(st)) {
      if (isImported(st.expression)) found.push(st);
    } else if (ts.isVariableStatement(st) && exported(st)) {
      if (st.declarationList.declarations.some((d) => isImported(d.initializer))) found.push(st);
    } else if (ts.isTypeAliasDeclaration(st) && exported(st)) {
      const t = st.type;
      if (ts.isTypeReferenceNode(t) && !t.typeArguments) {
        const name = ts.isIdentifier(t.typeName)
          ? t.typeName.text
          : t.typeName.left.getText(source).split(".")[0];
        if (name !== undefined && imported.has(name)) found.push(st);
      }
    }
  }
  return found.map((st) => st.getText(source).replace(/\s+/g, " "));
}

describe("the re-export detector", () => {
  const cases: { name: string; text: string; found: string[] }[] = [
    { name: "export … from", text: 'export { a } from "./a.js";', found: ['export { a } from "./a.js";'] },
    { name: "export * from", text: 'export * from "./a.js";', found: ['export * from "./a.js";'] },
    {
      name: "export type … from",
      text: 'export type { T } from "./a.js";',
      found: ['export type { T } from "./a.js";'],
    },
    {
      name: "import then export",
      text: 'import { x } from "./a.js";\nexport { x };',
      found: ["export { x };"],
    },
    {
      name: "import then export under another name",
      text: 'import { x as y } from "./a.js";\nexport { y as z };',
      found: ["export { y as z };"],
    },
    {
      name: "a type imported and exported again",
      text: 'import type { T } from "./a.js";\nexport type { T };',
      found: ["export type { T };"],
    },
    {
      name: "export const of an imported name",
      text: 'import { x } from "./a.js";\nexport const y = x;',
      found: ["export const y = x;"],
    },
    {
      name: "export const of a namespace member",
      text: 'import * as ns from "./a.js";\nexport const f = ns.f;',
      found: ["export const f = ns.f;"],
    },
    {
      name: "export default of an imported name",
      text: 'import x from "./a.js";\nexport default x;',
      found: ["export default x;"],
    },
    {
      name: "a type alias that only renames an imported type",
      text: 'import type { T } from "./a.js";\nexport type U = T;',
      found: ["export type U = T;"],
    },
    {
      name: "an own name exported by a list",
      text: 'import { x } from "./a.js";\nconst own = x + 1;\nexport { own };',
      found: [],
    },
    {
      name: "an own value computed from an import",
      text: 'import { x } from "./a.js";\nexport const y = x(1);\nexport const z = { x };',
      found: [],
    },
    {
      name: "a type built from an imported one",
      text: 'import type { T } from "./a.js";\nexport type U = T & { a: 1 };\nexport type V = Partial<T>;',
      found: [],
    },
    { name: "an own declaration", text: "export function f() {}\nexport const a = 1;", found: [] },
    {
      name: "an import used but not exported",
      text: 'import { x } from "./a.js";\nexport function f() { return x; }',
      found: [],
    },
  ];
  it.each(cases)("$name", ({ text, found }) => {
    expect(reexports(text)).toEqual(found);
  });
});
