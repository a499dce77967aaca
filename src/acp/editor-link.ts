/**
 * What the agent may ask of the editor while a prompt runs (docs/editors.md "Editors (ACP)"), free of
 * the SDK: `server.ts` builds it from the connection and the capabilities the client offered
 * at `initialize`; sessions hand it to the tools. Every request has a deadline and follows
 * the prompt's cancellation.
 */
import type { PermissionOption, RequestPermissionOutcome, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { isInside } from "../core/inside.js";
import type { EditorBuffers } from "../tools/types.js";

/** How long a read through the editor may take before the file is read from disk instead. */
export const EDITOR_READ_TIMEOUT_MS = 5_000;
/**
 * How long a write through the editor may take. There is no falling back to the disk (the
 * editor would then hold another text than the file): past this the call fails, and says so.
 */
export const EDITOR_WRITE_TIMEOUT_MS = 30_000;

export interface EditorLink {
  /** `fs/read_text_file`, when the client offered it: the buffer, unsaved changes included. */
  readTextFile?: (path: string, signal: AbortSignal) => Promise<string>;
  /**
   * `fs/write_text_file`, when the client offered it: the editor writes the file (its buffer
   * and the disk then agree). Rejects with the editor's error.
   */
  writeTextFile?: (path: string, content: string, signal: AbortSignal) => Promise<void>;
  /**
   * `session/request_permission`: the person's answer, or `cancelled`. Sent only after every
   * session update before it (the `tool_call` it names among them) has been written.
   */
  requestPermission: (
    toolCall: ToolCallUpdate,
    options: PermissionOption[],
    signal: AbortSignal,
  ) => Promise<RequestPermissionOutcome>;
}

/**
 * The file tools' view of the editor: the current prompt's link, when there is one. A read
 * that fails or is slow is not an error: the disk is read instead. A write has no such way
 * out: when the editor offered writes, the editor writes a file of the project (`roots`: the
 * session's cwd, as given and resolved), or the call fails with its error. A file outside the
 * project (`unrestricted`) is not the editor's: Scoot writes the disk, as without an editor,
 * since editors refuse paths outside their root.
 */
export function editorBuffers(
  current: () => EditorLink | undefined,
  roots: readonly string[],
): EditorBuffers {
  return {
    async read(absPath, signal) {
      const read = current()?.readTextFile;
      if (!read) return undefined;
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(EDITOR_READ_TIMEOUT_MS)]);
      try {
        return await read(absPath, deadline);
      } catch {
        return undefined;
      }
    },
    writer(absPath) {
      const write = current()?.writeTextFile;
      if (!write || !roots.some((root) => isInside(absPath, root))) return undefined;
      return async (absPath, content, signal) => {
        const deadline = AbortSignal.any([signal, AbortSignal.timeout(EDITOR_WRITE_TIMEOUT_MS)]);
        try {
          await write(absPath, content, deadline);
        } catch (e) {
          if (deadline.aborted && !signal.aborted)
            throw new Error(
              `the editor did not answer within ${EDITOR_WRITE_TIMEOUT_MS / 1000} s (the file may still change if it answers late)`,
            );
          throw e;
        }
      };
    },
  };
}
