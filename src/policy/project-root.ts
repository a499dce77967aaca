/**
 * Project roots a confined run refuses (docs/safety.md "Dangerous project roots"): the filesystem
 * root, where the one writable bind would be the whole machine, and Scoot's own home (or a
 * directory inside it), where the model would edit its own configuration and audit log.
 * A project that merely contains the home (Scoot started in `~`) is fine: the home is then
 * hidden inside it.
 */
import fs from "node:fs";
import path from "node:path";
import type { PolicyMode } from "../config/schema.js";
import { isInside } from "../core/inside.js";
import { DEFAULT_HOME_NAME } from "./protected-places.js";

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

const FIX =
  "Fix: start Scoot in a project directory (cd into it), or pass --policy unrestricted if you mean it";

/** One line naming the directory and the fix when `projectRoot` may not be a confined run's root. */
export function refuseProjectRoot(
  projectRoot: string,
  opts: { mode: PolicyMode; scootHome: string; configDir?: string; userHome: string },
): string | undefined {
  if (opts.mode === "unrestricted") return undefined;
  const root = real(projectRoot);
  if (root === "/") {
    return `refusing to run in / (${opts.mode}): the filesystem root cannot be the project. ${FIX}`;
  }
  const homes = [
    opts.scootHome,
    opts.configDir ?? opts.scootHome,
    path.join(opts.userHome, DEFAULT_HOME_NAME),
  ];
  for (const home of homes) {
    if (isInside(root, real(home))) {
      return `refusing to run in ${root} (${opts.mode}): it is Scoot's home ${real(home)} or inside it. ${FIX}`;
    }
  }
  return undefined;
}

/**
 * A project root that is the user's home or one of its ancestors makes every startup file in
 * the home (`.bashrc`, `.profile`, `.config/autostart`, …) a file inside the one writable
 * place, and the table of persistence places cannot name every program's. So such a run is
 * `readonly` whatever the policy short of `unrestricted`: the mode to use and, when it was
 * lowered, the one line that says so with the fix.
 */
export function modeAtProjectRoot(
  projectRoot: string,
  opts: { mode: PolicyMode; userHome: string },
): { mode: PolicyMode; notice?: string; readonlyFix?: string } {
  if (opts.mode !== "guarded") return { mode: opts.mode };
  const root = real(projectRoot);
  const home = real(opts.userHome);
  if (!isInside(home, root)) return { mode: opts.mode };
  const what = root === home ? "your home directory" : `an ancestor of your home directory ${home}`;
  return {
    mode: "readonly",
    readonlyFix:
      "this run is read-only because its project root is your home; start Scoot in a project directory",
    notice: `the project root ${root} is ${what}: this run is read-only (guarded was asked), so no startup file there can change; reading and answering still work. Fix: start Scoot in a project directory`,
  };
}
