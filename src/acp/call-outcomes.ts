/**
 * How each stored call ended, for `session/load` of a transcript written before observation
 * lines carried their call's `outcome` field (docs/sessions.md "Sessions and audit"); newer lines are
 * read by that field alone (replay.ts). Such an old transcript keeps what the model was told,
 * one `{role, content}` per line, and most endings read from it:
 * a denial, a refusal ("not run: …"), an interruption. A tool that failed (an edit whose text
 * is not there, a command that exited non-zero) reads like any other result, so the session
 * keeps a fingerprint of each such observation with its settings (the newest
 * MAX_FAILED_CALL_PRINTS, src/store/session-settings.ts)
 * and the replay looks the observation up. A fingerprint names no content: a short hash.
 */
import { createHash } from "node:crypto";
import { isInterruptedObservation } from "../agent/history.js";
import { withoutDroppedNote } from "../agent/loop.js";

/** Hex digits of a fingerprint: enough that two observations of one session do not meet. */
const FINGERPRINT_HEX = 20;
/** How a gate denial reads in the observation (src/agent/loop.ts). */
const DENIAL_PREFIX = "denied by policy";
/** How a call that did not run reads: a refusal (src/agent/approval.ts) or the pipeline's own. */
const NOT_RUN = "not run: ";

function fingerprint(action: string, body: string): string {
  return createHash("sha256").update(`${action}\n${body}`).digest("hex").slice(0, FINGERPRINT_HEX);
}

/** Whether a stored observation says its call failed (the fingerprints of tool failures included). */
export function endedFailed(action: string, recorded: string, failed: ReadonlySet<string>): boolean {
  if (
    recorded.startsWith(DENIAL_PREFIX) ||
    recorded.startsWith(NOT_RUN) ||
    recorded.startsWith(`${action}: ${NOT_RUN}`) ||
    isInterruptedObservation(recorded)
  )
    return true;
  return failed.size > 0 && failed.has(fingerprint(action, withoutDroppedNote(recorded)));
}
