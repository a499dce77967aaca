// Loaded with `node --require` by test/telemetry/lazy-load.test.ts: at exit, writes the
// CommonJS modules this process loaded (ESM imports of CommonJS packages land here too) to
// the file named by SCOOT_TEST_MODULE_PROBE, one path a line.
const Module = require("node:module");
const fs = require("node:fs");
process.on("exit", () => {
  fs.writeFileSync(process.env.SCOOT_TEST_MODULE_PROBE, Object.keys(Module._cache).join("\n"));
});
