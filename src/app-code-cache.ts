/**
 * Loading the bundled app (`dist/scoot-app.cjs`) with V8's compiled code kept between runs.
 *
 * Compiling the 1.3 MB app is the largest single cost of a short run. Node 20 keeps no compiled
 * code, and Node 22.8+'s own cache (`module.enableCompileCache`, which main.ts still turns on for
 * the npm packages loaded later) keeps only what was compiled as a module loaded. So the app is
 * compiled here, through `vm.Script`, with the code V8 produced in an earlier run
 * (`cachedData`); a run that had none writes, as it ends, V8's code for every function it
 * compiled. A short run then parses almost none of the app (docs/benchmarks.md).
 *
 * The cache file is named by the app file's size, modification time and inode and by Node's
 * version and architecture: a reinstalled or rebuilt Scoot, or another Node, reads none of an
 * older one's (V8 also refuses code made by another V8 or under other flags, and the app is then
 * compiled afresh). It lives in the home's state/compile-cache beside Node's own cache, for the
 * same reason (main.ts): compiled code planted in a shared directory would run as the next Scoot.
 *
 * The npm packages the app imports on demand are bundled beside it (`dist/vendor/`, by
 * scripts/bundle.mjs) and loaded here the same way, each group with its own kept code
 * (docs/benchmarks.md "Packages loaded on demand").
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import vm from "node:vm";

/** The prefix of the app's cache files: older ones are removed when a new one is written. */
const CACHE_PREFIX = "scoot-app-";
/** The prefix of a vendored group's cache files (`scoot-vendor-<group>-`). */
const VENDOR_CACHE_PREFIX = "scoot-vendor-";
const CACHE_SUFFIX = ".v8";
/** The vendored packages beside the app (scripts/bundle.mjs): their directory and its map. */
const VENDOR_DIR = "vendor";
const VENDOR_MAP = "map.json";

let cacheDir: string | undefined;
let mayWrite = false;
/**
 * Caches to write at the end of the run (this run had none, or V8 refused it), each once `write`
 * allows: the app's only when this process may write it, which a goal run later can grant.
 */
const pending: { dir: string; file: string; prefix: string; script: vm.Script; write: () => boolean }[] = [];
/** The directory of the loaded app, where its vendored packages are. */
let appDir: string | undefined;
/** Specifier → vendored file name, read on the first `import()` of a package. */
let vendorMap: Record<string, string> | undefined;
/** Each vendored file's exports, once loaded: specifier → module namespace. */
const vendorLoaded = new Map<string, Record<string, unknown>>();
/**
 * Runs a compile with V8's flags as they were when kept code was made (main.ts: the run holds
 * its young generation by a flag, and V8 refuses code stamped with other flags).
 */
let withCodeFlags: <T>(compile: () => T) => T = (compile) => compile();

/**
 * Where the app's compiled code is kept (main.ts calls it before the app loads), and whether
 * this run may write it there or only read it. The vendored packages' code is written by any run
 * that loaded them without it: only the commands that need a package load it.
 */
export function keepAppCodeIn(dir: string, opts: { write: boolean }): void {
  cacheDir = dir;
  mayWrite = opts.write;
}

/**
 * A goal ran to its end in this process (an editor's prompt in `scoot acp`, a `run` request to
 * `scoot serve`): the app's code it compiled by then covers a run, so the process may write it as
 * it ends, as a run of a goal does (main.ts). An editor or a script that only ever talks to Scoot
 * that way would otherwise never have it kept.
 */
export function goalRan(): void {
  mayWrite = true;
}

/** How a package loaded during the run sets V8's flags back around its compile (see main.ts). */
export function compileWithCodeFlags(guard: <T>(compile: () => T) => T): void {
  withCodeFlags = guard;
}

/**
 * The app's exports. `file` is the bundled app, a CommonJS module. Its `import()`s of npm
 * packages (the ACP and MCP SDKs and the other lazy dependencies) are calls of the wrapper's
 * `__scootImport` (scripts/bundle.mjs): a package vendored beside the app (`dist/vendor/`) is
 * loaded here with kept code as the app is; any other by Node's own loader (a script's own
 * `import()` needs a loader of vm's, which is experimental and on Node 20 is lost with code read
 * from a cache).
 */
export function loadApp(file: string): unknown {
  appDir = path.dirname(file);
  return runKept(file, CACHE_PREFIX, () => mayWrite);
}

/** `specifier` for the app: its vendored copy when the build made one, else the package. */
function importPackage(specifier: string): Promise<unknown> {
  return new Promise((resolve) => resolve(vendored(specifier) ?? import(specifier)));
}

/** The module namespace of `specifier` from its vendored file, or undefined when it has none. */
function vendored(specifier: string): unknown {
  if (appDir === undefined) return undefined;
  const dir = path.join(appDir, VENDOR_DIR);
  vendorMap ??= readVendorMap(path.join(dir, VENDOR_MAP));
  const name = vendorMap[specifier];
  if (name === undefined) return undefined;
  const file = path.join(dir, name);
  let group = vendorLoaded.get(file);
  if (group === undefined) {
    if (!fs.existsSync(file))
      throw new Error(
        `${file} is missing (the build bundles ${specifier} there): reinstall Scoot, or run npm run build in its checkout`,
      );
    const prefix = `${VENDOR_CACHE_PREFIX}${path.basename(name, ".cjs")}-`;
    const exports = withCodeFlags(() => runKept(file, prefix, () => true)) as {
      default: Record<string, unknown>;
    };
    group = exports.default;
    vendorLoaded.set(file, group);
  }
  return group[specifier];
}

