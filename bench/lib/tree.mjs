/**
 * The small source tree the loop, scale and peer benches work in: 5 packages of 10 TypeScript
 * files of 60 lines each, so a read, a grep and a listing each find something real.
 */
import fs from "node:fs";
import path from "node:path";

export const TREE_PACKAGES = 5;
export const TREE_FILES = 10;
const TREE_LINES = 60;

export function writeBenchTree(project) {
  for (let d = 0; d < TREE_PACKAGES; d++) {
    fs.mkdirSync(path.join(project, `pkg${d}`), { recursive: true });
    for (let f = 0; f < TREE_FILES; f++) {
      const lines = Array.from(
        { length: TREE_LINES },
        (_, i) => `export function f${d}_${f}_${i}() { return ${i}; } // note ${i % 7}`,
      );
      fs.writeFileSync(path.join(project, `pkg${d}`, `m${f}.ts`), `${lines.join("\n")}\n`);
    }
  }
}
