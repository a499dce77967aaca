/**
 * Synchronous lazy loading of a CommonJS-capable dependency. A heavy parser is only paid
 * for by the commands that use it: `scoot --version` never loads a TOML, YAML or regex
 * engine, and a run without skills never loads YAML.
 */
import { createRequire } from "node:module";

const load = createRequire(import.meta.url);

export function lazyRequire<T>(id: string): () => T {
  let cached: T | undefined;
  return () => {
    cached ??= load(id) as T;
    return cached;
  };
}