/**
 * The build's map of vendored packages; none (a build without them, the per-module build) means
 * every package comes from node_modules. Its values are file names in the vendor directory.
 */
function readVendorMap(file: string): Record<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return {};
  }
  const map = JSON.parse(text) as Record<string, unknown>;
  const checked: Record<string, string> = {};
  for (const [specifier, name] of Object.entries(map)) {
    if (typeof name !== "string" || !/^[a-z][a-z0-9-]*\.cjs$/.test(name))
      throw new Error(`${file}: "${specifier}" maps to ${JSON.stringify(name)}, not a file of the build`);
    checked[specifier] = name;
  }
  return checked;
}

/**
 * Runs the CommonJS file `file` compiled with the code kept under `prefix` (when there is a cache
 * directory and V8 accepts it) and returns its exports; when there was none, or V8 refused it,
 * its code is written as the run ends (`keepAppCode`) if `write` then allows.
 */
function runKept(file: string, prefix: string, write: () => boolean): unknown {
  const st = fs.statSync(file);
  const source = wrappedCommonJs(file, st.size);
  const cacheFile = cacheDir === undefined ? undefined : path.join(cacheDir, cacheName(prefix, st));
  const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new vm.Script(source, { filename: file, cachedData });
  const module = { exports: {} as unknown };
  const run = script.runInThisContext() as (...a: unknown[]) => void;
  run.call(
    module.exports,
    module.exports,
    createRequire(file),
    module,
    file,
    path.dirname(file),
    importPackage,
  );
  if (
    cacheDir !== undefined &&
    cacheFile !== undefined &&
    (cachedData === undefined || script.cachedDataRejected)
  )
    pending.push({ dir: cacheDir, file: cacheFile, prefix, script, write });
  return module.exports;
}

/** The cache file's name for the file `st` under this Node. */
function cacheName(prefix: string, st: fs.Stats): string {
  const app = [st.size, Math.round(st.mtimeMs * 1000), st.ino].join("-");
  return `${prefix}${app}${nodeTail()}`;
}

/**
 * How the names of this Node's cache files end: a home shared by two Nodes keeps one file for
 * each, and only a file of this Node's is replaced when the app changes.
 */
function nodeTail(): string {
  return `-${process.version}-${process.arch}${CACHE_SUFFIX}`.replace(/[^A-Za-z0-9.-]/g, "_");
}

/**
 * Writes the compiled code of the app and of the packages loaded beside it, where this run is
 * to (main.ts, as the run ends: by then V8's code covers every function the run compiled, not
 * only the first lines). V8 stamps the code with its flags, so they must be as they were when
 * the code was compiled.
 */
export function keepAppCode(): void {
  for (const { dir, file, prefix, script, write } of pending.splice(0))
    if (write()) writeCache(dir, file, prefix, script);
}

/**
 * What Node wraps a CommonJS module's text in (its `Module.wrap`), plus the app's way to import
 * an npm package (see `loadApp`).
 */
const WRAP_HEAD = "(function (exports, require, module, __filename, __dirname, __scootImport) { ";
const WRAP_TAIL = "\n});";

/**
 * The app's text in that wrapper, made as one string: the bundle is pure ASCII (scripts/bundle.mjs),
 * so its bytes are read straight behind the head and decoded once, with no 1.3 MB copy of the
 * text held beside the one V8 compiles.
 */
function wrappedCommonJs(file: string, size: number): string {
  const bytes = Buffer.allocUnsafe(WRAP_HEAD.length + size + WRAP_TAIL.length);
  bytes.write(WRAP_HEAD, 0, "latin1");
  const fd = fs.openSync(file, "r");
  try {
    let at = 0;
    while (at < size) {
      const n = fs.readSync(fd, bytes, WRAP_HEAD.length + at, size - at, at);
      if (n === 0) throw new Error(`${file} shrank while being read`);
      at += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  bytes.write(WRAP_TAIL, WRAP_HEAD.length + size, "latin1");
  return bytes.toString("latin1");
}

function readCache(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Written whole (a temporary file renamed over it), so a run that reads it while another writes
 * sees the old code or the new; this Node's files for older builds of the app are removed. Any
 * failure (a full or read-only home) leaves the next run to compile, as without a cache.
 */
function writeCache(dir: string, file: string, prefix: string, script: vm.Script): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
    fs.renameSync(temp, file);
    for (const name of fs.readdirSync(dir))
      if (name.startsWith(prefix) && name.endsWith(nodeTail()) && path.join(dir, name) !== file)
        fs.rmSync(path.join(dir, name), { force: true });
  } catch {
    try {
      fs.rmSync(temp, { force: true });
    } catch {
      // Not there to remove (the directory is gone or is not one).
    }
  }
}
