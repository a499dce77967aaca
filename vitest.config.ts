import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The longest files first, from Vitest's timings or, on a fresh clone, test/durations.json.
    sequence: { sequencer: LongestFirst },
    // Three workers on two cores: the longest files mostly wait on child processes, servers,
    // terminals and timers (the soak drill waits 40 s on 3 s of CPU), and a third worker fills
    // that idle time. Measured on the 2-core machine: 161 s against 196 s with two (isolated
    // files). Four were faster again (the 20 longest files: 115 s and 102 s against 133 s and
    // 134 s) but made the timing-sensitive terminal and launch-kill tests fail under load: not
    // worth a red CI run.
    maxWorkers: 3,
    // Each file in a fresh worker process (Vitest's default). Running files one after another in
    // a process (`isolate: false`) saved about 0.25 s of CPU per file, but on Node 24 a worker
    // then exited under two files in CI (a file's leftover state ending the process that ran the
    // next): isolation stays until that is found.
  },
});
