#!/usr/bin/env node
/**
 * Bundles Scoot's own modules for the `scoot` bin, leaving npm dependencies external.
 * Resolving and instantiating ~100 small ES modules costs a fresh process more than the
 * work of a short run, so:
 * - `dist/scoot.cjs`: the entry — argument parsing, `--version`, `--help` — and nothing else.
 *   It is CommonJS: Node starts a CommonJS main without its ES module loader, about 5 ms of
 *   CPU less on Node 20 for `--version` (the loader reads the file through fs/promises, which
 *   loads the line editor);
 * - `dist/scoot-app.cjs`: everything else in one CommonJS file, loaded only when there is work,
 *   through src/app-code-cache.ts, which compiles it with the code V8 kept from an earlier run
 *   (a script can be given kept code; an ES module cannot, and Node's own cache keeps less);
 * - `dist/scoot-grammar.mjs`: the outline tool's grammar process, started on its first use;
 * - `dist/vendor/*.cjs`: the npm packages the app imports only when a command needs them (the ACP
 *   and MCP SDKs, the telemetry exporters), each group in one CommonJS file (see `VENDORED`).
 * Heavy dependencies (MCP SDK, tree-sitter, YAML, TOML, the regex engine) stay lazy inside.
 * `tsc` still emits the per-module `dist/**` that tests and benchmarks import directly.
 *
 * `node:http` is loaded with `require`, not `import`: an ES import of a builtin makes Node build
 * its ES facade, which reads every export, and on Node 24 reading `node:http`'s lazy getters
 * loads the fetch and WebSocket stack (about 8 MB of a trivial run's peak RSS and 30 ms of CPU).
 * Only there does it pay: Node 20 builds the facade for `require` too, and each module that
 * imports a builtin through `require` gets its own copy of the exports' accessors (`node:fs`,
 * imported by 80 modules, would cost 3 to 7 MB). In the CommonJS app every import of a builtin is
a `require`, and each importer of a whole module gets its own copy of its exports (`__toESM`),
which is why `node:fs` stays one shared shim there too.
 *
 * The same facade cost is why the builtins a short run does not use (`LAZY`: the REPL's line
 * editor, DNS, vm, gzip, util's extras) are loaded through a shim on first use, and why
 * `node:fs` comes through one shared shim (`SHARED`) that exports only the names Scoot imports.
 *
 * The output is pure ASCII. esbuild escapes strings but leaves regular expressions and comments
 * as written, and one non-ASCII character makes Node hold the whole 1.3 MB source as a
 * two-byte string: about 1.3 MB more memory in every run.
 */
import fs from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import path from "node:path";
import { build } from "esbuild";

const common = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  logLevel: "warning",
};

/**
 * The entry imports `./app.js`; in the bundle that is the sibling `scoot-app.cjs`, loaded through
 * src/app-code-cache.ts (which keeps its compiled code on Node 20).
 */
const appAsSibling = {
  name: "app-as-sibling",
  setup(b) {
    b.onResolve({ filter: /^\.\/app\.js$/ }, () => ({ path: "app", namespace: "app-as-sibling" }));
    b.onLoad({ filter: /.*/, namespace: "app-as-sibling" }, () => ({
      contents: `module.exports = require(${JSON.stringify(path.resolve("src/app-code-cache.ts"))}).loadApp(require("node:path").join(__dirname, "scoot-app.cjs"));`,
      loader: "js",
      resolveDir: path.resolve("src"),
    }));
  },
};

const BUILTIN = "builtin-by-require";
/** The builtins whose ES facade costs more than `require` (see the top of this file). */
const BY_REQUIRE = new Set(["node:http"]);
/**
 * Builtins a short run does not need, though modules on its path import them: loaded on first
 * use through a lazy shim (see `lazyShim`), not when the importing module starts.
 */
const LAZY = new Set([
  "node:dns",
  "node:fs/promises",
  "node:readline",
  "node:readline/promises",
  "node:tty",
  "node:util",
  "node:vm",
  "node:zlib",
]);
const LAZY_NS = "builtin-lazy";
/** Builtins imported by many modules: one shared ES shim each (see `sharedShim`). */
const SHARED = new Set(["node:fs"]);
const SHIM = "builtin-shim";

