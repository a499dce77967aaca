/**
 * Names the DNS tests add to /etc/hosts (root only), shared by every test file that does: each
 * edit adds or removes only its own lines, under a lock that test files running side by side take
 * in turn. Restoring a whole copy read earlier would drop the lines another file added meanwhile
 * (a hostile-model drill once lost its name that way to test/tools/http-dns.test.ts's cleanup).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const HOSTS = "/etc/hosts";
/** The lock: a directory, since making one is atomic across processes. */
const LOCK = path.join(os.tmpdir(), "scoot-test-etc-hosts.lock");
/** A holder that has not let go by then has died: its lock is taken over. */
const STALE_LOCK_MS = 10_000;
const RETRY_MS = 20;

let edits = 0;

async function locked<T>(edit: () => T): Promise<T> {
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) fs.rmSync(LOCK, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
  try {
    return edit();
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * Adds `lines` ("address name") to /etc/hosts, each marked as this edit's; returns what removes
 * exactly those lines again, whatever else was added or removed meanwhile.
 */
export async function addHostsLines(lines: string[]): Promise<() => Promise<void>> {
  const mark = `# scoot-test ${process.pid}-${++edits}`;
  await locked(() => {
    const now = fs.readFileSync(HOSTS, "utf8");
    const added = lines.map((l) => `${l} ${mark}`).join("\n");
    fs.writeFileSync(HOSTS, `${now.replace(/\n?$/, "\n")}${added}\n`);
  });
  return () =>
    locked(() => {
      const now = fs.readFileSync(HOSTS, "utf8");
      const kept = now.split("\n").filter((l) => !l.endsWith(` ${mark}`));
      fs.writeFileSync(HOSTS, kept.join("\n"));
    });
}
