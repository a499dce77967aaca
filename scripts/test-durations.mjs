#!/usr/bin/env node
/**
 * Writes test/durations.json, the seconds each slow test file took, from a Vitest JSON report:
 *
 *   npx vitest run --reporter=json --outputFile=/tmp/report.json
 *   node scripts/test-durations.mjs /tmp/report.json
 *
 * The sequencer (test/sequencer.ts) starts the longest files first with it when Vitest has no
 * timings of its own, as on a fresh clone in CI: a long file started last makes the whole run
 * wait for it. Stale figures only change the order, never a result.
 */
import fs from "node:fs";
import path from "node:path";

/** Files quicker than this are ordered by size, like Vitest's own first run. */
const MIN_SECONDS = 0.5;

const report = JSON.parse(fs.readFileSync(process.argv[2] ?? "", "utf8"));
const root = process.cwd();
const durations = {};
for (const file of report.testResults) {
  const seconds = (file.endTime - file.startTime) / 1000;
  if (seconds >= MIN_SECONDS) durations[path.relative(root, file.name)] = Math.round(seconds * 10) / 10;
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
fs.writeFileSync(path.join(root, "test", "durations.json"), `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