/**
 * The names Scoot's sources use from `name`: named imports, and `alias.x` where the module is
 * imported whole as `alias`. Reading only these keeps lazy and deprecated exports unread.
 */
function usedNames(name, { whole: wholeToo = true } = {}) {
  const used = new Set();
  const quoted = JSON.stringify(name).replace(/[/]/g, "\\/");
  const whole = new RegExp(`^import \\* as (\\w+) from ${quoted};`, "gm");
  const named = new RegExp(`^import \\{([^}]*)\\} from ${quoted};`, "gm");
  for (const file of fs.readdirSync("src", { recursive: true })) {
    if (!String(file).endsWith(".ts")) continue;
    const text = fs.readFileSync(`src/${file}`, "utf8");
    for (const [, alias] of wholeToo ? text.matchAll(whole) : [])
      for (const [, n] of text.matchAll(new RegExp(`\\b${alias}\\.(\\w+)`, "g"))) used.add(n);
    for (const [, list] of text.matchAll(named))
      for (const part of list.split(",")) {
        const n = part
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)[0];
        if (n && !part.trim().startsWith("type ")) used.add(n);
      }
  }
  return [...used].sort();
}

/**
 * A builtin loaded on first use: the default export is a proxy that requires the module when a
 * property is first read, and each named import a function that forwards to the module's own
 * (as a call or with `new`). Named imports must be functions: anything else fails the build.
 */
function lazyShim(name) {
  const real = createRequire(import.meta.url)(name);
  const lines = [
    `let m;`,
    `const get = () => (m ??= require(${JSON.stringify(name)}));`,
    `export default new Proxy({}, { get: (_, k) => get()[k], has: (_, k) => k in get() });`,
  ];
  for (const n of usedNames(name, { whole: false })) {
    if (typeof real[n] !== "function")
      throw new Error(`${name}: ${n} is not a function; it cannot be loaded lazily`);
    lines.push(
      `export function ${n}(...a) { return new.target ? new (get().${n})(...a) : get().${n}.apply(this, a); }`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** The shim's text: the module itself as default, and each name Scoot uses, read once. */
function sharedShim(name) {
  return `const m = require(${JSON.stringify(name)});\nexport default m;\n${usedNames(name)
    .map((n) => `export const ${n} = m.${n};`)
    .join("\n")}\n`;
}

/**
 * `import … from "node:x"` → a bundled one-line CommonJS module, `module.exports = require("node:x")`,
 * whose `require` stays external. esbuild then reads a named import as a property where it is
 * used, so no export is read before it is needed.
 */
const builtinsByRequire = {
  name: BUILTIN,
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (a) => {
      if (a.kind === "require-call") return { path: a.path, external: true };
      if (a.kind === "import-statement" && BY_REQUIRE.has(a.path))
        return { path: a.path, namespace: BUILTIN };
      if (a.kind === "import-statement" && SHARED.has(a.path)) return { path: a.path, namespace: SHIM };
      if (a.kind === "import-statement" && LAZY.has(a.path)) return { path: a.path, namespace: LAZY_NS };
      return undefined;
    });
    b.onLoad({ filter: /.*/, namespace: SHIM }, (a) => ({ contents: sharedShim(a.path), loader: "js" }));
    b.onLoad({ filter: /.*/, namespace: LAZY_NS }, (a) => ({ contents: lazyShim(a.path), loader: "js" }));
    b.onLoad({ filter: /.*/, namespace: BUILTIN }, (a) => ({
      contents: `module.exports = require(${JSON.stringify(a.path)});`,
      loader: "js",
    }));
  },
};

/** The `require` those modules call: an ES module has none of its own. */
const REQUIRE_BANNER =
  'import { createRequire as __scootCreateRequire } from "node:module";\nconst require = __scootCreateRequire(import.meta.url);';

/**
 * `\uXXXX` for each non-ASCII UTF-16 unit (astral characters as their surrogate pair). What is
 * left after esbuild's own escaping is in regular expressions (where the escape means the same
 * character, with or without the u flag) and comments.
 */
function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * The CommonJS entry's `import.meta.url` (the package's version is read relative to it), from
 * the file's own name. CommonJS has its own `require`.
 */
