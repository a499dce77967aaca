/**
 * The grammars of tree-sitter-wasms (built with tree-sitter-cli 0.20) under the web-tree-sitter
 * runtime pinned in package.json, language by language: each grammar the outline uses loads,
 * has an ABI version the runtime accepts, knows every node kind its table in languages.ts
 * names, and parses its fixture (test/fixtures/outline) without error nodes into the same tree
 * whichever grammars were loaded and used before it. The outline each fixture gives is checked
 * entry by entry in outline.test.ts.
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import type { Language } from "web-tree-sitter";
import { LANGUAGES, type LanguageSpec, languageFor } from "../../src/tools/outline/languages.js";
import { defaultGrammarDir } from "../../src/tools/outline/treesitter.js";

const requireHere = createRequire(import.meta.url);
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/outline");
/** Fixtures the grammar cannot read whole: a C header whose `extern "C" {` the preprocessor splits. */
const PARTIAL = new Set(["sample.h"]);

interface Fixture {
  file: string;
  text: string;
  spec: LanguageSpec;
}

const fixtures: Fixture[] = fs
  .readdirSync(FIXTURES)
  .map((name) => {
    const file = name.replace(/\.txt$/, "");
    const text = fs.readFileSync(path.join(FIXTURES, name), "utf8");
    const spec = languageFor(file, text);
    return spec ? { file, text, spec } : undefined;
  })
  .filter((f): f is Fixture => f !== undefined);

/**
 * Kinds the tables name for other versions of a grammar than the ones tree-sitter-wasms 0.1.13
 * ships; these grammars do not know them, so they never match (and cost nothing):
 * - `function`: the older JavaScript/TypeScript name of `function_expression`;
 * - `method_elem`: the newer Go name of `method_spec`;
 * - `enum_definition`: Scala 3 enums, which the shipped Scala grammar reads as an ERROR node.
 */
const OTHER_VERSIONS: Record<string, string[]> = {
  TypeScript: ["function"],
  TSX: ["function"],
  JavaScript: ["function"],
  Go: ["method_elem"],
  Scala: ["enum_definition"],
};

/** Every node kind a language's table names. */
function kindsOf(spec: LanguageSpec): string[] {
  return [
    ...Object.keys(spec.defs),
    ...(spec.bodies ?? []),
    ...(spec.bodyHosts ?? []),
    ...(spec.wrappers ?? []),
    ...(spec.elide ?? []),
    ...(spec.functionValues ?? []),
    ...(spec.containers ?? []),
  ];
}

type Runtime = typeof import("web-tree-sitter");
let rt: Runtime;
const loaded = new Map<string, Language>();

beforeAll(async () => {
  rt = await import("web-tree-sitter");
  const engine = requireHere.resolve("web-tree-sitter/tree-sitter.wasm");
  await rt.Parser.init({ locateFile: () => engine });
});

async function grammar(spec: LanguageSpec): Promise<Language> {
  let lang = loaded.get(spec.grammar);
  if (!lang) {
    lang = await rt.Language.load(path.join(defaultGrammarDir(), `tree-sitter-${spec.grammar}.wasm`));
    loaded.set(spec.grammar, lang);
  }
  return lang;
}

function tree(lang: Language, text: string): { sexp: string; hasError: boolean } {
  const parser = new rt.Parser();
  parser.setLanguage(lang);
  const t = parser.parse(text);
  if (!t) throw new Error("no tree");
  const out = { sexp: t.rootNode.toString(), hasError: t.rootNode.hasError };
  t.delete();
  parser.delete();
  return out;
}

describe("tree-sitter-wasms grammars under web-tree-sitter", () => {
  it("has a fixture for every language the outline claims", () => {
    expect(new Set(fixtures.map((f) => f.spec.name))).toEqual(new Set(LANGUAGES.map((l) => l.name)));
  });

  it.each(LANGUAGES.map((spec) => ({ name: spec.name, spec })))(
    "$name: the grammar loads, its ABI is within the runtime's range, and it knows every kind the table names",
    async ({ spec }) => {
      const lang = await grammar(spec);
      expect(lang.abiVersion).toBeGreaterThanOrEqual(rt.MIN_COMPATIBLE_VERSION);
      expect(lang.abiVersion).toBeLessThanOrEqual(rt.LANGUAGE_VERSION);
      const unknown = kindsOf(spec).filter((kind) => lang.idForNodeType(kind, true) === null);
      expect(unknown).toEqual(OTHER_VERSIONS[spec.name] ?? []);
    },
  );

  it.each(fixtures.map((f) => ({ file: f.file, language: f.spec.name, fixture: f })))(
    "$file ($language) parses without error nodes",
    async ({ fixture }) => {
      const { hasError } = tree(await grammar(fixture.spec), fixture.text);
      expect(hasError).toBe(PARTIAL.has(fixture.file));
    },
  );

  it("gives the same trees in reverse order, after every grammar has loaded and parsed", async () => {
    const forward = new Map<string, string>();
    for (const f of fixtures) forward.set(f.file, tree(await grammar(f.spec), f.text).sexp);
    for (const f of [...fixtures].reverse()) {
      expect(tree(await grammar(f.spec), f.text).sexp, f.file).toBe(forward.get(f.file));
    }
  });
});
