/**
 * "This session is in use by a live process" (issue 13; README "Resuming a session").
 * A run holds `<id>.inuse` (its pid) while its agent session is open; a second process that
 * wants the same session is refused instead of interleaving two conversations in one
 * transcript. A marker whose pid is gone (crash, SIGKILL) is stale and taken over.
 *
 * Minimal on purpose: issue 12 builds the transcript lock in src/store/session.ts; once that
 * lands this check should defer to it.
 */
import fs from "node:fs";
import path from "node:path";
import type { Result } from "../tools/types.js";

export function inUsePath(sessionsDir: string, id: string): string {
  return path.join(sessionsDir, `${id}.inuse`);
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function holder(file: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, "utf8").trim(), 10);
    return Number.isNaN(pid) ? undefined : pid;
  } catch {
    return undefined;
  }
}

/** Who holds the session (a live pid other than ours), if anyone. */
export function sessionHolder(sessionsDir: string, id: string): number | undefined {
  const pid = holder(inUsePath(sessionsDir, id));
  return pid !== undefined && pid !== process.pid && alive(pid) ? pid : undefined;
}

export function inUseMessage(id: string, pid: number): string {
  return `session "${id}" is in use by a running Scoot process (pid ${pid}); wait for it to finish or stop it, then try again`;
}

/** Marks the session as ours; returns the release function, or who holds it. */
export function claimSession(sessionsDir: string, id: string): Result<() => void> {
  const file = inUsePath(sessionsDir, id);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return {
        ok: true,
        value: () => {
          // Only our own marker is removed.
          if (holder(file) === process.pid) fs.rmSync(file, { force: true });
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
        return {
          ok: false,
          error: `cannot mark session "${id}" as in use (${file}): ${(e as Error).message}`,
        };
      }
      const pid = holder(file);
      if (pid === process.pid) return { ok: true, value: () => undefined };
      if (pid !== undefined && alive(pid)) return { ok: false, error: inUseMessage(id, pid) };
      // Stale: its process is gone. Remove and try once more (a racing claimer wins the wx).
      fs.rmSync(file, { force: true });
    }
  }
  return { ok: false, error: `session "${id}" was claimed by another process at the same moment; try again` };
}
