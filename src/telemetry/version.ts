/** Scoot's version for the resource attributes and /metrics, read once from package.json. */
import fs from "node:fs";

let cached: string | undefined;

export function scootVersion(): string {
  if (cached !== undefined) return cached;
  // The bundle (dist/scoot-app.mjs) sits one level below package.json, the per-module build two.
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
