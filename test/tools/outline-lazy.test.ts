/**
 * Lazy loading of tree-sitter, proven in a fresh Node process rather than by a flag:
 * importing the outline tool must not load web-tree-sitter, outlining Markdown or plain
 * text must not either, and the first code file starts the grammar process
 * (src/tools/outline/grammar-process.ts), which parses it: web-tree-sitter never loads in Scoot's
 * own process. The child imports the TypeScript sources through a small module hook that
 * transpiles them with the project's TypeScript and reports every module URL it resolves.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needsBuiltCli } from "../helpers/cli.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const OUTLINE = pathToFileURL(path.join(ROOT, "src/tools/outline.ts")).href;

const HOOKS = `
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
let ts;
let port;
export function initialize(data) {
  port = data.port;
  // TypeScript 5.9's API (TypeScript 7 has no stable JS one: docs/architecture.md "Development").
  ts = createRequire(data.root + "/package.json")("typescript-5-api");
}
export async function resolve(specifier, context, next) {
  let found;
  try {
    found = await next(specifier, context);
  } catch (e) {
    // Sources import siblings as ./x.js; on disk they are ./x.ts.
    if (!(specifier.startsWith(".") && specifier.endsWith(".js") && context.parentURL?.endsWith(".ts"))) throw e;
    found = await next(specifier.slice(0, -3) + ".ts", context);
  }
  port.postMessage(found.url);
  return found;
}
export async function load(url, context, next) {
  if (!url.endsWith(".ts")) return next(url, context);
  const source = ts.transpileModule(readFileSync(fileURLToPath(url), "utf8"), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  }).outputText;
  return { format: "module", source, shortCircuit: true };
}
`;

const CHILD = `
import { readFileSync } from "node:fs";
import { register } from "node:module";
import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
const [hooks, root, outline, cwd] = process.argv.slice(2);
const { port1, port2 } = new MessageChannel();
register(hooks, { data: { root, port: port2 }, transferList: [port2] });
const resolved = () => {
  const urls = [];
  for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1)) urls.push(m.message);
  return urls;
};
const ctx = { cwd, signal: new AbortController().signal, timeoutMs: 30000, services: {} };
// The target the gate would resolve: the file in the project, no symlinks here.
const at = (p) => ({ read: [cwd + "/" + p], write: [] });
const report = {};
const { outlineTool } = await import(outline);
const grammarProcess = await import(new URL("./outline/grammar-process.ts", outline).href);
report.afterImport = resolved();
report.markdown = (await outlineTool.run({ path: "notes.md" }, ctx, at("notes.md"))).text;
report.text = (await outlineTool.run({ path: "notes.txt" }, ctx, at("notes.txt"))).text;
report.afterText = resolved();
report.helperAfterText = grammarProcess.grammarProcessPid() ?? null;
report.code = (await outlineTool.run({ path: "app.py" }, ctx, at("app.py"))).text;
report.afterCode = resolved();
const pid = grammarProcess.grammarProcessPid();
report.helperAfterCode = pid ?? null;
report.helperFlags = pid ? readFileSync("/proc/" + pid + "/cmdline", "utf8").split("\0") : [];
report.self = process.pid;
port1.close();
console.log(JSON.stringify(report));
`;

interface Report {
  afterImport: string[];
  markdown: string;
  text: string;
  afterText: string[];
  code: string;
  afterCode: string[];
  helperAfterText: number | null;
  helperAfterCode: number | null;
  helperFlags: string[];
  self: number;
}

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-outline-lazy-"));
  fs.writeFileSync(path.join(dir, "hooks.mjs"), HOOKS);
  fs.writeFileSync(path.join(dir, "child.mjs"), CHILD);
  fs.writeFileSync(path.join(dir, "notes.md"), "# Notes\n\n## Details\n");
  fs.writeFileSync(path.join(dir, "notes.txt"), "def helper(x)\n");
  fs.writeFileSync(path.join(dir, "app.py"), "class App:\n    def run(self):\n        pass\n");
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function runChild(): Promise<Report> {
  const hooks = pathToFileURL(path.join(dir, "hooks.mjs")).href;
  const args = [path.join(dir, "child.mjs"), hooks, ROOT, OUTLINE, dir];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: dir, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`child failed: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Report);
    });
  });
}

const isTreeSitter = (url: string) => url.includes("/node_modules/web-tree-sitter/");

beforeAll(() => {
  // The grammar process runs the built helper (dist/scoot-grammar.mjs).
  needsBuiltCli("scoot-grammar.mjs");
});

describe("tree-sitter loads lazily", () => {
  it("only when the first code file is outlined", async () => {
    const r = await runChild();
    // The hook saw the outline modules load, so an absent web-tree-sitter is meaningful.
    expect(r.afterImport.some((u) => u.endsWith("/src/tools/outline/treesitter.ts"))).toBe(true);
    expect(r.afterImport.filter(isTreeSitter)).toEqual([]);

    expect(r.markdown).toBe(
      "outline of notes.md (Markdown headings): 2 entries\nL1: # Notes\n  L3: ## Details",
    );
    expect(r.text).toBe("outline of notes.txt (keyword heuristic, best effort): 1 entry\nL1: def helper(x)");
    expect(r.afterText.filter(isTreeSitter)).toEqual([]);

    expect(r.code).toBe(
      "outline of app.py (Python, tree-sitter): 2 entries\nL1: class App\n  L2: def run(self)",
    );
    // Parsed in the grammar process, started with V8's --liftoff-only, and only now.
    expect(r.helperAfterText).toBeNull();
    expect(r.helperAfterCode).not.toBeNull();
    expect(r.helperAfterCode).not.toBe(r.self);
    expect(r.helperFlags).toContain("--liftoff-only");
    expect(r.afterCode.filter(isTreeSitter)).toEqual([]);
  });
});
