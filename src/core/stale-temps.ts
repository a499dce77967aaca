/**
 * Temporary files of writes that never finished: a process killed between creating its temp
 * file and renaming it leaves one behind (docs/reliability.md "Temporary files"). Every temp
 * name Scoot makes carries its writer's pid; one whose writer no longer runs is litter and is
 * removed the next time Scoot starts a session there. A temp of a running writer is left alone.
 */
import fs from "node:fs";
import path from "node:path";

/** The temp names Scoot's writers make, each capturing the writer's pid. */
const TEMP_NAMES: readonly RegExp[] = [
  // atomicWriteFile and the contained writes: `.<name>.scoot-<pid>-<8 hex>.tmp`
  /^\..+\.scoot-(\d+)-[0-9a-f]{8}\.tmp$/,
  // audit chain record, generation sidecar, exclusive creates: `<file>.tmp-<pid>-<suffix>`
  /\.tmp-(\d+)-[0-9a-z]+$/,
  // caches and the sessions index: `<file>.<pid>.<random>.tmp`
  /\.(\d+)\.[0-9a-z]+\.tmp$/,
];

/** Whether a process with this pid runs (EPERM: another user's, not ours to judge, so yes). */
export function processRuns(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid a Scoot temp name carries, or undefined for any other name. */
export function tempWriterPid(name: string): number | undefined {
  for (const re of TEMP_NAMES) {
    const m = re.exec(name);
    if (m?.[1]) return Number(m[1]);
  }
  return undefined;
}

/**
 * Removes the dead writers' temp files directly in `dir` (not below it), given its names or
 * reading them. Only regular files are removed; errors are ignored (the next start tries again).
 * The number removed.
 */
export function removeStaleTemps(dir: string, names?: readonly string[]): number {
  let listed: readonly string[];
  try {
    listed = names ?? fs.readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of listed) {
    const pid = tempWriterPid(name);
    if (pid === undefined || processRuns(pid)) continue;
    const file = path.join(dir, name);
    try {
      if (!fs.lstatSync(file).isFile()) continue;
      fs.unlinkSync(file);
      removed++;
    } catch {
      // Gone already, or not ours to remove: nothing to do.
    }
  }
  return removed;
}
