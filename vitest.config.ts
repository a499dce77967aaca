import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.js";

/** Test files that load tree-sitter grammars in their own process. */
const WASM_IN_PROCESS = [
  "test/tools/outline.test.ts",
  "test/tools/outline-grammars.test.ts",
  "test/tools/outline-lazy.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One cache of the CLI's compiled code for the whole run (test/shared-compile-cache.ts).
    globalSetup: ["./test/shared-compile-cache.ts"],
    // The longest files first, from Vitest's timings or, on a fresh clone, test/durations.json.
    sequence: { sequencer: LongestFirst },
    // Three workers on two cores: the longest files mostly wait on child processes, servers,
    // terminals and timers (the soak drill waits 40 s on 3 s of CPU), and a third worker fills
    // that idle time. Four are faster again (213 s against 233 s on the 2-core machine, with the
    // suite's CLI runs sharing one compile cache and the heaviest tables run in process), but one
    // run in four then failed a terminal test that resizes tmux under a spinner: not worth a red
    // CI run (docs/architecture.md "Development").
    maxWorkers: 3,
    // Files share their worker process, one after another (`isolate: false`): a fresh process per
    // file cost about 0.5 s of worker time each. Files that compile tree-sitter's WebAssembly
    // grammars in the test's own process stay isolated: on Node 24 V8's optimising WebAssembly
    // compiler ends a process that compiled many of them with "Fatal process out of memory: Zone"
    // (what ended a shared worker in CI; Scoot itself parses in a grammar process started with
    // --liftoff-only, src/tools/outline/grammar-process.ts).
    projects: [
      {
        extends: true,
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: WASM_IN_PROCESS, isolate: false },
      },
      { extends: true, test: { name: "isolated", include: WASM_IN_PROCESS, isolate: true } },
    ],
  },
});
