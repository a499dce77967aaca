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
 * - under bubblewrap the gate says it runs only once bwrap armed `--die-with-parent` in both of
 *   its processes, so once Scoot says `go` the command dies with Scoot. bwrap arms the launcher
 *   before the sandbox starts; its init (the PID namespace's pid 1, whose death ends every
 *   process there) arms itself right after it forks the shell, so the two race. The gate waits
 *   until init has armed: init installs the seccomp filter right after arming, so a filter on
 *   pid 1 proves it; without a filter, init blocked in `wait()` (its next step) does.
 */

/** The descriptor the gate talks on (3 carries the seccomp filter to bwrap). */
export const GATE_FD = 4;
/** What the gate prints once it runs, and what Scoot answers to open it. */
export const GATE_READY = "r";
export const GATE_GO = "go\n";
/** The gate's exit status when it closes without running the command. */
export const GATE_CLOSED_STATUS = 125;
/** How often and how many times the gate looks for the sandbox's init to arm (about 5 s in all). */
export const INIT_POLL_SECONDS = 0.01;
export const INIT_POLL_TRIES = 500;
/** Where the sandbox's init shows its state (a parameter so tests can stand in for it). */
export const SANDBOX_INIT_PROC = "/proc/1";

/** How the gate knows the sandbox's init armed `--die-with-parent`. */
export type InitArmed =
  /** Not in a sandbox: nothing to wait for. */
  | { kind: "none" }
  /** bwrap was handed a seccomp filter: init installs it right after arming. */
  | { kind: "seccomp"; proc: string }
  /** No filter: init's next step after arming is `wait()`. */
  | { kind: "waiting"; proc: string };

/** A shell test that succeeds once init armed (builtins only: one `read` per look). */
function armedTest(init: Exclude<InitArmed, { kind: "none" }>): string {
  if (init.kind === "seccomp") {
    return `{ s=; while IFS= read -r l; do case $l in Seccomp:*2) s=1;; esac; done <${init.proc}/status; [ -n "$s" ]; }`;
  }
  // wchan names the kernel function init sleeps in; where the kernel hides it ("0" or empty),
  // the state letter says it sleeps, which before arming it has nothing to do.
  return (
    `{ w=; IFS= read -r w <${init.proc}/wchan; case $w in do_wait) true;; ""|0) ` +
    `s=; while IFS= read -r l; do case $l in State:*S*) s=1;; esac; done <${init.proc}/status; [ -n "$s" ];; *) false;; esac; }`
  );
}

/** Waits for init to arm; closes the gate (status 125, one line on stderr) if it never does. */
function initWait(init: InitArmed): string {
  if (init.kind === "none") return "";
  return (
    `i=0; until ${armedTest(init)}; do i=$((i+1)); if [ $i -gt ${INIT_POLL_TRIES} ]; then ` +
    `echo "scoot: the sandbox did not finish starting; the command was not run" >&2; exit ${GATE_CLOSED_STATUS}; fi; ` +
    `sleep ${INIT_POLL_SECONDS}; done; `
  );
}

/** The gate script: `$1` is the command; nothing of the gate reaches it (no argument, no descriptor). */
function gateScript(shell: string, init: InitArmed): string {
  return (
    `${initWait(init)}printf ${GATE_READY} >&${GATE_FD} && IFS= read -r go <&${GATE_FD} && [ "$go" = go ] && ` +
    `exec ${GATE_FD}>&- && exec ${shell} -c "$1"; exit ${GATE_CLOSED_STATUS}`
  );
}

/** The shell's arguments that run `command` behind the gate. */
export function gatedShellArgs(shell: string, command: string, init: InitArmed = { kind: "none" }): string[] {
  return ["-c", gateScript(shell, init), "sh", command];
}
