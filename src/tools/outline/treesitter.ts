/**
 * Outline by real parse: web-tree-sitter with the prebuilt grammars of tree-sitter-wasms.
 *
 * Nothing here touches tree-sitter until a file needs it: the runtime is a dynamic
 * `import()` on first use (so `scoot --version` never pays for it), and the runtime
 * init and every grammar are loaded once per process and shared by concurrent calls.
 * Paths are resolved through the package resolver, so this works from `src/` under the
 * test runner and from the built `dist/` alike.
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import type { Language, Node, Tree } from "web-tree-sitter";
import { STDERR_PRINT, withConsoleOnStderr } from "../../core/console-guard.js";
import { type Collected, collector, type OutlineEntry, tidySignature } from "./entry.js";
import type { DefRule, LanguageSpec } from "./languages.js";

/** Raw source characters a signature is built from at most; it is clipped far below this anyway. */
const MAX_SIGNATURE_SOURCE_CHARS = 16 * 1024;
/** Longest load or parse error text quoted in the outline header. */
const MAX_ERROR_CHARS = 160;
/** Nodes walked between deadline checks. */
const DEADLINE_CHECK_EVERY = 4096;
/** Leading children that are not part of a signature. */
const DECORATIONS = new Set([
  "decorator",
  "annotation",
  "marker_annotation",
  "attribute_list",
  "attribute_item",
  "attribute",
]);
/** Wrappers of modifiers whose leading annotations are skipped the same way (Java, Kotlin, Swift, Scala). */
const MODIFIER_LISTS = new Set(["modifiers"]);

type Runtime = typeof import("web-tree-sitter");

const requireHere = createRequire(import.meta.url);
let runtime: Promise<Runtime> | undefined;
const grammars = new Map<string, Promise<Language>>();

/** Directory holding `tree-sitter-<name>.wasm` files from the installed tree-sitter-wasms. */
export function defaultGrammarDir(): string {
  return path.join(path.dirname(requireHere.resolve("tree-sitter-wasms/package.json")), "out");
}

function loadRuntime(): Promise<Runtime> {
  if (!runtime) {
    runtime = (async () => {
      const mod = await import("web-tree-sitter");
      const engine = requireHere.resolve("web-tree-sitter/tree-sitter.wasm");
      // Emscripten binds its print hooks here, once: point them at stderr (stdout is protocol).
      await withConsoleOnStderr(() => mod.Parser.init({ locateFile: () => engine, ...STDERR_PRINT }));
      return mod;
    })();
    // A failed init (unreadable engine) is retried by the next call rather than cached.
    runtime.catch(() => {
      runtime = undefined;
    });
  }
  return runtime;
}

function loadGrammar(rt: Runtime, file: string): Promise<Language> {
  let lang = grammars.get(file);
  if (!lang) {
    // web-tree-sitter links each grammar into one shared module; two loads in flight at
    // once mix up each other's symbols ("bad export type"), so loads run one at a time.
    lang = loadQueue.then(() => loadLanguageLazily(rt, file));
    loadQueue = lang.catch(() => undefined);
    grammars.set(file, lang);
    // A missing or corrupt grammar is retried next time (it may have been reinstalled).
    lang.catch(() => grammars.delete(file));
  }
  return lang;
}

let loadQueue: Promise<unknown> = Promise.resolve();

/**
 * `Language.load` instantiates with `WebAssembly.instantiate(bytes)`. On Node 20 that path
 * compiles the whole grammar eagerly, and once another grammar had parsed in the process it
 * took seconds per grammar on a busy two-core machine (Java: 6 s), while the synchronous
 * `new WebAssembly.Module` compiles lazily and loads the same grammar in milliseconds. So
 * while a grammar loads (never two at once), `WebAssembly.instantiate` is served
 * synchronously: same result, both overloads honoured, restored right after. Loading from
 * bytes settles within microtasks, so no timer or I/O callback runs while it is swapped.
 */
async function loadLanguageLazily(rt: Runtime, file: string): Promise<Language> {
  const bytes = fs.readFileSync(file);
  const asyncInstantiate = wasm.instantiate;
  wasm.instantiate = syncInstantiate;
  try {
    // A grammar without a language function is reported with console.log: keep it off stdout.
    return await withConsoleOnStderr(() => rt.Language.load(bytes));
  } finally {
    wasm.instantiate = asyncInstantiate;
  }
}