const CJS_BANNER = '"use strict";\nconst __scootUrl = require("node:url").pathToFileURL(__filename).href;';

/**
 * Each `import("package")` left in the bundle (npm packages are external) as a call of `name`,
 * which the app's loader passes in (src/app-code-cache.ts). Any other `import(` fails the build.
 */
function importsThrough(text, name) {
  const out = text.replace(/\bimport\((?=")/g, `${name}(`);
  const left = out.match(/.{0,40}\bimport\(.{0,40}/);
  if (left) throw new Error(`bundle: an import() the app's loader cannot serve: ${left[0]}`);
  return out;
}

async function bundle({ importsThrough: through, ...options }) {
  const cjs = options.format === "cjs";
  const result = await build({
    ...common,
    ...options,
    plugins: [...(options.plugins ?? []), builtinsByRequire],
    banner: { js: cjs ? CJS_BANNER : REQUIRE_BANNER },
    ...(cjs ? { define: { "import.meta.url": "__scootUrl" } } : {}),
    write: false,
  });
  // A name a shim does not export would be undefined at run time (a named import of one is
  // already a build error; a namespace's member is only a warning).
  const missing = result.warnings.filter((w) => /no matching export in "builtin-/.test(w.text));
  if (missing.length > 0) throw new Error(`bundle: ${missing.map((w) => w.text).join("; ")}`);
  for (const file of result.outputFiles) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    const text = through ? importsThrough(file.text, through) : file.text;
    fs.writeFileSync(file.path, asciiOnly(text));
  }
}

await bundle({
  entryPoints: ["src/main.ts"],
  outfile: "dist/scoot.cjs",
  format: "cjs",
  plugins: [appAsSibling],
});
// The bin runs by its shebang once linked (npm sets the mode too; a plain build does not).
fs.chmodSync("dist/scoot.cjs", 0o755);
await bundle({
  entryPoints: ["src/app.ts"],
  outfile: "dist/scoot-app.cjs",
  format: "cjs",
  importsThrough: "__scootImport",
});
// The ES entry and app of earlier builds: gone, so nothing runs a stale copy of them.
for (const stale of ["dist/scoot.mjs", "dist/scoot-app.mjs"]) fs.rmSync(stale, { force: true });
// The grammar process of the outline tool (src/tools/outline/grammar-process.ts).
await bundle({ entryPoints: ["src/tools/outline/grammar-helper.ts"], outfile: "dist/scoot-grammar.mjs" });

/**
 * The npm packages the app imports on demand (its `import()`s), each group bundled into one
 * CommonJS file, `dist/vendor/<group>.cjs`, which the app loads with V8's kept code as it loads
 * itself (src/app-code-cache.ts). Through Node's ES loader the ACP SDK cost a start 86 ms of CPU
 * and the MCP client 148 ms (resolving and linking hundreds of modules, then compiling them);
 * as one file with kept code, about 25 ms each (docs/benchmarks.md "Packages loaded on
 * demand"). A group shares one copy of what its packages share (zod, the SDKs' own core).
 */
const VENDORED = {
  acp: ["@agentclientprotocol/sdk"],
  mcp: [
    "@modelcontextprotocol/sdk/client/index.js",
    "@modelcontextprotocol/sdk/client/sse.js",
    "@modelcontextprotocol/sdk/client/stdio.js",
    "@modelcontextprotocol/sdk/client/streamableHttp.js",
  ],
  telemetry: [
    "@opentelemetry/otlp-exporter-base",
    "@opentelemetry/otlp-exporter-base/node-http",
    "@opentelemetry/otlp-transformer",
    "@opentelemetry/resources",
  ],
  metrics: ["prom-client"],
};
/**
 * Packages the app imports from node_modules as they are: tree-sitter's runtime finds its
 * WebAssembly file next to its own module, and runs in the grammar process anyway.
 */
const LEFT_AS_PACKAGES = new Set(["web-tree-sitter"]);
const VENDOR_DIR = "dist/vendor";

/**
 * Each group of `VENDORED` as `dist/vendor/<group>.cjs`, whose `module.exports.default` maps each
 * specifier to its module namespace; `dist/vendor/map.json`, specifier → file, which the app's
 * loader reads; and `dist/vendor/LICENSES.txt`, the license of every package bundled there.
 * Every `import()` of the app must be vendored or left as a package on purpose.
 */
async function bundleVendored() {
  const app = fs.readFileSync("dist/scoot-app.cjs", "utf8");
  const imported = new Set([...app.matchAll(/__scootImport\("([^"]+)"\)/g)].map((m) => m[1]));
  const map = {};
  for (const [group, specifiers] of Object.entries(VENDORED))
    for (const s of specifiers) map[s] = `${group}.cjs`;
  const unplaced = [...imported].filter((s) => !(s in map) && !LEFT_AS_PACKAGES.has(s));
  if (unplaced.length > 0)
    throw new Error(`bundle: the app imports ${unplaced.join(", ")}: add it to VENDORED or LEFT_AS_PACKAGES`);
  const unused = Object.keys(map).filter((s) => !imported.has(s));
  if (unused.length > 0)
    throw new Error(`bundle: VENDORED names ${unused.join(", ")}, which the app never imports`);
  fs.rmSync(VENDOR_DIR, { recursive: true, force: true });
  const packages = new Map();
  for (const [group, specifiers] of Object.entries(VENDORED)) {
    const contents = [
      ...specifiers.map((s, i) => `import * as m${i} from ${JSON.stringify(s)};`),
      `export default { ${specifiers.map((s, i) => `${JSON.stringify(s)}: m${i}`).join(", ")} };`,
    ].join("\n");
    const result = await build({
      ...common,
      stdin: { contents, resolveDir: process.cwd(), sourcefile: `vendor-${group}.mjs`, loader: "js" },
      format: "cjs",
      packages: "bundle",
      legalComments: "none",
      metafile: true,
      write: false,
      outfile: `${VENDOR_DIR}/${group}.cjs`,
    });
    const text = builtinImportsByRequire(result.outputFiles[0].text);
    // A script compiled through vm has no loader for import(): the bundle must need none.
    const left = text.match(/.{0,40}\bimport\(.{0,40}/);
    if (left) throw new Error(`bundle: vendor/${group}.cjs keeps an import(): ${left[0]}`);
    fs.mkdirSync(VENDOR_DIR, { recursive: true });
    fs.writeFileSync(`${VENDOR_DIR}/${group}.cjs`, asciiOnly(text));
    for (const input of Object.keys(result.metafile.inputs)) {
      const root = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
      if (root) packages.set(root, (packages.get(root) ?? new Set()).add(group));
    }
  }
  fs.writeFileSync(`${VENDOR_DIR}/map.json`, `${JSON.stringify(map, null, 2)}\n`);
  fs.writeFileSync(`${VENDOR_DIR}/LICENSES.txt`, licenses(packages));
}

/**
 * A package's `import()` of a Node builtin (`node:crypto`, `http`) as a `require` in a promise.
 * The vendored packages read named exports from it (`const { Agent } = await import("http")`),
 * which a builtin's CommonJS module has as its own properties.
 */
function builtinImportsByRequire(text) {
  return text.replace(/\bimport\("([a-z_:/]+)"\)/g, (all, name) =>
    isBuiltin(name) ? `Promise.resolve().then(() => require(${JSON.stringify(name)}))` : all,
  );
}

/** The license texts of the bundled packages, each under its name, version and groups. */
function licenses(packages) {
  const parts = ["Third-party packages bundled in dist/vendor/ (scripts/bundle.mjs), with their licenses.\n"];
  for (const [root, groups] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
    const file = fs.readdirSync(root).find((f) => /^licen[cs]e(\.md|\.txt)?$/i.test(f));
    const text = file ? fs.readFileSync(path.join(root, file), "utf8").trim() : `License: ${pkg.license}`;
    parts.push(`${"=".repeat(72)}\n${pkg.name}@${pkg.version} (in ${[...groups].join(", ")})\n\n${text}\n`);
  }
  return asciiOnly(parts.join("\n"));
}

// After the app: the vendored groups are checked against its imports.
await bundleVendored();
