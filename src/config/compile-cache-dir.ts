/**
 * `SCOOT_COMPILE_CACHE`: a directory for V8's kept compiled code (docs/configuration.md "Runtime
 * home") other than the home's `state/compile-cache`. A CI runner or a container that starts
 * every job with a fresh home compiles Scoot afresh every run; naming one lasting directory here
 * lets every home share one copy, as `NODE_COMPILE_CACHE` does for Node's own cache.
 *
 * The code kept there runs as the next Scoot, so the directory must be as private as the home:
 * owned by the user, writable by nobody else, reached through no directory another user could
 * swap it out of. A directory that fails is not used (one warning, and the home's is used
 * instead); whatever is named, the gate refuses it to the model's tools and the sandbox hides
 * it (src/policy/protected-places.ts), as it does the home.
 */
import fs from "node:fs";
import path from "node:path";
import { isInside } from "../core/inside.js";

export const COMPILE_CACHE_ENV = "SCOOT_COMPILE_CACHE";

/** Mode of a directory Scoot makes for the cache: the home's. */
const CACHE_DIR_MODE = 0o700;
/** Group and other write bits. */
const WRITABLE_BY_OTHERS = 0o022;
/** The sticky bit: in a directory others may write (/tmp), only an entry's owner may rename it. */
const STICKY = 0o1000;

/** Where the person works: a cache directory may hold neither (see `coversWork`). */
export interface WorkPlaces {
  userHome: string;
  /** The project root (the working directory). */
  projectRoot?: string;
}

/**
 * Whether `dir` is, or holds, the user's home or the project. The gate refuses every path inside
 * a protected place: a cache named `/` or `~` would refuse the model every file of the project.
 * Such a directory is not used (`chosenCompileCacheDir`), so it needs no protecting either.
 */
function coversWork(dir: string, work: WorkPlaces): boolean {
  return (
    isInside(path.resolve(work.userHome), dir) ||
    (work.projectRoot !== undefined && isInside(path.resolve(work.projectRoot), dir))
  );
}

/**
 * The absolute directory `SCOOT_COMPILE_CACHE` names, for the gate to protect; undefined when
 * unset, empty or relative, or when it holds the user's home or the project (never used).
 */
export function namedCompileCacheDir(env: NodeJS.ProcessEnv, work: WorkPlaces): string | undefined {
  const raw = env[COMPILE_CACHE_ENV];
  if (raw === undefined || raw === "" || !path.isAbsolute(raw)) return undefined;
  const dir = path.resolve(raw);
  return coversWork(dir, work) ? undefined : dir;
}

export type CompileCacheChoice = { ok: true; dir: string } | { ok: false; problem: string };

/**
 * The directory to keep compiled code in when `SCOOT_COMPILE_CACHE` names one: made (mode 0700)
 * when missing, then checked; it must not hold `work` (the user's home, the project). Undefined
 * when the variable is unset or empty (an empty value counts as unset); a problem names the
 * directory, what is wrong and the fix.
 */
export function chosenCompileCacheDir(
  env: NodeJS.ProcessEnv,
  work: WorkPlaces,
): CompileCacheChoice | undefined {
  const raw = env[COMPILE_CACHE_ENV];
  if (raw === undefined || raw === "") return undefined;
  const refuse = (what: string, fix: string): CompileCacheChoice => ({
    ok: false,
    problem: `${COMPILE_CACHE_ENV} ignored: ${JSON.stringify(raw)} ${what}; fix: ${fix} (the home's state/compile-cache is used meanwhile)`,
  });
  if (!path.isAbsolute(raw))
    return refuse("is not an absolute path", "name the directory by its absolute path");
  const dir = path.resolve(raw);
  if (coversWork(dir, work))
    return refuse(
      "holds your home or the project, which the gate would then refuse to the model whole",
      "name a directory of its own, such as ~/.cache/scoot",
    );
  try {
    fs.mkdirSync(dir, { recursive: true, mode: CACHE_DIR_MODE });
  } catch (e) {
    return refuse(
      `cannot be made (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
      "name a directory you can write",
    );
  }
  try {
    return checkedDir(dir, refuse);
  } catch (e) {
    return refuse(
      `cannot be checked (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
      "name a directory you can read",
    );
  }
}

function checkedDir(
  dir: string,
  refuse: (what: string, fix: string) => CompileCacheChoice,
): CompileCacheChoice {
  const st = fs.lstatSync(dir);
  if (st.isSymbolicLink())
    return refuse("is a symbolic link", `name the directory it leads to, ${fs.realpathSync(dir)}`);
  if (!st.isDirectory()) return refuse("is not a directory", "name a directory");
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    return refuse(`is owned by uid ${st.uid}, not by you (uid ${uid})`, "name a directory of your own");
  if ((st.mode & WRITABLE_BY_OTHERS) !== 0)
    return refuse("can be written by other users", `chmod go-w ${dir}`);
  // Judged and used by its real path, so no link above it can be pointed elsewhere later. Every
  // directory above must keep others from swapping this one out: owned by the user or root, and
  // writable by nobody else unless sticky (/tmp).
  const real = fs.realpathSync(dir);
  for (let up = path.dirname(real); ; up = path.dirname(up)) {
    const a = fs.lstatSync(up);
    if (uid !== undefined && a.uid !== uid && a.uid !== 0)
      return refuse(`lies in ${up}, owned by uid ${a.uid}`, "name a directory inside your own home");
    if ((a.mode & WRITABLE_BY_OTHERS) !== 0 && (a.mode & STICKY) === 0)
      return refuse(`lies in ${up}, which other users can write`, "name a directory inside your own home");
    if (up === path.dirname(up)) break;
  }
  return { ok: true, dir: real };
}
