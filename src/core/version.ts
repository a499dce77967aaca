/**
 * Scoot's version, read once from its package.json: for `scoot --version`, ACP's
 * `initialize`, the library, the telemetry resource and /metrics.
 */
import fs from "node:fs";

let cached: string | undefined;

export function scootVersion(): string {
  if (cached !== undefined) return cached;
  // The bundles (dist/scoot.cjs, dist/scoot-app.cjs) sit one level below package.json; the
  // per-module build (dist/core/version.js) and the sources two.
  for (const rel of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(fs.readFileSync(new URL(rel, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "scoot" && typeof pkg.version === "string") {
        cached = pkg.version;
        return cached;
      }
    } catch {
      // not this level
    }
  }
  cached = "unknown";
  return cached;
}
