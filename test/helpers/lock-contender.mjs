// One process contending for an audit lock, for test/core/lock.test.ts.
// argv: <lock file> <barrier dir> <id> <peers> <hold ms> <log file> <mode: real|naive>
//
// Both modes judge the crafted stale lock, then wait at a barrier until every peer has judged
// it too, so the takeover races deterministically. `real` then uses Scoot's lock; `naive`
// replays main's old takeover (remove whatever lock is there, then create with O_EXCL) to
// show the flaw the test guards against. Inside the lock the holder logs enter/leave.
import fs from "node:fs";
import path from "node:path";
import { acquireLock } from "../../dist/core/lock.js";

const [lockFile, barrier, id, peers, holdMs, logFile, mode] = process.argv.slice(2);
const cell = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => Atomics.wait(cell, 0, 0, ms);

function arriveAndWait() {
  fs.writeFileSync(path.join(barrier, id), "");
  const end = Date.now() + 10_000;
  while (fs.readdirSync(barrier).length < Number(peers)) {
    if (Date.now() > end) throw new Error("barrier timeout");
    sleep(1);
  }
}

const crafted = fs.readFileSync(lockFile, "utf8");
/** Peer "b" goes second: only once "a" holds the lock (the interleaving that broke main). */
function letFirstPeerWin() {
  if (id !== "b") return;
  const end = Date.now() + 5_000;
  for (;;) {
    let now = "";
    try {
      now = fs.readFileSync(lockFile, "utf8");
    } catch {
      // between a's removal and a's creation
    }
    if ((now !== "" && now !== crafted) || Date.now() > end) return;
    sleep(1);
  }
}

function critical() {
  fs.appendFileSync(logFile, `enter ${id}\n`);
  sleep(Number(holdMs));
  fs.appendFileSync(logFile, `leave ${id}\n`);
}

if (mode === "real") {
  let waited = false;
  const lock = acquireLock(lockFile, {
    afterJudgedStale: () => {
      if (waited) return;
      waited = true;
      arriveAndWait();
      letFirstPeerWin();
    },
  });
  try {
    critical();
  } finally {
    lock.release();
  }
} else {
  // main's algorithm: judge stale, rmSync, then open "wx" and write the pid.
  arriveAndWait();
  letFirstPeerWin();
  fs.rmSync(lockFile, { force: true });
  let fd;
  for (let i = 0; i < 1000 && fd === undefined; i++) {
    try {
      fd = fs.openSync(lockFile, "wx", 0o600);
    } catch {
      // main would judge the new lock stale only if its owner were dead; it is not: wait
      sleep(1);
      // ...but a peer that judged the old lock stale removes whatever lock is there now.
    }
  }
  fs.writeSync(fd, String(process.pid));
  fs.closeSync(fd);
  critical();
  fs.rmSync(lockFile, { force: true });
}
