/**
 * A read through the editor (ACP `fs/read_text_file`) of a file Scoot has already opened and
 * judged. The editor reads by *path*, so between Scoot's check of its descriptor and the
 * editor's read, a link swapped in anywhere along the path would hand the model another file
 * (one the gate never judged). The editor's text is taken only when nothing on the path could
 * have been swapped while it read:
 *
 * - before and after the read, the path names the very file Scoot opened (same device and
 *   inode, no link at any component);
 * - during the read, no entry on the path was renamed, created or removed (inotify watches, via
 *   `fs.watch`, on every ancestor, each listening for the one name the path goes through). A swap and a swap back between the
 *   two checks leaves the identities equal but cannot escape the watches, whatever the timing.
 *
 * Otherwise (or when a watch cannot be set) the caller reads its own descriptor: the disk.
 */
import fs from "node:fs";
import path from "node:path";
import type { EditorBuffers } from "./types.js";

/** Why the editor's text was not used, for tests and traces; undefined: it was. */
export type EditorReadRefusal = "moved" | "renamed-nearby" | "unwatchable";

export interface EditorRead {
  text?: string;
  refused?: EditorReadRefusal;
}

/** Whether `abs` (no link at any component) still names the file open at `fd`. */
function sameFile(abs: string, fd: number): boolean {
  try {
    if (fs.realpathSync(abs) !== abs) return false;
    const named = fs.lstatSync(abs, { bigint: true });
    const opened = fs.fstatSync(fd, { bigint: true });
    return named.isFile() && named.dev === opened.dev && named.ino === opened.ino;
  } catch {
    return false;
  }
}

/** Every directory from the root down to the file's parent, with the name on the path in each. */
function ancestors(abs: string): { dir: string; next: string }[] {
  const out: { dir: string; next: string }[] = [];
  let child = abs;
  let dir = path.dirname(abs);
  for (;;) {
    out.push({ dir, next: path.basename(child) });
    const up = path.dirname(dir);
    if (up === dir) return out.reverse();
    child = dir;
    dir = up;
  }
}

/**
 * Two turns of the event loop: the first lets the current turn finish, the second passes a
 * poll phase, where libuv reads every inotify event the kernel queued before it.
 */
export function drainWatchEvents(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** The watches on a path's entries while the editor works on it (see the module comment). */
export interface PathWatch {
  /** Whether an entry the path goes through was renamed, created or removed since the watch began. */
  changed(): boolean;
  close(): void;
}

/**
 * Watches every directory from the root down, each for the one name the path goes through;
 * `withFile: false` leaves out the file's own name (an editor that saves replaces the file,
 * which its directory reports like a swap). Undefined when a watch cannot be set.
 */
export function watchPath(abs: string, opts: { withFile: boolean }): PathWatch | undefined {
  const watchers: fs.FSWatcher[] = [];
  let renamed = false;
  const steps = ancestors(abs);
  if (!opts.withFile) steps.pop();
  try {
    for (const { dir, next } of steps) {
      // Only the entry on the path matters: a busy directory (a shared /tmp, a home) renames
      // other entries all the time. An event without a name could be ours.
      const w = fs.watch(dir, { persistent: false }, (event, name) => {
        if (event === "rename" && (name === null || name === next)) renamed = true;
      });
      // A watch that fails later (the directory went) counts as a change.
      w.on("error", () => {
        renamed = true;
      });
      watchers.push(w);
    }
  } catch {
    for (const w of watchers) w.close();
    return undefined;
  }
  return {
    changed: () => renamed,
    close: () => {
      for (const w of watchers) w.close();
    },
  };
}

export async function readThroughEditor(
  editor: EditorBuffers,
  abs: string,
  fd: number,
  signal: AbortSignal,
): Promise<EditorRead> {
  const watch = watchPath(abs, { withFile: true });
  if (!watch) return { refused: "unwatchable" };
  try {
    if (!sameFile(abs, fd)) return { refused: "moved" };
    const text = await editor.read(abs, signal);
    if (text === undefined) return {};
    if (!sameFile(abs, fd)) return { refused: "moved" };
    await drainWatchEvents();
    if (watch.changed()) return { refused: "renamed-nearby" };
    return { text };
  } finally {
    watch.close();
  }
}
