/**
 * The npm packages the build vendors beside the app (scripts/bundle.mjs `VENDORED`,
 * dist/vendor/): every package the app imports on demand is there or named as left a package;
 * each vendored specifier exports what the package itself exports; the bundled packages' licenses
 * ship with them. The loading itself (kept code, V8's flags) is test/e2e/app-code-cache.test.ts.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { builtFile, REPO_ROOT } from "../helpers/cli.js";

const VENDOR = path.join(REPO_ROOT, "dist", "vendor");
const require = createRequire(import.meta.url);

function vendorMap(): Record<string, string> {
  return JSON.parse(fs.readFileSync(builtFile("vendor/map.json"), "utf8")) as Record<string, string>;
}

/** The names a module namespace exports, `default` left out (a CommonJS package's whole module). */
function exportNames(ns: object): string[] {
  return Object.keys(ns)
    .filter((k) => k !== "default" && k !== "module.exports")
    .sort();
}

describe("the vendored packages", () => {
  it("cover every package the app imports on demand, but web-tree-sitter (left a package)", () => {
    const app = fs.readFileSync(builtFile("scoot-app.cjs"), "utf8");
    const imported = [...new Set([...app.matchAll(/__scootImport\("([^"]+)"\)/g)].map((m) => m[1]!))].sort();
    const map = vendorMap();
    expect(imported.filter((s) => !(s in map))).toEqual(["web-tree-sitter"]);
    expect(Object.keys(map).sort()).toEqual(imported.filter((s) => s !== "web-tree-sitter"));
    expect(new Set(Object.values(map))).toEqual(
      new Set(["acp.cjs", "mcp.cjs", "telemetry.cjs", "metrics.cjs"]),
    );
  });

  it.each(Object.entries(vendorMap()))(
    "%s exports in %s what the package exports",
    async (specifier, file) => {
      const group = (require(path.join(VENDOR, file)) as { default: Record<string, object> }).default;
      const vendored = group[specifier];
      expect(vendored, `${file} has no ${specifier}`).toBeDefined();
      const own = (await import(specifier)) as object;
      expect(exportNames(own).length).toBeGreaterThan(0);
      expect(exportNames(vendored!)).toEqual(expect.arrayContaining(exportNames(own)));
      // More only where the package is CommonJS: Node's import finds the names it can see in the
      // source (prom-client's `contentType` it cannot), the bundle has every property of the module.
      const more = exportNames(vendored!).filter((n) => !exportNames(own).includes(n));
      const whole = (own as { default?: object }).default;
      for (const n of more) expect(whole !== undefined && n in whole, `${n} is not the package's`).toBe(true);
    },
  );

  it("hold no import() (a script compiled through vm has no loader for one) and are pure ASCII", () => {
    for (const file of new Set(Object.values(vendorMap()))) {
      const text = fs.readFileSync(path.join(VENDOR, file), "latin1");
      expect(text.match(/.{0,30}\bimport\(.{0,30}/)?.[0], file).toBeUndefined();
      expect(/[^\x00-\x7f]/.test(text), file).toBe(false);
    }
  });

  it("ship the license of each bundled package, zod and the SDKs among them", () => {
    const text = fs.readFileSync(builtFile("vendor/LICENSES.txt"), "utf8");
    const heads = [...text.matchAll(/^(@?[^@\s]+)@(\d\S*) \(in ([a-z, ]+)\)$/gm)].map((m) => m[1]);
    expect(heads).toEqual(
      expect.arrayContaining(["@agentclientprotocol/sdk", "@modelcontextprotocol/sdk", "zod", "prom-client"]),
    );
    for (const name of heads) {
      const pkg = JSON.parse(
        fs.readFileSync(path.join(REPO_ROOT, "node_modules", name!, "package.json"), "utf8"),
      );
      expect(pkg.name).toBe(name);
    }
    expect(text).toContain("MIT License");
  });
});
