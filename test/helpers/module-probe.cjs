// Loaded with `node --require` by test/telemetry/lazy-load.test.ts, test/e2e/startup-lazy.test.ts
// and test/e2e/app-code-cache.test.ts: at exit, writes the CommonJS modules this process loaded
// (ESM imports of CommonJS packages land here too), then the vendored packages Scoot compiled
// from dist/vendor/ (src/app-code-cache.ts reads each through fs.openSync, seen here), then
// Node's own internal modules as `process.moduleLoadList` names them
// ("NativeModule internal/deps/undici/undici"), to the file named by SCOOT_TEST_MODULE_PROBE,
// one a line.
const Module = require("node:module");
const fs = require("node:fs");
const VENDORED = /[\\/]dist[\\/]vendor[\\/][^\\/]+\.cjs$/;
const vendored = [];
const openSync = fs.openSync;
fs.openSync = function probedOpenSync(file, ...rest) {
  if (typeof file === "string" && VENDORED.test(file)) vendored.push(file);
  return openSync.call(this, file, ...rest);
};
process.on("exit", () => {
  fs.writeFileSync(
    process.env.SCOOT_TEST_MODULE_PROBE,
    [...Object.keys(Module._cache), ...vendored, ...process.moduleLoadList].join("\n"),
  );
});
