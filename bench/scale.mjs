#!/usr/bin/env node
/**
 * Cost as the work grows (issue 16): does Scoot's own cost stay flat when runs get long,
 * logs get big and sessions pile up?
 *
 *  - turns:    a 300-turn scripted run with the default context budget: own time per turn
 *              for turns 2–50 against turns 250–300, peak RSS at the end, and the first
 *              turn whose request carried a compacted history;
 *  - audit:    `scoot audit show <id>` on a generated 600 MB audit log: wall time and peak
 *              RSS beside `grep -c <id>` over the same file;
 *  - sessions: `scoot sessions list` with 5,000 sessions of 40 messages and their sidecars
 *              (every row with --all, the newest 20 with --all, this directory's 20, a
 *              directory with none), the first listing (no listing index yet), `/resume 20`
 *              and `-e --continue`, each beside a bare Node loop over the same directory
 *              (readdir, a stat and a 4 KB read of each file) run as its own process;
 *  - grep:     the grep tool on a 200 MB log beside GNU `grep -c`, for a literal and a class
 *              pattern (the tool runs in a fresh node process, so both sides pay a start-up).
 *
 * Big files are generated under the OS temp dir and deleted at the end.
 *
 *   npm run build && node bench/scale.mjs [turns|audit|sessions|grep ...]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { measure as measureIn, TIME } from "./lib/measure.mjs";
import { iqr, median, publish, ratioRow, row } from "./lib/report.mjs";
import { scaleTurnScript, scootEnv, writeSessions } from "./lib/scale-fixtures.mjs";
import { startBenchServer } from "./lib/server.mjs";
import { writeBenchTree } from "./lib/tree.mjs";

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(BENCH_DIR, "..", "dist", "scoot.cjs");
const GREP_JS = path.join(BENCH_DIR, "..", "dist", "tools", "grep.js");
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TURNS = 300;
const AUDIT_BYTES = 600 * 1024 * 1024;
const SESSIONS = 5000;
const SESSION_MESSAGES = 40;
const GREP_BYTES = 200 * 1024 * 1024;
const MB = 1024 * 1024;

const only = process.argv.slice(2);
const wanted = (part) => only.length === 0 || only.includes(part);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-bench-scale-"));
/** Commands run in the work directory unless told otherwise. */
const measure = (cmd, args, opts = {}) => measureIn(cmd, args, { cwd: work, ...opts });
const rows = [];
const notes = [];

/** Writes `total` bytes to `file` by repeating chunks from `makeChunk(i)` (each a run of whole lines). */
function writeRepeated(file, total, makeChunk) {
  const fd = fs.openSync(file, "w");
  let written = 0;
  for (let i = 0; written < total; i++) {
    const chunk = makeChunk(i);
    fs.writeSync(fd, chunk);
    written += chunk.length;
  }
  fs.closeSync(fd);
}

// ---------------------------------------------------------------------------------------------
// turns: a 300-turn run with the default context budget

