/**
 * The daemon's exclusive hold on a home (docs/unattended.md "The daemon").
 *
 * A pid file cannot be an exclusive lock by itself: telling a stale file from a fresh one and
 * removing it are two steps, and two starters can each remove the other's fresh file. So the
 * daemon first binds a Unix socket in the Linux abstract namespace whose name is derived from
 * the home's real path. Binding is atomic, exactly one process can hold the name, and the
 * kernel releases it when the holder exits in any way (SIGKILL included): no stale state, no
 * takeover. Only the holder then touches the pid and state files. The socket is close-on-exec,
 * so job children never inherit it. Elsewhere (no abstract namespace) only the pid file
 * protocol applies.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import net from "node:net";

export interface HomeLock {
  release(): Promise<void>;
}

export type LockResult = { ok: true; value: HomeLock } | { ok: false; busy: boolean; error: string };

/** The abstract socket name for a home: per user and per real path. */
export function homeLockName(root: string): string {
  let real = root;
  try {
    real = fs.realpathSync(root);
  } catch {
    // A home that does not resolve is named by its path as given.
  }
  const digest = createHash("sha256").update(real).digest("hex").slice(0, 32);
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return `\0scoot-daemon-${uid}-${digest}`;
}

export function lockHome(root: string): Promise<LockResult> {
  if (process.platform !== "linux") return Promise.resolve({ ok: true, value: { release: async () => {} } });
  const server = net.createServer((socket) => socket.destroy());
  return new Promise((resolve) => {
    server.once("error", (e: NodeJS.ErrnoException) => {
      resolve(
        e.code === "EADDRINUSE"
          ? { ok: false, busy: true, error: "another daemon holds this home" }
          : { ok: false, busy: false, error: `cannot take the daemon lock of this home: ${e.message}` },
      );
    });
    server.listen({ path: homeLockName(root) }, () => {
      // The lock must not keep the process alive by itself.
      server.unref();
      resolve({
        ok: true,
        value: { release: () => new Promise<void>((done) => server.close(() => done())) },
      });
    });
  });
}
