/**
 * A cross-process lock for audit rotation: a file created with O_EXCL holding the owner's
 * pid. A lock whose owner is dead, or that is older than LOCK_STALE_MS, is taken over so a
 * writer killed mid-rotation never wedges the log.
 */
import fs from "node:fs";

export const LOCK_WAIT_MS = 5_000;
export const LOCK_STALE_MS = 10_000;
const LOCK_POLL_MS = 2;

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

function ownerAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function isStale(lockFile: string): boolean {
  try {
    const st = fs.statSync(lockFile);
    if (Date.now() - st.mtimeMs > LOCK_STALE_MS) return true;
    const pid = Number(fs.readFileSync(lockFile, "utf8").trim());
    // An empty file is a lock being written right now, not a stale one.
    return pid > 0 && !ownerAlive(pid);
  } catch {
    return false;
  }
}

/** Runs `fn` holding the lock. Returns false (without running) if the lock was not had in time. */
export function withLock(lockFile: string, fn: () => void): boolean {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = fs.openSync(lockFile, "wx", 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    if (fd !== undefined) {
      try {
        fs.writeSync(fd, String(process.pid));
        fs.closeSync(fd);
        fn();
      } finally {
        fs.rmSync(lockFile, { force: true });
      }
      return true;
    }
    if (isStale(lockFile)) {
      fs.rmSync(lockFile, { force: true });
      continue;
    }
    if (Date.now() > deadline) return false;
    sleepSync(LOCK_POLL_MS);
  }
}
