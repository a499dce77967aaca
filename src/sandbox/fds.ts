/**
 * Only descriptors 0–2 reach a sandboxed command (docs/safety.md "Shell containment"). Every
 * descriptor Node opens is close-on-exec, so the only ones a child can inherit are those
 * Scoot itself inherited without that flag: a directory descriptor from the parent would let
 * the command write outside the read-only root (`openat` on it), a tty descriptor would
 * write raw bytes to the terminal. bwrap does not close them, and `/bin/sh` cannot name a
 * descriptor above 9, so they are closed here, in Scoot's process, before the launch:
 * nothing in Scoot uses them.
 */
import fs from "node:fs";

/** The kernel's close-on-exec bit in /proc/self/fdinfo `flags:` (octal). */
const O_CLOEXEC = 0o2000000;
const FD_DIR = "/proc/self/fd";

/** Descriptors above 2 that a child would inherit, except Node's own IPC channel. */
export function inheritableFds(): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(FD_DIR);
  } catch {
    return [];
  }
  const ipc = Number(process.env.NODE_CHANNEL_FD ?? -1);
  const out: number[] = [];
  for (const n of names) {
    const fd = Number(n);
    if (!Number.isInteger(fd) || fd <= 2 || fd === ipc) continue;
    let info: string;
    try {
      info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, "latin1");
    } catch {
      continue; // the readdir's own descriptor, gone already
    }
    const flags = /^flags:\s*([0-7]+)/m.exec(info)?.[1];
    if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) out.push(fd);
  }
  return out;
}

let swept = false;

/**
 * Closes what `inheritableFds` finds, once per process: such descriptors exist only from
 * the process's start (Node opens every descriptor close-on-exec), so after one sweep there
 * is nothing left to find and later launches skip the scan. Returns the descriptors closed.
 */
export function closeInheritableFds(): number[] {
  if (swept) return [];
  swept = true;
  const fds = inheritableFds();
  for (const fd of fds) {
    try {
      fs.closeSync(fd);
    } catch {
      // closed meanwhile
    }
  }
  return fds;
}
