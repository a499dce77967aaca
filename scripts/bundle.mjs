#!/usr/bin/env node
/**
 * Bundles Scoot's own modules for the `scoot` bin, leaving npm dependencies external.
 * Resolving and instantiating ~100 small ES modules costs a fresh process more than the
 * work of a short run, so:
 * - `dist/scoot.mjs`: the entry — argument parsing, `--version`, `--help` — and nothing else;
 * - `dist/scoot-app.mjs`: everything else in one file, loaded only when there is work.
 * Heavy dependencies (MCP SDK, tree-sitter, YAML, TOML, the regex engine) stay lazy inside.
 * `tsc` still emits the per-module `dist/**` that tests and benchmarks import directly.
 */
import { build } from "esbuild";

const common = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  logLevel: "warning",
};

/** The entry imports `./app.js`; in the bundle that is the sibling `scoot-app.mjs`. */
const appAsSibling = {
  name: "app-as-sibling",
  setup(b) {
    b.onResolve({ filter: /^\.\/app\.js$/ }, () => ({ path: "./scoot-app.mjs", external: true }));
  },
};

await build({ ...common, entryPoints: ["src/main.ts"], outfile: "dist/scoot.mjs", plugins: [appAsSibling] });
await build({ ...common, entryPoints: ["src/app.ts"], outfile: "dist/scoot-app.mjs" });
