/**
 * Why a run stopped, as one value every caller can match on: the CLI's exit code and `--json`,
 * serve's events, ACP's stopReason, the library, the daemon's job state and metrics. Callers
 * once matched on the error text, which changes whenever a message is reworded.
 *
 * - `final`        the model gave its final answer
 * - `plan`         plan mode: the model gave its plan, and nothing was executed
 * - `max_turns`    `agent.max_turns` turns passed without a final answer
 * - `malformed`    `agent.max_malformed_steps` invalid steps in a row
 * - `backend`      the backend call failed (HTTP, network, timeout, a reply that is not one)
 * - `refused`      the backend answered with a refusal (the model declined) instead of text
 * - `budget`       the history could not be fit to the context budget, so the backend was not called
 * - `not_recorded` an audit record, the transcript or an undo checkpoint could not be written (fail closed)
 * - `interrupted`  the run was cancelled (Ctrl-C, SIGTERM, a client's cancel, a deadline)
 */
export type RunStop =
  | "final"
  | "plan"
  | "max_turns"
  | "malformed"
  | "backend"
  | "refused"
  | "budget"
  | "not_recorded"
  | "interrupted";

export const RUN_STOPS: readonly RunStop[] = [
  "final",
  "plan",
  "max_turns",
  "malformed",
  "backend",
  "refused",
  "budget",
  "not_recorded",
  "interrupted",
];

/** The coarse status older outputs carry (`--json`'s `status`, job state, trace). */
export type RunStatus = "final" | "plan" | "failed" | "interrupted";

/** The one mapping from a stop to its status: every stop that is neither an answer nor a cancel failed. */
export function statusOf(stop: RunStop): RunStatus {
  if (stop === "final") return "final";
  if (stop === "plan") return "plan";
  if (stop === "interrupted") return "interrupted";
  return "failed";
}