/** The slice of the WebAssembly global used here (the project's TypeScript libs do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports?: object) => object;
  instantiate: (source: unknown, imports?: object) => Promise<unknown>;
}

const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

function syncInstantiate(source: unknown, imports?: object): Promise<unknown> {
  try {
    if (source instanceof wasm.Module) return Promise.resolve(new wasm.Instance(source, imports));
    const module = new wasm.Module(source as Uint8Array);
    return Promise.resolve({ module, instance: new wasm.Instance(module, imports) });
  } catch (e) {
    return Promise.reject(e);
  }
}

export type GrammarOutcome =
  | { ok: true; collected: Collected; hasError: boolean }
  | { ok: false; reason: "grammar" | "deadline"; error: string };

export interface GrammarOptions {
  /** Entries kept; the rest are only counted. */
  limit: number;
  /** Epoch ms after which parsing and walking give up. */
  deadlineAt: number;
  /** Override of the grammar directory (tests point it at broken grammars). */
  grammarDir?: string;
}

export async function outlineWithGrammar(
  text: string,
  spec: LanguageSpec,
  opts: GrammarOptions,
): Promise<GrammarOutcome> {
  const file = path.join(opts.grammarDir ?? defaultGrammarDir(), `tree-sitter-${spec.grammar}.wasm`);
  let rt: Runtime;
  let language: Language;
  try {
    rt = await loadRuntime();
    language = await loadGrammar(rt, file);
  } catch (e) {
    return { ok: false, reason: "grammar", error: firstLine(e) };
  }
  const parser = new rt.Parser();
  let tree: Tree | null = null;
  try {
    parser.setLanguage(language);
    // Parsing is synchronous, so timers (and the abort signal) cannot fire during it:
    // the progress callback is the only way to honour the deadline on a huge file.
    tree = parser.parse(text, null, { progressCallback: () => Date.now() > opts.deadlineAt });
    if (!tree) return { ok: false, reason: "deadline", error: "parsing did not finish before the deadline" };
    const collected = walk(tree.rootNode, text, spec, opts);
    if (!collected)
      return { ok: false, reason: "deadline", error: "outline did not finish before the deadline" };
    return { ok: true, collected, hasError: tree.rootNode.hasError };
  } catch (e) {
    // A grammar that loads but cannot run (incompatible ABI) counts as a grammar failure.
    return { ok: false, reason: "grammar", error: firstLine(e) };
  } finally {
    tree?.delete();
    parser.delete();
  }
}

function firstLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const line = (msg.split("\n")[0] ?? "").trim() || "unknown error";
  return line.length > MAX_ERROR_CHARS ? `${line.slice(0, MAX_ERROR_CHARS - 1)}…` : line;
}

/**
 * Pre-order walk with a cursor (no recursion: deep expression trees must not overflow the
 * stack). Definitions are listed and not entered unless their rule nests; everything else
 * is walked through, so definitions inside `#ifdef`, `if TYPE_CHECKING:`, `extern "C"` or
 * `export` are found. Returns undefined when the deadline passed.
 */
function walk(root: Node, text: string, spec: LanguageSpec, opts: GrammarOptions): Collected | undefined {
  const out = collector(opts.limit);
  const cursor = root.walk();
  // Outline depth given to the children of each node on the cursor's path.
  const depths: number[] = [];
  let depth = 0;
  let steps = 0;
  try {
    for (;;) {
      if (++steps % DEADLINE_CHECK_EVERY === 0 && Date.now() > opts.deadlineAt) return undefined;
      let enter = false;
      let childDepth = depth;
      if (cursor.nodeIsNamed) {
        const rule = spec.defs[cursor.nodeType];
        const node = rule ? cursor.currentNode : undefined;
        const fn = node && rule ? applies(node, rule, spec) : undefined;
        if (node && rule && fn) {
          const at = depth;
          out.add(() => entryFor(node, rule, spec, text, at, fn === true ? undefined : fn));
          enter = rule.nest === true;
          childDepth = depth + 1;
        } else {
          enter = true;
        }
      }
      if (enter && cursor.gotoFirstChild()) {
        depths.push(depth);
        depth = childDepth;
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return out;
        depth = depths.pop() ?? 0;
      }
    }
  } finally {
    cursor.delete();
  }
}

/** Whether a node matching a rule is a definition; for assignments, the function assigned. */
function applies(node: Node, rule: DefRule, spec: LanguageSpec): Node | boolean {
  switch (rule.when) {
    case undefined:
      return true;
    case "hasBody":
      return node.childForFieldName("body") !== null;
    case "declaresFunction":
      return declaresFunction(node);
    case "assignsFunction":
      return assignedFunction(node, spec) ?? false;
    case "holdsContainer":
      return node.namedChildren.some((c) => c !== null && (spec.containers ?? []).includes(c.type));
  }
}

