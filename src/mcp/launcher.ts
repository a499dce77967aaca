/**
 * What a stdio server's command line says about where its code comes from (docs/mcp.md "MCP
 * client"): a package launcher (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, `uvx`,
 * `pipx run`) fetches the package it names, and may have to install it before the server can
 * start; a pinned spec (`pkg@1.2.3`, `pkg==1.2.3`) always takes the same code. `node -e <code>`
 * runs inline code, not a script.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface PackageLaunch {
  /** The launcher as the user reads it: `npx`, `npm exec`, `pnpm dlx`, … */
  launcher: string;
  /** The package specs the launcher fetches (`--package` values, else the first operand). */
  packages: string[];
  /** npm-style specs (`name@version`) or Python ones (`name==version`). */
  style: "npm" | "python";
}

/** Options of the npm-style launchers that take a value (the value is not the package). */
const NPM_VALUE_OPTIONS = new Set([
  "-p",
  "--package",
  "-c",
  "--call",
  "-w",
  "--workspace",
  "--cache",
  "--registry",
]);
/** Options of uvx / pipx run that take a value. */
const PY_VALUE_OPTIONS = new Set([
  "--from",
  "--with",
  "--spec",
  "-p",
  "--python",
  "--index-url",
  "--index",
  "-i",
]);

function operands(
  args: readonly string[],
  valueOptions: ReadonlySet<string>,
): { packages: string[]; first?: string } {
  const packages: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") return { packages, ...(args[i + 1] !== undefined ? { first: args[i + 1]! } : {}) };
    const eq = a.indexOf("=");
    const name = a.startsWith("--") && eq > 0 ? a.slice(0, eq) : a;
    const isPackage = name === "-p" || name === "--package" || name === "--from" || name === "--spec";
    if (valueOptions.has(name)) {
      const value = name === a ? args[++i] : a.slice(eq + 1);
      if (isPackage && value !== undefined) packages.push(value);
      continue;
    }
    if (a.startsWith("-")) continue;
    return { packages, first: a };
  }
  return { packages };
}

/** The package launcher a stdio server's command line uses, if it uses one. */
export function packageLaunch(
  command: string | undefined,
  args: readonly string[] = [],
): PackageLaunch | undefined {
  if (!command) return undefined;
  const program = path.basename(command);
  let launcher: string;
  let rest: readonly string[];
  let style: "npm" | "python" = "npm";
  if (program === "npx" || program === "bunx") {
    launcher = program;
    rest = args;
  } else if (program === "npm" && args[0] === "exec") {
    launcher = "npm exec";
    rest = args.slice(1);
  } else if ((program === "pnpm" || program === "yarn") && args[0] === "dlx") {
    launcher = `${program} dlx`;
    rest = args.slice(1);
  } else if (program === "uvx") {
    launcher = "uvx";
    rest = args;
    style = "python";
  } else if (program === "pipx" && args[0] === "run") {
    launcher = "pipx run";
    rest = args.slice(1);
    style = "python";
  } else return undefined;
  const { packages, first } = operands(rest, style === "npm" ? NPM_VALUE_OPTIONS : PY_VALUE_OPTIONS);
  // With --package/--from the operand is a command of those packages; without, it is the package.
  if (packages.length === 0 && first !== undefined) packages.push(first);
  return { launcher, packages, style };
}

const EXACT_SEMVER = /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** `pkg@1.2.3`, `@scope/pkg@1.2.3` (npm) or `pkg==1.2.3` (Python): one exact version, not a range or tag. */
export function isPinnedSpec(spec: string, style: "npm" | "python"): boolean {
  if (style === "python") {
    const m = /^[A-Za-z0-9._-]+(\[[^\]]*\])?==([^=<>!~*,;\s]+)$/.exec(spec.trim());
    return m !== null && !m[2]!.includes("*");
  }
  const at = spec.lastIndexOf("@");
  if (at <= 0) return false;
  return EXACT_SEMVER.test(spec.slice(at + 1));
}

/** Every package the launcher fetches is pinned to one exact version. */
export function launchIsPinned(l: PackageLaunch): boolean {
  return l.packages.length > 0 && l.packages.every((p) => isPinnedSpec(p, l.style));
}

/** The name part of an npm spec: `@scope/pkg@1.2.3` → `@scope/pkg`. */
function npmName(spec: string): string {
  const at = spec.lastIndexOf("@");
  return at > 0 ? spec.slice(0, at) : spec;
}

/**
 * Whether npx (or `npm exec`) already holds every package of the launch in its cache
 * (`<npm cache>/_npx/<hash>/node_modules/<name>`), so starting it installs nothing. Unknown for
 * the other launchers: false.
 */
export function npxHasCached(l: PackageLaunch, env: NodeJS.ProcessEnv): boolean {
  if (l.launcher !== "npx" && l.launcher !== "npm exec") return false;
  const home = env.HOME ?? os.homedir();
  const cache = env.npm_config_cache ?? env.NPM_CONFIG_CACHE ?? path.join(home, ".npm");
  let dirs: string[];
  try {
    dirs = fs.readdirSync(path.join(cache, "_npx"));
  } catch {
    return false;
  }
  return l.packages.every((spec) => {
    const name = npmName(spec);
    const version = spec.slice(name.length + 1);
    return dirs.some((d) => {
      try {
        const pkg = JSON.parse(
          fs.readFileSync(path.join(cache, "_npx", d, "node_modules", name, "package.json"), "utf8"),
        ) as { version?: unknown };
        return version === "" || !EXACT_SEMVER.test(version) || pkg.version === version.replace(/^v/, "");
      } catch {
        return false;
      }
    });
  });
}

/** `node`/`deno`/`bun` options whose next argument is code or a module, never the script. */
const NODE_CODE_OPTIONS = new Set(["-e", "--eval", "-p", "--print"]);
const NODE_VALUE_OPTIONS = new Set([
  "-r",
  "--require",
  "--import",
  "--loader",
  "--experimental-loader",
  "--input-type",
  "--env-file",
  "-C",
  "--conditions",
  "--title",
]);

/**
 * The script a `node`-like command runs, or `inline` when it runs code given on the command
 * line (`-e`, `--eval`, `-p`, `--print`), or undefined when there is neither (a REPL).
 */
export function nodeScript(args: readonly string[]): { script: string } | "inline" | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const name = a.startsWith("--") && a.includes("=") ? a.slice(0, a.indexOf("=")) : a;
    if (NODE_CODE_OPTIONS.has(name)) return "inline";
    if (a === "--") return args[i + 1] !== undefined ? { script: args[i + 1]! } : undefined;
    if (NODE_VALUE_OPTIONS.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith("-")) continue;
    return { script: a };
  }
  return undefined;
}
