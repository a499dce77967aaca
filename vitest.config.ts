import fs from "node:fs";
import path from "node:path";
import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.js";

/**
 * Node 20 reads the certificates NODE_EXTRA_CA_CERTS names as every process starts: with the
 * system bundle named there (as on these machines) `node -e 0` takes about 60 ms of CPU instead
 * of 20 ms, and the suite starts some 1,300 Node processes. No test talks TLS to anything but its
 * own server with its own certificate (`backend.ca_file`), so the workers, and every process
 * they start, go without it (docs/architecture.md "Development").
 */
delete process.env.NODE_EXTRA_CA_CERTS;

/** Test files that load tree-sitter grammars in their own process. */
const WASM_IN_PROCESS = [
  "test/tools/outline.test.ts",
  "test/tools/outline-grammars.test.ts",
  "test/tools/outline-lazy.test.ts",
];

/**
 * Test files that drive a real terminal (tmux, through test/helpers/terminal.ts), found by that
 * import so a new one joins them: they read the screen as a person would.
 */
const TERMINAL = fs
  .readdirSync("test", { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".test.ts"))
  .map((f) => path.join("test", f))
  .filter((f) => fs.readFileSync(f, "utf8").includes("/helpers/terminal.js"))
  .sort();

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One cache of the CLI's compiled code for the whole run (test/shared-compile-cache.ts).
    globalSetup: ["./test/shared-compile-cache.ts"],
    // Files share their worker process, one after another (`isolate: false`): a fresh process per
    // file cost about 0.5 s of worker time each. Files that compile tree-sitter's WebAssembly
    // grammars in the test's own process stay isolated: on Node 24 V8's optimising WebAssembly
    // compiler ends a process that compiled many of them with "Fatal process out of memory: Zone"
    // (what ended a shared worker in CI; Scoot itself parses in a grammar process started with
    // --liftoff-only, src/tools/outline/grammar-process.ts).
    //
    // Two groups, one after the other, each starting its longest files first (from Vitest's
    // timings or, on a fresh clone, test/durations.json). The terminal files come first, four at
    // a time and alone: they read screens at a person's pace, and with other files beside them
    // under four workers a tmux resize test failed one run in four (a race in the live view, since
    // fixed: test/view/resize-mid-draw.e2e.test.ts). Alone, four keep the two cores 88% busy
    // (38 s for the group, 43 s at three). Then the rest, five at a time on the two
    // cores: the longest mostly wait on child processes, servers and timers (the soak drill waits
    // 40 s on 3 s of CPU), and the suite's CLI runs share one compile cache. Five kept the cores
    // busiest: 164–167 s for the whole run, against 177–188 s at four and 172 s at six. Measured on the
    // 2-core machine (docs/architecture.md "Development").
    projects: [
      {
        extends: true,
        test: {
          name: "terminal",
          include: TERMINAL,
          isolate: false,
          maxWorkers: 4,
          sequence: { sequencer: LongestFirst, groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: [...WASM_IN_PROCESS, ...TERMINAL],
          isolate: false,
          maxWorkers: 5,
          sequence: { sequencer: LongestFirst, groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "isolated",
          include: WASM_IN_PROCESS,
          isolate: true,
          maxWorkers: 5,
          sequence: { sequencer: LongestFirst, groupOrder: 1 },
        },
      },
    ],
  },
});
