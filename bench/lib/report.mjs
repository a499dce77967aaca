/**
 * Shared by the benchmarks: statistics, a Markdown table, and the row file `bench/run.mjs`
 * collects. Figures are always printed beside a baseline measured in the same run, because
 * absolute times on a shared machine lie; the ratio is what to read.
 */
import fs from "node:fs";

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Interquartile range: the spread that ignores one unlucky run. */
export function iqr(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.max(0, Math.round(p * (s.length - 1))))];
  return q(0.75) - q(0.25);
}

export function fmt(n, unit) {
  if (unit === "ms") return n >= 100 ? `${n.toFixed(0)} ms` : `${n.toFixed(2)} ms`;
  if (unit === "MB") return `${n.toFixed(1)} MB`;
  if (unit === "%") return `${n}%`;
  if (unit === "ev/s") return `${Math.round(n).toLocaleString("en-US")} ev/s`;
  return `${n}`;
}

/**
 * A row: what was measured, Scoot's figure and the baseline's (median ± IQR), the ratio,
 * the aim in words and whether it was met.
 */
export function row({ bench, figure, value, valueSpread, baseline, baselineSpread, unit, ratio, aim, met }) {
  return { bench, figure, value, valueSpread, baseline, baselineSpread, unit, ratio, aim, met };
}

/**
 * A row of two samples side by side: their medians and IQRs, the ratio of the medians, and met
 * when that ratio is at most `limit` (no verdict without one).
 */
export function ratioRow({ bench, figure, values, baselines, unit, aim, limit }) {
  const ratio = median(values) / median(baselines);
  return row({
    bench,
    figure,
    value: median(values),
    valueSpread: iqr(values),
    baseline: median(baselines),
    baselineSpread: iqr(baselines),
    unit,
    ratio,
    aim,
    met: limit === undefined ? undefined : ratio <= limit,
  });
}

export function table(rows) {
  const lines = [
    "| benchmark | figure | Scoot (median ± IQR) | baseline (median ± IQR) | ratio | aim | met? |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const v = `${fmt(r.value, r.unit)}${r.valueSpread !== undefined ? ` ± ${fmt(r.valueSpread, r.unit)}` : ""}`;
    const b =
      r.baseline === undefined
        ? "—"
        : `${fmt(r.baseline, r.unit)}${r.baselineSpread !== undefined ? ` ± ${fmt(r.baselineSpread, r.unit)}` : ""}`;
    const ratio = r.ratio === undefined ? "—" : `${r.ratio.toFixed(2)}x`;
    lines.push(
      `| ${r.bench} | ${r.figure} | ${v} | ${b} | ${ratio} | ${r.aim ?? "—"} | ${r.met === undefined ? "—" : r.met ? "yes" : "no"} |`,
    );
  }
  return lines.join("\n");
}

/** Prints the table, and appends the rows to $BENCH_ROWS when run from bench/run.mjs. */
export function publish(rows) {
  console.log(table(rows));
  const file = process.env.BENCH_ROWS;
  if (file) fs.appendFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
}
