/**
 * The path the kernel reached for an open descriptor, from Linux `/proc/self/fd`: what judges an
 * opened file or directory, wherever it was opened from (the gate's file tools, undo's walk).
 * Without /proc nothing can be known and callers fall back or refuse, each as it says.
 */
import fs from "node:fs";

const PROC_FD = "/proc/self/fd";
let procAvailable: boolean | undefined;

/** Whether descriptors can be judged here (Linux with /proc mounted). */
export function canJudgeDescriptors(): boolean {
  procAvailable ??= fs.existsSync(PROC_FD);
  return procAvailable;
}

/** The path the kernel reached for `fd`, or undefined when it cannot be known. */
export function realPathOf(fd: number): string | undefined {
  if (!canJudgeDescriptors()) return undefined;
  try {
    return fs.readlinkSync(`${PROC_FD}/${fd}`);
  } catch {
    return undefined;
  }
}
