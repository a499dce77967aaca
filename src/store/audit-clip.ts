/**
 * The bound on one audit message. Every message passes through here at the
 * audit writer's emit, whatever its kind, so a model (a huge thought, final answer or goal)
 * can push only a bounded number of bytes per turn into the shared, rotating audit log and
 * cannot evict other sessions' history. The session transcript keeps the full text.
 */
import { clip } from "../core/clip.js";

/** Bytes of one audit `msg`, before JSON encoding. */
export const AUDIT_MSG_MAX_BYTES = 16 * 1024;

export function clipAuditMessage(msg: string): string {
  return clip(msg, AUDIT_MSG_MAX_BYTES);
}
