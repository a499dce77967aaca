#!/usr/bin/env node
/**
 * Entry point: argv → command. The only place that calls process.exit. Command modules
 * are imported on demand so `scoot --version` and `scoot config` stay fast.
 */
import fs from "node:fs";
import { parseArgs, USAGE } from "./cli/args.js";
import { EXIT, processIo } from "./cli/io.js";
import { installProcessEnd, settleBeforeExit } from "./core/process-end.js";

function version(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv);
  if (!parsed.ok) {
    processIo.err(`scoot: ${parsed.error}\n`);
    return EXIT.usage;
  }
  const args = parsed.value;
  if (args.flags.version) {
    processIo.out(`scoot ${version()}\n`);
    return EXIT.ok;
  }
  if (args.flags.help) {
    processIo.out(USAGE);
    return EXIT.ok;
  }
  const { dispatch } = await import("./app.js");
  return dispatch(args);
}

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

main(process.argv.slice(2)).then(exitAfterFlush, (e: unknown) => {
  processIo.err(`scoot: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
  exitAfterFlush(EXIT.failed);
});