/** A C/C++ declarator chain that ends in a function declarator, not a function pointer. */
function declaresFunction(node: Node): boolean {
  for (const first of node.childrenForFieldName("declarator")) {
    let d: Node | null = first;
    while (d) {
      if (d.type === "function_declarator") {
        return d.childForFieldName("declarator")?.type !== "parenthesized_declarator";
      }
      d = d.childForFieldName("declarator");
    }
  }
  return false;
}

function assignedFunction(node: Node, spec: LanguageSpec): Node | undefined {
  const values = spec.functionValues ?? [];
  const candidates = [node.childForFieldName("value"), node.childForFieldName("right")];
  for (const c of node.namedChildren) candidates.push(c?.childForFieldName("value") ?? null);
  return candidates.find((c): c is Node => c !== null && values.includes(c.type));
}

function entryFor(
  node: Node,
  rule: DefRule,
  spec: LanguageSpec,
  text: string,
  depth: number,
  fn: Node | undefined,
): OutlineEntry {
  const top = outermostWrapper(node, spec);
  const first = signatureStart(top);
  let end = top.endIndex;
  if (!rule.whole) {
    const body = fn ? fn.childForFieldName("body") : findBody(node, spec);
    if (body) end = body.startIndex;
  }
  const start = first.startIndex;
  const raw = render(
    top,
    text,
    start,
    Math.min(end, start + MAX_SIGNATURE_SOURCE_CHARS),
    rule.whole ? spec : undefined,
  );
  return { line: first.startPosition.row + 1, depth, text: tidySignature(raw, spec.tail) };
}

/** `export`, `template <...>`, Go's `type` keyword: included when they wrap just this definition. */
function outermostWrapper(node: Node, spec: LanguageSpec): Node {
  let top = node;
  for (;;) {
    const parent = top.parent;
    if (!parent || !spec.wrappers?.includes(parent.type)) return top;
    const defs = parent.namedChildren.filter((c) => c !== null && spec.defs[c.type] !== undefined);
    if (defs.length !== 1) return top;
    top = parent;
  }
}

/** First child that is not a decorator, annotation or comment: where the signature line begins. */
function signatureStart(node: Node): Node {
  for (const child of node.children) {
    if (!child || isDecoration(child)) continue;
    if (MODIFIER_LISTS.has(child.type)) {
      const inner = child.children.find((c) => c !== null && !isDecoration(c));
      if (inner) return inner;
      continue;
    }
    return child;
  }
  return node;
}

function isDecoration(node: Node): boolean {
  return DECORATIONS.has(node.type) || node.type.endsWith("comment");
}

/** The node that opens the definition's body: the `body` field, a body kind, or a `{`. */
function findBody(node: Node, spec: LanguageSpec): Node | undefined {
  const field = node.childForFieldName("body");
  for (const child of node.children) {
    if (!child) continue;
    if ((field && child.id === field.id) || child.type === "{" || spec.bodies?.includes(child.type))
      return child;
    // Go `type T struct {...}`, Zig `const T = struct {...}`: the brace sits one level down.
    if (spec.bodyHosts?.includes(child.type)) {
      const inner = findBody(child, spec);
      if (inner) return inner;
    }
  }
  return field ?? undefined;
}

/**
 * Source text of [start, end) with comments dropped and, for whole-node signatures,
 * the language's block kinds shown as `{…}` (a typedef's field list, an object type).
 */
function render(
  top: Node,
  text: string,
  start: number,
  end: number,
  elideFor: LanguageSpec | undefined,
): string {
  const elide = new Set(elideFor?.elide ?? []);
  let out = "";
  let pos = start;
  const stack: Node[] = [top];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.endIndex <= pos || n.startIndex >= end) continue;
    const comment = n.type.endsWith("comment");
    if (comment || elide.has(n.type)) {
      if (n.startIndex >= pos) {
        out += text.slice(pos, n.startIndex) + (comment ? " " : "{…}");
        pos = Math.min(n.endIndex, end);
      }
      continue;
    }
    const kids = n.children;
    for (let i = kids.length - 1; i >= 0; i--) {
      const k = kids[i];
      if (k) stack.push(k);
    }
  }
  return out + text.slice(pos, end);
}
