/**
 * The start gate of a `bash` call (docs/safety.md "Shell containment", "Stopping a command").
 * The shell Scoot spawns does not run the command at once: it first says it is running
 * (one byte on descriptor GATE_FD, a socket to Scoot), then waits for Scoot's `go`, closes the
 * descriptor and only then executes the command as `/bin/sh -c COMMAND`. So:
 *
 * - a stop (Esc, Ctrl-C, ACP `session/cancel`, the library's abort signal, the deadline) that
 *   arrives while the command is being launched lands: Scoot never says `go`, kills the group,
 *   and the command never ran;
 * - a Scoot killed before `go` leaves a gate reading end-of-file, which exits (status 125)
 *   without running anything;
 * - under bubblewrap the gate runs only after bwrap armed `--die-with-parent` in the launcher
 *   and in the sandbox's init (both happen before the sandbox executes anything), so once
 *   Scoot says `go` the command dies with Scoot. A Scoot killed between bubblewrap's start and
 *   that point no longer leaves a command running: the gate never opened.
 */

/** The descriptor the gate talks on (3 carries the seccomp filter to bwrap). */
export const GATE_FD = 4;
/** What the gate prints once it runs, and what Scoot answers to open it. */
export const GATE_READY = "r";
export const GATE_GO = "go\n";
/** The gate's exit status when it closes without running the command. */
export const GATE_CLOSED_STATUS = 125;

/** The gate script: `$1` is the command; nothing of the gate reaches it (no argument, no descriptor). */
function gateScript(shell: string): string {
  return (
    `printf ${GATE_READY} >&${GATE_FD} && IFS= read -r go <&${GATE_FD} && [ "$go" = go ] && ` +
    `exec ${GATE_FD}>&- && exec ${shell} -c "$1"; exit ${GATE_CLOSED_STATUS}`
  );
}

/** The shell's arguments that run `command` behind the gate. */
export function gatedShellArgs(shell: string, command: string): string[] {
  return ["-c", gateScript(shell), "sh", command];
}
