/**
 * The shape of src/: the import graph computed from the sources (static imports, re-exports,
 * type imports and dynamic `import()`), with no circle between files or between folders, and
 * every folder importing only folders below it in LAYERS (docs/architecture.md "Layers").
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/cli.js";
import { sourceFiles } from "../helpers/source-files.js";

const SRC = path.join(REPO_ROOT, "src");

/**
 * Bottom to top. A folder may import its own files and any folder before it; `(root)` is
 * src/main.ts and src/app.ts, the entry points.
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
    // app.ts loads every command with import(); main.ts imports app.ts the same way.
    expect(files.get("app.ts")).toContain("cli/run.ts");
    expect(files.get("main.ts")).toContain("cli/args.ts");
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
      const text = fs.readFileSync(path.join(SRC, file), "utf8");
      for (const m of text.matchAll(/^export\s+(type\s+)?(\*|\{[^}]*\})\s*from\s+"[^"]+"/gm)) {
        shims.push(`${file}: ${m[0].replace(/\s+/g, " ")}`);
      }
    }
    expect(shims).toEqual([]);
  });
});
