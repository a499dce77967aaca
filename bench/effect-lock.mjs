/**
 * What round five's host containment adds to a call (docs/editors.md "Writes through the
 * editor", docs/safety.md "Files Scoot trusts"): the project's effect lock a bash call holds
 * (a share) and an editor write takes (the writer lock, then no live share), and the identity
 * checks on a file Scoot trusts, each timed per operation beside a baseline measured in the
 * same run: one lstat + read of a small file, what the cheapest read step already does.
 * Reads take no lock. Aims (issue 42): under 0.2 ms added to a read step, under 1 ms to a write.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { iqr, median, publish, row } from "./lib/report.mjs";

const dist = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, "..", "dist"));
const load = (p) => import(pathToFileURL(path.join(dist, p)).href);
const { effectLockDir, holdForCommand, holdForEditorWrite } = await load("store/effect-lock.js");
const { untrustedFileProblem } = await load("config/trusted-file.js");

const OPS = 500;
const ROUNDS = 9;
const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-lock-")));
const project = path.join(home, "project");
fs.mkdirSync(project);
const file = path.join(home, "config.toml");
fs.writeFileSync(file, "[agent]\nmax_steps = 8\n", { mode: 0o600 });
const dir = effectLockDir(home, project);
const signal = new AbortController().signal;

/** Median and IQR of µs per op over ROUNDS rounds of OPS ops. */
async function perOp(fn) {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) await fn();
    rounds.push(Number(process.hrtime.bigint() - t0) / 1e6 / OPS);
  }
  return { value: median(rounds), spread: iqr(rounds) };
}

const baseline = await perOp(() => {
  fs.lstatSync(file);
  fs.readFileSync(file);
});
const share = await perOp(async () => (await holdForCommand(dir, signal)).release());
const writer = await perOp(async () => {
  const w = await holdForEditorWrite(dir, signal);
  if (w.ok) w.value.release();
});
const trust = await perOp(() => untrustedFileProblem(file, "config file"));
fs.rmSync(home, { recursive: true, force: true });

const rows = [
  ["bash call: the project share (take + release)", share, 1],
  ["editor write: the writer lock, no share live (take + release)", writer, 1],
  ["config load: identity checks of one trusted file", trust, 0.2],
].map(([figure, m, aimMs]) =>
  row({
    bench: "effect-lock",
    figure,
    value: m.value,
    valueSpread: m.spread,
    baseline: baseline.value,
    baselineSpread: baseline.spread,
    unit: "ms",
    ratio: m.value / baseline.value,
    aim: `< ${aimMs} ms added (reads take no lock: 0 ms)`,
    met: m.value < aimMs,
  }),
);
publish(rows);
