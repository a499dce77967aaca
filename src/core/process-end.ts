/**
 * How the process ends: `src/main.ts` is the only module that calls process.exit. A module
 * that holds something to settle before the process goes (open audit logs to fdatasync and
 * close) registers it here; a signal path that must end the process now (a second Ctrl-C, a
 * signalled `scoot acp`) asks for the end here, and main, which installed the way to end,
 * exits. Commands otherwise return their exit code.
 */

type Settle = () => void;

interface EndState {
  settlers: Set<Settle>;
  endNow?: (code: number) => void;
  /** Whether the process's exit hook that runs the settle steps is in place. */
  hooked?: boolean;
}

// The entry and the app are bundled apart (scripts/bundle.mjs), each with its own copy of
// this module: the state lives in one process-wide slot so that both copies share it.
const SLOT = Symbol.for("scoot.process-end");
const slots = globalThis as Record<symbol, EndState | undefined>;
const state: EndState = slots[SLOT] ?? { settlers: new Set() };
slots[SLOT] = state;
const settlers = state.settlers;

/**
 * Runs `settle` when the process ends, however it ends. The one exit hook is installed with the
 * first step, so a process without main (a test, a library host) settles too.
 */
export function onProcessEnd(settle: Settle): void {
  settlers.add(settle);
  if (state.hooked) return;
  state.hooked = true;
  process.on("exit", settleBeforeExit);
}

/** Every registered settle step; one that throws does not keep the others from running. */
export function settleBeforeExit(): void {
  for (const settle of settlers) {
    try {
      settle();
    } catch {
      // Ending anyway: a log that cannot be closed loses only its last fdatasync.
    }
  }
}

/** main.ts: the one way to end the process at once. */
export function installProcessEnd(end: (code: number) => void): void {
  state.endNow = end;
}

/**
 * Ends the process now with `code` (a signal path). Without main (a command driven in
 * process by a test or the library) nothing is ended: the code is only set as the exit code.
 */
export function endProcess(code: number): void {
  if (state.endNow) state.endNow(code);
  else process.exitCode = code;
}