async function benchTurns() {
  const project = path.join(work, "project");
  const home = path.join(work, "home-turns");
  writeBenchTree(project);
  const server = await startBenchServer([]);
  const env = scootEnv(home, {
    SCOOT_BACKEND_BASE_URL: server.url,
    SCOOT_AGENT_MAX_TURNS: String(TURNS + 5),
  });
  const early = [];
  const late = [];
  const rss = [];
  let firstCompacted = -1;
  for (let r = 0; r < RUNS; r++) {
    server.reset(scaleTurnScript(TURNS));
    const run = await measure(process.execPath, [CLI, "-e", "scale benchmark goal"], { env, cwd: project });
    if (run.code !== 0) throw new Error(`300-turn run exited ${run.code}: ${run.err}`);
    if (server.stamps.length !== TURNS)
      throw new Error(`expected ${TURNS} requests, saw ${server.stamps.length}`);
    rss.push(run.mb);
    const gaps = server.gaps(); // gaps[j] is Scoot's own cost before the request of turn j + 2
    early.push(median(gaps.slice(0, 49)));
    late.push(median(gaps.slice(248, 299)));
    firstCompacted = server.bodies.findIndex((b) => b.includes("[Compacted history]")) + 1;
  }
  await server.close();
  const e = median(early);
  const l = median(late);
  rows.push(
    row({
      bench: "scale",
      figure: `own time per turn, turns 250–300 vs turns 2–50 (${TURNS}-turn run, default budget; compaction from turn ${firstCompacted})`,
      value: l,
      valueSpread: iqr(late),
      baseline: e,
      baselineSpread: iqr(early),
      unit: "ms",
      ratio: l / e,
      aim: "≤ 1.5x and ≤ 6 ms",
      met: l / e <= 1.5 && l <= 6,
    }),
  );
  if (TIME) {
    rows.push(
      row({
        bench: "scale",
        figure: `peak RSS (${TURNS}-turn run)`,
        value: median(rss),
        unit: "MB",
        aim: "≤ 70 MB",
        met: median(rss) <= 70,
      }),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// audit show on a 600 MB log

async function benchAudit() {
  const home = path.join(work, "home-audit");
  fs.mkdirSync(path.join(home, "logs"), { recursive: true, mode: 0o700 });
  const log = path.join(home, "logs", "audit.jsonl");
  const target = "cli-target-1";
  let seq = 0;
  const t0 = performance.now();
  writeRepeated(log, AUDIT_BYTES, () => {
    const lines = [];
    for (let i = 0; i < 4000; i++, seq++) {
      const sid = seq % 1000 === 7 ? target : `cli-${1_000_000 + (seq % 997)}-${seq % 13}`;
      const kind = ["tool_call", "observation", "thought", "backend"][seq % 4];
      lines.push(
        JSON.stringify({
          seq,
          ts: 1_790_000_000_000 + seq,
          session_id: sid,
          run_id: `r-${seq % 31}`,
          kind,
          msg: `${kind} number ${seq}: file_read {"path":"src/module${seq % 50}.ts","limit":200} → 200 lines read, 6120 bytes`,
        }),
      );
    }
    return Buffer.from(`${lines.join("\n")}\n`);
  });
  const size = fs.statSync(log).size;
  console.error(
    `generated ${(size / MB).toFixed(0)} MB audit log in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const env = scootEnv(home);
  const show = await measure(process.execPath, [CLI, "audit", "show", target], { env });
  const grep = await measure("grep", ["-c", target, log]);
  fs.rmSync(log, { force: true });
  const expected = Number(grep.head.trim());
  if (show.code !== 0 || show.outLines !== expected) {
    const why = show.err.split("\n").find((l) => /error|Error|string/.test(l)) ?? show.err.slice(0, 200);
    notes.push(
      `- audit show on ${(size / MB).toFixed(0)} MB: exited ${show.code} after ${(show.ms / 1000).toFixed(1)} s at ${show.mb.toFixed(0)} MB RSS, printed ${show.outLines} of ${expected} events: ${why.trim()}`,
    );
  }
  rows.push(
    row({
      bench: "scale",
      figure: `audit show, ${(size / MB).toFixed(0)} MB log (${show.outLines}/${expected} events${show.code === 0 ? "" : `, exit ${show.code}`}) vs grep -c: wall`,
      value: show.ms,
      baseline: grep.ms,
      unit: "ms",
      ratio: show.ms / grep.ms,
      aim: "(informational)",
    }),
    row({
      bench: "scale",
      figure: `audit show, ${(size / MB).toFixed(0)} MB log vs grep -c: peak RSS`,
      value: show.mb,
      baseline: grep.mb,
      unit: "MB",
      ratio: show.mb / grep.mb,
      aim: "≤ 150 MB",
      met: show.code === 0 && show.outLines === expected && show.mb <= 150,
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// sessions list with 5,000 sessions, against a bare loop over the same directory

/** Every session of every project, one header line and a row each: the whole listing, not the default 20. */
const LIST_ALL = ["sessions", "list", "--all", "--limit", String(SESSIONS)];
/** Projects the sessions were started in, in turn; the listings of "this directory" run in the first. */
const SESSION_PROJECTS = 10;
/** Rounds of the sessions part: each listing takes a fraction of a second. */
const SESSION_RUNS = Number(process.env.BENCH_RUNS ?? 9);
const FINAL = JSON.stringify({ thought: "done", action: "final", action_input: "done" });

/**
 * The floor of any listing of the directory, in a process of its own (so both sides pay a
 * Node start): readdir, then a stat of each file and a read of its first 4 KB.
 */
const BARE_LISTING = `
const fs = require("node:fs");
const path = require("node:path");
const dir = process.argv[1];
const head = Buffer.alloc(4096);
let files = 0;
for (const name of fs.readdirSync(dir)) {
  const file = path.join(dir, name);
  if (!fs.statSync(file).isFile()) continue;
  const fd = fs.openSync(file, "r");
  fs.readSync(fd, head, 0, head.length, 0);
  fs.closeSync(fd);
  files++;
}
console.log(files);
`;

/**
 * \`/resume <n>\` as the REPL does it, in a process of its own: the listing of this directory
 * that numbers the sessions, then the transcript of the one numbered n read to be continued.
 * Timed inside the process (the REPL is already running when it is typed); the bare loop is
 * timed the same way beside it.
 */
const RESUME_CHILD = `
const [listingJs, resumeJs, dir, n] = process.argv.slice(1);
const { sessionNumbered } = await import(listingJs);
const { loadResumeTarget } = await import(resumeJs);
const t0 = performance.now();
const id = sessionNumbered(dir, process.cwd(), Number(n));
if (!id.ok) throw new Error(id.error);
const target = loadResumeTarget(dir, id.value);
if (!target.ok) throw new Error(target.error);
const ms = performance.now() - t0;
const fs = await import("node:fs");
const path = await import("node:path");
const t1 = performance.now();
const head = Buffer.alloc(4096);
for (const name of fs.readdirSync(dir)) {
  const file = path.join(dir, name);
  if (!fs.statSync(file).isFile()) continue;
  const fd = fs.openSync(file, "r");
  fs.readSync(fd, head, 0, head.length, 0);
  fs.closeSync(fd);
}
console.log(JSON.stringify({ ms, bare: performance.now() - t1, messages: target.value.messages.length }));
`;

async function benchSessions() {
  const home = path.join(work, "home-sessions");
  const dir = path.join(home, "state", "sessions");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const projects = Array.from({ length: SESSION_PROJECTS }, (_, i) => {
    const p = path.join(work, `project-${i}`);
    fs.mkdirSync(p, { recursive: true });
    return fs.realpathSync(p);
  });
  const elsewhere = path.join(work, "no-sessions-here");
  fs.mkdirSync(elsewhere, { recursive: true });
  const t0 = performance.now();
  writeSessions(dir, SESSIONS, SESSION_MESSAGES, projects);
  console.error(
    `generated ${SESSIONS} sessions (and their sidecars) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  // Setting the mtimes back made every ctime "now": the listing index never remembers a file
  // changed within its racy window (docs/sessions.md "Sessions and audit"), and real sessions are not
  // all seconds old, so the listings start once the window has passed.
  await new Promise((r) => setTimeout(r, 2500));
  const env = scootEnv(home);
  const here = { env, cwd: projects[0] };
  /** What each case measured, by name: wall and CPU ms, peak RSS, rows printed, exit codes. */
  const got = {};
  const record = (name, m) => {
    got[name] ??= { ms: [], cpu: [], mb: [], lines: 0, codes: new Set() };
    const g = got[name];
    g.ms.push(m.ms);
    g.cpu.push(m.cpuMs);
    g.mb.push(m.mb);
    g.lines = m.outLines;
    g.codes.add(m.code);
  };
  const cases = [
    ["bare", () => measure(process.execPath, ["-e", BARE_LISTING, dir])],
    ["all rows", () => measure(process.execPath, [CLI, ...LIST_ALL], here)],
    ["all", () => measure(process.execPath, [CLI, "sessions", "list", "--all"], here)],
    ["here", () => measure(process.execPath, [CLI, "sessions", "list"], here)],
    ["none here", () => measure(process.execPath, [CLI, "sessions", "list"], { env, cwd: elsewhere })],
  ];
  // A first listing makes the index the listings after it use (not counted).
  await measure(process.execPath, [CLI, ...LIST_ALL], here);
  for (let r = 0; r < SESSION_RUNS; r++) {
    // Interleaved, and in a turning order, so drift and the page cache hit every case alike.
    for (let i = 0; i < cases.length; i++) {
      const [name, run] = cases[(i + r) % cases.length];
      record(name, await run());
    }
  }
  // First listing: no listing index yet (transcripts of an older version, or copied in); it
  // reads every transcript and sidecar and writes the index the listings after it use.
  for (let r = 0; r < RUNS; r++) {
    fs.rmSync(path.join(dir, "list-index.json"), { force: true });
    record("first", await measure(process.execPath, [CLI, ...LIST_ALL], here));
    record("bare first", await measure(process.execPath, ["-e", BARE_LISTING, dir]));
  }
  await measure(process.execPath, [CLI, ...LIST_ALL], here);

  // /resume <n>, in-process, beside the bare loop in the same process.
  const resume = { ms: [], bare: [] };
  for (let r = 0; r < SESSION_RUNS; r++) {
    const child = await measure(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        RESUME_CHILD,
        path.join(BENCH_DIR, "..", "dist", "cli", "session-listing.js"),
        path.join(BENCH_DIR, "..", "dist", "store", "resume-target.js"),
        dir,
        "20",
      ],
      here,
    );
    if (child.code !== 0) throw new Error(`/resume child exited ${child.code}: ${child.err}`);
    const { ms, bare } = JSON.parse(child.head);
    resume.ms.push(ms);
    resume.bare.push(bare);
  }

  // --continue: a trivial run that continues this directory's latest session, beside the same
  // run naming that session (--resume) and a trivial run that starts a new one; time to the
  // first request, and wall. Last: each appends to the session it runs in (the new ones are
  // removed after each run).
  const server = await startBenchServer([]);
  const runEnv = scootEnv(home, { SCOOT_BACKEND_BASE_URL: server.url });
  const cont = { first: [], ms: [] };
  const named = { first: [], ms: [] };
  const fresh = { first: [], ms: [] };
  /** The session --continue finds: the newest of the first project. */
  const latest = "cli-1700000000000-1";
  const trivial = async (args, into) => {
    server.reset([FINAL]);
    const t = performance.now();
    const m = await measure(process.execPath, [CLI, ...args], { env: runEnv, cwd: projects[0] });
    if (m.code !== 0 || server.stamps.length !== 1)
      throw new Error(`${args.join(" ")} exited ${m.code} after ${server.stamps.length} requests: ${m.err}`);
    into.first.push(server.stamps[0].arrived - t);
    into.ms.push(m.ms);
  };
  const removeFresh = () => {
    for (const n of fs.readdirSync(dir))
      if (n.startsWith("bench-fresh")) fs.rmSync(path.join(dir, n), { force: true });
  };
  for (let r = 0; r < SESSION_RUNS; r++) {
    await trivial(["-e", "trivial goal", "--continue"], cont);
    await trivial(["-e", "trivial goal", "--resume", latest], named);
    await trivial(["-e", "trivial goal", "--session-id", `bench-fresh-${r}`], fresh);
    removeFresh();
  }
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const bare = got.bare;
  const vsBare = (name, figure, aim = "≤ 1.5x", limit = 1.5) => {
    const g = got[name];
    const ok = [...g.codes].every((c) => c === 0);
    const r = ratioRow({
      bench: "scale",
      figure: `${figure} (${g.lines} lines${ok ? "" : `, exit ${[...g.codes].join("/")}`}) vs the bare loop`,
      values: g.ms,
      baselines: bare.ms,
      unit: "ms",
      aim,
      limit,
    });
    return { ...r, met: ok && r.met };
  };
  const prefix = `sessions list, ${SESSIONS} sessions of ${SESSION_MESSAGES} messages and their sidecars`;
  rows.push(
    vsBare("all rows", `${prefix}, --all --limit ${SESSIONS} (every row)`),
    vsBare("all", `${prefix}, --all (the newest 20)`),
    vsBare("here", `${prefix}, this directory (20 of its ${SESSIONS / SESSION_PROJECTS})`),
    vsBare("none here", `${prefix}, a directory with none of them (every sidecar looked at)`),
    row({
      bench: "scale",
      figure: `${prefix}, first listing (no listing index yet: every file read) vs the bare loop`,
      value: median(got.first.ms),
      valueSpread: iqr(got.first.ms),
      baseline: median(got["bare first"].ms),
      baselineSpread: iqr(got["bare first"].ms),
      unit: "ms",
      ratio: median(got.first.ms) / median(got["bare first"].ms),
      aim: "≤ 400 ms",
      met: median(got.first.ms) <= 400,
    }),
    ratioRow({
      bench: "scale",
      figure: `/resume 20 with ${SESSIONS} sessions (numbering this directory's sessions, reading the one to continue), in-process vs the bare loop in-process`,
      values: resume.ms,
      baselines: resume.bare,
      unit: "ms",
      aim: "≤ 1.5x",
      limit: 1.5,
    }),
    ratioRow({
      bench: "scale",
      figure: `-e --continue with ${SESSIONS} sessions vs -e in a new session: time to the first request`,
      values: cont.first,
      baselines: fresh.first,
      unit: "ms",
      aim: "≤ 1.5x",
      limit: 1.5,
    }),
    ratioRow({
      bench: "scale",
      figure: `-e --continue with ${SESSIONS} sessions vs -e --resume <the same session>: time to the first request (the cost of finding it)`,
      values: cont.first,
      baselines: named.first,
      unit: "ms",
      aim: "(informational)",
    }),
    ratioRow({
      bench: "scale",
      figure: `-e --continue with ${SESSIONS} sessions vs -e in a new session: wall`,
      values: cont.ms,
      baselines: fresh.ms,
      unit: "ms",
      aim: "≤ 1.5x",
      limit: 1.5,
    }),
  );
  if (TIME)
    rows.push(
      row({
        bench: "scale",
        figure: `${prefix}, --all --limit ${SESSIONS}: CPU time (user + sys) vs the bare loop`,
        value: median(got["all rows"].cpu),
        baseline: median(bare.cpu),
        unit: "ms",
        ratio: median(got["all rows"].cpu) / median(bare.cpu),
        aim: "(context for the wall time on a loaded machine)",
      }),
      row({
        bench: "scale",
        figure: `${prefix}, --all --limit ${SESSIONS}: peak RSS`,
        value: median(got["all rows"].mb),
        baseline: median(bare.mb),
        unit: "MB",
        ratio: median(got["all rows"].mb) / median(bare.mb),
      }),
      row({
        bench: "scale",
        figure: `${prefix}, first listing: peak RSS`,
        value: median(got.first.mb),
        unit: "MB",
      }),
    );
}

// ---------------------------------------------------------------------------------------------
// grep tool on a 200 MB log vs GNU grep -c

/** A child that runs the grep tool once and prints its output; the count is read from it. */
const GREP_CHILD = `
const { grepTool } = await import(process.argv[1]);
const parsed = grepTool.parse(JSON.stringify({ pattern: process.argv[2], path: process.argv[3] }));
if (!parsed.ok) { console.error(parsed.error); process.exit(2); }
// The tool opens only the path the gate judged (docs/safety.md "One call pipeline"): here the file itself.
const target = { read: [(await import("node:path")).resolve(process.argv[3])], write: [] };
const out = await grepTool.run(parsed.value, { cwd: process.cwd(), signal: new AbortController().signal, timeoutMs: 600000, services: {} }, target);
const all = /\\((\\d+) in all\\)/.exec(out);
console.log(all ? all[1] : out.startsWith("no matches") ? "0" : String(out.split("\\n").filter((l) => /^\\d+:/.test(l)).length));
`;

async function benchGrep() {
  if (!fs.existsSync(GREP_JS)) {
    notes.push(`- grep: skipped, ${GREP_JS} is missing (run npm run build)`);
    return;
  }
  const file = path.join(work, "big.log");
  let n = 0;
  const levels = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"];
  writeRepeated(file, GREP_BYTES, () => {
    const lines = [];
    for (let i = 0; i < 10_000; i++, n++) {
      const x = (n * 2654435761) >>> 0;
      lines.push(
        `2026-11-30T12:${String(n % 60).padStart(2, "0")}:00Z ${levels[x % 6]} worker${x % 40} handled request id=${x % 1_000_000} path=/api/v1/items/${x % 5000} took=${x % 900}ms`,
      );
    }
    return Buffer.from(`${lines.join("\n")}\n`);
  });
  for (const [pattern, greArgs, label] of [
    ["worker17 handled", ["-c", "-F", "worker17 handled"], "literal"],
    ["took=[0-9]{3}ms", ["-c", "-E", "took=[0-9]{3}ms"], "class"],
  ]) {
    const tool = [];
    const toolRss = [];
    const base = [];
    let toolCount = -1;
    let baseCount = -2;
    for (let r = 0; r < RUNS; r++) {
      const t = await measure(process.execPath, [
        "--input-type=module",
        "-e",
        GREP_CHILD,
        GREP_JS,
        pattern,
        file,
      ]);
      tool.push(t.ms);
      toolRss.push(t.mb);
      toolCount = Number(t.head.trim());
      const g = await measure("grep", [...greArgs, file]);
      base.push(g.ms);
      baseCount = Number(g.head.trim());
    }
    rows.push(
      row({
        bench: "scale",
        figure: `grep tool ${label} \`${pattern}\`, ${GREP_BYTES / MB} MB (${toolCount} lines${toolCount === baseCount ? "" : `; grep says ${baseCount}`}) vs grep -c; tool peak RSS ${median(toolRss).toFixed(0)} MB`,
        value: median(tool),
        valueSpread: iqr(tool),
        baseline: median(base),
        baselineSpread: iqr(base),
        unit: "ms",
        ratio: median(tool) / median(base),
        aim: "(informational)",
      }),
    );
  }
  fs.rmSync(file, { force: true });
}

try {
  if (wanted("turns")) await benchTurns();
  if (wanted("audit")) await benchAudit();
  if (wanted("sessions")) await benchSessions();
  if (wanted("grep")) await benchGrep();
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
publish(rows);
if (notes.length > 0) console.log(`\n${notes.join("\n")}`);
