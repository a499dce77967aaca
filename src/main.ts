#!/usr/bin/env node
/**
 * Entry point: argv → command. The only place that calls process.exit. Command modules
 * are imported on demand so `scoot --version` and `scoot config` stay fast.
 */
import { EXIT, processIo } from "./cli/io.js";
import { installProcessEnd, settleBeforeExit } from "./core/process-end.js";
import { runArgv } from "./entry.js";

/** Exit only after stdout and stderr have flushed, so piped output is never cut short. */
function exitAfterFlush(code: number): void {
  let pending = 2;
  const done = () => {
    pending -= 1;
    if (pending === 0) process.exit(code);
  };
  process.stdout.write("", done);
  process.stderr.write("", done);
}

// Whatever ends the process (a return, a forced end on a signal, a crash), what modules
// registered is settled first: open audit logs are flushed and closed.
process.on("exit", settleBeforeExit);
// A signal path that must end now (src/cli/run.ts, src/cli/acp.ts) ends here, at once.
installProcessEnd((code) => process.exit(code));

runArgv(process.argv.slice(2), { env: process.env, io: processIo, cwd: process.cwd() }).then(
  exitAfterFlush,
  (e: unknown) => {
    processIo.err(`scoot: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
    exitAfterFlush(EXIT.failed);
  },
);
