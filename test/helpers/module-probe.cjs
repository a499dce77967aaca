// Loaded with `node --require` by test/telemetry/lazy-load.test.ts and test/e2e/startup-lazy.test.ts:
// at exit, writes the CommonJS modules this process loaded (ESM imports of CommonJS packages
// land here too), then Node's own internal modules as `process.moduleLoadList` names them
// ("NativeModule internal/deps/undici/undici"), to the file named by SCOOT_TEST_MODULE_PROBE,
// one a line.
const Module = require("node:module");
const fs = require("node:fs");
process.on("exit", () => {
  fs.writeFileSync(
    process.env.SCOOT_TEST_MODULE_PROBE,
    [...Object.keys(Module._cache), ...process.moduleLoadList].join("\n"),
  );
});
